# numbermatch: every target works from a fresh clone with only Python 3.11 and the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test bench nightly clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m pipeline.bench

nightly: $(STAMP)
	$(BIN)/numbermatch nightly

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
