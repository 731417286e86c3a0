"""The climb, the screen (`search`) and random: speed, reach, the held-out checks and variety, same run.

Run: `python -m research.bench_search` (`make bench` runs it after `python -m pipeline.bench`; it
needs the rating study's held-out models, which the installed package does not ship); name groups,
tiers or strategies to run only those (`python -m research.bench_search 35/5 expert climb`),
`--quick` for a small budget (your own runs on a shared machine), `--count=N` and `--budget=S`
for N puzzles per target within S CPU seconds (the deeper climb's expert at 35/5 needs both: it
makes about a puzzle per 90 CPU s, and the tier-order check needs 4 or more a tier to be able to
pass). For each group (35/5 and 27/4,
the public games' settings; 27/2, 30/2 and 36/1, the nightly's) and every tier, each strategy
generates up to COUNT puzzles in one process within a fixed CPU budget (BUDGET seconds, in rounds
of ROUND attempts on seeds of their own) and the table prints validated puzzles per CPU second,
the full ratings paid per puzzle and the highest score any board it rated reached; every puzzle is
checked by the validator (its certificate replayed, its rating re-checked) before it counts.

Then, per group and tier, whether the climb (or the screen) fooled the score: the rating study's
held-out player models (`study_rating.STUDY_MODELS`: constrained, tidy, montecarlo, tens,
bottomup; never the score's players) play every puzzle on games of their own, and their mean loss
rate on a strategy's puzzles must not be lower than on another's of the same tier (climb against
the screen and random, the screen against random): one-sided Mann-Whitney test of "the other's
puzzles are lost more often", p printed, FAIL below ALPHA. Where only the climb reached a tier,
its puzzles of adjacent tiers are compared instead: every held-out model must lose its hard
puzzles more often than its medium ones, and its expert than its hard (one-sided, p per model,
FAIL when any p is ALPHA or more). Variety: distinct digit layouts (up to relabelling), and the mean
pairwise distance (cells whose value class differs) within the tier as a share of random's, or of
the screen's where random made none, FAIL below 90%.
"""

from __future__ import annotations

import resource
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from pipeline.engine.board import parse
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.generation.generator import GenerateParams, GenerationError, derived_seed, generate
from pipeline.jobs.assembler import digit_layout
from pipeline.rating.players import play_many
from pipeline.rating.tiers import TIER_NAMES
from research.study_rating import STUDY_MODELS, mann_whitney_greater

GROUPS: tuple[tuple[int, int], ...] = ((35, 5), (27, 4), (27, 2), (30, 2), (36, 1))
STRATEGIES = ("climb", "search", "random")
COUNT = {"easy": 16, "medium": 16, "hard": 16, "expert": 8}  # puzzles per target at most
BUDGET = 40.0  # CPU seconds per strategy and target (a round under way finishes)
QUICK = ({"easy": 4, "medium": 4, "hard": 4, "expert": 4}, 10.0)  # --quick: counts and budget
ROUND = 8  # attempts per round: the budget is checked between rounds
SEED = 2026
ALPHA = 0.05  # a held-out check fails when the other's puzzles are lost more often at this level
VARIETY = 0.9  # a strategy's mean pairwise distance must be at least this share of random's
HELD_OUT_GAMES = {"constrained": 60, "tidy": 60, "montecarlo": 16, "tens": 60, "bottomup": 60}
HELD_OUT_SEED = 2027  # the study's MEASURE_SEED: games of their own, never the rating's
MAX_ATTEMPTS = 4000


def _cpu() -> float:
    """CPU seconds of this process and its reaped workers (the machine may be shared)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def model_losses(puzzle: Puzzle, games: dict[str, int] = HELD_OUT_GAMES) -> dict[str, float]:
    """Each held-out model's loss rate on a puzzle (each on its own seeded games)."""
    cells = parse(puzzle.board)
    return {
        m.name: 1.0 - play_many(m, cells, puzzle.adds, games[m.name], HELD_OUT_SEED)[0].win_rate
        for m in STUDY_MODELS
    }


def held_out_loss(puzzle: Puzzle, games: dict[str, int] = HELD_OUT_GAMES) -> float:
    """The held-out models' mean loss rate on a puzzle."""
    return statistics.fmean(model_losses(puzzle, games).values())


