"""`python -m pipeline.cli` runs the command line."""

from pipeline.cli import main

main()
