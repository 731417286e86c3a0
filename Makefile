# numbermatch: every target works from a fresh clone with only Python 3.11 and the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test test-fast sanitize nox docs docs-examples docs-images bench rating-study rating-calibration nightly fuzz schemas help-pages clean

install: $(STAMP)

# pip shows what it fetches and installs (no --quiet: the first install takes about a minute)
$(STAMP): pyproject.toml setup.py pipeline/__init__.py pipeline/engine/_core.c
	$(PYTHON) -m venv $(VENV)
	@echo "make: installing numbermatch and its test tools into $(VENV)/ (pip lists each package)"
	$(BIN)/python -m pip install --upgrade --progress-bar on pip
	$(BIN)/python -m pip install --progress-bar on -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/ruff format --check pipeline tests research
	$(BIN)/ruff check pipeline tests research
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest
	NUMBERMATCH_PUREPYTHON=1 $(BIN)/python -m pytest -m backends

# The compiled core (pipeline/engine/_core.c) built with AddressSanitizer and UndefinedBehavior-
# Sanitizer into build/sanitize (the installed one is untouched), then the differential tests
# and NM_FUZZ_CALLS hostile calls of every entry point (tests/sanitize_core.py) with it; the
# sanitizer runtimes are preloaded into Python, whose allocations go through malloc so they see
# every buffer. Needs gcc.
SANITIZE := build/sanitize
sanitize: $(STAMP)
	rm -rf $(SANITIZE)
	CC=gcc CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g" \
		LDFLAGS="-fsanitize=address,undefined" \
		$(BIN)/python setup.py -q build_ext --build-lib $(SANITIZE) --build-temp $(SANITIZE)/tmp
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		PYTHONMALLOC=malloc $(BIN)/python -m tests.sanitize_core \
		$$(ls $(SANITIZE)/pipeline/engine/_core*.so) --calls $${NM_FUZZ_CALLS:-1000000}

# The edit-test loop: the formatter and the linter, then every test but the slow kinds (markers
# in pyproject.toml: slow, browser, dask, docs, nightly), on every core (pytest-xdist), in under a
# minute; `make test` runs all, one test at a time.
FAST := not slow and not browser and not dask and not docs and not nightly
test-fast: $(STAMP)
	$(BIN)/ruff format --check pipeline tests research
	$(BIN)/ruff check pipeline tests research
	$(BIN)/python -m pytest -n auto -m "$(FAST)"

# The tests on each supported Python (3.11, 3.12, 3.13: noxfile.py; pyenv's are found too), one venv
# each under .nox/, `make test-fast`'s lane on each; NOX_ARGS goes to nox (-s tests-3.13, -- FILES).
nox: $(STAMP)
	$(BIN)/nox $(NOX_ARGS)

# The documentation site into site/ (not committed); --strict turns every warning (a broken link,
# a page missing from the nav) into a failure, as in `make test`.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Rewrite the output of every console example in README.md and docs/ with what it prints now
# (keeping `...` lines that still match) and the CLI reference (docs/cli.md) from the commands'
# --help (and the help pages the fast path serves, as `make help-pages`): run after a change of
# output, then review the diff. The examples run on generated/ as
# committed, so the rewrite refuses while a night (or anything) has changed those files.
docs-examples: $(STAMP)
	$(BIN)/python -m pipeline.cli.help_render
	$(BIN)/ruff format -q pipeline/cli/help_pages.py
	$(BIN)/python -m tests.docs_cli
	$(BIN)/python -m tests.docs_examples --rewrite

# The help pages the start-up fast path serves without typer (pipeline/cli/help_pages.py), rendered
# by typer: run after a change of any --help (tests/test_cli_fast.py fails until then).
help-pages: $(STAMP)
	$(BIN)/python -m pipeline.cli.help_render
	$(BIN)/ruff format pipeline/cli/help_pages.py

# Every picture in docs/: the SVGs from `numbermatch render` (make test checks they are current),
# the studio screenshots from Playwright driving /usr/bin/chromium against the committed night.
docs-images: $(STAMP)
	$(BIN)/python -m tests.docs_images

# The long fuzz campaigns: the validator (NM_FUZZ_EXAMPLES mutants per strategy) and the studio
# (NM_FUZZ_EXAMPLES random requests), the telemetry readers and the stock's commands
# (NM_FUZZ_EXAMPLES stock shapes, a fifth as many kills at random points), and writers racing on
# one bundle (NM_WRITER_TRIALS trials); prints counts.
fuzz: $(STAMP)
	NM_FUZZ_EXAMPLES=$${NM_FUZZ_EXAMPLES:-500} NM_WRITER_TRIALS=$${NM_WRITER_TRIALS:-100} \
		$(BIN)/python -m pytest tests/test_fuzz.py tests/test_fuzz_studio.py tests/test_fuzz_writers.py tests/test_fuzz_telemetry.py tests/test_fuzz_stock.py -q -s

# Rewrite the schema text generated from code (the tier boundaries from pipeline/rating/tiers.py).
schemas: $(STAMP)
	$(BIN)/python -m pipeline.schemas

# The search strategy's bench (research/: it needs the rating study's held-out models) runs last.
bench: $(STAMP)
	$(BIN)/python -m pipeline.bench
	$(BIN)/python -m research.bench_search

# Does the score order boards for player models it does not use? Seeded, fixed sample; a few minutes.
# The research tools live in research/ (not installed); run from the repository's top folder.
rating-study: $(STAMP)
	$(BIN)/python -m research.study_rating

rating-calibration: $(STAMP)
	$(BIN)/python -m research.calibrate_rating

# Does a profile fitted to an audience's telemetry beat the default mix on held-out puzzles?
# Three audiences unlike the default; seeded; STUDY_JOBS=2 runs them in parallel. A few minutes.
.PHONY: telemetry-study
telemetry-study: $(STAMP)
	$(BIN)/python -m research.telemetry_study

# Tonight's night into generated/<date>/; a second run the same day says so and writes nothing.
# ARGS passes options to `numbermatch nightly`: make nightly ARGS="--force" rebuilds tonight's.
nightly: $(STAMP)
	NUMBERMATCH_MAKE="make nightly" $(BIN)/numbermatch nightly --skip-existing $(ARGS)

clean:
	rm -rf $(VENV) .nox build site *.egg-info .pytest_cache .hypothesis
