"""The solver: is a Stage winnable within its adds allocation? Answers with a certificate or a proof.

`solve()` returns `solved` (with a winning move list anyone can replay), `unsolvable` (only after
an exhaustive search whose every pruning rule is sound) or `unknown` (the node or time budget ran
out first). It never guesses.

Between adds a state is a bitmask over the cells of the board its stretch began with
(`mask`). With no add left, a state is dead unless its cells can be paired so that the
pairs' removals can be ordered at all (`order`, a sound necessary condition); that test is
cheap and refutes most unsolvable boards at the root.

Order of work at 0 adds: parity, a few plain random play-outs, the pairing test, seeded random
dives that only step into states passing the test, then the proof search. Before it,
`order.winning_pairs` finds the pairs that some ordered pairing of the root uses (every win from
any state below plays only those, see its docstring); the depth-first search then plays only
those pairs, and they alone enter its pairings: on hard boards that removes almost every pair,
which the pairing test at the first `GUIDED_LEVELS` levels (kept for the stretches after an add)
does not. The pairing test is not run at every level, nor is a partial-order reduction
(stubborn sets) used: both cut states but cost more per state than they save, because most
children die quickly in plain search and almost every cell's closure reaches the whole board
(`make bench solver` measures the trade-offs). In the search a move that empties no row derives the child's
pairs from the parent's (`Stretch.child_pairs`). With adds: random play-outs, then a first pass
over (stretch, mask, adds left) in which every 0-add stretch after an add gets the root test, two
dives and `STRETCH_CAP` nodes, then, if that pass cut anything short, the complete search. A
table per stretch remembers the most adds known not to be enough for each state (a state that
fails with k adds fails with fewer); only completely searched states enter it. Stretches are
keyed by their value classes (`_Search.stretch`).
"""

from __future__ import annotations

import random
import struct
import sys
import time
from dataclasses import dataclass
from enum import StrEnum

from pipeline.engine import rules
from pipeline.engine.backend import core
from pipeline.engine.board import WIDTH, Board, cells_of
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import DEFAULT, Ruleset, ruleset_for
from pipeline.limits import MAX_SOLVE_CELLS, check_adds, check_cells
from pipeline.solver.budgets import DEFAULT_BUDGET_NODES
from pipeline.solver.mask import Stretch
from pipeline.solver.order import ordered_matching, winning_pairs
from pipeline.solver.shortcuts import classes_even, stack_certificate


class Status(StrEnum):
    """A solver answer; the value is its text (JSON, CLI output)."""

    SOLVED = "solved"  # with a certificate
    UNSOLVABLE = "unsolvable"  # after an exhaustive search whose every pruning rule is sound
    UNKNOWN = "unknown"  # a budget ran out first


SOLVED, UNSOLVABLE, UNKNOWN = Status.SOLVED, Status.UNSOLVABLE, Status.UNKNOWN

PLAYOUTS = 64  # random play-outs before the search when adds are left
QUICK_PLAYOUTS = 8  # at 0 adds: cheap, and often enough for an easy board
DIVES = 16  # pairing-guided random dives before the search at 0 adds (root board)
INNER_DIVES = 2  # the same in each 0-add stretch after an add
ROOT_PAIRING_CAP = 2000  # backtracking steps for the pairing test at a stretch's first board
PAIRING_CAP = 100  # the same inside the search (giving up only means no pruning there)
WINNING_PAIRS_CAP = 2000  # the same for each pair's forced search of `order.winning_pairs`
GUIDED_LEVELS = 3  # levels of the 0-add search that run the pairing test (see win0)
STRETCH_CAP = 200  # first pass with adds: search nodes per 0-add stretch before moving on


@dataclass(frozen=True)
class Tuning:
    """How much of each cheap strategy the solver tries around its exhaustive search.

    Every setting gives the same answers (each strategy is sound, the search complete); only the
    work differs. Tests pass their own to force a strategy off or on everywhere.
    """

    playouts: int = PLAYOUTS
    quick_playouts: int = QUICK_PLAYOUTS
    dives: int = DIVES
    inner_dives: int = INNER_DIVES
    guided_levels: int = GUIDED_LEVELS
    stretch_cap: int = STRETCH_CAP


DEFAULT_TUNING = Tuning()