@dataclass(frozen=True)
class HeldOut:
    """The held-out models' mean loss rates on two sets of puzzles and the one-sided p."""

    search: float
    random: float
    p: float
    names: tuple[str, str] = ("search", "random")  # what made the two sets

    @property
    def passed(self) -> bool:
        return self.p >= ALPHA

    def __str__(self) -> str:
        verdict = "ok" if self.passed else "FAIL"
        ours, theirs = self.names
        return (
            f"held-out loss {ours} {self.search:.3f} {theirs} {self.random:.3f},"
            f" p {self.p:.3f} {verdict}"
        )


def heldout_check(
    search: Sequence[Puzzle],
    random: Sequence[Puzzle],
    games: dict[str, int] = HELD_OUT_GAMES,
    names: tuple[str, str] = ("search", "random"),
) -> HeldOut:
    """Are the first set's puzzles (the search's) lost less often by the held-out models than the
    second's (random's)? p small: yes."""
    ls = [held_out_loss(p, games) for p in search]
    lr = [held_out_loss(p, games) for p in random]
    p = mann_whitney_greater(lr, ls)
    return HeldOut(statistics.fmean(ls), statistics.fmean(lr), 1.0 if p is None else p, names)


@dataclass(frozen=True)
class TierOrder:
    """Per held-out model, its mean loss rate on one strategy's puzzles of a lower and of a higher
    tier and the one-sided p of "the higher tier's are lost more often"."""

    lower: str
    higher: str
    models: tuple[tuple[str, float, float, float], ...]  # (model, lower's loss, higher's, p)

    @property
    def passed(self) -> bool:
        return all(p < ALPHA for *_, p in self.models)

    def __str__(self) -> str:
        each = ", ".join(f"{m} {lo:.2f}<{hi:.2f} p {p:.3f}" for m, lo, hi, p in self.models)
        return f"{self.higher} over {self.lower}: {each} {'ok' if self.passed else 'FAIL'}"


def tier_order(
    lower: tuple[str, Sequence[Puzzle]],
    higher: tuple[str, Sequence[Puzzle]],
    games: dict[str, int] = HELD_OUT_GAMES,
) -> TierOrder:
    """Does every held-out model lose the higher tier's puzzles more often than the lower's?"""
    lo = [model_losses(p, games) for p in lower[1]]
    hi = [model_losses(p, games) for p in higher[1]]
    rows = []
    for m in STUDY_MODELS:
        xs, ys = [x[m.name] for x in hi], [x[m.name] for x in lo]
        p = mann_whitney_greater(xs, ys)
        rows.append((m.name, statistics.fmean(ys), statistics.fmean(xs), 1.0 if p is None else p))
    return TierOrder(lower[0], higher[0], tuple(rows))


def layout_distance(a: Puzzle, b: Puzzle) -> int:
    """Cells whose value class differs (boards of one size), plus the cells one has and the other not."""
    x, y = digit_layout(a.board).replace("/", ""), digit_layout(b.board).replace("/", "")
    return sum(c != d for c, d in zip(x, y)) + abs(len(x) - len(y))


def mean_distance(puzzles: Sequence[Puzzle]) -> float:
    """Mean pairwise layout distance (0 for fewer than two puzzles)."""
    pairs = list(combinations(puzzles, 2))
    return statistics.fmean(layout_distance(a, b) for a, b in pairs) if pairs else 0.0


def distinct_layouts(puzzles: Sequence[Puzzle]) -> int:
    return len({digit_layout(p.board) for p in puzzles})


def _validated(puzzles: Sequence[Puzzle]) -> list[Puzzle]:
    from pipeline.validator import validate_texts

    report = validate_texts((f"{p.id}.yaml", dump_yaml(p.to_document())) for p in puzzles)
    assert not report.problems, report.problems[0]
    return list(puzzles)


