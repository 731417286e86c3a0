"""Rulesets as values: one small table of functions and flags per ruleset, and a registry.

In the manner of Tatham's `struct game` (and python-chess's `VARIANTS` / `find_variant`), a
ruleset is not a subclass but a frozen record: its value classes, its four rule functions on
cell bytes, and flags saying which of the solver's shortcuts and which generator strategies are
sound for it. Everything that plays, solves, rates, generates, validates or assembles takes a
`Ruleset` (default: ruleset 1) and calls through it, so a new ruleset is one `register` call.

A flag that is off is always safe: the solver falls back to plain exhaustive search with the
ruleset's own functions, the players recompute legal pairs instead of tracking them, and the
generator refuses the constructive strategy.

`RULESETS` is every ruleset this process knows (tests may register their own); `SHIPPED` is the
set the CLI and the validator accept by default: the rulesets published to players.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.engine import rules
from pipeline.engine.board import CLASS, WIDTH, cell_name, format_board
from pipeline.errors import IllegalMoveError, RulesetError

Pair = tuple[int, int]


@dataclass(frozen=True)
class Ruleset:
    """One ruleset: what pairs, how a pair is removed, what Add numbers does, what is sound.

    `value_class[v]` is the class of value v (0 for a gap): two values pair exactly when their
    classes are equal and non-zero. The functions take and return plain cell bytes (see
    `pipeline.engine.rules` for ruleset 1's); `legal_pairs` returns pairs i < j sorted.

    Flags (each True only with a soundness argument for this ruleset):
    - `parity`: a pair removes two cells of one class and an add doubles every class count, so
      a board with an odd class cannot be won without an add (`solver.shortcuts.classes_even`).
    - `stack_certificate`: two cells adjacent among the active cells in reading order always
      connect, so a class sequence that cancels like brackets is a win (`shortcuts`).
    - `pairing_order`: the dead-state test of `solver.order` (it knows ruleset 1's lines).
    - `bitmask_stretches`: the solver's bitmask search of `solver.mask` (ruleset 1's geometry
      and row collapse); off, the solver searches boards with the functions below.
    - `tracked_pairs`: the simulated players may update legal pairs incrementally
      (`rating.players`, ruleset 1's lines); off, they recompute them after every move.
    - `constructive`: the generator's constructive strategy builds boards winnable under it.

    `width` is the board's row length (cells per row; the last row may be short): the players'
    rows and the constructive strategy's row collapse read it from here. `pair_order`, when set,
    lists the legal pairs in the order the solver's random playouts try them (ruleset 1: fragile
    vertical and diagonal pairs first); None: `legal_pairs`' order.
    """

    number: int
    name: str
    value_class: bytes
    legal_pairs: Callable[[bytes], list[Pair]]
    pair_problem: Callable[[bytes, int, int], str | None]
    remove_pair: Callable[[bytes, int, int], bytes]
    add_numbers: Callable[[bytes], bytes]
    has_legal_pair: Callable[[bytes], bool] | None = None  # None: bool(legal_pairs(cells))
    parity: bool = False
    stack_certificate: bool = False
    pairing_order: bool = False
    bitmask_stretches: bool = False
    tracked_pairs: bool = False
    constructive: bool = False
    width: int = WIDTH
    pair_order: Callable[[bytes], list[Pair]] | None = None
    # value -> class for every byte, for `bytes.translate` (derived from value_class)
    class_of: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.value_class) != 10 or self.value_class[0] != 0 or 0 in self.value_class[1:]:
            raise ValueError(
                f"ruleset {self.number}: value_class must map 0 to 0 and 1-9 to classes 1-255"
            )
        object.__setattr__(
            self, "class_of", bytes(self.value_class) + bytes(256 - len(self.value_class))
        )

    def __str__(self) -> str:
        return f"ruleset {self.number} ({self.name})"

    def any_pair(self, cells: bytes) -> bool:
        """Whether `cells` has a legal pair (`has_legal_pair` when the ruleset has a faster test)."""
        has = self.has_legal_pair
        return has(cells) if has is not None else bool(self.legal_pairs(cells))

    def checked_remove(self, cells: bytes, i: int, j: int, move_text: str | None = None) -> bytes:
        """`remove_pair` after checking legality; raises IllegalMoveError naming move and board."""
        problem = self.pair_problem(cells, i, j)
        if problem is not None:
            text = move_text or f"{cell_name(min(i, j))}-{cell_name(max(i, j))}"
            raise IllegalMoveError(
                f"illegal move {text} on board {format_board(cells)!r}: {problem}"
            )
        return self.remove_pair(cells, i, j)


RULESETS: dict[int, Ruleset] = {}


def register(ruleset: Ruleset) -> Ruleset:
    """Add a ruleset to the registry (replacing one of the same number) and return it."""
    RULESETS[ruleset.number] = ruleset
    return ruleset


def unregister(number: int) -> None:
    """Forget a ruleset (tests register their own and clean up); ruleset 1 cannot go."""
    if number == DEFAULT.number:
        raise ValueError("ruleset 1 cannot be unregistered")
    RULESETS.pop(number, None)


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def ruleset_for(value: object, accept: frozenset[int] | None = None) -> Ruleset:
    """The registered ruleset a value names (a Ruleset, an int or a digit string).

    Raises RulesetError for anything else, and for a ruleset outside `accept` when given
    (the CLI and validator pass `SHIPPED`).
    """
    if isinstance(value, Ruleset):
        number: int | None = value.number
    else:
        number = _number(value)
    known = sorted(RULESETS if accept is None else set(RULESETS) & accept)
    if number is None or number not in known:
        names = ", ".join(map(str, known))
        raise RulesetError(
            f"unknown ruleset {value!r}: this engine implements ruleset {names} only"
        )
    return value if isinstance(value, Ruleset) else RULESETS[number]


DEFAULT = register(
    Ruleset(
        number=1,
        name="Number Match",
        value_class=CLASS,
        legal_pairs=rules.legal_pairs,
        pair_problem=rules.pair_problem,
        remove_pair=rules.remove_pair,
        add_numbers=rules.add_numbers,
        has_legal_pair=rules.has_legal_pair,
        parity=True,
        stack_certificate=True,
        pairing_order=True,
        bitmask_stretches=True,
        tracked_pairs=True,
        constructive=True,
        pair_order=rules.pairs_ordered,
    )
)
SHIPPED: frozenset[int] = frozenset({1})  # what the CLI and the validator accept
