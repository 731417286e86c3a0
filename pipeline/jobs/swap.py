"""Swap one Stage of a bundle for a Puzzle from a pool, leaving everything else byte-identical.

Re-assembling a bundle re-optimises every slot, so a designer who dislikes one Stage would get
a different night. `swap` instead edits only the text of that Stage's `puzzle:` mapping in the
bundle file (found through the YAML node marks), so every other byte, comments included, stays
as it was. The new text is validated as a whole bundle before it is written atomically.

The replacement is the named Puzzle, or `choose_replacement`'s: the pool's Puzzle nearest the
Stage's target score in the target's tier that is not already in the bundle and does not repeat
a neighbour's digit layout (the assembler's variety rule); ties go to the smaller id. That choice
is a pure function of the Stages and the pool, so the studio offers exactly what `swap` takes
without reading or validating the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.atomic import Snapshot, WriteRefused, snapshot, write_guarded
from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import NumberMatchError, os_message
from pipeline.formats.bundle import Bundle, BundleError, Stage
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.puzzle import PUZZLE_KIND, SCHEMA_VERSION, Puzzle, dump_yaml
from pipeline.formats.scale import on_bundle_scale, puzzle_on, stages_scale, tier_of
from pipeline.formats.slot import Slot
from pipeline.formats.source import SourceError, bundle_stage, snapshot_document
from pipeline.jobs.assembler import digit_layout
from pipeline.jobs.authoring import refreshed
from pipeline.rating.profile import RatingProfile
from pipeline.validator import validate_texts


class SwapError(NumberMatchError):
    """The swap cannot be made: no such Stage or Puzzle, nothing fits, or the result is invalid."""


@dataclass(frozen=True)
class SwapResult:
    """What a swap did: the Stage, its target, the Puzzle taken out and the one put in."""

    path: Path
    level: int
    stage: int
    target_score: float
    old_id: str
    old_tier: str
    old_score: float | None
    new: Puzzle
    text: str
    old_puzzle: dict[str, Any] | None = None
    base: Snapshot | None = None  # the bundle as read: the write re-checks it (pipeline.atomic)

    def summary(self) -> str:
        old = f"{self.old_id} ({self.old_tier}, {_score_text(self.old_score)})"
        new = f"{self.new.id} ({self.new.tier}, {_score_text(self.new.rated.score)})"
        return f"{self.path}: L{self.level}.S{self.stage} {old} -> {new}, target {self.target_score:.2f}"


def _score_text(score: Any) -> str:
    return (
        f"score {score:.2f}"
        if isinstance(score, (int, float)) and not isinstance(score, bool)
        else "no score"
    )


def _load(path: Path) -> tuple[Snapshot, Any, Bundle]:
    """The bundle as read (its bytes are re-checked before the write), its YAML node tree (read
    with the validator's safe loader from those same bytes) and its value."""
    try:
        snap, document = snapshot_document(path)
    except SourceError as exc:
        raise SwapError(str(exc)) from exc
    data = document.data
    if not isinstance(data, dict) or data.get("kind") != "bundle":
        raise SwapError(f"{path}: is not a bundle (a swap replaces a Stage of a bundle file)")
    try:
        return snap, document, Bundle.from_dict(data, str(path))
    except BundleError as exc:
        raise SwapError(str(exc)) from exc


def _mapping_value(node: Any, key: str) -> Any:
    for k, v in node.value:
        if getattr(k, "value", None) == key:
            return v
    return None


def _puzzle_node(document: Any, found: Stage) -> Any:
    """The YAML node of `found`'s puzzle mapping (None if it has none): the node tree is walked
    by the Stage's place in the document, which `Bundle.from_dict` recorded."""
    levels = _mapping_value(document.node, "levels")
    stages = _mapping_value(levels.value[found.level_index], "stages")
    return _mapping_value(stages.value[found.stage_index], "puzzle")


def _replacement_text(node: Any, text: str, puzzle: Puzzle) -> tuple[int, int, str]:
    """The span of the old puzzle mapping in `text` and the text to put there instead."""
    start = node.start_mark.index
    core = puzzle.core_dict()
    if node.flow_style:
        return start, node.end_mark.index, json.dumps(core)
    # A block mapping ends where the next token starts (past the newline and the next line's
    # indent): end the span at its last line break instead.
    end = text.rfind("\n", start, node.end_mark.index) + 1
    if end <= start:
        end = len(text)
    indent = " " * node.start_mark.column
    lines = dump_yaml(core).splitlines()
    body = lines[0] + "".join(f"\n{indent}{line}" for line in lines[1:]) + "\n"
    return start, end, body


def _layout(board: str, ruleset: int) -> str:
    return digit_layout(board, ruleset)


def _stage_at(bundle: Bundle, path: Path, level: int, stage: int) -> Stage:
    """Stage `stage` of Level `level` (named as the bundle numbers its Levels)."""
    try:
        return bundle.locate(Slot(level, stage), str(path))
    except BundleError as exc:
        raise SwapError(str(exc)) from exc


def refresh_stage(
    bundle: str | os.PathLike[str],
    level: int,
    stage: int,
    *,
    budget_nodes: int | None,
    write: bool = True,
) -> tuple[str, Puzzle, list[str]]:
    """Re-derive id, certificate and difficulty of the puzzle of one Stage in a bundle (after its
    board or adds were edited by hand), editing only that `puzzle:` mapping as a swap does.
    Unlike a swap, the bundle need not validate before (the stale Stage is why it does not), but
    it must after; nothing is written otherwise. Returns the new text, the Puzzle and what changed."""
    path = Path(bundle)
    snap, document, value = _load(path)
    text = snap.text
    puzzle_node = _puzzle_node(document, _stage_at(value, path, level, stage))
    if puzzle_node is None:
        raise SwapError(f"{path}: L{level}.S{stage} has no puzzle")
    puzzle, changes, _ = refreshed(
        bundle_stage(path, level, stage), f"{path}:L{level}.S{stage}", budget_nodes, embedded=True
    )
    start, end, body = _replacement_text(puzzle_node, text, puzzle)
    new_text = text[:start] + body + text[end:]
    report = validate_texts([(str(path), new_text)])
    if not report.ok:
        raise SwapError(f"the refreshed bundle would not validate: {report.first_problem()}")
    if write and new_text != text:
        write_guarded(path, new_text, base=snap)  # refused if the bundle changed since it was read
    return new_text, puzzle, changes


def swap_stage(
    bundle: str | os.PathLike[str],
    level: int,
    stage: int,
    pool: Sequence[Puzzle],
    *,
    with_id: str | None = None,
    write: bool = True,
    where: str = "pool",
) -> SwapResult:
    """Replace Stage `stage` of Level `level` (both from 1) by a pool Puzzle; see the module
    docstring. Writes the bundle (guarded: `pipeline.atomic.write_guarded`) unless `write` is
    False (then `commit_swap` writes it, pool first); raises SwapError, naming the candidates
    `where` came from (the pool, or the stock)."""
    path = Path(bundle)
    snap, document, value = _load(path)
    text = snap.text
    before = validate_texts([(str(path), text)])
    if not before.ok:
        raise SwapError(f"the bundle does not validate before the swap: {before.first_problem()}")
    found = _stage_at(value, path, level, stage)
    pool = on_bundle_scale(pool, value.data, str(path))  # scores compared on the bundle's scale
    stages = [s.data for s in value.stages]
    flat = sum(len(lv) for lv in value.levels[: found.level_index]) + found.stage_index
    old = dict(found.data["puzzle"])
    target = found.target_score
    if target is None:
        raise SwapError(f"{path}: L{level}.S{stage} has no target_score")
    used = {str(s["puzzle"].get("id")) for s in stages}
    if with_id is not None:
        new = next((p for p in pool if p.id == with_id), None)
        if new is None:
            raise SwapError(
                f"puzzle {with_id}: no such puzzle in the {where} ({len(pool)} puzzles)"
            )
        if new.id in used:
            raise SwapError(
                f"puzzle {with_id}: already in the bundle; a bundle uses each puzzle once"
            )
    else:
        new = choose_replacement(stages, flat, pool, f"L{level}.S{stage}", where=where)
    puzzle_node = _puzzle_node(document, found)
    if puzzle_node is None:
        raise SwapError(f"{path}: L{level}.S{stage} has no puzzle")
    start, end, body = _replacement_text(puzzle_node, text, new)
    new_text = text[:start] + body + text[end:]
    report = validate_texts([(str(path), new_text)])
    if not report.ok:
        raise SwapError(f"the swapped bundle would not validate: {report.first_problem()}")
    if write:
        write_guarded(path, new_text, base=snap)
    was = Difficulty.from_dict(old.get("difficulty"))
    return SwapResult(
        path,
        level,
        stage,
        float(target),
        str(old.get("id")),
        was.tier,
        was.score,
        new,
        new_text,
        dict(old),
        snap,
    )


def commit_swap(result: SwapResult, pool: Path | None) -> Path | None:
    """Write a swap made with `write=False`: the old puzzle into the `pool` folder first (so a
    failure or a kill never leaves it in neither place), then the bundle, guarded against a
    change since it was read; a refused bundle write takes back the pool file it made. Returns
    the pool file written (None: no pool, or the puzzle was there already). Raises SwapError
    (a WriteRefused or any OSError as one line)."""
    kept = None
    try:
        if pool is not None:
            kept = keep_in_pool(result, pool)
        write_guarded(result.path, result.text, base=result.base)
    except (WriteRefused, OSError) as exc:
        if kept is not None:
            kept.unlink(
                missing_ok=True
            )  # ours, made a moment ago: the bundle still has that puzzle
        what = (
            str(exc)
            if isinstance(exc, WriteRefused)
            else f"cannot write {exc.filename or result.path}: {os_message(exc)}"
        )
        raise SwapError(what if "nothing written" in what else f"{what}; nothing written") from None
    return kept


def keep_in_pool(result: SwapResult, folder: Path) -> Path | None:
    """Write the puzzle a swap took out into the pool folder as `<id>.yaml`, so the swap can be
    undone; None when a file of that name is already there or it would not validate. Raises
    WriteRefused or OSError when it cannot be written."""
    if not result.old_puzzle:
        return None
    target = folder / f"{result.old_id}.yaml"
    if target.exists():
        return None
    puzzle = puzzle_on(Puzzle.from_dict(result.old_puzzle), None)  # a pool of one scale
    doc = {"schema_version": SCHEMA_VERSION, "kind": PUZZLE_KIND, **puzzle.core_dict()}
    text = dump_yaml(doc)
    if not validate_texts([(str(target), text)]).ok:
        return None
    if (
        not folder.is_dir()
        or not os.access(folder, os.W_OK | os.X_OK)
        or not folder.stat().st_mode & 0o222
    ):
        raise WriteRefused(f"cannot write into {folder}: it is not a writable folder")
    write_guarded(target, text, base=snapshot(target))
    return target


def candidate_order(
    target: float, scale: RatingProfile | None = None
) -> Callable[[Puzzle], tuple[int, float, str]]:
    """How candidates for a Stage of this target rank: its tier first, then the nearest score,
    then the smaller id (the studio lists the pool in this order). `scale`: the bundle's (the
    candidates are on it: `on_bundle_scale`)."""
    tier = tier_of(target, scale) if 0 <= target <= 100 else None

    def key(p: Puzzle) -> tuple[int, float, str]:
        score = p.rated.score
        return (0 if p.tier == tier else 1, abs(score - target) if score is not None else 1e9, p.id)

    return key


def choose_replacement(
    stages: Sequence[Mapping[str, Any]],
    flat: int,
    pool: Sequence[Puzzle],
    name: str,
    *,
    where: str = "pool",
) -> Puzzle:
    """The Puzzle `swap` puts in Stage number `flat` (0-based over the whole bundle) of a bundle
    whose Stage mappings are `stages`, named `name` in messages: see the module docstring. Pure:
    reads and writes nothing. Raises SwapError saying why no Puzzle of the `where` (the pool, or
    the stock) fits."""
    target = stages[flat].get("target_score")
    if not isinstance(target, (int, float)) or isinstance(target, bool):
        raise SwapError(f"{name} has no target_score")
    scale = stages_scale(stages)
    pool, tier = [puzzle_on(p, scale) for p in pool], tier_of(float(target), scale)
    used = {str((s.get("puzzle") or {}).get("id")) for s in stages}
    same_tier = [p for p in pool if p.tier == tier and p.id not in used]
    if not same_tier:
        tiers = sorted({p.tier for p in pool})
        raise SwapError(
            f"the {where} has no unused {tier} puzzle for {name} (target {target:.2f});"
            f" its tiers: {', '.join(tiers) or 'none'}; name the puzzle to take instead",
            remedy="with",
        )
    neighbours = set()
    for k in (flat - 1, flat + 1):
        puzzle = stages[k].get("puzzle") if 0 <= k < len(stages) else None
        if isinstance(puzzle, Mapping):
            neighbours.add(
                _layout(str(puzzle["board"]), int(puzzle.get("ruleset", DEFAULT.number)))
            )
    varied = [p for p in same_tier if _layout(p.board, p.ruleset) not in neighbours]
    if not varied:
        raise SwapError(
            f"every unused {tier} puzzle in the {where} repeats the digit layout of a neighbour of"
            f" {name}; name one to take it anyway",
            remedy="with",
        )
    return min(varied, key=candidate_order(float(target), scale))
