"""Formats: the puzzle, bundle, curve and rating-profile files (reading, writing, finding them, the curve
language). The validator and everything above it may use them; they use only engine, solver,
rating and the base modules."""
