"""A stretch of play with no add, as bitmasks over the cells of the board that began it.

Within a stretch, a state is the SET of base-board cells still active: removing cells and
collapsing emptied rows commute, so the board is a pure function of that set, and an int bitmask
(`mask`, bit i = base cell i active) is both the state and its transposition-table key. A second
int, `rows` (bit r = base row r still has an active cell), is derived from the mask.

Connections in base coordinates (cells u < v, rows ru <= rv, columns cu, cv):
- reading order: no active cell with index strictly between u and v (emptied rows hold only
  gaps, so dropping them changes nothing);
- vertical: cu == cv and no active cell of that column strictly between;
- diagonal: |cv - cu| == d, where d = 1 + the number of non-empty rows strictly between, and the
  cell at column cu +- k of the k-th of those rows is a gap for every k. d only shrinks as rows
  empty, so once |cv - cu| > d the pair can never be diagonal again; while |cv - cu| < d a later
  collapse may still align it.
Reading and vertical lines only ever open as cells go; only diagonals depend on collapses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import combinations
from typing import Any

from pipeline.engine.board import CLASS, WIDTH, lines_through

MEMO_LIMIT = 200_000  # entries per memo of `Stretch.ways` / `Stretch.line2` before it is cleared
# Dead-state test work (pairing steps, partner candidates, diagonal row choices) that one call may
# do before the rest is charged to the search's node budget, one node per WORK_PER_NODE units.
# On random boards of up to ~40 cells a call stays well under the allowance (the most seen is
# ~45,000), so node counts are unchanged; on large boards the charge is what makes a node budget
# bound the test. Every CHECK_WORK units the meter is called anyway, so a timeout bounds it too.
FREE_WORK = 100_000
WORK_PER_NODE = 64
CHECK_WORK = 4096


class Stretch:
    """The geometry and value classes of one base board, and the failed states found on it.

    `failed` maps a mask to the most adds known not to be enough from it (a state that fails
    with k adds fails with fewer), so at 0 adds `mask in failed` is the whole test.
    """

    def __init__(self, cells: bytes) -> None:
        n = len(cells)
        self.cells = cells
        self.n = n
        self.nrows = (n + WIDTH - 1) // WIDTH
        self.row_mask = [
            ((1 << min(n, (r + 1) * WIDTH)) - 1) ^ ((1 << (r * WIDTH)) - 1)
            for r in range(self.nrows)
        ]
        self.col_mask = [sum(1 << i for i in range(c, n, WIDTH)) for c in range(WIDTH)]
        cls = [CLASS[v] for v in cells]
        self.cls = cls
        # class_mask[k]: base cells of class k (0 = gaps); active ones are mask & class_mask[k].
        self.class_mask = [sum(1 << i for i in range(n) if cls[i] == k) for k in range(6)]
        self.cell_class_mask = [self.class_mask[k] for k in cls]
        self.mask = sum(1 << i for i in range(n) if cls[i])
        self.failed: dict[int, int] = {}
        self._geo: dict[int, tuple[tuple[int, ...], ...]] = {}
        self._cross: dict[int, list[tuple[tuple[int, int], ...]]] = {}
        # Memos of `lines` per pair q = 1 << u | 1 << v, keyed by (mask & between) | q (see `ways`).
        self._ways: dict[int, tuple[int, ...] | None] = {}
        self._line2: dict[int, tuple[int, int] | None] = {}
        # Work done by the current dead-state test call (`spend`); `meter(nodes)` is the search's
        # charge for work beyond FREE_WORK (it raises when the budget or the deadline is spent).
        self.work = 0
        self.meter: Callable[[int], None] | None = None

    def spend(self, units: int) -> None:
        """Count dead-state test work; past FREE_WORK, charge it to the search as nodes."""
        before = self.work
        self.work += units
        if self.meter is None or ((before ^ self.work) < CHECK_WORK and self.work <= FREE_WORK):
            return
        nodes = 0
        if self.work > FREE_WORK:
            nodes = (self.work - FREE_WORK) // WORK_PER_NODE
            self.work -= nodes * WORK_PER_NODE
        self.meter(nodes)  # also checks the deadline

    # -- derived state -------------------------------------------------------------------
    def rows_of(self, mask: int) -> int:
        rows = 0
        for r, rm in enumerate(self.row_mask):
            if mask & rm:
                rows |= 1 << r
        return rows

    def board(self, mask: int) -> bytes:
        """The board bytes of a state (emptied rows dropped)."""
        cells = self.cells
        out = bytearray()
        for r, rm in enumerate(self.row_mask):
            if mask & rm:
                s = r * WIDTH
                out += bytes(
                    cells[i] if mask >> i & 1 else 0 for i in range(s, min(s + WIDTH, self.n))
                )
        return bytes(out)

    def here(self, i: int, rows: int) -> int:
        """Index of base cell i on the current board (rows above it that emptied are gone)."""
        r = i // WIDTH
        gone = r - (rows & ((1 << r) - 1)).bit_count()
        return i - WIDTH * gone

    # -- moves ---------------------------------------------------------------------------
    def geo(self, rows: int) -> tuple[tuple[int, ...], ...]:
        """Per cell, the masks of its forward vertical and diagonal rays for this row pattern."""
        table = self._geo.get(rows)
        if table is None:
            table = self._geo[rows] = forward_masks(self.n, rows)
        return table

    def pairs(self, mask: int, rows: int) -> list[tuple[int, int]]:
        """Legal pairs (base indices i < j), vertical/diagonal-only ones first."""
        geo = self._geo.get(rows) or self.geo(rows)
        ccm = self.cell_class_mask
        first: list[tuple[int, int]] = []
        read: list[tuple[int, int]] = []
        m = mask
        low = m & -m
        while low:
            i = low.bit_length() - 1
            m ^= low
            nlow = m & -m
            cm = ccm[i]
            if nlow & cm:
                read.append((i, nlow.bit_length() - 1))
            for ray in geo[i]:
                x = m & ray
                if x:
                    y = x & -x
                    if y & cm and y != nlow:
                        first.append((i, y.bit_length() - 1))
            low = nlow
        if first:
            first.extend(read)
            return first
        return read

    def cross(self, rows: int) -> list[tuple[tuple[int, int], ...]]:
        """Per cell k, per straight line through it, (cells before k, cells after k) on that line.

        The lines are reading order, the column and both diagonals of this row pattern (emptied
        rows dropped); only lines with cells on both sides are listed. `child_pairs` reads them.
        """
        table = self._cross.get(rows)
        if table is None:
            n = self.n
            geo = self.geo(rows)
            up: list[list[int]] = [
                [0, 0, 0] for _ in range(n)
            ]  # column, down-right's and down-left's reverses
            down: list[list[int]] = [[0, 0, 0] for _ in range(n)]
            for a in range(n):
                ca = a % WIDTH
                for ray in geo[a]:
                    low = ray & -ray
                    b = low.bit_length() - 1
                    cb = b % WIDTH
                    kind = 0 if cb == ca else (1 if cb > ca else 2)
                    down[a][kind] = ray
                    m = ray
                    while m:
                        x = m & -m
                        m ^= x
                        up[x.bit_length() - 1][kind] |= 1 << a
            full = (1 << n) - 1
            table = []
            for k in range(n):
                lines = [((1 << k) - 1, full & ~((1 << (k + 1)) - 1))]
                for kind in range(3):
                    lines.append((up[k][kind], down[k][kind]))
                table.append(tuple(line for line in lines if line[0] and line[1]))
            self._cross[rows] = table
        return table

    def child_pairs(
        self,
        pairs: list[int],
        i: int,
        j: int,
        child: int,
        rows: int,
        allowed: set[int] | None = None,
    ) -> list[int]:
        """The legal pairs (as pair masks) after removing i, j when no row emptied, from the parent's.

        With no row gone the geometry is unchanged and a removal only clears cells, so every
        parent pair not using i or j stays legal, and a pair that becomes legal had a line whose
        only blockers were i or j: it is the nearest active cell on each side of i (or j) on one
        line through it. (With a row gone, diagonals change: use `pairs`.) With `allowed`, the
        parent's list holds only allowed pairs, and so does the result.
        """
        q = 1 << i | 1 << j
        out = [p for p in pairs if not p & q]
        cross = self._cross.get(rows) or self.cross(rows)
        ccm = self.cell_class_mask
        for k in (i, j):
            for before, after in cross[k]:
                a = child & before
                if a:
                    b = child & after
                    if b:
                        a = 1 << (a.bit_length() - 1)
                        b &= -b
                        if ccm[a.bit_length() - 1] & b:
                            p = a | b
                            if p not in out and (allowed is None or p in allowed):
                                out.append(p)
        return out

    # -- lines, for the dead-state test of search_order ------------------------------------
    def lines(self, u: int, v: int, mask: int, rows: int, every: bool = False) -> list[int]:
        """For u < v, per line along which they could ever connect, the cells it needs gone first.

        Reading order needs every active cell strictly between; vertical (same column) the
        column cells between. A diagonal needs |dc| == d: with d > |dc| now, some d - |dc| of
        the non-empty rows between must empty first (every cell in them goes) and the path
        through the rows that stay must clear; the cells needed for EVERY such choice are the
        line's entry. (With |dc| == d that is the current path; with |dc| > d there is no
        diagonal line: d only shrinks.) A choice whose path runs through the only active cell
        of a row that must stay is no way at all: clearing that cell would empty the row and
        shorten d below |dc| again. An entry of 0 means nothing has to go first.
        With `every`, each way of getting the diagonal is its own entry (no intersection), so
        "some entry is entirely gone" is exactly what the pair needs before it can be legal.
        """
        between = (1 << v) - (1 << (u + 1))
        out = [mask & between]
        ru, cu = divmod(u, WIDTH)
        rv, cv = divmod(v, WIDTH)
        if rv > ru:
            if cu == cv:
                out.append(mask & between & self.col_mask[cu])
            else:
                dc = cv - cu if cv > cu else cu - cv
                inner = [r for r in range(ru + 1, rv) if rows >> r & 1]
                ways = (
                    self._diagonal_ways(mask, inner, cu, 1 if cv > cu else -1, len(inner) + 1 - dc)
                    if dc <= len(inner) + 1
                    else []
                )
                if ways:
                    if every:
                        out.extend(ways)
                    else:
                        need = -1
                        for way in ways:
                            need &= way
                        out.append(need)
        return out

    # The lines of u < v read only cells strictly between them: the reading and column cells,
    # and the rows strictly between (whose emptiness decides d and the diagonal's ways) hold
    # nothing else. So they are a pure function of mask & between, and since u and v are the
    # lowest and highest bits of (mask & between) | q, that one int is the memo key (`rows` is
    # only mask's row pattern, so it adds nothing). Cleared when it outgrows MEMO_LIMIT.

    def ways(self, q: int, mask: int, rows: int) -> tuple[int, ...] | None:
        """`lines(u, v, mask, rows, every=True)` for the active pair q, or None if a way needs nothing."""
        found: tuple[int, ...] | None = self._memoized(self._ways, q, mask, rows, True)
        return found

    def line2(self, q: int, mask: int, rows: int) -> tuple[int, int] | None:
        """`lines(u, v, mask, rows)` for the active pair q as (first, second or -1), None if one needs nothing."""
        found: tuple[int, int] | None = self._memoized(self._line2, q, mask, rows, False)
        return found

    def _memoized(self, memo: dict[int, Any], q: int, mask: int, rows: int, every: bool) -> Any:
        """The `ways` form (`every`) or the `line2` form of the lines of pair q, memoized."""
        lo = q & -q
        key = mask & ((q ^ lo) - (lo << 1)) | q
        try:
            return memo[key]
        except KeyError:
            pass
        found = self.lines(lo.bit_length() - 1, (q ^ lo).bit_length() - 1, mask, rows, every)
        if not all(found):
            out = None
        elif every:
            out = tuple(found)
        else:
            out = (found[0], found[1] if len(found) > 1 else -1)
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[key] = out
        return out

    def _diagonal_ways(
        self, mask: int, inner: list[int], cu: int, step: int, empty: int
    ) -> list[int]:
        """Per choice of `empty` rows of `inner` to empty, the cells that must be gone for the diagonal.

        A choice is left out when a row that must stay holds nothing but its path cell.
        """
        row_mask = self.row_mask
        ways = []
        cost = 1 + len(inner)
        for gone in combinations(inner, empty) if empty else ((),):
            self.spend(cost)
            cells = 0
            for r in gone:
                cells |= mask & row_mask[r]
            k = 0
            for r in inner:
                if r not in gone:
                    k += 1
                    here = mask & row_mask[r]
                    path = here & (1 << (r * WIDTH + cu + step * k))
                    if path == here:  # clearing the path would empty a row that must stay
                        break
                    cells |= path
            else:
                ways.append(cells)
        return ways


@lru_cache(maxsize=4096)
def forward_masks(n: int, rows: int) -> tuple[tuple[int, ...], ...]:
    """`board.lines_through`'s forward rays as masks, for the rows still present (bit r of
    `rows`); shared by every stretch of the same size, since it depends on nothing else."""
    live = [r for r in range(n // WIDTH + 1) if rows >> r & 1]
    return tuple(
        tuple(_bits(fwd) for _, fwd in cell if fwd)
        for cell in lines_through(n, live, backward=False)
    )


def _bits(cells: tuple[int, ...]) -> int:
    """The mask of a tuple of cell indices."""
    m = 0
    for j in cells:
        m |= 1 << j
    return m
