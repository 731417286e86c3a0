"""`numbermatch rescore --rating-version N PATH...`: re-rate stored puzzles under a rating version.

Unlike a profile (`pipeline.telemetry.rescore`), a new rating version changes the games played
(their counts, the seed), so each puzzle is rated again: its board, adds, certificate and ruleset
replayed by the version's players. A version that confirms (from 4 on) is rated with the
confirmation seed (`pipeline.rating.CONFIRM_SEED`), whose games share none with the default
seed's draw that picked the board, so the new score is not biased toward the target it was
picked for; a puzzle file records that seed as `provenance.rating_seed`, so `validate --deep`
reproduces the rating exactly. A block scored under a rating profile is scored under the same
profile again. A block already at the version is left as it is.

Only the difficulty blocks (and a puzzle file's `provenance.rating_seed`) are rewritten; every
other byte is kept. A bundle's Stages keep their targets (the versions that share a tier table
share the scale). The stock's folders are by size and adds, not tier, so a stock puzzle whose
tier moves stays where it is. The new text must parse to exactly the old data with the new
blocks and must validate, else nothing is written (`numbermatch rescore` checks every file
before it writes one).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from pipeline.atomic import Snapshot, snapshot, write_guarded
from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.loader import find_node, load_text
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.generation.executors import InlineExecutor, PoolExecutor
from pipeline.jobs.report_html import render_report_html
from pipeline.rating import CONFIRM_SEED, DEFAULT_SEED
from pipeline.rating.profile import profile_of, rated_under
from pipeline.rating.score import rate, stored_playouts
from pipeline.rating.versions import VERSIONS
from pipeline.telemetry.rescore import RescoreError, _get, _last_scalar, _Offsets, _scalar, _set
from pipeline.validator import validate_texts


def rating_seed(version: int) -> int:
    """The seed a re-rating by `version` plays with: the confirmation's for a version that
    confirms (the games that picked the board are not the ones that score it), else the default."""
    return CONFIRM_SEED if VERSIONS[version].confirms else DEFAULT_SEED


@dataclass(frozen=True)
class Task:
    """One difficulty block to re-rate: what the rating needs, and where the block is."""

    where: str  # `L3.S2` in a bundle, "" in a puzzle file
    parts: tuple[Any, ...]  # the block's path in the document
    board: str
    adds: int
    solution: tuple[str, ...]
    ruleset: int
    playouts: int
    version: int
    old: dict[str, Any]
    target: float | None = None


@dataclass(frozen=True)
class Moved:
    """One block's old and new score and tier (and its Stage's target, in a bundle)."""

    where: str
    old_score: float | None
    old_tier: str
    new_score: float | None
    new_tier: str
    target: float | None = None

    def __str__(self) -> str:
        at = f"{self.where}: " if self.where else ""
        target = "" if self.target is None else f" (target {self.target:.2f})"
        return (
            f"{at}{_shown(self.old_score)} {self.old_tier} -> {_shown(self.new_score)}"
            f" {self.new_tier}{target}"
        )


def _shown(score: float | None) -> str:
    return "none" if score is None else f"{score:.2f}"


@dataclass(frozen=True)
class Plan:
    """One file read and its blocks to re-rate (`tasks`), before any game is played."""

    path: Path
    text: str
    base: Snapshot
    kind: str
    tasks: tuple[Task, ...]
    skipped: int  # blocks already at the version (or unsolvable: no score to move)


@dataclass(frozen=True)
class Rerated:
    """One file's new text and what changed; `base` is the file as it was read (the write is
    refused if it changed on disk since)."""

    path: Path
    text: str
    base: Snapshot
    kind: str
    moved: tuple[Moved, ...]
    skipped: int
    extra: tuple[tuple[Path, str, Snapshot], ...] = field(default=())  # derived files to rewrite

    @property
    def changed_tier(self) -> int:
        return sum(m.old_tier != m.new_tier for m in self.moved)


def plan_file(path: str | os.PathLike[str], version: int) -> Plan:
    """Read one file and list its blocks to re-rate by `version`; RescoreError when it cannot be."""
    if version not in VERSIONS:
        known = ", ".join(map(str, VERSIONS))
        raise RescoreError(f"--rating-version {version}: not a rating version (known: {known})")
    p = Path(path)
    base = snapshot(p)
    if base.data is None:
        raise RescoreError(f"{p}: no such file")
    try:
        text = base.data.decode("utf-8")
    except UnicodeDecodeError:
        raise RescoreError(f"{p}: not UTF-8 text") from None
    name = str(p)
    before = validate_texts([(name, text)])
    if not before.ok:
        raise RescoreError(
            f"{name}: not re-rated, the file does not validate: {before.first_problem()}"
        )
    doc = load_text(text, name).document
    if doc is None or not isinstance(doc.data, dict):
        raise RescoreError(f"{name}: not a puzzle file or a bundle")
    data = doc.data
    kind = data.get("kind")
    found: list[tuple[str, tuple[Any, ...], Any, float | None]] = []
    if kind == "bundle":
        for stage in Bundle.from_dict(data).stages:
            parts = ("levels", stage.level_index, "stages", stage.stage_index, "puzzle")
            found.append((str(stage.slot), parts, stage.puzzle, stage.target_score))
    elif kind == "puzzle":
        found.append(("", (), Puzzle.from_dict(data), None))
    else:
        raise RescoreError(f"{name}: not a puzzle file or a bundle")

    tasks, skipped = [], 0
    for where, parts, puzzle, target in found:
        old = _get(data, parts + ("difficulty",))
        d = Difficulty.from_dict(old)
        if d.score is None or d.version == version:
            skipped += 1
            continue
        tasks.append(
            Task(
                where,
                parts + ("difficulty",),
                puzzle.board,
                puzzle.adds,
                tuple(puzzle.solution),
                puzzle.ruleset,
                stored_playouts(old),
                version,
                dict(old),
                target,
            )
        )
    return Plan(p, text, base, str(kind), tuple(tasks), skipped)


def rerate_task(tasks: Sequence[Task], k: int) -> dict[str, Any]:
    """Task k's new difficulty block (a pure function of the task: any process may run it)."""

    t = tasks[k]
    try:
        rating = rate(
            t.board,
            t.adds,
            playouts=t.playouts,
            seed=rating_seed(t.version),
            solution=t.solution,
            ruleset=t.ruleset,
            version=t.version,
        )
        return rated_under(rating, profile_of(t.old)).to_dict()
    except (NumberMatchError, ValueError) as exc:
        place = f" {t.where}" if t.where else ""
        raise RescoreError(f"{t.board}{place}: cannot be re-rated: {exc}") from exc


