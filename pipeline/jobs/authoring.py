"""Puzzles from a designer's own boards, and refreshing hand-edited puzzle files.

`author` turns a board and its adds into a Puzzle the way the generator would keep one:
solved (the certificate), rated with the generator's rating seed (so `validate --deep` and a
plain `rate` reproduce it), the id derived from the content. `refresh` re-derives the id, the
certificate (kept when it still wins) and the difficulty of an edited file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, ScalarNode

from pipeline.atomic import Snapshot
from pipeline.engine.board import format_board
from pipeline.engine.rulesets import DEFAULT, ruleset_for
from pipeline.engine.stage import replay
from pipeline.errors import NumberMatchError
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.loader import load_text
from pipeline.formats.puzzle import GENERATOR_NAME, PUZZLE_KIND, SCHEMA_VERSION, Puzzle, dump_yaml
from pipeline.formats.source import SourceError, puzzle_source, snapshot_document
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.score import rate
from pipeline.schemas import schema_hint
from pipeline.solver.budgets import DEFAULT_BUDGET_NODES
from pipeline.solver.search import SOLVED, UNSOLVABLE, solve
from pipeline.validator import validate_texts


class AuthoringError(NumberMatchError):
    """A board that cannot become a puzzle: empty, unsolvable, or the solver's budget ran out."""


def author(
    cells: bytes,
    adds: int,
    *,
    budget_nodes: int | None = DEFAULT_BUDGET_NODES,
    provenance: dict[str, Any] | None = None,
    certificate: tuple[str, ...] | None = None,
    rating_seed: int = DEFAULT_SEED,  # the generator's: a plain `numbermatch rate BOARD --adds N` reproduces the tier
    ruleset: int = DEFAULT.number,
) -> Puzzle:
    """A rated Puzzle for the board, or AuthoringError with the solver's verdict.

    `certificate`: a solution to keep when it still wins (checked by replay); otherwise the
    solver finds one.
    """
    board = format_board(cells)
    rules = ruleset_for(ruleset)
    if not cells:
        raise AuthoringError(
            "the board is empty: an empty board is already won, so it is no puzzle"
        )
    if adds < 0:
        raise AuthoringError(f"adds {adds} is negative")
    moves: tuple[str, ...] | None = None
    if certificate:
        try:
            left, _ = replay(cells, certificate, adds, rules)
            moves = None if left else tuple(certificate)
        except NumberMatchError:
            moves = None
    if moves is None:
        result = solve(cells, adds, ruleset=rules, budget_nodes=budget_nodes)
        if result.status == UNSOLVABLE:
            raise AuthoringError(
                f"board {board} with {adds} add{'s' if adds != 1 else ''} is unsolvable: the solver proved that"
                " no sequence of moves wins it; give it more adds or change the board"
            )
        if result.status != SOLVED or result.moves is None:
            raise AuthoringError(
                f"board {board} with {adds} add{'s' if adds != 1 else ''}: solvability unknown, the solver's budget"
                f" of {budget_nodes:,} nodes ran out; raise the budget",
                remedy="budget_nodes",
            )
        moves = tuple(str(m) for m in result.moves)
    rating = rate(cells, adds, seed=rating_seed, solution=moves, ruleset=rules)
    return Puzzle(
        board=board,
        adds=adds,
        solution=moves,
        difficulty=rating.to_dict(),
        ruleset=rules.number,
        provenance=provenance
        if provenance is not None
        else {
            "generator": GENERATOR_NAME,
            "strategy": "hand",
            "rating_seed": rating_seed,
        },
    )


def puzzle_text(puzzle: Puzzle, folder: Path) -> str:
    """The puzzle file's text, with the schema modeline when the folder is in this repository."""
    return dump_yaml(puzzle.to_document(), schema_hint("puzzle", folder))


def validation_problem(name: str, text: str) -> str | None:
    """The validator's first problem with the text as a puzzle file, or None when it is valid."""
    report = validate_texts([(name, text)])
    if report.ok:
        return None
    return report.first_problem()


@dataclass(frozen=True)
class Refresh:
    """The outcome of refreshing one file: the new Puzzle, its text and what changed."""

    path: Path
    puzzle: Puzzle
    text: str
    changes: list[str]
    old_id: str | None = None
    base: Snapshot | None = None  # the file as read: the write re-checks it (pipeline.atomic)


def refresh(path: Path, *, budget_nodes: int | None = DEFAULT_BUDGET_NODES) -> Refresh:
    """Re-derive id, certificate and difficulty of a (hand-edited) puzzle file; nothing written.

    The new text changes only the values that changed (`edit_values`): comments, the modeline
    and the layout of untouched fields stay byte-identical. A field the puzzle format does not
    have (a designer's `notes:`) is refused with its line, never silently dropped."""
    try:
        base, document = snapshot_document(path)
        source = puzzle_source(document.data, path)
    except SourceError as exc:
        raise AuthoringError(str(exc)) from exc
    puzzle, changes, old_id = refreshed(source, str(path), budget_nodes)
    text = edit_values(base.text, document, puzzle.to_document(), path)
    return Refresh(path, puzzle, text, changes, old_id, base)


