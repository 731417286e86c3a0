"""The generator: propose starting boards, keep the solvable, non-trivial ones in the requested tier.

Each attempt k is a pure function of the parameters and k: it draws from
`random.Random(f"{seed}:{k}")`, proposes a board (`proposals`), rejects trivial ones, asks the
solver with a node budget (never a clock), and rates with a seed derived from (seed, k). Attempts
run on an executor (`executors`: a process pool by default, or a Dask cluster) and are judged in
index order, so the puzzles, their order
and every count are the same whatever the number of workers. A puzzle's provenance records
the seed and attempt, and `run_attempt(params, k)` rebuilds it exactly.

Generate-to-target is bounded: after a pilot of attempts with no acceptance, a tier whose
score range lies clear of every score seen fails fast (`GenerationError`), and `max_attempts`
bounds the whole run.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence, Set
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.engine.board import format_board
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset, ruleset_for
from pipeline.engine.stage import replay
from pipeline.errors import NumberMatchError
from pipeline.formats.puzzle import GENERATOR_NAME, Puzzle
from pipeline.generation import DEFAULT_WITHIN
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.generation.screen import Window
from pipeline.generation.strategies import (
    STRATEGY_BY_NAME,
    Strategy,
    StrategyError,
    default_strategy,
    screen_fitted,
    strategy_for,
)
from pipeline.limits import MAX_COUNT, MAX_GENERATED_ADDS, MAX_JOBS
from pipeline.rating import CONFIRM_SEED, DEFAULT_SEED
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import SOLVED, UNSOLVABLE, solve

if TYPE_CHECKING:
    from pipeline.generation.executors import Executor, WorkReport
    from pipeline.rating.score import Rating
from pipeline.rating import DEFAULT_PLAYOUTS
from pipeline.rating.players import Games, ScannerPlayer
from pipeline.rating.profile import RatingProfile, rated_under
from pipeline.rating.score import games_for, rate
from pipeline.rating.tiers import RATING_VERSION, TIER_NAMES, tier_range
from pipeline.rating.versions import VERSIONS

MIN_CELLS, MAX_CELLS = 2, 81
SCANNER = ScannerPlayer()  # the rating's simplest player: a board it always wins is trivial
PILOT_ATTEMPTS = 200
# Attempts of a round in which no board passes the screen and every screened board's estimate
# stays more than SCREEN_REACH points from every target window: then the target is out of reach
# at this size, and the run stops saying where the estimates lie (a count, never a clock).
SCREEN_BUDGET = 16
SCREEN_REACH = 5.0
SCORE_SLACK = 10.0  # how far beyond the scores seen a tier may start and still be tried

# rejection reasons (keys of GenerateResult.rejected)
TRIVIAL = "trivial"  # reading-order pairing (adding when stuck) clears it
SCANNER_WINS = "scanner-always-wins"  # the simplest simulated player never loses
UNSOLVABLE_REASON = str(UNSOLVABLE)  # the solver's answer, as a rejection reason
OVER_BUDGET = "solver-budget"  # the solver's node budget ran out: neither proved nor disproved
WRONG_TIER = "tier:"  # + the tier it got, e.g. "tier:easy"
OFF_SCORE = "off-score"  # rated outside the asked score window
# on target, but its confirmation rating (an independent draw of games) is not
UNCONFIRMED = "unconfirmed"
NO_CANDIDATE = (
    "no-candidate"  # the strategy offered no board (no draw of the search passed its screen)
)
DUPLICATE = "duplicate"  # same board already accepted in this run
FULL = "target-full"  # on a target whose quota is met (`generate(quotas=...)`)
EXISTING = "already-in-output"  # same id already in the output folder / exclude set


class GenerationError(NumberMatchError):
    """Bad generation parameters, or a target the generator cannot reach."""

    def __init__(self, message: str, partial: GenerateResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Target:
    """One thing a run may be asked for: a puzzle of `tier` (None: any) scoring within the
    params' `within` of `score` (None: anywhere in the tier)."""

    tier: str | None
    score: float | None = None

    def __str__(self) -> str:
        return (
            ":".join(x for x in (self.tier, None if self.score is None else f"{self.score:g}") if x)
            or "any"
        )

    @classmethod
    def parse(cls, text: str) -> Target:
        """`TIER` or `TIER:SCORE` (`generate --target`); GenerationError naming the text otherwise."""
        tier, sep, score = text.strip().partition(":")
        if tier not in TIER_NAMES:
            raise GenerationError(
                f"target {text!r}: expected TIER or TIER:SCORE with a tier of {', '.join(TIER_NAMES)}"
            )
        if not sep:
            return cls(tier)
        try:
            value = float(score) if score.strip().isascii() else None
        except ValueError:
            value = None
        if value is None or not 0 <= value <= 100:
            raise GenerationError(f"target {text!r}: the score after ':' must be a number 0-100")
        return cls(tier, value)