def rerated_text(plan: Plan, blocks: Sequence[dict[str, Any]]) -> Rerated:
    """The plan's file with its tasks' new blocks (`blocks`, in task order) written in place;
    RescoreError when the result would not be exactly the old data with the new blocks, or
    would not validate."""
    name = str(plan.path)
    text = plan.text
    if not plan.tasks:
        return Rerated(plan.path, text, plan.base, plan.kind, (), plan.skipped)
    doc = load_text(text, name).document
    assert doc is not None
    offsets = _Offsets(text)
    edits: list[tuple[int, int, str]] = []
    expected = copy.deepcopy(doc.data)
    moved = []
    for task, new in zip(plan.tasks, blocks):
        node, _, found = find_node(doc.node, list(task.parts))
        if not found or not isinstance(node, MappingNode) or node.flow_style or not node.value:
            raise _layout(name)
        _set(expected, task.parts, new)
        indent = " " * node.value[0][0].start_mark.column
        body = dump_yaml(new).rstrip("\n").replace("\n", "\n" + indent)
        start = offsets.at(node.value[0][0].start_mark)
        end = offsets.at(_last_scalar(node.value[-1][1]).end_mark)
        edits.append((start, end, body))
        was, now = Difficulty.from_dict(task.old), Difficulty.from_dict(new)
        moved.append(Moved(task.where, was.score, was.tier, now.score, now.tier, task.target))
    if plan.kind == "puzzle":
        edits.append(
            _seed_edit(doc, text, offsets, expected, rating_seed(plan.tasks[0].version), name)
        )
    out = text
    for start, end, repl in sorted(edits, reverse=True):
        out = out[:start] + repl + out[end:]
    check = load_text(out, name).document
    if check is None or check.data != expected:
        raise _layout(name)
    after = validate_texts([(name, out)])
    if not after.ok:
        raise RescoreError(
            f"{name}: not re-rated, the result would not validate: {after.first_problem()}"
        )
    return Rerated(plan.path, out, plan.base, plan.kind, tuple(moved), plan.skipped)


