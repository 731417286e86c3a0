"""Which committed files a run changed, when its output folder is inside a git checkout.

The nightly draws from the stock it writes into, and a repository may commit that stock (this one
does, in generated/stock/): a night then moves committed files, which `git status` shows as
deleted and new. The nightly says so, so nobody is surprised by it. Git is optional: without it,
or outside a checkout, or when git fails, there is nothing to say and nothing is said.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT_TIMEOUT = 30.0  # seconds for one git command; past it the run just says nothing
SHOWN_FOLDERS = 8  # folders named one per line; the rest are counted on one line
_STATUS = {"D": "deleted", "M": "modified", "A": "added", "T": "changed type"}


@dataclass(frozen=True)
class Checkout:
    """A folder's place in a git work tree: the tree's top and the folder relative to it."""

    top: Path
    folder: str  # POSIX path relative to `top` ("." for the top itself)


def _git(args: list[str], cwd: Path) -> str | None:
    """git's stdout, or None when git is missing, fails or takes too long."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}  # never take the index lock
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def checkout(folder: Path) -> Checkout | None:
    """Where `folder` (which need not exist yet) sits in a git work tree; None outside one."""
    probe = folder.resolve()
    while not probe.is_dir():
        if probe.parent == probe:
            return None
        probe = probe.parent
    top = _git(["rev-parse", "--show-toplevel"], probe)
    if not top or not top.strip():
        return None
    root = Path(top.strip()).resolve()
    try:
        relative = folder.resolve().relative_to(root)
    except ValueError:
        return None
    return Checkout(root, relative.as_posix() or ".")


def changed(place: Checkout) -> frozenset[tuple[str, str]] | None:
    """(status letter, path from the top) of every committed file under the folder that the
    working tree or the index has changed or deleted; None when git cannot tell."""
    out = _git(
        ["diff", "--name-status", "--no-renames", "-z", "HEAD", "--", place.folder], place.top
    )
    if out is None:
        return None
    fields = out.split("\0")
    return frozenset(
        (fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2) if fields[i]
    )


def summary(changes: Iterable[tuple[str, str]]) -> list[str]:
    """One line per folder of changed committed files (`generated/stock/1/30x2/: 12 deleted`),
    at most SHOWN_FOLDERS of them and then a count of the rest; empty for no change."""
    by_folder: dict[str, Counter[str]] = defaultdict(Counter)
    for status, path in changes:
        by_folder[str(PurePosixPath(path).parent)][_STATUS.get(status, "changed")] += 1
    lines = [
        f"{folder}/: " + ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        for folder, counts in sorted(by_folder.items())
    ]
    if len(lines) > SHOWN_FOLDERS:
        rest = len(lines) - SHOWN_FOLDERS + 1
        lines = lines[: SHOWN_FOLDERS - 1] + [f"and {rest} more folders"]
    return lines


def untracked(place: Checkout) -> frozenset[str] | None:
    """The files under the folder that git does not track and does not ignore."""
    out = _git(["ls-files", "-z", "--others", "--exclude-standard", "--", place.folder], place.top)
    return None if out is None else frozenset(filter(None, out.split("\0")))


class Watch:
    """The committed files under a folder before a run, to say after it which the run changed."""

    def __init__(self, folder: Path) -> None:
        self.place = checkout(folder)
        self.before = changed(self.place) if self.place is not None else None
        self.new_before = untracked(self.place) if self.place is not None else None

    def lines(self) -> list[str]:
        """What to say after the run: a heading and `summary`'s lines, or nothing (no change,
        no checkout, no git)."""
        if self.place is None or self.before is None:
            return []
        after = changed(self.place)
        if after is None:
            return []
        new = after - self.before
        if not new:
            return []
        added = len((untracked(self.place) or frozenset()) - (self.new_before or frozenset()))
        total = len(new)
        return [
            f"{total} committed file{'s' if total != 1 else ''} changed"
            + (f" and {added} new file{'s' if added != 1 else ''} written" if added else "")
            + " in the git checkout (`git status` lists them):",
            *(f"  {line}" for line in summary(new)),
        ]