@dataclass(frozen=True)
class GenerateParams:
    """Everything that decides what a run emits (recorded in each puzzle's provenance).

    `digits`: see `proposals.DigitDistribution` (None = uniform 1-9). `max_attempts`: None
    means 1000 + 200 per puzzle requested. `playouts`: the rating's simulated games per player
    (None = the rating's default). `solve_nodes`: the solver's node budget per board.
    `ruleset`: the number of a registered ruleset (a number, so params pickle to workers).
    `score`/`within`: an exact target instead of a tier (scores within `within` of `score`).
    `targets`: several targets at once (instead of `tier` and `score`): a puzzle on any of them
    will do (a night's Stage targets of the tiers sharing a board size; `generate(quotas=...)`
    says how many each takes).
    `strategy`: a registered strategy's name (`strategies`); None: the targeted one when a tier
    or score is asked for, else random.
    `rating_version`: the rating version puzzles are rated by (None: the current one); one that
    confirms (`RatingVersion.confirms`) rates an accepted board again on an independent draw of
    games (`pipeline.rating.CONFIRM_SEED`), stores that rating and keeps the board only when it
    is still on target.
    """

    cells: int
    adds: int
    tier: str | None = None
    strategy: str | None = None
    seed: int = 0
    digits: str | None = None
    max_attempts: int | None = None
    solve_nodes: int = DEFAULT_SOLVE_NODES
    playouts: int | None = None
    pilot: int = PILOT_ATTEMPTS
    screen_budget: int = SCREEN_BUDGET
    ruleset: int = DEFAULT.number
    score: float | None = None
    within: float = DEFAULT_WITHIN
    targets: tuple[Target, ...] = ()
    profile: RatingProfile | None = (
        None  # score and tier under a rating profile (recorded in each puzzle)
    )
    rating_version: int | None = None

    def rules(self) -> Ruleset:
        """The ruleset these params name; raises GenerationError for an unknown one."""
        try:
            return ruleset_for(self.ruleset)
        except NumberMatchError as exc:
            raise GenerationError(str(exc)) from exc

    def check(self) -> DigitDistribution:
        """Validate; returns the parsed digit distribution. Raises GenerationError naming the field."""
        ruleset = self.rules()
        if (
            isinstance(self.cells, bool)
            or not isinstance(self.cells, int)
            or not MIN_CELLS <= self.cells <= MAX_CELLS
        ):
            raise GenerationError(
                f"cells {self.cells!r} is out of range: a board has {MIN_CELLS} to {MAX_CELLS} cells"
            )
        if (
            isinstance(self.adds, bool)
            or not isinstance(self.adds, int)
            or not 0 <= self.adds <= MAX_GENERATED_ADDS
        ):
            raise GenerationError(f"adds {self.adds!r} is out of range: 0 to {MAX_GENERATED_ADDS}")
        if self.cells % 2 and self.adds == 0:
            raise GenerationError(
                f"{self.cells} cells with 0 adds can never be won: pairs remove two numbers at a time; "
                "use an even number of cells or at least 1 add"
            )
        if self.targets and (self.tier is not None or self.score is not None):
            raise GenerationError("give a tier and score, or several targets, not both")
        for target in self._asked():
            if target.tier is not None and target.tier not in TIER_NAMES:
                raise GenerationError(
                    f"unknown tier {target.tier!r}: expected one of {', '.join(TIER_NAMES)}"
                )
            score = target.score
            if score is not None and (
                isinstance(score, bool)
                or not isinstance(score, (int, float))
                or not 0 <= score <= 100
            ):
                raise GenerationError(f"score {score!r} is out of range: 0 to 100")
        if (
            isinstance(self.within, bool)
            or not isinstance(self.within, (int, float))
            or not 0 < self.within <= 50
        ):
            raise GenerationError(
                f"within {self.within!r} is out of range: more than 0, at most 50"
            )
        for target in self._asked():
            if (
                target.tier is not None
                and target.score is not None
                and self._window(target) is None
            ):
                raise GenerationError(
                    f"score {target.score:g}+-{self.within:g} lies outside tier {target.tier!r}"
                )
        try:
            self.strategy_record().check(ruleset)
        except StrategyError as exc:
            raise GenerationError(str(exc)) from exc
        if self.max_attempts is not None and self.max_attempts < 1:
            raise GenerationError(f"max_attempts {self.max_attempts!r} must be at least 1")
        if self.solve_nodes < 1:
            raise GenerationError(f"solve_nodes {self.solve_nodes!r} must be at least 1")
        if self.playouts is not None and self.playouts < 1:
            raise GenerationError(f"playouts {self.playouts!r} must be at least 1")
        if self.rating_version is not None and (
            isinstance(self.rating_version, bool) or self.rating_version not in VERSIONS
        ):
            known = ", ".join(map(str, VERSIONS))
            raise GenerationError(
                f"rating version {self.rating_version!r} is not known (known: {known})"
            )
        version = RATING_VERSION if self.rating_version is None else self.rating_version
        if self.profile is not None and not self.profile.scores_version(version):
            raise GenerationError(
                f"rating profile {self.profile.name!r} weighs rating version"
                f" {self.profile.version}'s players; it cannot score rating version {version}"
            )
        try:
            return DigitDistribution.parse(self.digits)
        except NumberMatchError as exc:
            raise GenerationError(str(exc)) from exc

    def strategy_record(self) -> Strategy:
        """The strategy these params name (or the default for their target)."""
        if self.strategy is None:
            # the search screens on a cheap estimate of the default mix's score: under a rating
            # profile the window is in the profile's scores, so the default is the untargeted one.
            # Otherwise it is the default for every tier and score: `make bench` measures it faster
            # than random on each, passing the held-out check (docs/generation.md).
            windows = self.windows()
            return default_strategy(
                bool(self._asked()) and self.profile is None,
                self.cells,
                self.adds,
                min((w.low for w in windows), default=0.0),
            )
        return strategy_for(self.strategy)

    def _asked(self) -> tuple[Target, ...]:
        """What is asked for: the targets, or the tier and score as one (none when neither is given)."""
        if self.targets:
            return self.targets
        return (
            (Target(self.tier, self.score),)
            if self.tier is not None or self.score is not None
            else ()
        )

    def _window(self, target: Target) -> Window | None:
        """The score range of a target: its tier's (any, None: 0-100) within `within` of its score
        (None: all of it); None when empty."""
        low, high = 0.0, 100.0
        tier = target.tier
        span = (
            None
            if tier is None
            else tier_range(tier)
            if self.profile is None
            else self.profile.tier_range(tier)
        )
        if span is not None:
            low, high = span
        if target.score is not None:
            low, high = max(low, target.score - self.within), min(high, target.score + self.within)
        return Window(low, high, target.score) if low <= high else None

    def window(self) -> Window | None:
        """The one score range asked for (None when nothing is, or for several `targets`: `windows`)."""
        asked = self._asked()
        return self._window(asked[0]) if len(asked) == 1 else None

    def windows(self) -> tuple[Window, ...]:
        """The score ranges asked for, any of which will do (empty when any score will do)."""
        return tuple(w for w in map(self._window, self._asked()) if w is not None)

    def hits(self, target: Target, tier: str, score: float) -> bool:
        """Whether a rating (tier, score) is on `target`: its tier, within `within` of its score."""
        return (target.tier is None or tier == target.tier) and (
            target.score is None or abs(score - target.score) <= self.within
        )

    def on_target(self, rating: Rating) -> str | None:
        """None when the rating hits the target (any of them), else the rejection reason."""
        asked = self._asked()
        assert rating.score is not None
        if not asked or any(self.hits(t, rating.tier, rating.score) for t in asked):
            return None
        if all(t.tier is not None and t.tier != rating.tier for t in asked):
            return WRONG_TIER + rating.tier
        return OFF_SCORE

    def attempt_limit(self, count: int) -> int:
        return self.max_attempts if self.max_attempts is not None else 1000 + 200 * count

    def provenance_params(self) -> dict[str, object]:
        out: dict[str, object] = {
            "cells": self.cells,
            "adds": self.adds,
            "tier": self.tier,
            "digits": self.digits,
            "solve_nodes": self.solve_nodes,
            "playouts": self.playouts,
            **({"profile": self.profile.name} if self.profile is not None else {}),
            **({"rating_version": self.rating_version} if self.rating_version is not None else {}),
        }
        if self.score is not None:
            out.update(score=self.score, within=self.within)
        elif self.targets:
            out.update(targets=[[t.tier, t.score] for t in self.targets], within=self.within)
        settings = self.strategy_record().settings
        if settings is not None:
            out["settings"] = settings(self.adds, self.windows())
        return out


