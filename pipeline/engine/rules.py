"""Ruleset 1 on cell bytes: legal pairs, pair removal with row collapse, Add numbers.

`rulesets.DEFAULT` is these functions as a value; code that may meet another ruleset calls
through a `Ruleset` instead of importing them.

These functions are the hot path of the solver and generator: they take and return plain
`bytes` and flat indices (row * 9 + col), and use the precomputed ray tables of `board.rays`.
When the compiled core is built (`pipeline.engine.backend`), `scan_pairs`, `pairs_ordered`,
`legal_pairs`, `has_legal_pair`, `remove_pair` and `add_numbers` are its functions, which give
the same results; the Python ones stay here as the reference (`PURE`).
"""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.engine.backend import core
from pipeline.engine.board import CLASS, WIDTH, actives, cell_name, rays

CLASS_OF = bytes(CLASS) + bytes(256 - len(CLASS))  # translate table: value -> class, gap -> 0


def scan_pairs(cells: bytes) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Every legal pair (i, j), i < j, once: (ray pairs, reading-order pairs), each in scan order.

    A pair joined in reading order (only gaps between) is a reading pair even when a ray joins
    it too; the other pairs are joined only vertically or diagonally.
    """
    cc = cells.translate(CLASS_OF)
    table = rays(len(cc))
    geo: list[tuple[int, int]] = []
    read: list[tuple[int, int]] = []
    prev = -1
    prev_class = 0
    for i, k in enumerate(cc):
        if not k:
            continue
        if prev_class == k:  # reading order: the previous active cell, only gaps between
            read.append((prev, i))
        prev = i
        prev_class = k
        for ray in table[i]:
            for j in ray:
                w = cc[j]
                if w:
                    if w == k:
                        geo.append((i, j))
                    break
    if read and geo:
        joined = set(read)
        geo = [p for p in geo if p not in joined]
    return geo, read


def pairs_ordered(cells: bytes) -> list[tuple[int, int]]:
    """The legal pairs, vertical/diagonal-only ones first, then reading-order ones.

    A reading-order connection stays open until one of its cells goes (gaps only accumulate
    between them), while a vertical or diagonal one can be closed by a row collapse, so a
    search that tries the fragile ones first finds wins sooner.
    """
    geo, read = scan_pairs(cells)
    return geo + read


def legal_pairs(cells: bytes) -> list[tuple[int, int]]:
    """Every legal pair (i, j), i < j, sorted in reading order of i then j."""
    geo, read = scan_pairs(cells)
    return sorted(geo + read)


def has_legal_pair(cells: bytes) -> bool:
    """Whether any legal pair exists."""
    geo, read = scan_pairs(cells)
    return bool(geo or read)


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
        blocked.append(
            f"{_ALONG[kind]} the {cells[blocker]} at {cell_name(blocker)} is between them"
        )
    return "no clear path: " + "; ".join(blocked)


# how a message names each straight path between two cells
_ALONG = {
    "reading order": "in reading order",
    "vertical": "in their column",
    "diagonal": "on their diagonal",
}


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


# The Python functions, whichever backend runs: the reference the compiled core is tested against.
PURE = SimpleNamespace(
    scan_pairs=scan_pairs,
    pairs_ordered=pairs_ordered,
    legal_pairs=legal_pairs,
    has_legal_pair=has_legal_pair,
    remove_pair=remove_pair,
    add_numbers=add_numbers,
)
if core is not None:  # the compiled core's functions: the same results, faster
    scan_pairs = core.scan_pairs
    pairs_ordered = core.pairs_ordered
    legal_pairs = core.legal_pairs
    has_legal_pair = core.has_legal_pair
    remove_pair = core.remove_pair
    add_numbers = core.add_numbers
