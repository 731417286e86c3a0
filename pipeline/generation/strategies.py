"""The generation strategies, one small record each, and their registry (like `rulesets.RULESETS`).

A strategy turns an attempt's `random.Random` into candidate starting boards for the generator to
solve, rate and judge. It says which `Ruleset` flags it is sound under (`needs`), whether it
steers toward the target (`targeted`: the default strategy when a tier or score is asked for
is the targeted one), and the parameters a puzzle's provenance records. The generator calls
through the record and never names a strategy; a new strategy is one `register` call.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import NumberMatchError
from pipeline.generation.proposals import constructive, random_digits

if TYPE_CHECKING:  # start-up time: the CLI reads the names; the strategies load when generating
    from pipeline.engine.rulesets import Ruleset
    from pipeline.generation.proposals import DigitDistribution, Proposal
    from pipeline.generation.screen import Window

# (cells, adds, attempt's Random, digits, ruleset, target windows: any will do, none: no target) -> candidate boards
Candidates = Callable[
    [int, int, random.Random, "DigitDistribution", "Ruleset", "tuple[Window, ...]"],
    Iterator["Proposal"],
]


class StrategyError(NumberMatchError):
    """An unknown strategy, or one that is not sound under the asked ruleset."""


@dataclass(frozen=True)
class Strategy:
    """One way of proposing boards: its name, what it needs of a ruleset, how it draws candidates."""

    name: str
    summary: str
    candidates: Candidates
    needs: tuple[str, ...] = ()  # Ruleset flags that must be on for its boards to be what it claims
    targeted: bool = False  # it moves toward the target: the default when a target is asked for
    certified: bool = (
        False  # its boards come with a win (what to try when no random board is solvable)
    )
    # its parameters for (adds, target windows), for provenance
    settings: Callable[[int, tuple[Window, ...]], dict[str, object]] | None = None
    # where it is the default targeted strategy: (cells, adds, the lowest score asked for) -> bool
    # (None: wherever no strategy registered with a condition claims the target)
    default_at: Callable[[int, int, float], bool] | None = None
    # a strategy that pushes its boards toward the target (a climb): after this many attempts of a
    # round with nothing accepted, the run stops when none of its estimates came near the target
    # (what it did not come near in that many climbs it will not: `generator._Judge`)
    reach_pilot: int | None = None
    # the adds at which it may be the default at all (None: any): a strategy whose estimate was
    # fitted on some adds only is no default beyond them
    default_adds: range | None = None

    def __str__(self) -> str:
        return self.name

    def check(self, ruleset: Ruleset) -> None:
        """Raise StrategyError when a flag this strategy needs is off in `ruleset`."""
        missing = [flag for flag in self.needs if not getattr(ruleset, flag)]
        if missing:
            sound = ", ".join(
                s.name
                for s in STRATEGY_BY_NAME.values()
                if all(getattr(ruleset, f) for f in s.needs)
            )
            raise StrategyError(
                f"strategy {self.name!r} is not sound for {ruleset} (it needs {', '.join(missing)}): "
                f"use one of {sound}"
            )


STRATEGY_BY_NAME: dict[str, Strategy] = {}


def register(strategy: Strategy) -> Strategy:
    """Add a strategy to the registry (replacing one of the same name) and return it."""
    STRATEGY_BY_NAME[strategy.name] = strategy
    return strategy


def strategy_for(name: str) -> Strategy:
    """The registered strategy called `name`; raises StrategyError naming it and the known ones."""
    try:
        return STRATEGY_BY_NAME[name]
    except KeyError:
        raise StrategyError(
            f"unknown strategy {name!r}: expected one of {', '.join(STRATEGY_BY_NAME)}"
        ) from None


def default_strategy(
    targeted: bool, cells: int | None = None, adds: int | None = None, low: float = 0.0
) -> Strategy:
    """The strategy used when none is named: when a target is asked for, the targeted one whose
    `default_at` claims the board size and target (`low`: the lowest score asked for), else the
    first targeted one without a condition whose `default_adds` hold the adds, else random."""
    kinds = [s for s in STRATEGY_BY_NAME.values() if s.targeted == targeted]
    if cells is not None and adds is not None:
        claimed = [s for s in kinds if s.default_at is not None and s.default_at(cells, adds, low)]
        if claimed:
            return claimed[0]
    return next(
        (
            s
            for s in kinds
            if s.default_at is None
            and (s.default_adds is None or adds is None or adds in s.default_adds)
        ),
        STRATEGY_BY_NAME["random"],
    )


def propose(
    name: str,
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset | None = None,
) -> Proposal:
    """The first candidate of the named strategy with no target (what the rating study samples)."""
    return next(strategy_for(name).candidates(cells, adds, rng, digits, ruleset or DEFAULT, ()))


def _random(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
) -> Iterator[Proposal]:
    yield random_digits(cells, rng, digits)


def _constructive(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
) -> Iterator[Proposal]:
    yield constructive(cells, adds, rng, digits, ruleset)


def _search(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
) -> Iterator[Proposal]:
    # start-up time: the players and the search load to generate, not for --help
    from pipeline.generation.screen import screen

    return screen(cells, adds, rng, digits, ruleset, windows)


def _search_settings(adds: int, windows: tuple[Window, ...]) -> dict[str, object]:
    from pipeline.generation.screen import settings  # start-up time (see `_search`)

    return settings()


# The adds the screen's lines were fitted at (`research.fit_screen`: 27/2, 27/3, 30/2, 30/1, 36/1).
# Beyond them the lines extrapolate (at 5 adds the first stage's adds term alone takes 64 points
# off): the screen is no default there, and its "out of reach" stop does not apply there
# (`generator._Judge`). Measured beyond them, random was as fast or faster on the tiers the climb
# does not claim (docs/generation.md).
SCREEN_ADDS = range(1, 4)


def screen_fitted(adds: int) -> bool:
    """Whether the screen's estimate was fitted at this many adds (where its stop is sound)."""
    return adds in SCREEN_ADDS