@dataclass(frozen=True)
class Outcome:
    """What attempt k produced: a puzzle, or the reason it was rejected (and its score if rated),
    and how many boards it rated in full (a strategy may offer several per attempt)."""

    attempt: int
    puzzle: Puzzle | None = None
    reason: str | None = None
    score: float | None = None
    rated: int = 0
    tier: str | None = None  # the accepted puzzle's tier (under the run's profile, if any)
    estimates: tuple[float, float] | None = None  # the screen's lowest and highest, if it ran


@dataclass
class GenerateResult:
    """The accepted puzzles in attempt order, and how the attempts went."""

    puzzles: list[Puzzle]
    attempts: int
    rejected: dict[str, int]
    seconds: float
    scores: list[float] = field(
        default_factory=list
    )  # each attempt's last rated score, attempt order
    ratings: int = 0  # boards rated in full (what a run costs: an attempt may rate several)
    work: WorkReport | None = field(
        default=None, compare=False
    )  # where the attempts ran (not output)

    @property
    def acceptance_rate(self) -> float:
        return len(self.puzzles) / self.attempts if self.attempts else 0.0

    def summary(self) -> str:
        """One line: `generated N puzzles in S s: A attempts, acceptance R% (rejected: ...)`."""
        reasons = ", ".join(
            f"{k} {v}" for k, v in sorted(self.rejected.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        return (
            f"generated {len(self.puzzles)} puzzle{'' if len(self.puzzles) == 1 else 's'} in {self.seconds:.1f} s: {self.attempts} attempts, "
            f"acceptance {100 * self.acceptance_rate:.1f}% (rejected: {reasons or 'none'})"
        )


# Every puzzle is rated with the rating's own default seed, so that a plain re-rating
# (`numbermatch rate BOARD --adds N`, `validate --deep`) reproduces the stored difficulty; a
# rating version that confirms stores the confirmation's rating, with CONFIRM_SEED (recorded as
# `provenance.rating_seed`: `validate --deep` and `rate --seed` reproduce it).


def _rate(
    cells: bytes,
    adds: int,
    playouts: int | None,
    seed: int,
    solution: tuple[Move, ...],
    ruleset: Ruleset,
    played: tuple[Games, ...] = (),
    version: int = RATING_VERSION,
) -> Rating:
    return rate(
        cells,
        adds,
        seed=seed,
        solution=solution,
        ruleset=ruleset,
        playouts=DEFAULT_PLAYOUTS if playouts is None else playouts,
        played=played,
        version=version,
    )


def run_attempt(params: GenerateParams, attempt: int) -> Outcome:
    """Attempt k from scratch: the strategy's candidates, each judged until one is accepted.

    A pure function of (params, k): `generate` calls it on worker processes and anyone can call
    it again to rebuild one puzzle from its provenance.
    """
    digits = params.check()
    ruleset = params.rules()
    strategy = params.strategy_record()
    rng = random.Random(f"{params.seed}:{attempt}")
    outcome, rated, estimates = Outcome(attempt, reason=NO_CANDIDATE), 0, None
    candidates = strategy.candidates(
        params.cells, params.adds, rng, digits, ruleset, params.windows()
    )
    while True:
        try:
            proposal = next(candidates)
        except StopIteration as stop:  # a screening strategy returns its estimates' range
            estimates = stop.value if isinstance(stop.value, tuple) else None
            break
        outcome = _judge(params, attempt, proposal, ruleset, strategy)
        rated += outcome.rated
        if outcome.puzzle is not None:
            break
    return replace(outcome, rated=rated, estimates=estimates)


def _judge(
    params: GenerateParams, attempt: int, proposal: Proposal, ruleset: Ruleset, strategy: Strategy
) -> Outcome:
    """One candidate: reject trivial, solve (node budget), rate, check the target."""
    cells = proposal.cells
    # reading-order neighbours always connect where the stack certificate is sound
    if ruleset.stack_certificate and not reading_order_reduction(
        cells, params.adds, ruleset.class_of
    ):
        return Outcome(attempt, reason=TRIVIAL)
    result = solve(cells, params.adds, ruleset=ruleset, budget_nodes=params.solve_nodes)
    certificate = proposal.certificate
    if certificate is None:  # proposals without a known win: the solver's win is the certificate
        if result.status != SOLVED:
            return Outcome(
                attempt, reason=UNSOLVABLE_REASON if result.status == UNSOLVABLE else OVER_BUDGET
            )
        certificate = result.moves
    elif result.status == UNSOLVABLE:  # a constructed board the solver refutes: an engine bug
        raise AssertionError(f"solver refutes constructed board {format_board(cells)}")
    assert certificate is not None
    if replay(cells, certificate, params.adds, ruleset)[0]:
        raise AssertionError(f"certificate does not empty {format_board(cells)}")
    rseed = DEFAULT_SEED
    version = RATING_VERSION if params.rating_version is None else params.rating_version
    # the simplest player first: a board it always wins is trivial, rejected before the rest of
    # the rating is paid for (its games are the rating's own: handed over otherwise)
    played = {g.player.name: g for g in proposal.played}
    scanner = played.setdefault(SCANNER.name, Games(SCANNER, cells, params.adds, rseed, ruleset))
    playouts = DEFAULT_PLAYOUTS if params.playouts is None else params.playouts
    scanned = games_for(SCANNER.name, playouts, version)
    if scanner.totals(scanned).wins == scanned:
        return Outcome(attempt, reason=SCANNER_WINS)
    rating = rated_under(
        _rate(
            cells,
            params.adds,
            params.playouts,
            rseed,
            tuple(certificate),
            ruleset,
            tuple(played.values()),
            version,
        ),
        params.profile,
    )
    if rating.score is None or rating.tier not in TIER_NAMES:
        return Outcome(attempt, reason=UNSOLVABLE_REASON, rated=1)
    missed = params.on_target(rating)
    if missed is not None:
        return Outcome(attempt, reason=missed, score=rating.score, rated=1)
    rated = 1
    if VERSIONS[version].confirms:
        # the board was picked by that rating's draw of games (and the screen's, its first
        # ones): the score stored is one of an independent draw, and it must hit the target too
        rseed, rated = CONFIRM_SEED, 2
        rating = rated_under(
            _rate(
                cells, params.adds, params.playouts, rseed, tuple(certificate), ruleset, (), version
            ),
            params.profile,
        )
        assert rating.score is not None  # the certificate wins: the board is solvable
        if params.on_target(rating) is not None:
            return Outcome(attempt, reason=UNCONFIRMED, score=rating.score, rated=rated)
    puzzle = Puzzle(
        board=format_board(cells),
        adds=params.adds,
        solution=tuple(str(m) for m in certificate),
        difficulty=rating.to_dict(),
        ruleset=ruleset.number,
        provenance={
            "generator": GENERATOR_NAME,
            "strategy": strategy.name,
            "seed": params.seed,
            "attempt": attempt,
            "rating_seed": rseed,
            "params": params.provenance_params(),
            **({"path": list(proposal.path)} if proposal.path else {}),
        },
    )
    return Outcome(attempt, puzzle=puzzle, score=rating.score, rated=rated, tier=rating.tier)


def generate(
    count: int,
    params: GenerateParams,
    *,
    jobs: int | None = None,
    exclude_ids: Set[str] = frozenset(),
    exclude_keys: Set[str] = frozenset(),
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
    quotas: Sequence[int] | None = None,
) -> GenerateResult:
    """Up to `count` new puzzles (ids not in `exclude_ids`, keys not in `exclude_keys`: no
    relabelled copy either; no board twice) in the params' tier.

    `jobs`: worker processes (None = every core; 1 = in this process), or `executor` (see
    `executors`: a pool, a Dask cluster) to run the attempts elsewhere. The result does not
    depend on either. `progress(accepted, count)` is called as puzzles are accepted. Raises
    GenerationError for bad parameters, for a tier that the pilot shows out of reach, and when
    `max_attempts` run out first (the puzzles found so far are on the error's `partial`).

    `quotas` (with `params.targets`, adding up to `count`): how many puzzles each target takes.
    One stream serves them all, so a board rated on one target's behalf serves any target it
    lands on (a puzzle goes to the first with room). It runs in rounds, each asking for the
    targets with room (a tier's scores only once the tier's whole range has none left): a round
    ends when that changes, and round r > 0 draws from a seed of its own.
    Each puzzle's provenance records its round's params (seed, targets), so `run_attempt`
    rebuilds it.
    """
    params.check()
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise GenerationError(f"count {count!r} must be 1 to {MAX_COUNT:,} (docs/limits.md)")
    if jobs is not None and not 1 <= jobs <= MAX_JOBS:
        raise GenerationError(f"jobs {jobs!r} must be 1 to {MAX_JOBS} (docs/limits.md)")
    if quotas is not None and (
        len(quotas) != len(params.targets) or any(q < 0 for q in quotas) or sum(quotas) != count
    ):
        raise GenerationError(
            f"quotas {list(quotas)} must give each of the {len(params.targets)} targets 0 or more"
            f" puzzles, {count} in all"
        )
    if executor is None:
        # start-up time: a rebuilt attempt (`run_attempt`) needs no executor
        from pipeline.generation.executors import open_executor

        with open_executor(jobs) as local:
            return generate(
                count,
                params,
                exclude_ids=exclude_ids,
                exclude_keys=exclude_keys,
                progress=progress,
                executor=local,
                quotas=quotas,
            )
    limit = params.attempt_limit(count)
    start = time.perf_counter()
    judge = _Judge(count, params, exclude_ids, quotas, exclude_keys)
    workers: Counter[str] = Counter()
    while not judge.done and judge.attempts < limit:
        asked = judge.round_params()
        # closing the stream as soon as the round ends stops the executor handing out work
        with closing(executor.outcomes(run_attempt, asked, limit - judge.attempts)) as outcomes:
            for outcome, worker in outcomes:
                workers[worker] += 1
                judge.take(outcome, progress)
                if judge.done or judge.round_params().targets != asked.targets:
                    break
            else:  # the attempts ran out
                break
        judge.next_round()
    result = judge.result(time.perf_counter() - start)
    from pipeline.generation.executors import WorkReport  # start-up time: see above

    result.work = WorkReport.of(executor.description, workers)
    if len(result.puzzles) < count:
        raise GenerationError(
            f"only {len(result.puzzles)} of {count} puzzles after the limit of {limit} attempts "
            f"({_target(params)}; {_scores_text(result.scores)})",
            partial=result,
        )
    return result


class _Judge:
    """Accepts outcomes in attempt order: dedups, counts rejections, fills the quotas, applies the
    pilot check (per round), and says what the next round asks for."""

    def __init__(
        self,
        count: int,
        params: GenerateParams,
        exclude_ids: Set[str],
        quotas: Sequence[int] | None = None,
        exclude_keys: Set[str] = frozenset(),
    ) -> None:
        self.count = count
        self.params = params
        self.exclude = exclude_ids
        self.exclude_keys = exclude_keys
        self.seen: set[str] = set()
        self.puzzles: list[Puzzle] = []
        self.rejected: Counter[str] = Counter()
        self.scores: list[float] = []
        self.attempts = 0
        self.ratings = 0
        self.room = list(quotas) if quotas is not None else []  # puzzles each target still takes
        self.round = 0
        self.round_attempts = self.round_accepted = self.round_rated = 0
        self.estimates: tuple[float, float] | None = None  # the screen's range this round
        self.round_scores: list[float | None] = []  # each attempt's last full rating this round

    @property
    def done(self) -> bool:
        return len(self.puzzles) >= self.count

    def round_params(self) -> GenerateParams:
        """What this round asks for: the params as given, or with quotas the targets with room that
        no target with room covers (a tier's whole range covers its scores); round r > 0 on its own seed."""
        asked = self.params
        if self.room:
            open_ = [t for t, n in zip(self.params.targets, self.room) if n > 0]
            whole = {t.tier for t in open_ if t.score is None}
            asked = replace(
                asked,
                targets=tuple(
                    t
                    for t in open_
                    if t.score is None or (t.tier not in whole and None not in whole)
                ),
            )
        if self.round:
            asked = replace(asked, seed=derived_seed(self.params.seed, f"round {self.round}"))
        return asked

    def next_round(self) -> None:
        self.round += 1
        self.round_attempts = self.round_accepted = self.round_rated = 0
        self.estimates = None
        self.round_scores = []

    def _place(self, outcome: Outcome) -> bool:
        """Take room for an outcome's puzzle: the first target with room it is on (without quotas,
        any); False when there is none."""
        if not self.room:
            return True
        assert outcome.tier is not None and outcome.score is not None
        for i, target in enumerate(self.params.targets):
            if self.room[i] > 0 and self.params.hits(target, outcome.tier, outcome.score):
                self.room[i] -= 1
                return True
        return False

    def take(self, outcome: Outcome, progress: Callable[[int, int], None] | None) -> None:
        self.attempts += 1
        self.round_attempts += 1
        self.ratings += outcome.rated
        self.round_rated += outcome.rated
        if outcome.estimates is not None:
            lo, hi = outcome.estimates
            seen = self.estimates or (lo, hi)
            self.estimates = (min(seen[0], lo), max(seen[1], hi))
        if outcome.score is not None:
            self.scores.append(outcome.score)
        self.round_scores.append(outcome.score)
        puzzle = outcome.puzzle
        if puzzle is None:
            self.rejected[outcome.reason or "rejected"] += 1
        elif puzzle.id in self.seen:
            self.rejected[DUPLICATE] += 1
        elif puzzle.id in self.exclude or (self.exclude_keys and puzzle.key in self.exclude_keys):
            self.rejected[EXISTING] += 1
        elif not self._place(outcome):
            self.rejected[FULL] += 1
        else:
            self.seen.add(puzzle.id)
            self.puzzles.append(puzzle)
            self.round_accepted += 1
            if progress is not None:
                progress(len(self.puzzles), self.count)
        if self.round_attempts == self.params.screen_budget and not self.round_rated:
            self._reach_check()
        climbs = self.params.strategy_record().reach_pilot
        if climbs is not None and self.round_attempts == climbs and not self.round_accepted:
            self._climb_check()
            self._rated_check()
        if self.round_attempts == self.params.pilot and not self.round_accepted:
            self._pilot_check()

    def _reach_check(self) -> None:
        """After `screen_budget` attempts of a round with no board rated: stop when every board
        the screen looked at was estimated more than SCREEN_REACH points from every window
        (however many attempts are left, none would be); only at the adds the screen's estimate
        was fitted at (`strategies.SCREEN_ADDS`)."""
        p = self.round_params()
        windows = p.windows()
        # beyond the adds the screen's lines were fitted at they extrapolate (they read far low
        # at 5 adds): estimates far from the target say nothing there
        if self.estimates is None or not windows or not screen_fitted(p.adds):
            return
        lo, hi = self.estimates
        if any(w.low - SCREEN_REACH <= hi and lo <= w.high + SCREEN_REACH for w in windows):
            return
        low, high = min(w.low for w in windows), max(w.high for w in windows)
        change = (
            f"aim within {lo:.0f}-{hi:.0f} or widen --within"
            if p.score is not None or p.targets
            else "ask for another tier"
        )
        raise GenerationError(
            f"no board came near {_target(p)} in {self.attempts} attempts: the screen's estimates"
            f" were {lo:.1f}-{hi:.1f}, the target needs {low:g}-{high:g} (none rated); {change},"
            " or another --cells/--adds",
            partial=self.result(0.0),
        )

    def _climb_check(self) -> None:
        """After a climbing strategy's `reach_pilot` attempts of a round with nothing accepted: stop
        when every estimate its climbs stood on and every score rated stayed more than SCREEN_REACH
        points from every window (a climb pushes as far as it can: more climbs go no nearer); only
        at the adds the screen's estimate was fitted at (`strategies.SCREEN_ADDS`), as for the
        screen's stop: beyond them the estimates read low."""
        p = self.round_params()
        windows = p.windows()
        if self.estimates is None or not windows or not screen_fitted(p.adds):
            return
        lo, hi = self.estimates
        if self.scores:
            lo, hi = min(lo, *self.scores), max(hi, *self.scores)
        if any(w.low - SCREEN_REACH <= hi and lo <= w.high + SCREEN_REACH for w in windows):
            return
        low, high = min(w.low for w in windows), max(w.high for w in windows)
        best = f"best rated {max(self.scores):.1f}" if self.scores else "none rated"
        raise GenerationError(
            f"no board came near {_target(p)} in {self.attempts} climbs: the climb's estimates"
            f" and scores were {lo:.1f}-{hi:.1f} ({best}), the target needs {low:g}-{high:g};"
            " ask for another tier, or another --cells/--adds",
            partial=self.result(0.0),
        )

    def _rated_check(self) -> None:
        """After a climbing strategy's `reach_pilot` attempts of a round with nothing accepted: stop
        when every one of them rated a board in full (the deeper climb rates its best board when
        it runs out of steps) and every such score stayed more than SCREEN_REACH points below every
        window. Full ratings only, so it holds at any adds, beyond the screen's fitted ones too
        (where the estimates read low and `_climb_check` does not apply)."""
        p = self.round_params()
        windows = p.windows()
        scores = [s for s in self.round_scores if s is not None]
        if not windows or not scores or len(scores) < len(self.round_scores):
            return
        if any(s >= w.low - SCREEN_REACH for s in scores for w in windows):
            return
        low, high = min(w.low for w in windows), max(w.high for w in windows)
        raise GenerationError(
            f"no board came near {_target(p)} in {self.attempts} climbs: their best boards rated"
            f" {min(scores):.1f}-{max(scores):.1f} in full, the target needs {low:g}-{high:g};"
            " ask for another tier, or another --cells/--adds",
            partial=self.result(0.0),
        )

    def _pilot_check(self) -> None:
        """After the pilot with nothing accepted: fail fast when the target looks out of reach."""
        p = self.round_params()
        partial_result = self.result(0.0)
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.rejected.items()))
        if not self.scores:
            ruleset = p.rules()
            others = [
                s.name
                for s in STRATEGY_BY_NAME.values()
                if s.certified
                and s.name != p.strategy_record().name
                and all(getattr(ruleset, f) for f in s.needs)
            ]
            hint = f"; try --strategy {' or '.join(others)}" if others else ""
            raise GenerationError(
                f"no solvable non-trivial board in {self.attempts} attempts at {_target(p)} (rejected: {reasons}){hint}",
                partial=partial_result,
            )
        windows = p.windows()
        if not windows:
            return
        low, high = min(w.low for w in windows), max(w.high for w in windows)
        lo_seen, hi_seen = min(self.scores), max(self.scores)
        if low > hi_seen + SCORE_SLACK or high < lo_seen - SCORE_SLACK:
            raise GenerationError(
                f"no {p.tier or 'such'} puzzle in {self.attempts} attempts at {_target(p)}; {_scores_text(self.scores)}, "
                f"{p.tier or 'the target'} needs {low:g}-{high:g}",
                partial=partial_result,
            )

    def result(self, seconds: float) -> GenerateResult:
        return GenerateResult(
            list(self.puzzles),
            self.attempts,
            dict(sorted(self.rejected.items())),
            seconds,
            list(self.scores),
            self.ratings,
        )


