"""Levels: the puzzle file format, curves, the assembler, bundles and the nightly job."""
