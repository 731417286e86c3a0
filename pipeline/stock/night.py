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
import errno
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yaml

from pipeline.atomic import write_guarded
from pipeline.formats.bundle import Bundle, BundleError
from pipeline.formats.index import Candidate, Entry, LevelIndex
from pipeline.formats.loader import load_file
from pipeline.formats.night import (
    BUNDLE_FILE,
    STOCK_ADD,
    STOCK_MOVE,
    STOCK_TAKEN,
    night_date,
)
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.scale import ScaleError, puzzle_on
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.rating.profile import RatingProfile
from pipeline.stock.store import (
    SetAside,
    check_drawn,
    read_puzzle,
    set_aside,
    stock_path,
    stock_text,
)

Choice = TypeVar("Choice", Candidate, Entry)  # what choose() picks from: the index's rows


@dataclass(frozen=True)
class Drawn:
    """What the stock gave one night: its puzzles (and files) per tier, and the Stage targets
    it had nothing close enough for."""

    puzzles: dict[str, list[Puzzle]]
    files: dict[str, Path]  # puzzle id -> its stock file (none for a puzzle a rerun took back)
    uncovered: dict[str, list[float]] = field(
        default_factory=dict
    )  # tier -> targets to generate for
    back: dict[str, Puzzle] = field(
        default_factory=dict
    )  # id -> a puzzle the night being rerun took
    aside: list[SetAside] = field(default_factory=list)  # drawn, invalid, moved out of the draw

    def count(self, tier: str) -> int:
        return len(self.puzzles.get(tier, ()))

    @property
    def ids(self) -> set[str]:
        """The ids of every puzzle drawn (from a stock file or taken back)."""
        return set(self.files) | set(self.back)


def choose(
    candidates: Sequence[Choice], targets: Sequence[float], wanted: int, within: float | None = None
) -> list[Choice]:
    """Up to `wanted` candidates, nearest a target first (targets in turn; ties: oldest, then id),
    none further than `within` from the target it is taken for (None: any distance)."""
    return pick(candidates, targets, wanted, within)[0]


def pick(
    candidates: Sequence[Choice], targets: Sequence[float], wanted: int, within: float | None = None
) -> tuple[list[Choice], list[float]]:
    """`choose`, and the targets the first round left without a candidate within `within`: the
    Stages the stock cannot serve as well as the generator would (their shortfall).

    Candidates sorted by score, so each pick looks only at the untaken ones next to its target
    (a night's query over 100,000 stock puzzles stays well under a second)."""
    scored = sorted(
        (e for e in candidates if e.score is not None), key=lambda e: (e.score, e.stocked, e.id)
    )
    unscored = sorted((e for e in candidates if e.score is None), key=lambda e: (e.stocked, e.id))
    scores = [float(e.score) for e in scored if e.score is not None]
    taken = [False] * len(scored)
    left = len(scored)
    chosen: list[Choice] = []
    order = sorted(targets) or [50.0]
    uncovered: list[float] = []
    first = True
    while len(chosen) < wanted:
        took = 0
        for target in order:
            if len(chosen) >= wanted:
                break
            k = _nearest(scores, taken, target, scored) if left else None
            if k is None or (within is not None and abs(scores[k] - target) > within):
                if first:
                    uncovered.append(target)
                continue
            taken[k] = True
            left -= 1
            took += 1
            chosen.append(scored[k])
        first = False
        if not took:
            break
    if within is None:  # unscored puzzles only where any distance will do
        chosen += unscored[: max(0, wanted - len(chosen))]
    return chosen, uncovered


def _nearest(
    scores: list[float], taken: list[bool], target: float, scored: Sequence[Choice]
) -> int:
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


