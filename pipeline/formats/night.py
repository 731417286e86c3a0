"""The layout of a night's folder (`<out>/<date>/`), as the nightly job writes it and the
designers' tools (swap, the studio) read it. No imports: the command line reads it at start-up."""

NIGHTS_FOLDER = "generated"  # where the nightly job writes by default, and where a puzzle id is looked up by default
POOL_DIR = "pool"  # <night>/pool/<id>.yaml: the validated Puzzles the night's bundle did not use
