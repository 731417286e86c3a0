"""Shrinking a divergence to the smallest board and move list that still shows it.

A greedy, deterministic delta debugging over a `Scenario` (an op, a board, adds, moves): try
each smaller variant in a fixed order (start from a shorter board and add, drop a move, start
after some moves, delete a row, drop the last cell, turn a number into a gap, move or mirror the
columns, fewer adds, a smaller depth, smaller numbers) and keep the first that the engine still
answers differently from the reference, with the reference's answer of the same shape (an
answer stays an answer, a refusal keeps its code), until none does. Every step makes (cells +
moves, numbers, moves, depth, adds, the numbers' sum) smaller, so it ends; `max_asks` bounds
the engine requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from pipeline.conformance.cases import request
from pipeline.conformance.engine import Engine
from pipeline.conformance.protocol import Answer, Request, answer, divergence
from pipeline.engine.board import WIDTH, format_board, parse
from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_SHRINK_ASKS


@dataclass(frozen=True)
class Scenario:
    """One request in a shape that can be made smaller. `text` is the board as sent (for a
    `parse` of an invalid board); otherwise the board is `cells`."""

    op: str
    cells: bytes
    adds: int = 0
    moves: tuple[str, ...] = ()
    depth: int = 1
    text: str | None = None

    @property
    def board(self) -> str:
        return self.text if self.text is not None else format_board(self.cells)

    def request(self) -> Request:
        fields: dict[str, object] = {"board": self.board}
        if self.op == "remove":
            fields["pair"] = self.moves[0]
        elif self.op == "count":
            fields.update(adds=self.adds, depth=self.depth)
        elif self.op == "replay":
            fields.update(adds=self.adds, moves=list(self.moves))
        return request(self.op, **fields)

    def size(self) -> tuple[int, ...]:
        if self.text is not None:
            return (len(self.text),)
        active = len(self.cells) - self.cells.count(0)
        # a move weighs as much as a cell: a longer board with fewer moves may be the smaller
        return (
            len(self.cells) + len(self.moves),
            active,
            len(self.moves),
            self.depth,
            self.adds,
            sum(self.cells),
        )

    @classmethod
    def of(cls, req: Request) -> Scenario | None:
        """The scenario of a suite request, or None when it cannot be shrunk (a field that is
        not what the protocol asks, another ruleset)."""
        op, board = req.get("op"), req.get("board")
        if not isinstance(board, str) or req.get("ruleset") != 1:
            return None
        try:
            cells = parse(board)
        except NumberMatchError:
            return cls(op, b"", text=board) if op == "parse" else None
        if op in ("pairs", "add", "parse"):
            return cls(op, cells)
        if op == "remove" and isinstance(req.get("pair"), str):
            return cls(op, cells, moves=(req["pair"],))
        if op == "count":
            return cls(op, cells, adds=int(req.get("adds", 0)), depth=int(req.get("depth", 1)))
        if op == "replay" and isinstance(req.get("moves"), list):
            return cls(op, cells, adds=int(req.get("adds", 0)), moves=tuple(req["moves"]))
        return None


def _valid(cells: bytes) -> bool:
    try:
        parse(format_board(cells))
    except NumberMatchError:
        return False
    return True


def _shift(move: str, row: int) -> str | None:
    """A pair's text with the rows below a deleted row moved up; None if it used that row."""
    if move == "+":
        return move
    try:
        (r1, c1), (r2, c2) = (tuple(map(int, cell.split(","))) for cell in move.split("-"))
    except ValueError:
        return move
    if row in (r1, r2):
        return None
    r1, r2 = (r - (r > row) for r in (r1, r2))
    return f"{r1},{c1}-{r2},{c2}"


def _moved(move: str, mirror: bool, left: int) -> str | None:
    """A pair's text with the columns mirrored (c -> 8 - c) and then moved `left` columns left;
    None when a cell would leave the board."""
    if move == "+":
        return move
    try:
        (r1, c1), (r2, c2) = (tuple(map(int, cell.split(","))) for cell in move.split("-"))
    except ValueError:
        return move
    if mirror:
        c1, c2 = WIDTH - 1 - c1, WIDTH - 1 - c2
    c1, c2 = c1 - left, c2 - left
    if min(c1, c2) < 0:
        return None
    a, b = sorted(((r1, c1), (r2, c2)))
    return f"{a[0]},{a[1]}-{b[0]},{b[1]}"


def _reshaped(s: Scenario, mirror: bool) -> Scenario | None:
    """The board with its columns mirrored (or not), moved left as far as the numbers allow,
    the last row's trailing gaps dropped: same shapes, fewer cells (vertical and diagonal lines
    keep their form; reading order may not, which the engine's answer then tells)."""
    rows = [bytearray(s.cells[t : t + WIDTH]) for t in range(0, len(s.cells), WIDTH)]
    rows = [r + bytearray(WIDTH - len(r)) for r in rows]
    if mirror:
        rows = [r[::-1] for r in rows]
    active = [c for r in rows for c in range(WIDTH) if r[c]]
    left = min(active, default=0)
    if not mirror and left == 0:
        return None
    rows = [r[left:] + bytearray(left) for r in rows]
    cells = bytes(b"".join(rows)).rstrip(b"\x00")
    moves = tuple(_moved(m, mirror, left) for m in s.moves)
    if None in moves or not _valid(cells) or len(cells) > len(s.cells) + WIDTH:
        return None
    return replace(s, cells=cells, moves=tuple(m for m in moves if m is not None))


