"""The tests on every Python version the package supports, one fresh venv each (`make nox`).

The versions are pyproject's classifiers (a test checks the two agree). Each session installs the
package with its test extra, as `make install` does (the compiled core built for that version),
and runs `make test-fast`'s lane: every test module, without the slow kinds (whole nights, the
browser, Dask, the docs examples). The whole suite on one version is `make test`; three times it
would take too long. `make nox NOX_ARGS="-s tests-3.13 -- tests/test_x.py"` runs one version on
other tests.

An interpreter is found on PATH as `python3.X`; pyenv's versions (`$PYENV_ROOT/versions/3.X.*`,
default ~/.pyenv) are put first on PATH, since pyenv's shims refuse a version that is not
selected. A version that cannot be found fails its session (nox's
`error_on_missing_interpreters`): a skipped version would read as a pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

PYTHONS = ["3.11", "3.12", "3.13"]

# What each version runs: `make test-fast`'s lane (every test but the slow kinds; the Makefile's
# FAST, which a test checks this equals), so every layer is exercised on every version.
FAST = "not slow and not browser and not dask and not docs and not nightly"

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = True
nox.options.reuse_venv = "yes"  # the installs are the slow part: a rerun reuses .nox/<session>


def _pyenv_first() -> None:
    """Put the newest pyenv build of each version first on PATH (before pyenv's shims)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = []
    for version in PYTHONS:
        builds = sorted(
            root.glob(f"{version}.*/bin/python{version}"),
            key=lambda p: [int(x) for x in p.parent.parent.name.split(".") if x.isdigit()],
        )
        if builds:
            found.append(str(builds[-1].parent))
    if found:
        os.environ["PATH"] = os.pathsep.join([*found, os.environ.get("PATH", "")])


_pyenv_first()


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The package with its test extra on this Python, then the fast lane (or the given tests)."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "-q", *(session.posargs or ["-n", "auto", "-m", FAST]))