@dataclass(frozen=True)
class Run:
    """One strategy's puzzles for one target, the CPU seconds they took, the full ratings paid and
    the scores of every board rated on the way."""

    puzzles: list[Puzzle]
    cpu: float
    ratings: int
    scores: tuple[float, ...] = ()

    @property
    def rate(self) -> float:
        return len(self.puzzles) / self.cpu if self.cpu else 0.0

    @property
    def ratings_each(self) -> float:
        return self.ratings / len(self.puzzles) if self.puzzles else float("inf")

    @property
    def best(self) -> float | None:
        return max(self.scores, default=None)

    @property
    def spread(self) -> str:
        """Its puzzles' scores: the median and the range (where in the tier they sit)."""
        made = sorted(float(p.difficulty["score"]) for p in self.puzzles)
        if not made:
            return "-"
        return f"{statistics.median(made):.1f} ({made[0]:.1f}-{made[-1]:.1f})"


def run(
    cells: int,
    adds: int,
    tier: str,
    strategy: str,
    count: int | None = None,
    seed: int = SEED,
    budget: float | None = None,
) -> Run:
    """Up to `count` validated puzzles of `tier` by `strategy` in this process, the CPU seconds they
    took (validation not counted), how many boards were fully rated on the way and their scores.
    With `budget`, rounds of ROUND attempts (round r on its own seed) until `count` or the budget
    is spent; without, one run of at most MAX_ATTEMPTS."""
    want = COUNT[tier] if count is None else count
    puzzles: list[Puzzle] = []
    scores: list[float] = []
    ratings, spent, round_ = 0, 0.0, 0
    while len(puzzles) < want and (budget is None or spent < budget):
        params = GenerateParams(
            cells=cells,
            adds=adds,
            tier=tier,
            strategy=strategy,
            seed=seed if not round_ else derived_seed(seed, f"bench round {round_}"),
            max_attempts=MAX_ATTEMPTS if budget is None else ROUND,
        )
        start = _cpu()
        try:
            result = generate(
                want - len(puzzles), params, jobs=1, exclude_ids={p.id for p in puzzles}
            )
        except GenerationError as exc:
            if exc.partial is None:
                raise
            result = exc.partial
        spent += _cpu() - start
        puzzles += result.puzzles
        scores += result.scores
        ratings += result.ratings
        round_ += 1
        if budget is None:
            break
    return Run(_validated(puzzles), spent, ratings, tuple(scores))


def _share(ours: Sequence[Puzzle], theirs: Sequence[Puzzle]) -> float:
    return mean_distance(ours) / mean_distance(theirs) if mean_distance(theirs) else 1.0


def main(argv: Sequence[str] = ()) -> None:
    """The table for every group, tier and strategy, or for the ones named in `argv` (`30/2`,
    `expert`, `climb`; `--quick`: QUICK's counts and budget)."""
    groups = [g for g in GROUPS if f"{g[0]}/{g[1]}" in argv] or list(GROUPS)
    tiers = [t for t in TIER_NAMES if t in argv] or list(TIER_NAMES)
    strategies = [s for s in STRATEGIES if s in argv] or list(STRATEGIES)
    counts, budget = QUICK if "--quick" in argv else (COUNT, BUDGET)
    for arg in argv:
        if arg.startswith("--count="):
            counts = dict.fromkeys(counts, int(_positive(arg, int)))
        elif arg.startswith("--budget="):
            budget = _positive(arg, float)
    print(
        f"   up to {', '.join(f'{t} {n}' for t, n in counts.items())} puzzles per target in {budget:g} CPU s"
        f" each, 1 worker, seed {SEED}; rate = validated puzzles / CPU s; ratings = boards fully"
        " rated per puzzle; best = highest score rated; puzzles scored = median (range)"
    )
    print(
        f"   {'group':>5} {'tier':<7} {'strategy':<8} {'made':>4} {'CPU s':>7} {'rate/s':>7}"
        f" {'ratings':>7} {'best':>6} {'puzzles scored':>19}  vs screen"
    )
    failed: list[str] = []
    for cells, adds in groups:
        made: dict[tuple[str, str], list[Puzzle]] = {}
        for tier in tiers:
            runs = {
                s: run(cells, adds, tier, s, count=counts[tier], budget=budget) for s in strategies
            }
            for name, r in runs.items():
                made[name, tier] = r.puzzles
                screen = runs.get("search")
                ratio = (
                    f"{r.rate / screen.rate:.2f}x"
                    if screen is not None and screen.rate and name != "search"
                    else ""
                )
                best = "-" if r.best is None else f"{r.best:.1f}"
                print(
                    f"   {cells:>2}/{adds:<2} {tier:<7} {name:<8} {len(r.puzzles):>4} {r.cpu:>7.1f}"
                    f" {r.rate:>7.3f} {r.ratings_each:>7.1f} {best:>6} {r.spread:>19}  {ratio}",
                    flush=True,
                )
            failed += _checks(cells, adds, tier, runs)
        failed += _orders(cells, adds, made)
    print(f"   {'all checks passed' if not failed else 'FAILED: ' + ', '.join(failed)}")


