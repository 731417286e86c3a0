"""Deliberately wrong engines behind the conformance protocol, each with one rule off: the
checker must find each and shrink what it finds (tests/test_conformance.py).

`python -m tests.conformance_variants NAME` serves one (NAME: a key of `VARIANTS`). Each is the
engine's own ruleset with one function changed, so everything else about it is right.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from pipeline.conformance.reference import serve
from pipeline.engine import rules
from pipeline.engine.board import CLASS, WIDTH
from pipeline.engine.rulesets import DEFAULT, Ruleset


def _clear(cells: bytes, i: int, j: int, step: int) -> bool:
    return all(cells[x] == 0 for x in range(i + step, j, step))


def _geometric(cells: bytes, i: int, j: int) -> bool:
    """Whether i < j see each other down a column or a diagonal (blockers count)."""
    (r1, c1), (r2, c2) = divmod(i, WIDTH), divmod(j, WIDTH)
    dr, dc = r2 - r1, c2 - c1
    if dr <= 0 or dc not in (0, dr, -dr):
        return False
    return _clear(cells, i, j, WIDTH + (dc // dr if dc else 0))


def _no_row_end(cells: bytes) -> list[tuple[int, int]]:
    """Reading order only within a row: a pair across a row end needs a column or diagonal."""
    return [
        (i, j)
        for i, j in rules.legal_pairs(cells)
        if i // WIDTH == j // WIDTH or _geometric(cells, i, j)
    ]


def _diagonal_through_active(cells: bytes) -> list[tuple[int, int]]:
    """Every legal pair, and any two matching cells on one diagonal whatever lies between."""
    found = set(rules.legal_pairs(cells))
    n = len(cells)
    for i, v in enumerate(cells):
        if not v:
            continue
        for dc in (1, -1):
            r, c = divmod(i, WIDTH)
            while True:
                r, c = r + 1, c + dc
                j = r * WIDTH + c
                if not 0 <= c < WIDTH or j >= n:
                    break
                if cells[j] and CLASS[cells[j]] == CLASS[v]:
                    found.add((i, j))
    return sorted(found)


def _no_collapse(cells: bytes, i: int, j: int) -> bytes:
    b = bytearray(cells)
    b[i] = b[j] = 0
    return bytes(b)


def _add_fills_gaps(cells: bytes) -> bytes:
    copies = [v for v in cells if v]
    out = bytearray(cells)
    for k, v in enumerate(out):
        if not v and copies:
            out[k] = copies.pop(0)
    return bytes(out) + bytes(copies)


def _with_pairs(name: str, legal_pairs):  # type: ignore[no-untyped-def]
    def problem(cells: bytes, i: int, j: int) -> str | None:
        return None if (min(i, j), max(i, j)) in set(legal_pairs(cells)) else "blocked"

    return replace(
        DEFAULT,
        name=name,
        legal_pairs=legal_pairs,
        pair_problem=problem,
        has_legal_pair=None,
        pair_order=None,
    )


VARIANTS: dict[str, Ruleset] = {
    "no-row-end": _with_pairs("no row-end connection", _no_row_end),
    "no-collapse": replace(DEFAULT, name="no row collapse", remove_pair=_no_collapse),
    "diagonal-through-active": _with_pairs(
        "diagonals through active cells", _diagonal_through_active
    ),
    "add-fills-gaps": replace(
        DEFAULT, name="Add numbers filling gaps", add_numbers=_add_fills_gaps
    ),
}


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer, VARIANTS[sys.argv[1]])
