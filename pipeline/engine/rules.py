"""Ruleset 1 on cell bytes: legal pairs, pair removal with row collapse, Add numbers.

These functions are the hot path of the solver and generator: they take and return plain
`bytes` and flat indices (row * 9 + col), and use the precomputed ray tables of `board.rays`.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.engine.board import CLASS, WIDTH, actives, cell_name, format_board, rays
from pipeline.errors import IllegalMoveError, RulesetError

RULESET = 1
SUPPORTED_RULESETS = (1,)


def check_ruleset(value: object) -> int:
    """Return the ruleset as an int, or refuse one this engine does not implement."""
    if isinstance(value, bool):
        value = None
    try:
        number = int(str(value).strip()) if isinstance(value, (int, str)) else None
    except ValueError:
        number = None
    if number not in SUPPORTED_RULESETS:
        known = ", ".join(map(str, SUPPORTED_RULESETS))
        raise RulesetError(f"unknown ruleset {value!r}: this engine implements ruleset {known} only")
    return number


def iter_pairs(cells: bytes) -> Iterator[tuple[int, int]]:
    """Legal pairs (i, j), i < j, in scan order; a pair may come twice (two paths join it)."""
    table = rays(len(cells))
    cls = CLASS
    prev = -1
    prev_class = 0
    for i, v in enumerate(cells):
        if not v:
            continue
        k = cls[v]
        if prev_class == k:  # reading order: the previous active cell, only gaps between
            yield prev, i
        prev = i
        prev_class = k
        for ray in table[i]:
            for j in ray:
                w = cells[j]
                if w:
                    if cls[w] == k:
                        yield i, j
                    break


def legal_pairs(cells: bytes) -> list[tuple[int, int]]:
    """Every legal pair (i, j), i < j, sorted in reading order of i then j."""
    return sorted(set(iter_pairs(cells)))


def has_legal_pair(cells: bytes) -> bool:
    """Whether any legal pair exists (stops at the first)."""
    return next(iter_pairs(cells), None) is not None


def _lines(i: int, j: int) -> list[tuple[str, int]]:
    """The straight paths from i to j (i < j) as (kind, step in flat indices)."""
    lines = [("reading order", 1)]
    dr = j // WIDTH - i // WIDTH
    dc = j % WIDTH - i % WIDTH
    if dr > 0:
        if dc == 0:
            lines.append(("vertical", WIDTH))
        elif dc == dr:
            lines.append(("diagonal", WIDTH + 1))
        elif dc == -dr:
            lines.append(("diagonal", WIDTH - 1))
    return lines


def pair_problem(cells: bytes, i: int, j: int) -> str | None:
    """Why (i, j) is not a legal pair on `cells`, or None when it is legal."""
    n = len(cells)
    for x in (i, j):
        if not 0 <= x < n:
            return f"cell {cell_name(x)} is off the board"
    if i == j:
        return "a cell cannot pair with itself"
    if i > j:
        i, j = j, i
    a, b = cells[i], cells[j]
    for x, v in ((i, a), (j, b)):
        if not v:
            return f"cell {cell_name(x)} is a gap"
    if CLASS[a] != CLASS[b]:
        return f"values {a} and {b} are neither equal nor sum to 10"
    blocked = []
    for kind, step in _lines(i, j):
        blocker = next((x for x in range(i + step, j, step) if cells[x]), None)
        if blocker is None:
            return None
        blocked.append(f"{kind} by {cells[blocker]} at {cell_name(blocker)}")
    return "no clear path: " + "; ".join(blocked)


def remove_pair(cells: bytes, i: int, j: int) -> bytes:
    """Remove a (legal) pair: both cells become gaps, then emptied rows disappear."""
    b = bytearray(cells)
    b[i] = 0
    b[j] = 0
    ri, rj = i // WIDTH, j // WIDTH
    for r in (rj, ri) if ri != rj else (ri,):  # higher row first so indices stay valid
        s = r * WIDTH
        if not any(b[s : s + WIDTH]):
            del b[s : s + WIDTH]
    return bytes(b)


def add_numbers(cells: bytes) -> bytes:
    """Append copies of the active values, in reading order, after the last existing cell."""
    return cells + actives(cells)


def checked_remove(cells: bytes, i: int, j: int, move_text: str | None = None) -> bytes:
    """`remove_pair` after checking legality; raises IllegalMoveError naming move and board."""
    problem = pair_problem(cells, i, j)
    if problem is not None:
        text = move_text or f"{cell_name(min(i, j))}-{cell_name(max(i, j))}"
        raise IllegalMoveError(f"illegal move {text} on board {format_board(cells)!r}: {problem}")
    return remove_pair(cells, i, j)