def draw(
    root: Path,
    targets: Mapping[str, Sequence[float]],
    wanted: Mapping[str, int],
    ruleset: int,
    night: str | None = None,
    index: LevelIndex | None = None,
    *,
    within: float | None = None,
    taken_back: Sequence[Puzzle] = (),
    set_invalid_aside: bool = False,
    scale: RatingProfile | None = None,
) -> Drawn:
    """The stock puzzles a night takes per tier (see the module docstring): only puzzles stocked
    before the night's date (`night`), each within `within` of the target it is taken for. Keys
    repeated inside the stock are taken once; the bundle of `night` (the folder a rerun replaces)
    does not count as shipped, and `taken_back` (what that night took at its first run) is in
    the stock again. `index`: root's index, already refreshed (else it is opened and refreshed).
    `set_invalid_aside` (a night, under the nights' lock): each picked stock file is validated,
    and an invalid one is moved out of the draw (`Drawn.aside`) and another picked instead.
    `scale`: a night under a rating profile gets its puzzles on that scale (the stock holds the
    rating's own), only those still of the tier they were drawn for."""
    if not (root / STOCK_DIR).is_dir() and not taken_back:
        return Drawn({}, {}, {t: sorted(v) for t, v in targets.items() if wanted.get(t)})
    if index is None:
        with LevelIndex(root) as own:
            own.refresh()
            return draw(
                root,
                targets,
                wanted,
                ruleset,
                night,
                own,
                within=within,
                taken_back=taken_back,
                set_invalid_aside=set_invalid_aside,
                scale=scale,
            )
    back = {p.id: p for p in taken_back if p.ruleset == ruleset}
    puzzles: dict[str, list[Puzzle]] = {}
    files: dict[str, Path] = {}
    uncovered: dict[str, list[float]] = {}
    returned: dict[str, Puzzle] = {}
    aside: list[SetAside] = []
    for tier, count in wanted.items():
        seen: set[str] = set()
        candidates = []
        ours = [
            Candidate(
                p.rated.score,
                str(p.provenance.get("stocked", "")),
                p.id,
                p.key,
                stock_path(Path(), p).as_posix(),
            )
            for p in back.values()
            if p.rated.tier == tier
        ]
        for e in sorted(
            index.candidates(tier, ruleset=ruleset, besides=night, before=night) + ours,
            key=lambda e: (e.stocked, e.id, e.path),
        ):
            if e.key not in seen:
                seen.add(e.key)
                candidates.append(e)
        chosen, uncovered[tier] = (
            _valid_pick(root, candidates, targets.get(tier, ()), count, within, aside)
            if set_invalid_aside
            else pick(candidates, targets.get(tier, ()), count, within)
        )
        for e in chosen:
            if (root / e.path).is_file():
                try:
                    puzzle = puzzle_on(read_puzzle(root / e.path), scale)
                except ScaleError:  # rated by another version than the profile weighs
                    continue
                if puzzle.tier != tier:  # of another tier on the night's scale: left in stock
                    continue
                puzzles.setdefault(tier, []).append(puzzle)
                files[e.id] = root / e.path
            else:  # taken at the first run of the night being rerun: back in play
                puzzles.setdefault(tier, []).append(back[e.id])
                returned[e.id] = back[e.id]
    return Drawn(puzzles, files, {t: v for t, v in uncovered.items() if v}, returned, aside)


def _valid_pick(
    root: Path,
    candidates: list[Candidate],
    targets: Sequence[float],
    count: int,
    within: float | None,
    aside: list[SetAside],
) -> tuple[list[Candidate], list[float]]:
    """`pick`, with every stock file it picks checked as the validator checks it: an invalid one
    is set aside (`store.set_aside`, appended to `aside`) and the pick made again without it,
    so the night takes the next nearest or generates the shortfall."""
    while True:
        chosen, uncovered = pick(candidates, targets, count, within)
        bad = set()
        for e in chosen:
            path = root / e.path
            if path.is_file() and (reason := check_drawn(path)) is not None:
                aside.append(set_aside(root, path, reason))
                bad.add(e.path)
        if not bad:
            return chosen, uncovered
        candidates = [e for e in candidates if e.path not in bad]


def taken_record(taken: Iterable[Puzzle]) -> str:
    """The night's `.stock-taken.json`: the stock puzzles its bundle used, with their stock
    provenance, so a rerun (`nightly --force`) can put them back in play and draw as it did."""
    rows = [
        {"id": p.id, "path": stock_path(Path(), p).as_posix(), "provenance": p.provenance}
        for p in sorted(taken, key=lambda p: p.id)
    ]
    return json.dumps({"taken": rows}, indent=1, sort_keys=True) + "\n"


