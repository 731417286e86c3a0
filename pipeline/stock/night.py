"""How a night draws from the stock and hands back what it did not use, atomically with its publish.

Choosing: for each tier the curve asks for, the stock's puzzles of that tier (any size, one
ruleset, none already shipped under the output folder) are taken nearest a target first: the
tier's targets are visited in turn, each taking the nearest remaining puzzle (ties: the oldest
stocked, then the smaller id), until the tier has what it needs plus the spare the assembler
chooses from. The assembler then places them under the variety rules as always; only a tier the
stock cannot cover is generated, and only its shortfall.

Moving: the night's staging folder gets `.stock-move.json` (the stock files its bundle used)
and `.stock-add/` (the puzzles it made and did not use, as stock files). Both travel inside the
night's folder through the atomic publish; `finish` then moves the additions into the stock and
deletes the used files, and drops the manifest last. So a night killed before its publish leaves
the stock as it was; one killed after it is finished by the next run (or stock command) under
the same lock; and two nights racing on one folder serialise on that lock, the second seeing the
stock without what the first took. Until `finish` runs, the stock's queries already skip
puzzles whose key a bundle ships.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from pathlib import Path

from pipeline.atomic import write_atomic
from pipeline.formats.index import STOCK_DIR, Candidate, Entry, LevelIndex
from pipeline.formats.puzzle import Puzzle
from pipeline.stock.store import read_puzzle, stock_path, stock_text

Choice = TypeVar("Choice", Candidate, Entry)  # what choose() picks from: the index's rows
MANIFEST = ".stock-move.json"
ADDED = ".stock-add"
_NIGHT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


@dataclass(frozen=True)
class Drawn:
    """What the stock gave one night: its puzzles (and files) per tier."""

    puzzles: dict[str, list[Puzzle]]
    files: dict[str, Path]  # puzzle id -> its stock file

    def count(self, tier: str) -> int:
        return len(self.puzzles.get(tier, ()))


def choose(candidates: Sequence[Choice], targets: Sequence[float], wanted: int) -> list[Choice]:
    """Up to `wanted` candidates, nearest a target first (targets in turn; ties: oldest, then id).

    Candidates sorted by score, so each pick looks only at the untaken ones next to its target
    (a night's query over 100,000 stock puzzles stays well under a second)."""
    scored = sorted((e for e in candidates if e.score is not None), key=lambda e: (e.score, e.stocked, e.id))
    unscored = sorted((e for e in candidates if e.score is None), key=lambda e: (e.stocked, e.id))
    scores = [float(e.score) for e in scored if e.score is not None]
    taken = [False] * len(scored)
    left = len(scored)
    chosen: list[Choice] = []
    order = sorted(targets) or [50.0]
    while left and len(chosen) < wanted:
        for target in order:
            if not left or len(chosen) >= wanted:
                break
            k = _nearest(scores, taken, target, scored)
            taken[k] = True
            left -= 1
            chosen.append(scored[k])
    return chosen + unscored[: max(0, wanted - len(chosen))]


def _nearest(scores: list[float], taken: list[bool], target: float, scored: Sequence[Choice]) -> int:
    """The untaken candidate nearest `target`; ties: the oldest, then the smaller id."""
    at = bisect.bisect_left(scores, target)
    lo, hi = at - 1, at
    while lo >= 0 and taken[lo]:
        lo -= 1
    while hi < len(scores) and taken[hi]:
        hi += 1
    best = min(abs(scores[k] - target) for k in (lo, hi) if 0 <= k < len(scores))
    ties = []
    for k in (lo, hi):  # every untaken candidate at the best distance, on both sides
        if not 0 <= k < len(scores) or abs(scores[k] - target) != best:
            continue
        step = -1 if k == lo else 1
        while 0 <= k < len(scores) and scores[k] == scores[lo if step < 0 else hi]:
            if not taken[k]:
                ties.append(k)
            k += step
    return min(ties, key=lambda k: (scored[k].stocked, scored[k].id))


def draw(root: Path, targets: Mapping[str, Sequence[float]], wanted: Mapping[str, int], ruleset: int,
         night: str | None = None, index: LevelIndex | None = None) -> Drawn:
    """The stock puzzles a night takes per tier (see the module docstring). Keys repeated inside
    the stock are taken once; the bundle of `night` (the folder a rerun replaces) does not count
    as shipped. `index`: root's index, already refreshed (else it is opened and refreshed)."""
    if not (root / STOCK_DIR).is_dir():
        return Drawn({}, {})
    if index is None:
        with LevelIndex(root) as own:
            own.refresh()
            return draw(root, targets, wanted, ruleset, night, own)
    puzzles: dict[str, list[Puzzle]] = {}
    files: dict[str, Path] = {}
    for tier, count in wanted.items():
        seen: set[str] = set()
        candidates = []
        for e in index.candidates(tier, ruleset=ruleset, besides=night):
            if e.key not in seen:
                seen.add(e.key)
                candidates.append(e)
        for e in choose(candidates, targets.get(tier, ()), count):
            path = root / e.path
            puzzles.setdefault(tier, []).append(read_puzzle(path))
            files[e.id] = path
    return Drawn(puzzles, files)


def stage_move(staging: Path, root: Path, used: Iterable[Path], unused_made: Iterable[Puzzle], day: _dt.date) -> None:
    """Record in the night's staging folder what `finish` will do to the stock once it is published."""
    added = []
    for p in unused_made:
        target = stock_path(Path(ADDED), p)  # relative: .stock-add/stock/<ruleset>/<group>/<id>.yaml
        write_atomic(staging / target, stock_text(p, day, root))
        added.append(target.as_posix())
    taken = sorted(os.path.relpath(path, root) for path in used)
    write_atomic(staging / MANIFEST, json.dumps({"take": taken, "add": sorted(added)}, indent=1) + "\n")


def stage_aside(source: Path, target: Path, names: Sequence[str] = (ADDED, MANIFEST)) -> list[str]:
    """Move a staged stock move (`.stock-add/`, then the manifest) from one folder to another by
    renames: how `nightly --force`, which replaces a night's files one by one, keeps it apart
    from them and hands it to the published night last. Returns the names moved."""
    moved = []
    for name in names:
        if os.path.lexists(source / name):
            if os.path.isdir(target / name):
                shutil.rmtree(target / name)
            os.replace(source / name, target / name)
            moved.append(name)
    return moved


def finish(root: Path) -> list[str]:
    """Complete the stock move of every published night under `root` that still has one pending
    (idempotent: safe to run again after a kill). Returns one line per night finished."""
    lines = []
    for night in sorted(root.iterdir()) if root.is_dir() else ():
        manifest = night / MANIFEST
        if not _NIGHT.fullmatch(night.name) or not manifest.is_file():
            continue
        try:
            plan = json.loads(manifest.read_text(encoding="utf-8"))
            take, add = list(plan["take"]), list(plan["add"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours to guess at: the validator and the next night ignore hidden files
        moved = 0
        for rel in add:
            source = night / rel
            target = root / Path(rel).relative_to(ADDED)
            if not source.is_file() or ".." in Path(rel).parts:
                continue
            if target.exists():
                source.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
                moved += 1
        removed = 0
        for rel in take:
            path = root / rel
            if ".." in Path(rel).parts or Path(rel).parts[:1] != (STOCK_DIR,):
                continue
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        shutil.rmtree(night / ADDED, ignore_errors=True)
        manifest.unlink(missing_ok=True)
        lines.append(f"{night.name}: {removed} puzzle(s) left the stock, {moved} went in")
    return lines
