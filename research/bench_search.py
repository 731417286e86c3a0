"""The search strategy against random: speed, the held-out check, and variety, same run.

Run: `python -m research.bench_search` (`make bench` runs it after `python -m pipeline.bench`; it
needs the rating study's held-out models, which the installed package does not ship); name groups
and tiers to run only those (`python -m research.bench_search 30/2 expert`). For each group (27/2,
30/2, 36/1) and every tier it generates COUNT puzzles with the `random` and the `search` strategy
(same seed, one worker) and prints validated puzzles per CPU second of each, their ratio, and the
full ratings each paid per puzzle; every puzzle is checked by the validator (its certificate
replayed, its rating re-checked) before it counts.

Then, per group and tier, whether the search fooled the score (`heldout_check`): the rating
study's held-out player models (`study_rating.STUDY_MODELS`: constrained, tidy, montecarlo, tens,
bottomup; never the score's players) play every puzzle on games of their own, and their mean loss
rate on the search's puzzles must not be lower than on random's: one-sided Mann-Whitney test of
"random's puzzles are lost more often", p printed, FAIL below ALPHA. Variety: distinct digit
layouts, and the mean pairwise distance (cells whose value class differs) within the tier as a
share of random's, FAIL below 90%.
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
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.jobs.assembler import digit_layout
from pipeline.rating.players import play_many
from pipeline.rating.tiers import TIER_NAMES
from research.study_rating import STUDY_MODELS, mann_whitney_greater

GROUPS: tuple[tuple[int, int], ...] = ((27, 2), (30, 2), (36, 1))
COUNT = {
    "easy": 16,
    "medium": 16,
    "hard": 16,
    "expert": 8,
}  # puzzles per target (expert: random's are slow)
SEED = 2026
ALPHA = 0.05  # the held-out check fails when random's puzzles are lost more often at this level
VARIETY = 0.9  # the search's mean pairwise distance must be at least this share of random's
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


def held_out_loss(puzzle: Puzzle, games: dict[str, int] = HELD_OUT_GAMES) -> float:
    """The held-out models' mean loss rate on a puzzle (each on its own seeded games)."""

    cells = parse(puzzle.board)
    losses = [
        1.0 - play_many(m, cells, puzzle.adds, games[m.name], HELD_OUT_SEED)[0].win_rate
        for m in STUDY_MODELS
    ]
    return statistics.fmean(losses)


@dataclass(frozen=True)
class HeldOut:
    """The held-out models' mean loss rates on two sets of puzzles and the one-sided p."""

    search: float
    random: float
    p: float

    @property
    def passed(self) -> bool:
        return self.p >= ALPHA

    def __str__(self) -> str:
        verdict = "ok" if self.passed else "FAIL"
        return f"held-out loss search {self.search:.3f} random {self.random:.3f}, p {self.p:.3f} {verdict}"


def heldout_check(
    search: Sequence[Puzzle], random: Sequence[Puzzle], games: dict[str, int] = HELD_OUT_GAMES
) -> HeldOut:
    """Are the search's puzzles lost less often by the held-out models than random's (p small: yes)?"""
    ls = [held_out_loss(p, games) for p in search]
    lr = [held_out_loss(p, games) for p in random]
    p = mann_whitney_greater(lr, ls)
    return HeldOut(statistics.fmean(ls), statistics.fmean(lr), 1.0 if p is None else p)


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
    """One strategy's puzzles for one target, the CPU seconds they took and the full ratings paid."""

    puzzles: list[Puzzle]
    cpu: float
    ratings: int

    @property
    def rate(self) -> float:
        return len(self.puzzles) / self.cpu if self.cpu else 0.0

    @property
    def ratings_each(self) -> float:
        return self.ratings / len(self.puzzles) if self.puzzles else float("inf")


def run(
    cells: int, adds: int, tier: str, strategy: str, count: int | None = None, seed: int = SEED
) -> Run:
    """`count` validated puzzles of `tier` by `strategy` in this process, the CPU seconds they took
    (validation not counted) and how many boards were fully rated on the way."""
    params = GenerateParams(
        cells=cells, adds=adds, tier=tier, strategy=strategy, seed=seed, max_attempts=MAX_ATTEMPTS
    )
    start = _cpu()
    try:
        result = generate(COUNT[tier] if count is None else count, params, jobs=1)
    except GenerationError as exc:
        if exc.partial is None:
            raise
        result = exc.partial
    cpu = _cpu() - start
    return Run(_validated(result.puzzles), cpu, result.ratings)


def main(argv: Sequence[str] = ()) -> None:
    """The table for every group and tier, or for the ones named in `argv` (`30/2`, `expert`)."""
    groups = [g for g in GROUPS if f"{g[0]}/{g[1]}" in argv] or list(GROUPS)
    tiers = [t for t in TIER_NAMES if t in argv] or list(TIER_NAMES)
    print(
        f"   puzzles per target {', '.join(f'{t} {n}' for t, n in COUNT.items())}, 1 worker, seed {SEED}; rate = validated puzzles / CPU s;"
        " ratings = boards fully rated per puzzle"
    )
    print(
        f"   {'group':>5} {'tier':<7} {'random/s':>9} {'search/s':>9} {'ratio':>7} {'ratings':>11}  held-out check; variety"
    )
    failed = []
    for cells, adds in groups:
        for tier in tiers:
            by_random, by_search = (
                run(cells, adds, tier, "random"),
                run(cells, adds, tier, "search"),
            )
            rand, found = by_random.puzzles, by_search.puzzles
            r_rate, s_rate = by_random.rate, by_search.rate
            ratio = s_rate / r_rate if r_rate else float("inf")
            line = (
                f"   {cells:>2}/{adds:<2} {tier:<7} {r_rate:>9.3f} {s_rate:>9.3f} {ratio:>6.2f}x"
                f" {by_random.ratings_each:>5.1f}/{by_search.ratings_each:<5.1f}"
            )
            if len(rand) >= 2 and len(found) >= 2:
                check = heldout_check(found, rand)
                spread = mean_distance(found) / mean_distance(rand)
                line += (
                    f"  {check}; layouts {distinct_layouts(found)}/{len(found)},"
                    f" distance {100 * spread:.0f}% of random's {'ok' if spread >= VARIETY else 'FAIL'}"
                )
                if not check.passed or spread < VARIETY:
                    failed.append(f"{cells}/{adds} {tier}")
            if ratio < 1.0:
                failed.append(f"{cells}/{adds} {tier} slower")
            print(line, flush=True)
    print(f"   {'all checks passed' if not failed else 'FAILED: ' + ', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1:])