def _positive(arg: str, kind: type[int] | type[float]) -> float:
    """The value of `--name=value`, a positive number, or one line and exit 2."""
    name, _, text = arg.partition("=")
    try:
        value: float = kind(text)
    except ValueError:
        value = 0
    if not value > 0:
        print(f"bench_search: {name} needs a positive number, not {text!r}", file=sys.stderr)
        sys.exit(2)
    return value


def random_boards(cells: int, adds: int, n: int = 16) -> list[Puzzle]:
    """`n` random boards of a size (drawn as the random strategy draws, never rated): the variety
    baseline where random made no puzzles of a tier."""
    from random import Random

    from pipeline.engine.board import format_board
    from pipeline.generation.proposals import DigitDistribution

    rng, digits = Random(f"{SEED}:variety"), DigitDistribution.parse(None)
    return [
        Puzzle(
            board=format_board(bytes(digits.draw(rng, cells))),
            adds=adds,
            solution=(),
            difficulty={},
        )
        for _ in range(n)
    ]


def _checks(cells: int, adds: int, tier: str, runs: dict[str, Run]) -> list[str]:
    """The held-out and variety checks of one target: each strategy's puzzles against those of the
    strategies after it in STRATEGIES (climb against the screen and random, the screen against
    random), where both made two or more; variety against random's puzzles of the tier, or random
    boards of the size where random made fewer than two."""
    failed = []
    names = [s for s in STRATEGIES if s in runs]
    rand = runs["random"].puzzles if "random" in runs else []
    base, based = (
        (rand, "random's") if len(rand) >= 2 else (random_boards(cells, adds), "random boards'")
    )
    for i, ours in enumerate(names):
        mine = runs[ours].puzzles
        if len(mine) < 2:
            continue
        spread = _share(mine, base)
        line = (
            f"   {cells:>2}/{adds:<2} {tier:<7} {ours}: layouts {distinct_layouts(mine)}/{len(mine)},"
            f" distance {100 * spread:.0f}% of {based} {'ok' if spread >= VARIETY else 'FAIL'}"
        )
        if distinct_layouts(mine) < len(mine) or spread < VARIETY:
            failed.append(f"{cells}/{adds} {tier} {ours} variety")
        for theirs in names[i + 1 :]:
            other = runs[theirs].puzzles
            if len(other) < 2:
                continue
            check = heldout_check(mine, other, names=(ours, theirs))
            line += f"; {check}"
            if not check.passed:
                failed.append(f"{cells}/{adds} {tier} {ours} vs {theirs}")
        print(line, flush=True)
    return failed


def _orders(cells: int, adds: int, made: dict[tuple[str, str], list[Puzzle]]) -> list[str]:
    """Where only the climb reached a tier: its puzzles of adjacent tiers (medium-hard, hard-expert),
    every held-out model losing the higher tier's more often."""
    failed = []
    for lower, higher in (("medium", "hard"), ("hard", "expert")):
        climbed = made.get(("climb", higher), [])
        others = [made.get((s, higher), []) for s in STRATEGIES if s != "climb"]
        if len(climbed) < 2 or any(len(o) >= 2 for o in others):
            continue
        below = made.get(("climb", lower), [])
        if len(below) < 2:
            continue
        order = tier_order((lower, below), (higher, climbed))
        print(f"   {cells:>2}/{adds:<2} climb {order}", flush=True)
        if not order.passed:
            failed.append(f"{cells}/{adds} climb {higher} over {lower}")
    return failed


if __name__ == "__main__":
    main(sys.argv[1:])