def refreshed(
    source: Any, where: str, budget_nodes: int | None, *, embedded: bool = False
) -> tuple[Puzzle, list[str], str | None]:
    """The puzzle of a `pipeline.formats.source.Source` (a file's, or with `embedded` a bundle
    stage's, which has no file header) re-derived: the new Puzzle, what changed, and its old id.
    `where` names it in errors."""
    old: dict[str, Any] = source.puzzle or {}
    stored = old.get("provenance")
    provenance: dict[str, Any] = stored if isinstance(stored, dict) else {}
    seed = provenance.get("rating_seed", DEFAULT_SEED)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        seed = DEFAULT_SEED
    provenance = (
        dict(provenance) if provenance else {"generator": GENERATOR_NAME, "strategy": "hand"}
    )
    provenance["rating_seed"] = seed
    assert source.adds is not None
    try:
        puzzle = author(
            source.cells,
            source.adds,
            budget_nodes=budget_nodes,
            provenance=provenance,
            certificate=source.solution,
            rating_seed=seed,
            ruleset=source.ruleset,
        )
    except AuthoringError as exc:
        raise AuthoringError(f"{where}: {exc}") from exc
    old_id = old.get("id") if isinstance(old.get("id"), str) else None
    return puzzle, _changes(old, puzzle, header=not embedded), old_id


def edit_values(text: str, document: Any, new: dict[str, Any], path: Path) -> str:
    """`text` (one top-level block mapping) with each top-level value that differs from `new`
    rewritten in place and keys missing from the file appended; every other byte is kept.
    Raises AuthoringError listing the fields the file has and `new` does not (they would be
    lost or invalid), or when the file's layout cannot be edited in place."""
    root = document.node
    old = document.data
    extra = [
        (k.value, k.start_mark.line + 1)
        for k, _ in root.value
        if isinstance(k, ScalarNode) and k.value not in new
    ]
    if extra:
        listed = ", ".join(f"{key!r} (line {line})" for key, line in extra)
        raise AuthoringError(
            f"{path}: not rewritten: {listed} {'is not a puzzle field' if len(extra) == 1 else 'are not puzzle fields'}"
            " and would be lost; move the text into a # comment, which a refresh keeps"
        )
    if not isinstance(root, MappingNode) or root.flow_style:
        raise AuthoringError(
            f"{path}: not rewritten: a refresh edits a file written as a block mapping (key: value lines)"
        )
    spans = []
    for key_node, value_node in root.value:
        key = key_node.value
        if old.get(key) == new[key] and type(old.get(key)) is type(new[key]):
            continue
        start = key_node.start_mark.index
        if isinstance(value_node, ScalarNode) or value_node.flow_style:
            end = value_node.end_mark.index
            body = dump_yaml({key: new[key]}).rstrip("\n")
        else:  # a block: up to the end of the line holding its last value (later comments stay)
            last = value_node
            while (
                not isinstance(last, ScalarNode)
                and not getattr(last, "flow_style", False)
                and last.value
            ):
                last = last.value[-1][1] if isinstance(last, MappingNode) else last.value[-1]
            end = text.find("\n", last.end_mark.index)
            end = len(text) if end < 0 else end + 1
            body = dump_yaml({key: new[key]})
        spans.append((start, end, body))
    out = text
    for start, end, body in sorted(spans, reverse=True):
        out = out[:start] + body + out[end:]
    missing = {k: v for k, v in new.items() if k not in old}
    if missing:
        out = out + ("" if out.endswith("\n") else "\n") + dump_yaml(missing)
    check = load_text(out, str(path))
    if check.document is None or check.document.data != new:
        raise AuthoringError(
            f"{path}: not rewritten: its layout cannot be edited in place (write it as plain key: value lines)"
        )
    return out


def _changes(old: dict[str, Any], new: Puzzle, *, header: bool = True) -> list[str]:
    out = []
    if old.get("id") != new.id:
        out.append(f"id {old.get('id')} -> {new.id}")
    if old.get("board") != new.board:
        out.append(f"board rewritten as {new.board}")
    old_solution = old.get("solution")
    if not isinstance(old_solution, list) or tuple(map(str, old_solution)) != new.solution:
        out.append(f"certificate re-solved ({len(new.solution)} moves)")
    stored = old.get("difficulty")
    d_old: dict[str, Any] = stored if isinstance(stored, dict) else {}
    d_new = new.difficulty
    was, now = Difficulty.from_dict(d_old), new.rated
    if was.tier != now.tier:
        out.append(f"tier {was.tier} -> {now.tier}")
    if was.score != now.score:
        out.append(f"score {was.score} -> {now.score}")
    others = sorted(
        k
        for k in set(d_old) | set(d_new)
        if k not in ("tier", "score") and d_old.get(k) != d_new.get(k)
    )
    if others:
        out.append("metrics changed: " + ", ".join(others))
    if header and (old.get("schema_version") != SCHEMA_VERSION or old.get("kind") != PUZZLE_KIND):
        out.append("header (schema_version, kind, ruleset) rewritten")
    elif old.get("ruleset") != new.ruleset:
        out.append(f"ruleset {old.get('ruleset')} -> {new.ruleset}")
    return out