def taken_back(folder: Path) -> list[Puzzle]:
    """What the published night in `folder` took from the stock (its record, the boards read
    from its bundle); empty when it has no record or the bundle no longer holds them."""
    try:
        rows = json.loads((folder / STOCK_TAKEN).read_text(encoding="utf-8"))["taken"]
        loaded = load_file(folder / BUNDLE_FILE)  # the one YAML loader: size cap, no duplicate keys
        if loaded.document is None:
            return []
        data = loaded.document.data
        bundle = Bundle.from_dict(data, str(folder / BUNDLE_FILE))
    except (
        OSError,
        UnicodeDecodeError,
        ValueError,
        KeyError,
        TypeError,
        yaml.YAMLError,
        BundleError,
    ):
        return []
    shipped = {}
    for stage in bundle.stages:
        found = stage.data.get("puzzle")
        if isinstance(found, dict):
            shipped[str(found.get("id"))] = found
    out = []
    for row in rows if isinstance(rows, list) else ():
        if (
            isinstance(row, dict)
            and row.get("id") in shipped
            and isinstance(row.get("provenance"), dict)
        ):
            try:
                puzzle = Puzzle.from_dict({**shipped[row["id"]], "provenance": row["provenance"]})
            except (KeyError, TypeError, ValueError):
                continue
            if puzzle.id == row["id"]:
                out.append(puzzle)
    return out


def stage_move(
    staging: Path,
    root: Path,
    used: Iterable[Path],
    unused_made: Iterable[Puzzle],
    day: _dt.date,
    taken: Iterable[Puzzle] = (),
    back: Iterable[Puzzle] = (),
) -> None:
    """Record in the night's staging folder what `finish` will do to the stock once it is
    published: `used` stock files leave, `unused_made` (stocked `day`) and `back` (puzzles a rerun
    took back and no longer uses, under their first stock date) go in; `taken` (the stock
    puzzles the bundle uses) is the night's record for a rerun."""
    added = []
    for p, when in [(p, day) for p in unused_made] + [(p, _stocked(p, day)) for p in back]:
        target = stock_path(
            Path(STOCK_ADD), p
        )  # relative: .stock-add/stock/<ruleset>/<group>/<id>.yaml
        write_guarded(staging / target, stock_text(p, when, root), kinds=("puzzle",))
        added.append(target.as_posix())
    taken_files = sorted(os.path.relpath(path, root) for path in used)
    write_guarded(staging / STOCK_TAKEN, taken_record(taken))
    write_guarded(
        staging / STOCK_MOVE,
        json.dumps({"take": taken_files, "add": sorted(added)}, indent=1) + "\n",
    )


def _stocked(puzzle: Puzzle, default: _dt.date) -> _dt.date:
    try:
        return _dt.date.fromisoformat(str(puzzle.provenance.get("stocked")))
    except ValueError:
        return default


def stage_aside(
    source: Path, target: Path, names: Sequence[str] = (STOCK_ADD, STOCK_MOVE)
) -> list[str]:
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


def _move(source: Path, target: Path) -> None:
    """Rename a staged stock file into the stock; a stock linked to another file system gets an
    atomic copy, then the staged file goes (a kill in between: the next `finish` sees the
    target there and drops the staged copy)."""
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        write_guarded(target, source.read_bytes(), kinds=("puzzle",))
        source.unlink()


def finish(root: Path) -> list[str]:
    """Complete the stock move of every published night under `root` that still has one pending
    (idempotent: safe to run again after a kill). Returns one line per night finished."""
    lines = []
    for night in sorted(root.iterdir()) if root.is_dir() else ():
        manifest = night / STOCK_MOVE
        if night_date(night.name) is None or not manifest.is_file():
            continue
        try:
            plan = json.loads(manifest.read_text(encoding="utf-8"))
            take, add = list(plan["take"]), list(plan["add"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not ours to guess at: the validator and the next night ignore hidden files
        moved = 0
        for rel in add:
            source = night / rel
            target = root / Path(rel).relative_to(STOCK_ADD)
            if not source.is_file() or ".." in Path(rel).parts:
                continue
            if target.exists():
                source.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                _move(source, target)
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
        shutil.rmtree(night / STOCK_ADD, ignore_errors=True)
        manifest.unlink(missing_ok=True)
        lines.append(f"{night.name}: {removed} puzzle(s) left the stock, {moved} went in")
    return lines