def _unadded(s: Scenario) -> Iterator[Scenario]:
    """The same board reached by an add from a shorter one: when the cells after some point are
    the first copies an add of the cells before it would write, start there and add first (a
    divergence that needs three rows can start from two)."""
    if s.op == "add" or (s.op == "count" and s.depth >= 3):
        return
    for k in range(1, len(s.cells)):
        head, tail = s.cells[:k], s.cells[k:]
        if 0 in tail or not head.replace(b"\x00", b"").startswith(tail) or not _valid(head):
            continue
        if s.op == "pairs":
            yield Scenario("count", head, adds=1, depth=2)
        elif s.op == "count":
            yield replace(s, cells=head, adds=s.adds + 1, depth=s.depth + 1)
        elif s.op == "remove":
            yield Scenario("replay", head, adds=1, moves=("+", *s.moves))
        elif s.op == "replay":
            yield replace(s, cells=head, adds=s.adds + 1, moves=("+", *s.moves))


def candidates(s: Scenario) -> Iterator[Scenario]:
    """Smaller scenarios, in the order they are tried."""
    if s.text is not None:
        for k in range(len(s.text)):
            yield replace(s, text=s.text[:k] + s.text[k + 1 :])
        return
    yield from _unadded(s)
    if s.op == "replay":
        for k in reversed(range(len(s.moves))):
            yield replace(s, moves=s.moves[:k] + s.moves[k + 1 :])
        for k in range(1, len(s.moves) + 1):  # start after the first k moves
            after = answer(request("replay", board=s.board, adds=s.adds, moves=list(s.moves[:k])))
            if "error" in after:
                break
            yield replace(
                s, cells=parse(after["board"]), adds=after["adds_left"], moves=s.moves[k:]
            )
    rows = (len(s.cells) + WIDTH - 1) // WIDTH
    for r in reversed(range(rows)):
        cells = s.cells[: r * WIDTH] + s.cells[r * WIDTH + WIDTH :]
        moves = tuple(_shift(m, r) for m in s.moves)
        if None not in moves and _valid(cells):
            yield replace(s, cells=cells, moves=tuple(m for m in moves if m is not None))
    if s.cells and _valid(s.cells[:-1]):
        yield replace(s, cells=s.cells[:-1])
    for i in reversed(range(len(s.cells))):
        if s.cells[i]:
            cells = s.cells[:i] + b"\x00" + s.cells[i + 1 :]
            if _valid(cells):
                yield replace(s, cells=cells)
    for mirror in (False, True):
        reshaped = _reshaped(s, mirror)
        if reshaped is not None:
            yield reshaped
    if s.op == "count" and s.depth > 1:
        yield replace(s, depth=s.depth - 1)
    if s.op in ("count", "replay") and s.adds > 0:
        yield replace(s, adds=s.adds - 1)
    for i, v in enumerate(s.cells):  # smaller numbers last: the same shape, easier to read
        for w in range(1, v):
            yield replace(s, cells=s.cells[:i] + bytes([w]) + s.cells[i + 1 :])


@dataclass(frozen=True)
class Shrunk:
    """The smallest scenario found, with both answers to it."""

    scenario: Scenario
    expected: Answer
    got: Answer
    why: str
    asks: int

    def to_json(self) -> dict[str, object]:
        s = self.scenario
        return {
            "board": s.board,
            "cells": len(s.board) if s.text is not None else len(s.cells),
            "numbers": len(s.cells) - s.cells.count(0),
            "moves": list(s.moves) if s.op == "replay" else ([s.moves[0]] if s.moves else []),
            "request": s.request(),
            "expected": self.expected,
            "got": self.got,
            "why": self.why,
        }


def _expected(req: Request) -> Answer:
    return {k: v for k, v in answer(req, DEFAULT).items() if k != "message"}


def shrink(engine: Engine, start: Scenario, max_asks: int = MAX_SHRINK_ASKS) -> Shrunk | None:
    """Shrink a scenario the engine diverges on; None if it does not diverge on it (any more)."""
    asks = 0

    def check(s: Scenario, shape: str | None) -> tuple[Answer, Answer, str] | None:
        nonlocal asks
        req = s.request()
        want = _expected(req)
        if shape is not None and want.get("error", "") != shape:
            return None
        asks += 1
        got = engine.ask(req)
        why = divergence(want, got)
        return (want, got, why) if why is not None else None

    first = check(start, None)
    if first is None:
        return None
    shape = first[0].get("error", "")
    best, result = start, first
    improved = True
    while improved and asks < max_asks:
        improved = False
        for candidate in candidates(best):
            if asks >= max_asks:
                break
            if candidate.size() >= best.size():
                continue
            found = check(candidate, shape)
            if found is not None:
                best, result, improved = candidate, found, True
                break
    return Shrunk(best, result[0], result[1], result[2], asks)
