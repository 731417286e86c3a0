"""Dead-state detection at 0 adds: is there any pairing of the cells whose removals can be ordered?

A win with no add left removes the active cells in pairs, so it fixes a perfect matching of the
cells into same-class pairs, and an order of those pairs. Say pair P precedes pair Q when EVERY
line along which Q could ever connect (`Stretch.lines`) holds an active cell of P: whichever
line Q finally uses must be clear then, so P's move comes strictly before Q's. (The lines are
complete, and each entry lists only cells that must be gone, see `Stretch.lines`: reading and
vertical blockers can only leave; a diagonal needs |dc| equal to the row distance, which only
shrinks, so it needs the cells common to every way of emptying enough rows between and clearing
the path through the rest. A pair with a line needing nothing gets no predecessor.) In a real
win every precedence edge points forward in time, so the graph of its matching is acyclic.

Hence, if NO perfect same-class matching has an acyclic precedence graph, the state cannot be
won without an add. `ordered_matching` searches the matchings by backtracking: it adds pairs
one at a time (the cell with the fewest viable partners first) and drops a pair as soon as it
closes a cycle with the pairs already chosen (a cycle never disappears as pairs are added). A
complete acyclic matching must then pass the exact test of this model, `_schedulable`: each pair
needs ONE of its ways (reading, vertical, or one choice of rows to empty for a diagonal) fully
cleared, which is a disjunction the cycle test cannot see. The search gives up after `cap` steps
and then answers True ("not proved dead"), which is always safe.

It is only a necessary condition: a pair waiting for a diagonal is told that a row between
whose only cell is on its path can never clear (`Stretch.lines`), but not that the other rows
it needs must still hold a cell when it goes (one move emptying two rows at once can kill it),
nor that its path must stay clear of nothing but gaps as rows collapse around it. On random 32-36-cell even boards
it still refutes about 98-99% of the unsolvable ones at the root.
"""

from __future__ import annotations

from .search_mask import Stretch

CAP = 400


def ordered_matching(
    st: Stretch, mask: int, rows: int, hint: list[int] | None = None, cap: int = CAP
) -> tuple[bool, list[int] | None]:
    """(possibly winnable, a matching with acyclic precedence or None).

    False is a proof that the state cannot be won without an add. True comes with a matching
    (a list of pair masks) when one was found; `hint`, a candidate matching (say the parent's
    minus the pair just played), is checked first because it usually still works.
    """
    if hint is not None and _schedulable(st, mask, rows, hint):
        return True, hint
    found: list[int] = []
    try:
        return _search(st, mask, rows, cap, found), found
    except _GaveUp:
        return True, None


def has_ordered_matching(st: Stretch, mask: int, rows: int, cap: int = CAP) -> bool:
    """False only if no same-class perfect matching of the active cells has acyclic precedence."""
    return ordered_matching(st, mask, rows, None, cap)[0]


def _schedulable(st: Stretch, mask: int, rows: int, pairs: list[int]) -> bool:
    """Whether this matching's removals can be ordered so each pair has one way fully cleared.

    A pair can go once all the cells of one of its ways (`Stretch.lines(..., every=True)`) are
    gone. Removing more never hurts, so greedily removing any pair that can go decides it.
    """
    waiting = []
    gone = 0
    for q in pairs:
        lo = q & -q
        ways = st.lines(lo.bit_length() - 1, (q ^ lo).bit_length() - 1, mask, rows, True)
        if all(ways):
            waiting.append((q, ways))
        else:
            gone |= q
    while waiting:
        still = [(q, ways) for q, ways in waiting if all(w & ~gone for w in ways)]
        if len(still) == len(waiting):
            return False
        for q, ways in waiting:
            if not all(w & ~gone for w in ways):
                gone |= q
        waiting = still
    return True


def _search(st: Stretch, mask: int, rows: int, cap: int, found: list[int]) -> bool:
    """Backtracking over matchings; on success `found` holds the pairs."""
    ccm = st.cell_class_mask
    line_cache: dict[int, tuple[int, int] | None] = {}
    chosen: list[tuple[int, tuple[int, int] | None]] = []  # (cells of the pair, its lines or None)
    reach: list[int] = []  # per chosen pair, the chosen pairs reachable from it (bitset)
    steps = 0

    def lines_of(q: int, u: int, v: int) -> tuple[int, int] | None:
        """Q's lines as (first, second) blocker masks (-1: no second line), None if unconstrained."""
        ls = line_cache.get(q, 0)
        if ls == 0:
            found_lines = st.lines(u, v, mask, rows)
            if not all(found_lines):
                ls = None  # some line needs nothing gone first: no pair has to precede it
            else:
                ls = (found_lines[0], found_lines[1] if len(found_lines) > 1 else -1)
            line_cache[q] = ls
        return ls  # type: ignore[return-value]

    def viable(u: int, free: int) -> list[tuple[int, tuple[int, int] | None, int, int]]:
        out = []
        m = free & ccm[u] & ~(1 << u)
        while m:
            b = m & -m
            m ^= b
            q = 1 << u | b
            v = b.bit_length() - 1
            ql = lines_of(q, u, v) if u < v else lines_of(q, v, u)
            preds = 0
            after = 0  # chosen pairs reachable from the new one
            n = 0
            if ql is None:
                for pm, pl in chosen:
                    if pl is not None and q & pl[0] and q & pl[1]:
                        after |= (1 << n) | reach[n]
                    n += 1
            else:
                l0, l1 = ql
                for pm, pl in chosen:
                    if pm & l0 and pm & l1:
                        preds |= 1 << n
                    if pl is not None and q & pl[0] and q & pl[1]:
                        after |= (1 << n) | reach[n]
                    n += 1
            if not after & preds:
                out.append((q, ql, preds, after))
        return out

    def search(free: int) -> bool:
        nonlocal steps
        if not free:  # acyclic; now the exact test, with every way of each pair
            return _schedulable(st, mask, rows, [q for q, _ in chosen])
        steps += 1
        if steps > cap:
            raise _GaveUp
        best: list | None = None
        m = free
        while m:
            b = m & -m
            m ^= b
            options = viable(b.bit_length() - 1, free)
            if not options:
                return False
            if best is None or len(options) < len(best):
                best = options
                if len(options) == 1:
                    break
        assert best is not None
        k = len(chosen)
        for q, ql, preds, after in best:
            saved = reach[:]
            new = after | (1 << k)
            for n in range(k):
                if preds >> n & 1 or reach[n] & preds:
                    reach[n] |= new
            reach.append(after)
            chosen.append((q, ql))
            if search(free & ~q):
                return True
            chosen.pop()
            reach[:] = saved
        return False

    if search(mask):
        found.extend(q for q, _ in chosen)
        return True
    return False


class _GaveUp(Exception):
    pass
