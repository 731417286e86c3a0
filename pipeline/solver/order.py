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
complete acyclic matching must then pass the exact test of this model, `schedulable`: each pair
needs ONE of its ways (reading, vertical, or one choice of rows to empty for a diagonal) fully
cleared, which is a disjunction the cycle test cannot see. The search gives up after `cap` steps
and then answers True ("not proved dead"), which is always safe.

It is only a necessary condition: a pair waiting for a diagonal is told that a row between
whose only cell is on its path can never clear (`Stretch.lines`), but not that the other rows
it needs must still hold a cell when it goes (one move emptying two rows at once can kill it),
nor that its path must stay clear of nothing but gaps as rows collapse around it. It still
refutes most unsolvable random boards at the root (`make bench solver` counts them).
"""

from __future__ import annotations

from collections.abc import Callable

from pipeline.solver.mask import Stretch

CAP = 400


def ordered_matching(
    st: Stretch,
    mask: int,
    rows: int,
    hint: list[int] | None = None,
    cap: int = CAP,
    allowed: set[int] | None = None,
) -> tuple[bool, list[int] | None]:
    """(possibly winnable, a matching with acyclic precedence or None).

    False is a proof that the state cannot be won without an add. True comes with a matching
    (a list of pair masks) when one was found; `hint`, a candidate matching (say the parent's
    minus the pair just played), is checked first because it usually still works.
    """
    st.work = 0
    if hint is not None and schedulable(st, mask, rows, hint):
        return True, hint
    found: list[int] = []
    try:
        return _search(st, mask, rows, cap, found, 0, allowed), found
    except _GaveUp:
        return True, None


def has_ordered_matching(st: Stretch, mask: int, rows: int, cap: int = CAP) -> bool:
    """False only if no same-class perfect matching of the active cells has acyclic precedence."""
    return ordered_matching(st, mask, rows, None, cap)[0]


def winning_pairs(
    st: Stretch,
    mask: int,
    rows: int,
    cap: int = CAP,
    allowed: set[int] | None = None,
    tick: Callable[[], None] | None = None,
) -> set[int]:
    """The same-class pairs that some ordered matching of this state uses (a superset of them).

    Every win from this state, and every win from any state reached from it, plays only these
    pairs: a state P reached by moves `path` that is won by moves `w` makes `path + w` a win from
    here, and the pairs of a win form a matching that passes this module's test (its soundness
    argument above), so each pair of `w` lies in some matching that passes it. So the search may
    skip every other move in the whole subtree.

    Each pair not yet seen in a found matching gets a search for a matching holding it (at most
    `cap` steps; a search that gives up keeps its pair: no claim). A pair proved in no matching
    leaves the candidates of the searches after it, which is safe for the same reason: no
    matching that passes the test uses it; while that shrinks the candidates, the pairs given up
    on are tried again. `allowed` (a superset known already) limits the pairs; `tick` is called
    before each search (the solver counts it as a node, and may stop there).
    """
    ccm = st.cell_class_mask
    pairs = []
    m = mask
    while m:
        b = m & -m
        m ^= b
        u = b.bit_length() - 1
        rest = mask & ccm[u] & ~((b << 1) - 1)
        while rest:
            c = rest & -rest
            rest ^= c
            if allowed is None or b | c in allowed:
                pairs.append(b | c)
    st.work = 0  # one call, one free allowance: the rest is charged as nodes (`Stretch.spend`)
    candidates = set(pairs)
    known: set[int] = set()
    todo = pairs
    while todo:  # pairs given up on are tried again while the candidates keep shrinking
        gave_up = []
        before = len(candidates)
        for q in todo:
            if q in known or q not in candidates:
                continue
            found: list[int] = []
            if tick is not None:
                tick()
            try:
                if _search(st, mask, rows, cap, found, q, candidates):
                    known.update(found)
                else:
                    candidates.discard(q)
            except _GaveUp:
                gave_up.append(q)
        todo = gave_up if len(candidates) < before else []
        if not todo:
            known.update(gave_up)
    return known & candidates


def schedulable(st: Stretch, mask: int, rows: int, pairs: list[int]) -> bool:
    """Whether this matching's removals can be ordered so each pair has one way fully cleared.

    A pair can go once all the cells of one of its ways (`Stretch.lines(..., every=True)`) are
    gone. Removing more never hurts, so greedily removing any pair that can go decides it.
    """
    waiting = []
    gone = 0
    ways_of = st.ways
    for q in pairs:
        ways = ways_of(q, mask, rows)
        if ways is None:
            gone |= q
        else:
            waiting.append((q, ways))
    while waiting:
        st.spend(len(waiting))
        still = [(q, ways) for q, ways in waiting if all(w & ~gone for w in ways)]
        if len(still) == len(waiting):
            return False
        for q, ways in waiting:
            if not all(w & ~gone for w in ways):
                gone |= q
        waiting = still
    return True


def _search(
    st: Stretch,
    mask: int,
    rows: int,
    cap: int,
    found: list[int],
    first: int = 0,
    allowed: set[int] | None = None,
) -> bool:
    """Backtracking over matchings (those holding pair `first`, if given); on success `found` holds the pairs."""
    search = _Matchings(st, mask, rows, cap, allowed)
    if search.complete(mask, first):
        found.extend(q for q, _ in search.chosen)
        return True
    return False


Lines = (
    tuple[int, int] | None
)  # a pair's lines as (first, second) blocker masks (-1: no second); None: unconstrained
Option = tuple[int, Lines, int]  # (pair mask, its lines, chosen pairs reachable from it)


class _Matchings:
    """The state of one backtracking search over the matchings of a state.

    Chosen pairs are numbered in order; `reach[n]` is the set of chosen pairs reachable from
    pair n along precedence edges. A candidate q is dropped if some chosen pair reachable from q
    (`after`) also precedes q. To find the chosen pairs that q precedes without looping over
    them, `hit0[c]` / `hit1[c]` are the chosen pairs whose first / second line holds free cell
    c (`single`: those with no second line), so q = {u, v} precedes exactly
    (hit0[u] | hit0[v]) & (hit1[u] | hit1[v] | single).
    """

    def __init__(
        self, st: Stretch, mask: int, rows: int, cap: int, allowed: set[int] | None
    ) -> None:
        self.st = st
        self.mask = mask
        self.rows = rows
        self.cap = cap
        self.allowed = allowed
        self.chosen: list[tuple[int, Lines]] = []  # (cells of the pair, its lines)
        self.reach: list[int] = []
        self.hit0 = [0] * st.n
        self.hit1 = [0] * st.n
        self.single = 0
        self.partners: dict[int, list[tuple[int, int, int, Lines]]] = {}
        self.steps = 0

    def complete(self, free: int, first: int = 0) -> bool:
        """Whether the chosen pairs extend to a matching of `free` that passes `schedulable`."""
        if not free:  # acyclic; now the exact test, with every way of each pair
            return schedulable(self.st, self.mask, self.rows, [q for q, _ in self.chosen])
        self.steps += 1
        if self.steps > self.cap:
            raise _GaveUp
        for q, ql, after in self.narrowest(free, first):
            undo = self.choose(q, ql, after, free)
            if self.complete(free & ~q):
                return True
            self.unchoose(undo)
        return False

    def narrowest(self, free: int, first: int) -> list[Option]:
        """The options of the free cell with the fewest (none: a dead end); the forced pair first."""
        if first and free == self.mask:
            u = (first & -first).bit_length() - 1
            return [o for o in self.viable(u, free) if o[0] == first]
        best: list[Option] | None = None
        m = free
        while m:
            b = m & -m
            m ^= b
            options = self.viable(b.bit_length() - 1, free)
            if not options:
                return options
            if best is None or len(options) < len(best):
                best = options
                if len(options) == 1:
                    break
        assert best is not None
        return best

    def candidates(self, u: int) -> list[tuple[int, int, int, Lines]]:
        """Cell u's same-class partners in the state: (bit, cell, pair mask, pair's lines)."""
        cand = self.partners.get(u)
        if cand is None:
            st, mask, rows, allowed = self.st, self.mask, self.rows, self.allowed
            cand = self.partners[u] = []
            m = mask & st.cell_class_mask[u] & ~(1 << u)
            while m:
                b = m & -m
                m ^= b
                q = 1 << u | b
                if allowed is None or q in allowed:
                    cand.append((b, b.bit_length() - 1, q, st.line2(q, mask, rows)))
        return cand

    def viable(self, u: int, free: int) -> list[Option]:
        """The pairs of free cell u that close no precedence cycle with the chosen pairs."""
        cand = self.candidates(u)
        self.st.spend(1 + len(cand))
        hit0, hit1, reach, chosen = self.hit0, self.hit1, self.reach, self.chosen
        out = []
        h0 = hit0[u]
        h1 = hit1[u] | self.single
        for b, v, q, ql in cand:
            if not free & b:
                continue
            direct = (h0 | hit0[v]) & (h1 | hit1[v])
            if not direct:
                out.append((q, ql, 0))
                continue
            after = 0  # chosen pairs reachable from the new one
            while direct:
                x = direct & -direct
                direct ^= x
                after |= x | reach[x.bit_length() - 1]
            if ql is not None:
                l0, l1 = ql
                a = after
                while a:
                    x = a & -a
                    a ^= x
                    pm = chosen[x.bit_length() - 1][0]
                    if pm & l0 and pm & l1:
                        break  # q would close a cycle
                else:
                    out.append((q, ql, after))
            else:
                out.append((q, ql, after))
        return out

    def choose(
        self, q: int, ql: Lines, after: int, free: int
    ) -> tuple[list[int], list[int], list[int], int]:
        """Add pair q to the chosen ones; returns what `unchoose` needs to take it back."""
        chosen, reach = self.chosen, self.reach
        k = len(chosen)
        bit = 1 << k
        rest = free & ~q
        preds = 0
        touched0: list[int] = []
        touched1: list[int] = []
        if ql is not None:
            l0, l1 = ql
            for n, (pm, _) in enumerate(chosen):
                if pm & l0 and pm & l1:
                    preds |= 1 << n
            _mark(self.hit0, rest & l0, bit, touched0)
            if l1 == -1:
                self.single |= bit
            else:
                _mark(self.hit1, rest & l1, bit, touched1)
        saved = reach[:]
        new = after | bit
        for n in range(k):
            if preds >> n & 1 or reach[n] & preds:
                reach[n] |= new
        reach.append(after)
        chosen.append((q, ql))
        return saved, touched0, touched1, bit

    def unchoose(self, undo: tuple[list[int], list[int], list[int], int]) -> None:
        saved, touched0, touched1, bit = undo
        self.chosen.pop()
        self.reach[:] = saved
        for i in touched0:
            self.hit0[i] ^= bit
        for i in touched1:
            self.hit1[i] ^= bit
        self.single &= ~bit


def _mark(hits: list[int], cells: int, bit: int, touched: list[int]) -> None:
    """Set `bit` in hits[c] for each cell c of the mask `cells`, noting each c in `touched`."""
    while cells:
        x = cells & -cells
        cells ^= x
        i = x.bit_length() - 1
        hits[i] |= bit
        touched.append(i)


class _GaveUp(Exception):
    pass