@dataclass(frozen=True)
class SolveResult:
    status: Status
    moves: tuple[Move, ...] | None
    nodes: int
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {
            "status": self.status,
            "moves": None if self.moves is None else [str(m) for m in self.moves],
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


class _OutOfBudget(Exception):
    pass


class _StretchCut(Exception):
    """A first-pass 0-add stretch used up its node allowance."""


class _Search:
    """One exhaustive search; `path` holds the moves of the current branch.

    States are (stretch, mask, adds left): each stretch (the board after the root or an add)
    keeps its own table of failed masks, and `stretches` finds the stretch of a board so that a
    board reached again after an add reuses what is known about it.
    """

    def __init__(
        self,
        budget: int | None,
        deadline: float | None,
        ruleset: Ruleset = DEFAULT,
        tuning: Tuning = DEFAULT_TUNING,
    ) -> None:
        self.ruleset = ruleset
        self.tuning = tuning
        self.class_of = ruleset.class_of
        self.nodes = 0
        self.limit = budget if budget is not None else -1
        self.deadline = deadline
        self.stretches: dict[bytes, Stretch] = {}
        # Moves, or (stretch, i, j, rows) for a pair of base cells i, j (see `_moves`).
        self.path: list[Move | tuple[Stretch, int, int, int]] = []
        # First pass with adds: each 0-add stretch after an add gets a few dives and at most
        # `stretch_cap` search nodes; a stretch cut short is not a failure (`cut` counts them).
        self.stretch_cap: int | None = None
        self.stretch_end: int | None = None
        self.cut = 0
        self.stretches_with_adds = False

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes == self.limit + 1:
            raise _OutOfBudget
        if (
            self.deadline is not None
            and not self.nodes & 1023
            and time.perf_counter() > self.deadline
        ):
            raise _OutOfBudget

    def charge(self, nodes: int) -> None:
        """Dead-state test work beyond its free allowance, as nodes (`Stretch.spend`)."""
        self.nodes += nodes
        if 0 <= self.limit < self.nodes or (
            self.deadline is not None and time.perf_counter() > self.deadline
        ):
            raise _OutOfBudget

    def add(self, cells: bytes) -> bytes:
        """Add numbers, unless the board would grow past the solver's limit: then no answer
        (`unknown`, never a guess) rather than an ever larger board."""
        grown = self.ruleset.add_numbers(cells)
        if len(grown) > MAX_SOLVE_CELLS:
            raise _OutOfBudget
        return grown

    def stretch(self, cells: bytes) -> Stretch:
        """The stretch of a board, keyed canonically: by its value classes, rows already collapsed.

        Sound: pair legality reads only each cell's class and the gap pattern (docs/rules.md: two
        values pair exactly when their classes match), an add copies values so it copies
        classes, and moves are positions; so two boards with the same class bytes have the same
        moves, the same successors up to the same relabelling, and the same answer for any adds.
        A board is the bytes after its emptied rows are gone, so collapse is already canonical.
        """
        key = cells.translate(self.class_of)
        st = self.stretches.get(key)
        if st is None:
            st = self.stretches[key] = Stretch(cells)
            st.meter = self.charge
        return st

    def win_board(self, cells: bytes, adds: int) -> bool:
        st = self.stretch(cells)
        if st.failed.get(st.mask, -1) >= adds:
            return False
        if adds == 0:
            ruleset = self.ruleset
            if ruleset.parity and not classes_even(cells, self.class_of):
                # a removal keeps every class's parity
                st.failed[st.mask] = 0
                return False
            rows = st.rows_of(st.mask)
            self.tick()
            if not ruleset.pairing_order:
                return self.win0(st, st.mask, rows, None, 0)
            live, matching = ordered_matching(st, st.mask, rows, None, ROOT_PAIRING_CAP)
            if not live:
                st.failed[st.mask] = 0
                return False
            if self.stretch_cap is None:
                dives = (
                    self.tuning.dives if not self.stretches_with_adds else self.tuning.inner_dives
                )
                allowed = None
                if matching is None and not self.stretches_with_adds:
                    # the test gave up: dives would be blind, so restrict the moves first
                    allowed = self.winning_pairs(st, rows)
                if self.dive(st, dives, matching, allowed):
                    return True
                if allowed is None and not self.stretches_with_adds:  # a real search ahead
                    allowed = self.winning_pairs(st, rows)
                # the restriction already holds what the pairing test would prune below the root
                levels = (
                    self.tuning.guided_levels
                    if allowed is None
                    else min(self.tuning.guided_levels, 1)
                )
                return self.win0(st, st.mask, rows, matching, levels, None, allowed)
            if self.dive(st, self.tuning.inner_dives, matching):
                return True
            self.stretch_end = self.nodes + self.stretch_cap
            base = len(self.path)
            try:
                return self.win0(st, st.mask, rows, matching, self.tuning.guided_levels)
            except _StretchCut:
                del self.path[base:]  # the cut branch's moves
                self.cut += 1
                return False
            finally:
                self.stretch_end = None
        return self.win(st, st.mask, st.rows_of(st.mask), adds)

    def winning_pairs(self, st: Stretch, rows: int) -> set[int]:
        """`order.winning_pairs` at the stretch's root; each pair's forced search counts as a node."""
        return winning_pairs(st, st.mask, rows, WINNING_PAIRS_CAP, None, self.tick)

    def dive(
        self,
        st: Stretch,
        count: int,
        root_matching: list[int] | None,
        allowed: set[int] | None = None,
    ) -> bool:
        """Seeded random games at 0 adds that only enter states with an ordered pairing.

        Each state entered is checked (a node); states found dead go into the table. A win
        leaves its moves in `path`. With `allowed` (see `win0`) only those pairs are played.
        """
        rng = random.Random(st.cells)
        failed = st.failed
        row_mask = st.row_mask
        base = len(self.path)
        for _ in range(count):
            mask, rows, matching = st.mask, st.rows_of(st.mask), root_matching
            live = True
            while live:
                pairs = st.pairs(mask, rows)
                if allowed is not None:
                    pairs = [(i, j) for i, j in pairs if 1 << i | 1 << j in allowed]
                rng.shuffle(pairs)
                for i, j in pairs:
                    q = 1 << i | 1 << j
                    child = mask ^ q
                    move = Move(st.here(i, rows), st.here(j, rows))
                    if not child:
                        self.path.append(move)
                        return True
                    if child in failed:
                        continue
                    self.tick()
                    crows = _rows_after(row_mask, rows, child, i, j)
                    live, nxt = ordered_matching(
                        st,
                        child,
                        crows,
                        _rest_of(matching, q) if matching else None,
                        PAIRING_CAP,
                        allowed,
                    )
                    if live:
                        self.path.append(move)
                        mask, rows, matching = child, crows, nxt
                        break
                    failed[child] = 0
                else:
                    live = False
            del self.path[base:]
        return False

    def win0(
        self,
        st: Stretch,
        mask: int,
        rows: int,
        hint: list[int] | None,
        levels: int,
        pairs: list[int] | None = None,
        allowed: set[int] | None = None,
    ) -> bool:
        """The hot path: no add left, so only pair removals within this stretch.

        For the first `levels` levels below the stretch's root, a state with no ordered pairing
        (`search_order`) is dead, and the pairing found puts its own pairs first and, minus the
        pair played, is the child's hint. Deeper down the test costs more than it prunes.
        `pairs` (pair masks), when given, are this state's legal pairs, derived from the parent's
        (`Stretch.child_pairs`) when the move emptied no row. With `allowed` (`order.winning_pairs`
        of the stretch's root) only those pairs are played, and only they enter pairings.
        """
        self.nodes += 1  # tick(), inlined
        if self.nodes == self.limit + 1 or (
            self.deadline is not None
            and not self.nodes & 1023
            and time.perf_counter() > self.deadline
        ):
            raise _OutOfBudget
        if self.stretch_end is not None and self.nodes > self.stretch_end:
            raise _StretchCut
        failed = st.failed
        if pairs is None:
            pairs = [1 << i | 1 << j for i, j in st.pairs(mask, rows)]
            if allowed is not None:
                pairs = [q for q in pairs if q in allowed]
        matching = None
        if levels > 0:
            live, matching = ordered_matching(st, mask, rows, hint, PAIRING_CAP, allowed)
            if not live:
                failed[mask] = 0
                return False
            if matching:
                chosen = set(matching)
                pairs = sorted(pairs, key=lambda p: p not in chosen)
        path = self.path
        row_mask = st.row_mask
        child_pairs = st.child_pairs
        levels -= 1
        for q in pairs:
            child = mask ^ q
            if child in failed:  # the empty mask never enters the table
                continue
            i = (q & -q).bit_length() - 1
            j = q.bit_length() - 1
            if not child:
                path.append(Move(st.here(i, rows), st.here(j, rows)))
                return True
            # _rows_after, inlined: only the two cells' rows can have emptied.
            crows = rows
            ri = i // WIDTH
            if not child & row_mask[ri]:
                crows ^= 1 << ri
            rj = j // WIDTH
            if rj != ri and not child & row_mask[rj]:
                crows ^= 1 << rj
            path.append((st, i, j, rows))  # a Move only if it wins (`_moves`)
            if self.win0(
                st,
                child,
                crows,
                _rest_of(matching, q) if matching else None,
                levels,
                child_pairs(pairs, i, j, child, rows, allowed) if crows == rows else None,
                allowed,
            ):
                return True
            path.pop()
        failed[mask] = 0
        return False

    def win(self, st: Stretch, mask: int, rows: int, adds: int) -> bool:
        """Whether this state can be emptied with `adds` adds; on success `path` holds the moves."""
        self.tick()
        cut = self.cut
        cells = st.board(mask)
        if self.ruleset.stack_certificate:
            tail = stack_certificate(cells, self.class_of)
            if tail is not None:
                self.path.extend(tail)
                return True
        path = self.path
        failed = st.failed
        row_mask = st.row_mask
        for i, j in st.pairs(mask, rows):
            child = mask ^ (1 << i | 1 << j)
            if not child:
                path.append(Move(st.here(i, rows), st.here(j, rows)))
                return True
            if failed.get(child, -1) >= adds:
                continue
            crows = _rows_after(row_mask, rows, child, i, j)
            path.append(Move(st.here(i, rows), st.here(j, rows)))
            if self.win(st, child, crows, adds):
                return True
            path.pop()
        path.append(ADD)
        if self.win_board(self.add(cells), adds - 1):
            return True
        path.pop()
        if self.cut == cut:  # nothing below was cut short: this is a proof
            failed[mask] = adds
        return False


def _rows_after(row_mask: list[int], rows: int, child: int, i: int, j: int) -> int:
    """The non-empty rows after removing i, j: only their own rows can have emptied."""
    ri, rj = i // WIDTH, j // WIDTH
    if not child & row_mask[ri]:
        rows ^= 1 << ri
    if rj != ri and not child & row_mask[rj]:
        rows ^= 1 << rj
    return rows


def _rest_of(matching: list[int], q: int) -> list[int]:
    """The matching after pair q is played: its own pairs minus q, the two widowed cells re-paired."""
    if q in matching:
        return [p for p in matching if p != q]
    rest = [p for p in matching if not p & q]
    widowed = 0
    for p in matching:
        if p & q:
            widowed |= p & ~q
    return rest + [widowed]


def _moves(path: list[Move | tuple[Stretch, int, int, int]]) -> list[Move]:
    """The path as moves: the hot loop records base cells and turns them into moves only here."""
    return [
        m if isinstance(m, Move) else Move(m[0].here(m[1], m[3]), m[0].here(m[2], m[3]))
        for m in path
    ]


def _playouts(cells: bytes, adds: int, count: int, search: _Search) -> list[Move] | None:
    """Seeded random games (pairs at random, an add when stuck); a win is a certificate.

    For ruleset 1 without a deadline, the compiled core plays them (`_compiled_playouts`)."""
    rng = random.Random(cells + bytes([adds]))
    ruleset = search.ruleset
    if (
        core is not None
        and search.deadline is None
        and ruleset.pair_order is rules.pairs_ordered
        and ruleset.remove_pair is rules.remove_pair
        and ruleset.add_numbers is rules.add_numbers
        and ruleset.class_of == rules.CLASS_OF
        and len(cells) <= core.MAX_INPUT_CELLS
        and 0 <= adds <= 64
    ):
        return _compiled_playouts(cells, adds, count, search, rng)
    stack = ruleset.stack_certificate
    # the ruleset's own pair order where it has one (ruleset 1: fragile vertical/diagonal pairs first)
    pairs_of = ruleset.pair_order or ruleset.legal_pairs
    remove_pair = ruleset.remove_pair
    for _ in range(count):
        c, a = cells, adds
        moves: list[Move] = []
        while c:
            search.tick()
            if stack:
                tail = stack_certificate(c, search.class_of)
                if tail is not None:
                    return moves + tail
            pairs = pairs_of(c)
            if pairs:
                i, j = pairs[rng.randrange(len(pairs))] if rng.random() < 0.7 else pairs[0]
                moves.append(Move(i, j))
                c = remove_pair(c, i, j)
            elif a:
                moves.append(ADD)
                c, a = search.add(c), a - 1
            else:
                break
        else:
            return moves
    return None


def _compiled_playouts(
    cells: bytes, adds: int, count: int, search: _Search, rng: random.Random
) -> list[Move] | None:
    """`_playouts`' games in the compiled core, from `rng`'s state: the same draws, the same
    nodes counted (raising `_OutOfBudget` where the Python would), the same certificate."""
    assert core is not None
    left = search.limit - search.nodes if search.limit >= 0 else -1
    status, code, nodes, rest = core.playouts(
        cells,
        adds,
        count,
        core.MT(rng.getstate()[1]),
        search.ruleset.stack_certificate,
        left,
        MAX_SOLVE_CELLS,
    )
    search.nodes += nodes
    if status == core.PLAYOUTS_OUT:
        raise _OutOfBudget
    if status == core.PLAYOUTS_NONE:
        return None
    moves = [ADD if i < 0 else Move(i, j) for i, j in struct.iter_unpack("<ii", code)]
    if status == core.PLAYOUTS_STACK:
        tail = stack_certificate(rest, search.class_of)
        assert tail is not None
        return moves + tail
    return moves


def _plain(search: _Search, cells: bytes, adds: int) -> list[Move] | None:
    """Exhaustive search over boards with the ruleset's own functions: sound for any ruleset.

    Used when the ruleset's flags rule out the bitmask stretches. A board that fails with k adds
    fails with fewer (an add is never forced), so `failed` keeps the most adds known too few.
    Parity and the stack certificate are used only where the ruleset's flags allow them.
    """
    ruleset = search.ruleset
    legal_pairs, remove_pair = ruleset.legal_pairs, ruleset.remove_pair
    failed: dict[bytes, int] = {}
    path: list[Move] = []

    def win(cells: bytes, adds: int) -> bool:
        search.tick()
        if failed.get(cells, -1) >= adds:
            return False
        if adds == 0 and ruleset.parity and not classes_even(cells, search.class_of):
            failed[cells] = 0
            return False
        if ruleset.stack_certificate:
            tail = stack_certificate(cells, search.class_of)
            if tail is not None:
                path.extend(tail)
                return True
        for i, j in legal_pairs(cells):
            after = remove_pair(cells, i, j)
            path.append(Move(i, j))
            if not after or win(after, adds):
                return True
            path.pop()
        if adds:
            path.append(ADD)
            if win(search.add(cells), adds - 1):
                return True
            path.pop()
        failed[cells] = adds
        return False

    return path if not cells or win(cells, adds) else None


def solve(
    board: Board | str | bytes,
    adds: int,
    *,
    ruleset: Ruleset | int = DEFAULT,
    budget_nodes: int | None = DEFAULT_BUDGET_NODES,
    timeout: float | None = None,
    tuning: Tuning = DEFAULT_TUNING,
) -> SolveResult:
    """Decide whether `board` can be emptied with at most `adds` Add numbers under `ruleset`.

    `budget_nodes` caps expanded states (None: no cap); `timeout` caps seconds and, unlike the
    node budget, makes the answer depend on the machine, so the pipeline uses nodes only.
    """
    if adds < 0:
        raise ValueError(f"adds allocation must be 0 or more, got {adds}")
    check_adds(adds)
    rs = ruleset_for(ruleset)
    cells = cells_of(board)
    check_cells(len(cells), MAX_SOLVE_CELLS, "the board to solve")
    start = time.perf_counter()
    search = _Search(budget_nodes, None if timeout is None else start + timeout, rs, tuning)
    tries = tuning.playouts if adds else tuning.quick_playouts
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    try:
        moves: list[Move] | None = []
        if not rs.bitmask_stretches:
            moves = _playouts(cells, adds, tries, search) if cells else []
            if moves is None:
                moves = _plain(search, cells, adds)
        elif cells and (adds or not rs.parity or classes_even(cells, search.class_of)):
            moves = _playouts(cells, adds, tries, search)
            if moves is None and adds:
                # A cheap first pass that may cut 0-add stretches short, then the full search
                # (which reuses every proof the first pass completed).
                search.stretches_with_adds = True
                search.stretch_cap = tuning.stretch_cap
                if search.win_board(cells, adds):
                    moves = _moves(search.path)
                elif search.cut:
                    search.stretch_cap = None
                    moves = _moves(search.path) if search.win_board(cells, adds) else None
            elif moves is None and search.win_board(cells, adds):
                moves = _moves(search.path)
        elif cells:
            moves = None
    except _OutOfBudget:
        return SolveResult(UNKNOWN, None, search.nodes, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if moves is None:
        return SolveResult(UNSOLVABLE, None, search.nodes, seconds)
    return SolveResult(SOLVED, tuple(moves), search.nodes, seconds)
