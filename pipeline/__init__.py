"""numbermatch: rules engine, solver, rating, generator, validator and assembler for Number Match."""

# The one place the version is written: pyproject.toml reads it (`dynamic`), `--version` prints it,
# CHANGELOG.md has a section for it and the release is tagged `v` + it (docs/releasing.md).
__version__ = "0.2.0"
