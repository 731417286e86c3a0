"""Proposals: where candidate starting boards come from before the solver and rating judge them.

Two kinds, which the strategies of `strategies` draw on:

- `random`: every cell is drawn independently from a digit distribution (`DigitDistribution`).
  Cheap, unbiased, and most proposals are unsolvable for boards of more than a dozen cells;
  the solver sorts them out.
- `constructive`: builds a board that is solvable by construction, backwards from the empty
  board, and returns the winning move list with it (see `constructive`). The solver only
  confirms it.

Both take a `random.Random` and nothing else that varies, so a proposal is a pure function of
its parameters and the generator's per-attempt seed.

A starting board has no gaps: `cells` digits in reading order, rows of the ruleset's width, the last
row short.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from pipeline.engine.board import CLASS
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rules import CLASS_OF
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.errors import NumberMatchError
from pipeline.solver.shortcuts import class_residue

if TYPE_CHECKING:
    from pipeline.rating.players import Games

DEFAULT_DIGITS = "123456789"
ACTIVE = 5  # a placeholder value: on a board of 5s, legal pairs are exactly the connected pairs
BLOCKER = 1  # a placeholder of another class: blocks paths, never pairs with ACTIVE


class DigitsError(NumberMatchError):
    """A digit distribution string that cannot be read."""


@dataclass(frozen=True)
class DigitDistribution:
    """Weights for the digits 1-9 (index 0 unused), read from a `digits` string.

    Two spellings:
    - a string of digits to draw from, each character equally likely: `123456789` (uniform,
      the default), `1123456789` (1 twice as likely as any other digit), `1955` ...
    - explicit weights, `DIGIT:WEIGHT` joined by commas: `1:1,5:2,9:0.5`; digits not named get
      weight 0.
    """

    weights: tuple[float, ...]

    @classmethod
    def parse(cls, text: str | None) -> DigitDistribution:
        spec = DEFAULT_DIGITS if text is None else str(text).strip()
        weights = [0.0] * 10
        where = f"invalid digits {text!r}"
        if not spec:
            raise DigitsError(
                f"{where}: give digits to draw from (e.g. 123456789) or weights (e.g. 1:1,5:2)"
            )
        if ":" in spec:
            for part in spec.split(","):
                digit, sep, weight = part.strip().partition(":")
                if not sep or len(digit.strip()) != 1 or digit.strip() not in "123456789":
                    raise DigitsError(
                        f"{where}: {part.strip()!r} is not DIGIT:WEIGHT with a digit 1-9"
                    )
                try:
                    if not weight.strip().isascii():  # float() reads Arabic-Indic digits too
                        raise ValueError
                    w = float(weight)
                except ValueError:
                    raise DigitsError(
                        f"{where}: weight {weight.strip()!r} of digit {digit.strip()} is not a number"
                    ) from None
                if not w >= 0 or w == float("inf"):
                    raise DigitsError(
                        f"{where}: weight {weight.strip()!r} of digit {digit.strip()} must be 0 or more"
                    )
                weights[int(digit)] += w
        else:
            for ch in spec:
                if ch not in "123456789":
                    raise DigitsError(
                        f"{where}: {ch!r} is not a digit 1-9 (or write weights as 1:1,5:2)"
                    )
                weights[int(ch)] += 1.0
        if sum(weights) <= 0:
            raise DigitsError(f"{where}: every weight is 0")
        if sum(weights) == float("inf"):  # each finite, but 1e308 + 1e308 is not
            raise DigitsError(
                f"{where}: the weights are too large to add up; use smaller numbers in the same ratio"
            )
        return cls(tuple(weights))

    def draw(self, rng: random.Random, k: int) -> list[int]:
        """k digits drawn independently."""
        return rng.choices(range(10), weights=self.weights, k=k)

    def draw_class(self, rng: random.Random) -> int:
        """A value class (1-5) with the total weight of its digits."""
        per_class = [0.0] * 6
        for d in range(1, 10):
            per_class[CLASS[d]] += self.weights[d]
        return rng.choices(range(6), weights=per_class)[0]

    def draw_in_class(self, rng: random.Random, klass: int) -> int:
        """A digit of class `klass`, by the weights of that class's digits."""
        digits = [d for d in range(1, 10) if CLASS[d] == klass]
        weights = [self.weights[d] for d in digits]
        if sum(weights) <= 0:
            weights = [1.0] * len(digits)
        return rng.choices(digits, weights=weights)[0]


@dataclass(frozen=True)
class Proposal:
    """A candidate starting board; `certificate` is set when the strategy knows a win, `played`
    when it played the rating's first games of some players (the rating takes them over), `path`
    when it changed a board to make this one (the changes, recorded in the puzzle's provenance)."""

    cells: bytes
    certificate: tuple[Move, ...] | None = None
    played: tuple[Games, ...] = field(default=(), compare=False, repr=False)
    path: tuple[str, ...] = ()


def random_digits(cells: int, rng: random.Random, digits: DigitDistribution) -> Proposal:
    """`cells` digits drawn independently from the distribution."""
    return Proposal(bytes(digits.draw(rng, cells)))