def derived_seed(seed: int, label: str) -> int:
    """An independent seed derived from `seed` for `label` (a round of a run with quotas, a
    night's tier, a refill batch): the same for everyone who asks."""
    return int(hashlib.sha256(f"{seed}/{label}".encode()).hexdigest()[:12], 16)


def _target(p: GenerateParams) -> str:
    aim = (
        f", {p.tier}"
        if p.tier
        else f", score {p.score:g}+-{p.within:g}"
        if p.score is not None
        else ""
    )
    if p.targets:
        aim = f", {' '.join(map(str, p.targets))} +-{p.within:g}"
    return f"{p.cells} cells/{p.adds} adds ({p.strategy_record().name}{aim})"


def _scores_text(scores: list[float]) -> str:
    return f"scores seen {min(scores):g}-{max(scores):g}" if scores else "no board was rated"


# --- output folder ---------------------------------------------------------------------------


def existing_ids(folder: str | os.PathLike[str]) -> set[str]:
    """The ids of puzzle files already in `folder` (files named `<id>.yaml`)."""
    path = Path(folder)
    if not path.is_dir():
        return set()
    return {
        p.name[: -len(".yaml")] for p in path.iterdir() if p.name.endswith(".yaml") and p.is_file()
    }


__all__ = [
    "GenerateParams",
    "GenerateResult",
    "GenerationError",
    "Outcome",
    "existing_ids",
    "generate",
    "run_attempt",
]