# Where the climb is the default: from 4 adds on, for targets from this score up (5 adds and more:
# the 5 entry). There random boards are easy almost every time and the screen finds none; below,
# the screen is faster (docs/generation.md has the bench's figures).
CLIMB_FROM: dict[int, float] = {4: 84.0, 5: 54.0}


def climbs_by_default(cells: int, adds: int, low: float) -> bool:
    """Whether the climb is the default for a target whose lowest score is `low` at this size."""
    return adds >= min(CLIMB_FROM) and low >= CLIMB_FROM[min(adds, max(CLIMB_FROM))]


# beyond the screen's fitted adds a target from this score up (expert) gets a deeper climb, these
# steps and neighbours a step: the default climb tops out below it there (docs/generation.md)
DEEP_FROM = 84.0
DEEP_CLIMB = (3000, 16)


def climb_depth(adds: int, windows: tuple[Window, ...]) -> tuple[int, int] | None:
    """The climb's steps and neighbours per step for a target when not its default (None)."""
    if windows and not screen_fitted(adds) and min(w.low for w in windows) >= DEEP_FROM:
        return DEEP_CLIMB
    return None


def _climb(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
) -> Iterator[Proposal]:
    from pipeline.generation.climb import climb  # start-up time (see `_search`)

    # the deeper climb offers its best board when it runs out of steps: its full rating is what
    # can stop a run there (`generator._Judge`), where the estimates read low
    depth = climb_depth(adds, windows)
    return climb(cells, adds, rng, digits, ruleset, windows, depth, offer_best=depth is not None)


def _climb_settings(adds: int, windows: tuple[Window, ...]) -> dict[str, object]:
    from pipeline.generation.climb import settings  # start-up time (see `_search`)

    depth = climb_depth(adds, windows)
    return settings(depth, offer_best=depth is not None)


RANDOM = register(Strategy("random", "digits drawn independently", _random))
CONSTRUCTIVE = register(
    Strategy(
        "constructive",
        "solvable by construction",
        _constructive,
        needs=("constructive",),
        certified=True,
    )
)
SEARCH = register(
    Strategy(
        "search",
        "random boards screened by a cheap estimate; only likely ones fully rated",
        _search,
        targeted=True,
        settings=_search_settings,
        default_adds=SCREEN_ADDS,
    )
)
CLIMB = register(
    Strategy(
        "climb",
        "the screen's most promising board changed step by step toward the target",
        _climb,
        targeted=True,
        settings=_climb_settings,
        default_at=climbs_by_default,
        reach_pilot=4,
    )
)
STRATEGIES: tuple[str, ...] = tuple(STRATEGY_BY_NAME)
