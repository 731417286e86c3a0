"""numbermatch: rules engine, solver, rating, generator, validator and assembler for Number Match."""

__version__ = "0.1.0"