def _clearing_order(
    layout: list[int], rng: random.Random, rs: Ruleset, tries_per_cell: int = 8
) -> tuple[list[tuple[int, int]], int]:
    """Pair up the cell ids of `layout` so that removing the pairs in the returned order empties it.

    `layout` is a board of cell ids in reading order (-1 for a gap; no row is all gaps). The
    pairs are chosen backwards, from the last removal to the first: a pair is acceptable when
    its two cells are connected on the board where only the cells already chosen (removed
    later) and these two are active, every other cell a gap and emptied rows collapsed. The
    board after a set of removals depends only on the set, not on the order, so that board is
    exactly what the forward game shows when the pair is removed. Connection is decided by the
    engine (`rules.pair_problem`) on a board of placeholder values.

    Going backwards can corner itself near the start of the game (the board is dense there and
    the cells left over need not be neighbours). The cells still unassigned are then cleared
    forwards, from the full board, among connected pairs (`_forward_clear`); if that corners
    too, the latest backward choice is undone and forward clearing retried. With nothing chosen
    backwards, forward clearing always succeeds (consecutive active cells in reading order are
    connected), so this terminates. Returns the order and how many pairs were chosen backwards.
    """
    free = [i for i in layout if i >= 0]
    pos = {cid: p for p, cid in enumerate(layout) if cid >= 0}
    chosen: set[int] = set()
    backward: list[tuple[int, int]] = []
    while free:
        rng.shuffle(free)
        found = None
        budget = tries_per_cell * len(free)
        for x, a in enumerate(free):
            for b in free[x + 1 :]:
                budget -= 1
                if budget < 0 or _connected_with(layout, pos, chosen, a, b, rs):
                    found = (a, b) if budget >= 0 else None
                    break
            if found or budget < 0:
                break
        if found is None:
            break
        free.remove(found[0])
        free.remove(found[1])
        chosen.update(found)
        backward.append(found)
    while True:
        forward = _forward_clear(layout, chosen, rng, rs) if free else []
        if forward is not None:
            return forward + backward[::-1], len(backward)
        a, b = backward.pop()
        chosen.difference_update((a, b))
        free.extend((a, b))


def _forward_clear(
    layout: list[int], chosen: set[int], rng: random.Random, rs: Ruleset, tries: int = 3
) -> list[tuple[int, int]] | None:
    """Remove every active id not in `chosen` by connected pairs, `chosen` ids blocking; None if cornered."""
    for _ in range(tries):
        lay = layout
        played: list[tuple[int, int]] = []
        while True:
            geometry = bytes(0 if cid < 0 else BLOCKER if cid in chosen else ACTIVE for cid in lay)
            options = [(i, j) for i, j in rs.legal_pairs(geometry) if geometry[i] == ACTIVE]
            if not options:
                break
            i, j = rng.choice(options)
            a, b = lay[i], lay[j]
            lay, _ = _remove_ids(lay, a, b, rs.width)
            played.append((a, b))
        if all(cid < 0 or cid in chosen for cid in lay):
            return played
    return None


def _connected_with(
    layout: list[int], pos: dict[int, int], chosen: set[int], a: int, b: int, rs: Ruleset
) -> bool:
    """Whether ids a and b are connected when only `chosen` plus a, b are active (rows collapsed)."""
    active = chosen | {a, b}
    cells = bytearray()
    where: dict[int, int] = {}
    for s in range(0, len(layout), rs.width):
        row = layout[s : s + rs.width]
        if not any(cid in active for cid in row):
            continue
        for cid in row:
            if cid in (a, b):
                where[cid] = len(cells)
            cells.append(ACTIVE if cid in active else 0)
    return rs.pair_problem(bytes(cells), where[a], where[b]) is None


def _remove_ids(layout: list[int], a: int, b: int, width: int) -> tuple[list[int], Move]:
    """Remove ids a, b from a layout the way the engine removes a pair; returns it and the move."""
    i, j = layout.index(a), layout.index(b)
    move = Move.pair(i, j)
    out = list(layout)
    out[i] = out[j] = -1
    kept: list[int] = []
    for s in range(0, len(out), width):
        row = out[s : s + width]
        if any(cid >= 0 for cid in row):
            kept.extend(row)
    return kept, move


def _random_forward(
    layout: list[int], pairs: int, rng: random.Random, rs: Ruleset
) -> tuple[list[int], list[tuple[int, int]]]:
    """Play `pairs` removals of connected cells forward, each chosen uniformly among the legal ones."""
    played: list[tuple[int, int]] = []
    for _ in range(pairs):
        geometry = bytes(ACTIVE if cid >= 0 else 0 for cid in layout)
        i, j = rng.choice(rs.legal_pairs(geometry))
        a, b = layout[i], layout[j]
        layout, _ = _remove_ids(layout, a, b, rs.width)
        played.append((a, b))
    return layout, played


