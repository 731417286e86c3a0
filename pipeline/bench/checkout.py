"""The baselines the benches take from this repository's checkout rather than from the package.

An installed package ships neither: the frozen copy of the simulated players before they
remembered positions lives with the tests (`tests/reference_players.py`, their oracle), and an
earlier nightly is that commit's code from git history. A bench run outside a checkout says so
and skips the comparison.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
REFERENCE_PLAYERS = REPO / "tests" / "reference_players.py"
# The commit whose nightly `bench nightly` measures the campaign night against (its nightly had
# no stock, so it runs without `--no-stock`); bench data, read from git history at run time.
NIGHTLY_BASELINE = "96cd43c"
# The commit whose night from scratch `bench nightly` measures the default rating version's night
# against: the last one in pure Python (rating version 3, before the compiled core; issue 35's
# "today's main").
RATING_BASELINE = "4f37e92"


def reference_players_module() -> ModuleType | None:
    """`tests/reference_players.py`, loaded from the checkout; None outside one."""
    name = "numbermatch_reference_players"
    if name in sys.modules:
        return sys.modules[name]
    if not REFERENCE_PLAYERS.is_file():
        return None
    spec = importlib.util.spec_from_file_location(name, REFERENCE_PLAYERS)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


@contextmanager
def reference_players() -> Iterator[None]:
    """While open, every game (here and in forked workers) is played by the reference players;
    LookupError outside a checkout."""
    module = reference_players_module()
    if module is None:
        raise LookupError(f"{REFERENCE_PLAYERS} is not here (not a checkout)")
    with module.reference_players():
        yield


@contextmanager
def commit_checked_out(ref: str, where: str) -> Iterator[Path | None]:
    """The code of commit `ref` in a temporary worktree at `where` (removed after), or None
    without git or its history."""
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        yield None
        return

    def git_quietly(*args: str) -> int:
        return subprocess.run(
            [git, "-C", str(REPO), "worktree", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ).returncode

    if git_quietly("add", "--detach", where, ref) != 0:
        yield None
        return
    try:
        yield Path(where)
    finally:
        git_quietly("remove", "--force", where)
