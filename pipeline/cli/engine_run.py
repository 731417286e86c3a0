"""`moves`, `apply`, `show` without typer: what the commands do, callable from the typer
commands (`engine_cmds`) and from the start-up fast path (`fast`) alike.

Each function prints its output and returns the exit code; bad input raises NumberMatchError,
which the caller turns into the one-line error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.engine.board import WIDTH, Board, format_board, parse
from pipeline.engine.moves import Move
from pipeline.engine.rules import legal_pairs
from pipeline.engine.stage import Stage
from pipeline.errors import NumberMatchError, clip
from pipeline.formats.difficulty import Difficulty
from pipeline.limits import MAX_CELLS

if TYPE_CHECKING:
    from pipeline.formats.source import Source

_NAMES = [f"{i // WIDTH},{i % WIDTH}" for i in range(WIDTH * 512)]


def _emit(obj: object) -> None:
    import json  # start-up time: only --json output needs it

    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")


def _source(text: str, search: Sequence[Path] | None) -> Source:
    from pipeline.formats.source import resolve  # start-up time: not for --help

    return resolve(text, search or ())


def pair_texts(cells: bytes) -> list[str]:
    names = (
        _NAMES
        if len(cells) <= len(_NAMES)
        else [f"{i // WIDTH},{i % WIDTH}" for i in range(len(cells))]
    )
    return [f"{names[i]}-{names[j]}" for i, j in legal_pairs(cells)]


# The longest stdin line worth reading: a board of limits.MAX_CELLS cells in notation, and adds.
MAX_LINE = MAX_CELLS + MAX_CELLS // WIDTH + 64


def stdin_lines() -> Iterator[tuple[int, str]]:
    """(line number, text without the newline) for each line on standard input.

    A line longer than MAX_LINE is read in pieces and given as its first MAX_LINE + 1
    characters (which no parser accepts), so memory stays bounded whatever comes in."""
    number = 0
    while True:
        line = sys.stdin.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        rest = line
        while len(rest) > MAX_LINE and not rest.endswith("\n"):  # skip the rest of an overlong line
            rest = sys.stdin.readline(MAX_LINE + 1)
        yield number, line.rstrip("\r\n")


def moves_stream() -> int:
    """JSON Lines: one object per stdin board; malformed lines get an error and the run goes on."""
    errors = 0
    for _, line in stdin_lines():
        try:
            cells = parse(line)
        except NumberMatchError as exc:
            errors += 1
            _emit({"board": clip(line), "error": str(exc)})
            continue
        _emit({"board": line, "pairs": pair_texts(cells)})
    sys.stdout.flush()
    return 1 if errors else 0


def moves(board: str, json_out: bool = False, search: Sequence[Path] | None = None) -> int:
    if board == "-":
        return moves_stream()
    b = Board(_source(board, search).cells)
    pairs = pair_texts(b.cells)
    if json_out:
        _emit({"board": str(b), "pairs": pairs})
        return 0
    if not pairs:
        print(f"{b}: no legal pairs")
        return 0
    lines = [f"{b}: {len(pairs)} legal pair{'s' if len(pairs) != 1 else ''}"]
    for text in pairs:
        m = Move.parse(text)
        assert m.first is not None and m.second is not None
        lines.append(f"  {text:<9} {b.cells[m.first]}+{b.cells[m.second]}")
    print("\n".join(lines))
    return 0


def apply(
    board: str,
    move_list: Sequence[str] = (),
    adds: int | None = None,
    json_out: bool = False,
    search: Sequence[Path] | None = None,
) -> int:
    source = _source(board, search)
    stage = Stage(source.cells, adds=source.adds_or(adds), ruleset=source.ruleset)
    for number, text in enumerate(move_list, 1):
        try:
            stage.play(text)
        except NumberMatchError as exc:
            raise NumberMatchError(f"move {number}: {exc}") from exc
    result = format_board(stage.cells)
    if json_out:
        _emit({"board": result, "status": stage.status, "adds_left": stage.adds_left})
    else:
        print(f"{result or '(empty board)'}\nstatus: {stage.status}, adds left: {stage.adds_left}")
    return 0


def render_grid(cells: bytes, hint: Sequence[int] = (), last: Sequence[int] = ()) -> str:
    """The board as rows of digits with row and column numbers, three columns a cell (what `show`
    and `play` both draw): gaps '.', the cells of the last pair played '*' (now gaps), the
    hinted pair `[d]`."""
    lines = ["     " + "".join(f"{c:^3}" for c in range(WIDTH)).rstrip()]
    for start in range(0, len(cells), WIDTH):
        row = []
        for i in range(start, min(start + WIDTH, len(cells))):
            v = cells[i]
            if i in hint:
                row.append(f"[{v}]")
            elif not v:
                row.append(" * " if i in last else " . ")
            else:
                row.append(f" {v} ")
        lines.append(f"{start // WIDTH:>3}  " + "".join(row).rstrip())
    return "\n".join(lines)


def show(board: str, search: Sequence[Path] | None = None) -> int:
    source = _source(board, search)
    b = Board(source.cells)
    out = []
    if source.puzzle is not None:
        d = Difficulty.from_dict(source.puzzle.get("difficulty"))
        rated = f", {d}" if d.score is not None else ""
        out.append(f"{source.label}: {source.adds} add{'s' if source.adds != 1 else ''}{rated}")
    if b.is_empty:
        out.append("(empty board: the Stage is won)")
    else:
        pairs = pair_texts(b.cells)
        active = b.active_count
        out += [
            render_grid(b.cells),
            f"\n{b.rows} rows, {active} active, {len(b) - active} gaps",
            f"legal pairs ({len(pairs)}): " + ("  ".join(pairs) if pairs else "none"),
        ]
    print("\n".join(out))
    return 0
