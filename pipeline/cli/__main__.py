"""`python -m pipeline.cli` runs the command line."""

from . import main

main()
