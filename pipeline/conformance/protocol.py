"""The runner protocol: one JSON request a line in, one JSON answer a line out (docs/conformance.md).

`answer(request)` is the reference: what the package's own engine answers, through a `Ruleset`
(so the tests can put deliberately wrong rulesets behind the same protocol). The expected
answers of the suite are this function's answers, and `divergence` says how an engine's answer
differs from one. Requests (every one may carry `"ruleset": 1`; another number is refused):

- `parse {board}` -> `{board, rows, active}`: the notation back, rows and active numbers;
- `pairs {board}` -> `{pairs: ["R,C-R,C", ...]}`: every legal pair (order free, each once);
- `remove {board, pair}` -> `{board}`: the board after removing the pair (collapse included);
- `add {board}` -> `{board}`: the board after Add numbers;
- `count {board, adds, depth}` -> `{counts: [n1, ..., n_depth]}`: perft, the number of move
  sequences of each length 1..depth (a move: a legal pair, or `+` while adds are left and the
  board is not empty);
- `replay {board, adds, moves}` -> `{board, adds_left, status}` after playing the moves.

A refusal is `{error: CODE}` (`replay` adds `move`, the 1-based number of the refused move);
other fields (a `message`) are free. The codes are `ERRORS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pipeline.conformance import SUITE_RULESET
from pipeline.engine.board import WIDTH, format_board, parse, row_count
from pipeline.engine.moves import ADD_TEXT, Move
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.engine.stage import status_of
from pipeline.errors import NumberMatchError, shorten
from pipeline.limits import MAX_ADDS, MAX_CELLS, MAX_PERFT_NODES

Answer = dict[str, Any]
Request = dict[str, Any]

OPS = ("parse", "pairs", "remove", "add", "count", "replay")
ERRORS = {
    "bad-request": "the request is not one the protocol defines (not JSON, unknown op, a field missing)",
    "unknown-ruleset": "the request names a ruleset the engine does not implement",
    "invalid-board": "the board is not valid notation (docs/rules.md, The board)",
    "off-board": "a cell of the pair is not on the board",
    "self": "the two cells of the pair are one cell",
    "gap": "a cell of the pair is a gap",
    "values": "the values are neither equal nor sum to 10",
    "blocked": "no straight path between the cells has only gaps between them",
    "no-adds": "an add with no add left",
    "empty-board": "an add on the empty board: there is nothing to copy",
    "limit": "past the engine's own bound on work (the reference: 4,000 cells, perft nodes)",
}
COUNT_DEPTH = 3  # the deepest `count` the protocol asks for
_PAIR_TEXT = re.compile(r"([0-9]{1,6}),([0-9]{1,6})-([0-9]{1,6}),([0-9]{1,6})", re.ASCII)


class Refusal(Exception):
    """An answer `{error: code}` raised from deep inside `answer`."""

    def __init__(self, code: str, message: str = "", move: int | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.message = message
        self.move = move

    def answer(self) -> Answer:
        out: Answer = {"error": self.code}
        if self.move is not None:
            out["move"] = self.move
        if self.message:
            out["message"] = self.message
        return out


def pair_error(ruleset: Ruleset, cells: bytes, i: int, j: int) -> str | None:
    """The refusal code of removing cells i, j (flat indices), or None when the pair is legal."""
    n = len(cells)
    if not (0 <= i < n and 0 <= j < n):
        return "off-board"
    if i == j:
        return "self"
    if not cells[i] or not cells[j]:
        return "gap"
    if ruleset.value_class[cells[i]] != ruleset.value_class[cells[j]]:
        return "values"
    if ruleset.pair_problem(cells, i, j) is not None:
        return "blocked"
    return None


def blockers(cells: bytes, i: int, j: int) -> list[str]:
    """The nearest active cell between i < j on each straight path that joins them (ruleset 1's
    paths: reading order, and the column or diagonal when the cells share one): why a pair of
    matching values is blocked, as the suite's cases say it."""
    steps = [1]
    dr, dc = j // WIDTH - i // WIDTH, j % WIDTH - i % WIDTH
    if dr > 0 and dc in (0, dr, -dr):
        steps.append(WIDTH + (dc // dr if dc else 0))
    found = []
    for step in steps:
        hit = next((x for x in range(i + step, j, step) if cells[x]), None)
        if hit is not None:
            found.append(f"{hit // WIDTH},{hit % WIDTH}")
    return found


def pair_cells(text: str) -> tuple[int, int]:
    """Flat indices of `R,C-R,C` as written (any order); raises Refusal bad-request."""
    m = _PAIR_TEXT.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise Refusal("bad-request", f"pair {shorten(text)} is not R,C-R,C")
    r1, c1, r2, c2 = map(int, m.groups())
    if c1 >= WIDTH or c2 >= WIDTH:
        raise Refusal("off-board", f"pair {text}: columns are 0-8")
    return r1 * WIDTH + c1, r2 * WIDTH + c2


def normal_pair(text: object) -> str | None:
    """`R,C-R,C` first cell first, or None when `text` is not a pair."""
    if not isinstance(text, str):
        return None
    m = _PAIR_TEXT.fullmatch(text)
    if m is None:
        return None
    r1, c1, r2, c2 = map(int, m.groups())
    a, b = sorted(((r1, c1), (r2, c2)))
    return f"{a[0]},{a[1]}-{b[0]},{b[1]}"


def _pair_key(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.split("[,-]", text))


def _board(request: Request, key: str = "board") -> bytes:
    text = request.get(key)
    if not isinstance(text, str):
        raise Refusal("bad-request", f"{key!r} must be a string of board notation")
    try:
        return parse(text)
    except NumberMatchError as exc:
        raise Refusal("invalid-board", str(exc)) from exc


def _count_field(request: Request, key: str, low: int, high: int) -> int:
    value = request.get(key)
    if type(value) is not int or not low <= value <= high:
        raise Refusal("bad-request", f"{key!r} must be a whole number {low}-{high}")
    return value


def _grow(ruleset: Ruleset, cells: bytes) -> bytes:
    grown = ruleset.add_numbers(cells)
    if len(grown) > MAX_CELLS:
        raise Refusal("limit", f"an add would grow the board past {MAX_CELLS:,} cells")
    return grown


def _remove(ruleset: Ruleset, cells: bytes, text: str, move: int | None = None) -> bytes:
    i, j = pair_cells(text)
    code = pair_error(ruleset, cells, i, j)
    if code is not None:
        raise Refusal(code, ERRORS[code], move)
    return ruleset.remove_pair(cells, min(i, j), max(i, j))


def moves_of(ruleset: Ruleset, cells: bytes, adds_left: int) -> list[tuple[int, int] | None]:
    """The moves of a position: its legal pairs, then None for `+` when an add is allowed."""
    moves: list[tuple[int, int] | None] = list(ruleset.legal_pairs(cells))
    if adds_left > 0 and cells:
        moves.append(None)
    return moves


def perft(
    ruleset: Ruleset, cells: bytes, adds: int, depth: int, cap: int = MAX_PERFT_NODES
) -> list[int]:
    """Move sequences of each length 1..depth from a position (chess's perft); Refusal `limit`
    past `cap` expanded positions."""
    counts = [0] * depth
    expanded = 0

    def walk(board: bytes, adds_left: int, level: int) -> None:
        nonlocal expanded
        expanded += 1
        if expanded > cap:
            raise Refusal("limit", f"count expands more than {cap:,} positions")
        moves = moves_of(ruleset, board, adds_left)
        counts[level] += len(moves)
        if level + 1 == depth:
            return
        for move in moves:
            if move is None:
                walk(_grow(ruleset, board), adds_left - 1, level + 1)
            else:
                walk(ruleset.remove_pair(board, *move), adds_left, level + 1)

    walk(cells, adds, 0)
    return counts


def _replay(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    adds = _count_field(request, "adds", 0, MAX_ADDS)
    moves = request.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise Refusal("bad-request", "'moves' must be a list of move strings")
    for number, text in enumerate(moves, 1):
        if text == ADD_TEXT:
            if adds <= 0:
                raise Refusal("no-adds", ERRORS["no-adds"], number)
            if not cells:
                raise Refusal("empty-board", ERRORS["empty-board"], number)
            cells = _grow(ruleset, cells)
            adds -= 1
        else:
            cells = _remove(ruleset, cells, text, number)
    return {
        "board": format_board(cells),
        "adds_left": adds,
        "status": str(status_of(cells, adds, ruleset)),
    }


def _parse(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    return {
        "board": format_board(cells),
        "rows": row_count(cells),
        "active": len(cells) - cells.count(0),
    }


def _pairs(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    return {"pairs": [str(Move(i, j)) for i, j in ruleset.legal_pairs(cells)]}


def _remove_op(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    pair = request.get("pair")
    if not isinstance(pair, str):
        raise Refusal("bad-request", "'pair' must be a string R,C-R,C")
    return {"board": format_board(_remove(ruleset, cells, pair))}


def _add(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    if not cells:
        raise Refusal("empty-board", ERRORS["empty-board"])
    return {"board": format_board(_grow(ruleset, cells))}


def _count(ruleset: Ruleset, request: Request) -> Answer:
    cells = _board(request)
    adds = _count_field(request, "adds", 0, MAX_ADDS)
    depth = _count_field(request, "depth", 1, COUNT_DEPTH)
    return {"counts": perft(ruleset, cells, adds, depth)}


_HANDLERS: dict[str, Callable[[Ruleset, Request], Answer]] = {
    "parse": _parse,
    "pairs": _pairs,
    "remove": _remove_op,
    "add": _add,
    "count": _count,
    "replay": _replay,
}


def answer(request: object, ruleset: Ruleset = DEFAULT) -> Answer:
    """The reference's answer to one request (a refusal is an answer too; never raises)."""
    try:
        if not isinstance(request, dict):
            raise Refusal("bad-request", "a request is a JSON object")
        op = request.get("op")
        handler = _HANDLERS.get(op) if isinstance(op, str) else None
        if handler is None:
            raise Refusal("bad-request", f"unknown op {shorten(op)}; the ops are {', '.join(OPS)}")
        number = request.get("ruleset", SUITE_RULESET)
        if type(number) is not int or number != SUITE_RULESET:
            raise Refusal("unknown-ruleset", f"this engine implements ruleset {SUITE_RULESET} only")
        return handler(ruleset, request)
    except Refusal as refusal:
        return refusal.answer()
    except NumberMatchError as exc:  # a bound of the engine (limits.py) the handlers did not name
        return {"error": "limit", "message": str(exc)}


def answer_line(line: str | bytes, ruleset: Ruleset = DEFAULT) -> str:
    """One protocol line in, one out (without the newline)."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return dumps({"error": "bad-request", "message": "the line is not JSON"})
    return dumps(answer(request, ruleset))


def dumps(obj: object) -> str:
    """The one JSON text of the kit: compact, keys in order, ASCII (so byte-identical everywhere)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True)


def _same(a: object, b: object) -> bool:
    """Equal as JSON (so `true` is not `1`)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def divergence(expected: Answer, got: object) -> str | None:
    """How an engine's answer differs from the expected one, in a short phrase; None when it
    agrees. A refusal agrees when its code (and, for replay, the move number) is the expected
    one; an answer agrees on the expected fields (others are ignored); pairs in any order."""
    if not isinstance(got, dict):
        return "the answer is not a JSON object"
    if "error" in expected:
        if got.get("error") != expected["error"]:
            return f"expected refusal {expected['error']!r}, got " + (
                f"refusal {shorten(got['error'])}" if "error" in got else "an answer"
            )
        if "move" in expected and not _same(got.get("move"), expected["move"]):
            return f"refused move {shorten(got.get('move'))}, expected move {expected['move']}"
        return None
    if "error" in got:
        return f"refused with {shorten(got['error'])}, expected an answer"
    for key, want in expected.items():
        have = got.get(key)
        if key == "pairs":
            if not isinstance(have, list):
                return "'pairs' is not a list"
            normal = [normal_pair(p) for p in have]
            if None in normal:
                bad = have[normal.index(None)]
                return f"'pairs' has {shorten(bad)}, not a pair R,C-R,C"
            have = sorted((p for p in normal if p is not None), key=_pair_key)
            if have != want:
                missing = sorted(set(want) - set(have), key=_pair_key)
                extra = sorted(set(have) - set(want), key=_pair_key)
                if not missing and not extra:
                    return "a pair is listed more than once"
                parts = [f"missing {' '.join(missing)}"] if missing else []
                parts += [f"extra {' '.join(extra)}"] if extra else []
                return "pairs " + ", ".join(parts)
        elif not _same(have, want):
            return f"{key} {shorten(have)}, expected {shorten(want)}"
    return None