def constructive(
    cells: int, adds: int, rng: random.Random, digits: DigitDistribution, ruleset: Ruleset = DEFAULT
) -> Proposal:
    """A board solvable by construction, with its winning move list.

    The rules split a pair's legality into geometry (the two cells are connected: only gaps
    between them on a straight path) and values (equal, or summing to 10: the same value class).
    Geometry depends only on which cells are still active, never on the values. So:

    1. Give every cell an id and choose the whole winning game on ids alone, backwards from the
       empty board: the last pair first, then earlier ones, each time two unassigned cells that
       are connected on the board where only the already-chosen cells and these two are active
       (`_clearing_order`; collapse commutes with removal, so that board is what the forward
       game shows at that point). Where going backwards corners itself near the dense start,
       the first few pairs are chosen forwards instead.
    2. An odd board cannot be emptied by pairs alone, and an even board with adds allocated
       uses one half of the time: the game then first plays a random number of connected pairs
       forwards, plays Add numbers (the copies get new ids, each linked to its source cell),
       and the board after the add is paired as in step 1.
    3. Give values last: a removed pair must share a value class and a copy must equal its
       source, so ids joined by pairs and copies form groups that get one class each (drawn
       with the digit distribution's class weights), and each set of copy-linked ids gets one
       digit of that class (drawn with the weights inside the class).

    Every move of the certificate is therefore legal, and the board it starts from has exactly
    `cells` digits and no gap. Other pairs may be legal too (values repeat), which is what
    makes such a board more than a replay of its certificate.
    """
    use_add = cells % 2 == 1 or (adds > 0 and rng.random() < 0.5)
    if use_add and adds < 1:
        raise ValueError(
            f"{cells} cells cannot be emptied without an add: pairs remove two at a time"
        )
    layout = list(range(cells))
    copy_of: dict[int, int] = {}
    forward: list[tuple[int, int]] = []
    if use_add:
        # a random stretch of forward play, then the add
        layout, forward = _random_forward(
            layout, rng.randrange(0, (cells - 1) // 2 + 1), rng, ruleset
        )
        sources = [cid for cid in layout if cid >= 0]
        copy_of = dict(zip(range(cells, cells + len(sources)), sources))
        layout = layout + list(copy_of)
    rest, _ = _clearing_order(layout, rng, ruleset)
    values = _assign_values(cells + len(copy_of), forward + rest, copy_of, rng, digits)
    return Proposal(
        bytes(values[:cells]), _certificate(cells, forward, use_add, rest, ruleset.width)
    )


def _root(parent: list[int], x: int) -> int:
    """Union-find root of x, halving the path as it goes."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _assign_values(
    n: int,
    pairs: Sequence[tuple[int, int]],
    copy_of: dict[int, int],
    rng: random.Random,
    digits: DigitDistribution,
) -> list[int]:
    """Values for ids 0..n-1: paired ids share a class, copies equal their sources."""
    parent = list(range(n))  # union-find: ids whose values share a class
    same_value = list(range(n))  # union-find: ids whose values are equal (copies)
    find = partial(_root, parent)
    find_value = partial(_root, same_value)

    for a, b in pairs:
        parent[find(a)] = find(b)
    for copy, source in copy_of.items():
        parent[find(copy)] = find(source)
        same_value[find_value(copy)] = find_value(source)
    klass: dict[int, int] = {}
    digit: dict[int, int] = {}
    values = [0] * n
    for x in range(n):  # ids in order, so the draws happen in a fixed order
        group = find(x)
        if group not in klass:
            klass[group] = digits.draw_class(rng)
        v = find_value(x)
        if v not in digit:
            digit[v] = digits.draw_in_class(rng, klass[group])
        values[x] = digit[v]
    return values


def _certificate(
    cells: int,
    forward: list[tuple[int, int]],
    use_add: bool,
    backward: list[tuple[int, int]],
    width: int,
) -> tuple[Move, ...]:
    """The move list (board coordinates at each move) for the chosen id pairs."""
    layout = list(range(cells))
    moves: list[Move] = []
    for a, b in forward:
        layout, move = _remove_ids(layout, a, b, width)
        moves.append(move)
    if use_add:
        sources = [cid for cid in layout if cid >= 0]
        layout = layout + list(range(cells, cells + len(sources)))
        moves.append(ADD)
    for a, b in backward:
        layout, move = _remove_ids(layout, a, b, width)
        moves.append(move)
    assert not layout
    return tuple(moves)


def reading_order_reduction(cells: bytes, adds: int = 0, class_of: bytes = CLASS_OF) -> bytes:
    """What pairing neighbours in reading order (and adding when stuck) leaves of a board's classes.

    Two consecutive active cells in reading order are always connected, so a board whose class
    sequence cancels (`shortcuts.class_residue`) is won by the laziest player. Returns the class
    sequence left; empty means trivial.
    """
    left = class_residue(cells.translate(class_of).replace(b"\x00", b""))
    while left and adds > 0:
        adds -= 1
        left = class_residue(
            left + left
        )  # Add numbers appends a copy of the actives, which are what is left
    return left