def _layout(name: str) -> RescoreError:
    return RescoreError(
        f"{name}: not re-rated: the file's layout is one this command cannot edit in place "
        "(hand-formatted difficulty blocks?); `numbermatch puzzle --refresh` rewrites it"
    )


def _seed_edit(
    doc: Any, text: str, offsets: _Offsets, expected: dict[str, Any], seed: int, name: str
) -> tuple[int, int, str]:
    """The edit that records the rating's seed as the puzzle file's `provenance.rating_seed`."""
    node, _, found = find_node(doc.node, ["provenance"])
    if not found:  # a puzzle file without provenance gets one saying the rating's seed
        expected["provenance"] = {"rating_seed": seed}
        end = len(text.rstrip("\n"))
        return end, end, f"\nprovenance:\n  rating_seed: {_scalar(seed)}"
    if not isinstance(node, MappingNode) or node.flow_style or not node.value:
        raise _layout(name)
    expected["provenance"]["rating_seed"] = seed
    keys = {k.value: v for k, v in node.value if isinstance(k, ScalarNode)}
    if "rating_seed" in keys:
        v = keys["rating_seed"]
        return offsets.at(v.start_mark), offsets.at(v.end_mark), _scalar(seed)
    indent = " " * node.value[0][0].start_mark.column
    end = offsets.at(_last_scalar(node.value[-1][1]).end_mark)
    return end, end, f"\n{indent}rating_seed: {_scalar(seed)}"


def rerate_files(
    paths: Sequence[Path], version: int, *, jobs: int = 1
) -> tuple[list[Rerated], int]:
    """Every file's re-rated text (nothing written) and the ratings played; RescoreError on the
    first file that cannot be re-rated. `jobs` > 1 plays the ratings on worker processes (the
    result does not depend on it)."""
    plans = [plan_file(p, version) for p in paths]
    tasks = tuple(t for plan in plans for t in plan.tasks)
    if jobs > 1 and len(tasks) > 1:
        executor: Any = PoolExecutor(min(jobs, len(tasks)))
    else:
        executor = InlineExecutor()
    blocks = [block for block, _ in executor.outcomes(rerate_task, tasks, len(tasks))]
    out, at = [], 0
    for plan in plans:
        n = len(plan.tasks)
        result = rerated_text(plan, blocks[at : at + n])
        at += n
        out.append(_with_report(result))
    return out, len(tasks)


def _with_report(result: Rerated) -> Rerated:
    """A re-rated night's bundle takes its report.html along (rendered from the bundle); its
    report.md stays as the nightly job wrote it (the run's own figures)."""
    if result.kind != "bundle" or not result.moved or result.path.name != "bundle.yaml":
        return result
    html = result.path.with_name("report.html")
    if not html.is_file():
        return result
    base = snapshot(html)
    now = load_text(result.text, str(result.path)).document
    assert now is not None  # validated when it was re-rated
    page = render_report_html(now.data)
    if base.text == page:
        return result
    return Rerated(
        result.path,
        result.text,
        result.base,
        result.kind,
        result.moved,
        result.skipped,
        ((html, page, base),),
    )


def write_rerated(result: Rerated) -> list[Path]:
    """Write a re-rated file (atomic, under the file's lock, refused when it changed since it
    was read: `pipeline.atomic.write_guarded`) and its derived files; returns what was written."""
    written = []
    if result.base.text != result.text:
        written.append(write_guarded(result.path, result.text, base=result.base))
    for path, text, base in result.extra:
        written.append(write_guarded(path, text, base=base))
    return written
