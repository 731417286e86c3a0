"""Rating study (`make rating-study`): does the score order boards for players it never saw?

A fixed, seeded sample of solvable, non-trivial boards (what the generator could accept: proposals
by both strategies, solved with a node budget, the rating's scanner not winning every game) per
(cells, adds) group (27 and 30 cells, 1 and 2 adds): candidates are rated BATCH at a time until
every tier holds PER_TIER boards by each compared rating version (at most MAX_CANDIDATES per group),
and the first PER_TIER of each tier are kept (what generating per tier gives). MIXED_POOL boards of
the nightly job's other plans (27/3, 36/1) join the mixed sample. A player's games in a rating are
one seeded sequence, so every population player plays once per board, for the most games any
compared version gives it, and each version's score is computed from its own prefix of those games
(exactly what `rate(..., version=v)` stores; a test checks it).

Every model's loss rate on a kept board, the rating's own players included, is then measured on
games of its own (MEASURE_GAMES, seed MEASURE_SEED), never on the games a score was computed from.
A version is held out from every model its population does not hold (`held_out`): version 2 from
`proximity` and the study models, version 3 from the study models, each of a policy family no
version's population holds:

- `constrained`: strategy: clears the most endangered number (the cell with the fewest partners).
- `tidy`: clears rows (the pair leaving its rows with the fewest numbers) and spends adds on
  impulse (each turn, with probability IMPULSE, while it has one).
- `montecarlo`: simulation: tries TRIALS random pairs, plays one random game out after each, and
  takes the pair whose trial went best.
- `tens`: value habit: a pair summing to ten when there is one, else equal numbers.
- `bottomup`: attention from the other end: pairs touching the lowest row that has one.

Printed per compared version: Spearman of the score against every model's loss rate overall and
within each group, tier means and counts within groups with one-sided Mann-Whitney tests between
adjacent tiers, the correlation inside single tiers (with a bootstrap interval where it is not
positive, and pooled over all tiers), the score's own precision (the STABILITY_GROUP
boards rated again with another seed), mixed-sample tier means and a verdict. `STUDY_JOBS=2` runs
on two processes (same output); `STUDY_DUMP=file.json` writes the rows, `STUDY_LOAD=file.json`
prints the report from written rows without playing again.
"""

from __future__ import annotations

import itertools
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

from pipeline.engine.board import WIDTH, format_board, parse
from pipeline.engine.rules import add_numbers, legal_pairs
from pipeline.engine.rulesets import Ruleset
from pipeline.generation.proposals import DigitDistribution, reading_order_reduction
from pipeline.generation.strategies import propose
from pipeline.rating import DEFAULT_PLAYOUTS, DEFAULT_SEED
from pipeline.rating.players import (
    Chooser,
    Pair,
    Player,
    PlayerStats,
    RandomPlayer,
    play_many,
    remove_and_track,
)
from pipeline.rating.score import PLAYERS_BY_VERSION, games_for
from pipeline.rating.tiers import TIER_NAMES, tier_for
from pipeline.rating.versions import score_from_metrics
from pipeline.solver.search import SOLVED, solve
from pipeline.telemetry.stats import ranks, spearman

SEED = 2027
VERSIONS: tuple[int, ...] = (2, 3)  # the rating versions compared: before, after
GROUPS: tuple[tuple[int, int], ...] = ((27, 1), (27, 2), (30, 1), (30, 2))
MIXED_GROUPS: tuple[tuple[int, int], ...] = ((27, 3), (36, 1))
# Boards kept per tier per group (by each version's tiers). A Spearman correlation over n boards has a
# standard error of about 1/sqrt(n - 1): at 24 boards a true within-tier correlation of +0.3 comes
# out at zero or below about 1 time in 14, at 40 about 1 in 30.
PER_TIER = 40
BATCH = 40  # candidates per group rated at a time
MAX_CANDIDATES = (
    1_000  # per group: a tier still short of PER_TIER after this many is reported short
)
MIXED_POOL = 20  # boards per extra group of the mixed sample
# The top tier of the current version is rare at 2 adds (about 1 accepted board in 100), so a
# group whose HUNT_TIER is still short after MAX_CANDIDATES goes on, up to HUNT_CANDIDATES, with
# candidates screened first by SCREEN_GAMES of the rating's own random player (the first games of
# the very sequence the rating plays): a board whose random player loses less than SCREEN_LOSS of
# them is not rated. Why that keeps the expert boards the plain search would have found: among the
# 1,198 boards the plain search rated (seed 2027), the lowest random loss rate of a version-3
# expert was 0.81 (over 416 games), and 64 games put a board at 0.81 under 0.70 about 1 time in
# 100. Only the current version's HUNT_TIER takes hunted boards; other versions and tiers never do.
HUNT_TIER = "expert"
HUNT_CANDIDATES = 12_000
SCREEN_GAMES = 64
SCREEN_LOSS = 0.7
STABILITY_GROUP = (30, 2)  # its boards are rated again with another seed
BOOTSTRAP = (
    2_000  # resamples behind the interval printed for a single-tier correlation at or below zero
)
SOLVE_NODES = 5_000
IMPULSE = 0.05
TRIALS = 3
# Games per board that measure each model's loss rate, the rating's own players included: on their own
# seed (MEASURE_SEED), never the games a rating scored, so a score's sampling noise counts against
# it and is not shared with what it is compared to.
MEASURE_GAMES = {
    "random": 200,
    "scanner": 200,
    "lookahead": 200,
    "opener": 200,
    "local": 200,
    "planner": 80,
    "proximity": 200,
    "constrained": 200,
    "tidy": 200,
    "montecarlo": 60,
    "tens": 200,
    "bottomup": 200,
}
MEASURE_SEED = SEED
DIGITS = DigitDistribution.parse(None)


# --- held-out player models ------------------------------------------------------------------


def _lowest(pairs: list[Pair], values: list[int], rng: Random) -> Pair:
    """A pair of the lowest value, ties at random."""
    low = min(values)
    return rng.choice([p for p, v in zip(pairs, values) if v == low])


@dataclass(frozen=True)
class Constrained:
    """Clears the most endangered number first: the pair whose cell has the fewest partners."""

    name: str = "constrained"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            deg: dict[int, int] = {}
            for i, j in pairs:
                deg[i] = deg.get(i, 0) + 1
                deg[j] = deg.get(j, 0) + 1
            return _lowest(pairs, [min(deg[i], deg[j]) for i, j in pairs], rng)

        return choose


@dataclass(frozen=True)
class Tidy:
    """Clears rows: the pair after which its rows hold the fewest numbers; adds on impulse."""

    name: str = "tidy"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair | None:
            if adds_left > 0 and rng.random() < IMPULSE:
                return None
            rows: dict[int, int] = {}
            for k, v in enumerate(cells):
                if v:
                    rows[k // WIDTH] = rows.get(k // WIDTH, 0) + 1
            value = [
                rows[i // WIDTH] - 2
                if i // WIDTH == j // WIDTH
                else min(rows[i // WIDTH], rows[j // WIDTH]) - 1
                for i, j in pairs
            ]
            return _lowest(pairs, value, rng)

        return choose


def _random_game(cells: bytes, pairs: list[Pair], adds: int, rng: Random) -> int:
    """Numbers left when blind play from here ends (0: won)."""
    for _ in range(10_000):
        if not cells:
            return 0
        if not pairs:
            if adds <= 0:
                break
            cells, adds = add_numbers(cells), adds - 1
            pairs = legal_pairs(cells)
            continue
        i, j = rng.choice(pairs)
        step = remove_and_track(cells, pairs, i, j)
        cells, pairs = step.cells, step.pairs
    return len(cells) - cells.count(0)


@dataclass(frozen=True)
class MonteCarlo:
    """Tries TRIALS random pairs, plays one random game out after each, takes the best trial."""

    name: str = "montecarlo"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            if len(pairs) == 1:
                return pairs[0]
            tried = rng.sample(pairs, min(TRIALS, len(pairs)))
            best, left = tried[0], math.inf
            for i, j in tried:
                step = remove_and_track(cells, pairs, i, j)
                n = _random_game(step.cells, step.pairs, adds_left, rng)
                if n < left:
                    best, left = (i, j), n
            return best

        return choose


@dataclass(frozen=True)
class Tens:
    """Sees sums before twins: a random pair summing to ten when there is one, else a random
    pair of equal numbers (5-5 counts as both)."""

    name: str = "tens"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            tens = [(i, j) for i, j in pairs if cells[i] + cells[j] == 10]
            return rng.choice(tens or pairs)

        return choose


@dataclass(frozen=True)
class BottomUp:
    """Reads the newest rows first: a random pair among those touching the lowest row that has one."""

    name: str = "bottomup"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            low = max(j // WIDTH for _, j in pairs)
            return rng.choice([p for p in pairs if p[1] // WIDTH == low])

        return choose


STUDY_MODELS: tuple[Player, ...] = (Constrained(), Tidy(), MonteCarlo(), Tens(), BottomUp())
# Every model whose loss rate the study measures: the compared versions' players, then the study's.
MODELS: tuple[Player, ...] = (
    tuple({p.name: p for v in VERSIONS for p in PLAYERS_BY_VERSION[v]}.values()) + STUDY_MODELS
)
MODEL_NAMES = tuple(p.name for p in MODELS)


def population(version: int) -> tuple[str, ...]:
    """The players a version's score is made from."""
    return tuple(p.name for p in PLAYERS_BY_VERSION[version])


def held_out(version: int) -> tuple[str, ...]:
    """The measured models a version's score never saw (not in its population)."""
    return tuple(n for n in MODEL_NAMES if n not in population(version))


# --- the sample ----------------------------------------------------------------------------------


def version_stats(cells: bytes, adds: int, seed: int = DEFAULT_SEED) -> dict[int, dict[str, Any]]:
    """Per compared rating version, its players' stats as `rate(..., version=v)` stores them.

    A player's games are one seeded sequence, so a version that gives it fewer games plays a prefix
    of the same games: every player plays once, for the largest count."""
    need: dict[str, int] = {}
    players = {}
    for v in VERSIONS:
        for p in PLAYERS_BY_VERSION[v]:
            players[p.name] = p
            need[p.name] = max(need.get(p.name, 0), games_for(p.name, DEFAULT_PLAYOUTS, v))
    games = {name: play_many(players[name], cells, adds, n, seed)[1] for name, n in need.items()}
    stats: dict[int, dict[str, Any]] = {}
    for v in VERSIONS:
        stats[v] = {}
        for p in PLAYERS_BY_VERSION[v]:
            g = games[p.name][: games_for(p.name, DEFAULT_PLAYOUTS, v)]
            stats[v][p.name] = PlayerStats(
                sum(x.won for x in g) / len(g), sum(x.moves for x in g) / len(g), len(g)
            ).to_dict()
    return stats


def version_score(stats: dict[str, Any], version: int) -> float:
    """The score of `version` from its players' stats (versions 2 on weigh players only)."""
    return score_from_metrics({"players": stats, "version": version})


def candidate(item: tuple[int, int, int, int, bool]) -> dict[str, Any] | None:
    """Candidate k of a group: a proposal (random and constructive alternate) kept when the
    generator could accept it (solvable within the node budget, not trivial, the rating's scanner
    not winning every game), with each compared version's score and tier. A hunted candidate
    (`HUNT_TIER`, see above) must first pass the random player's screen."""
    cells_n, adds, k, seed, hunted = item
    strategy = "constructive" if k % 2 else "random"
    prop = propose(strategy, cells_n, adds, Random(f"study:{seed}:{cells_n}:{adds}:{k}"), DIGITS)
    if not reading_order_reduction(prop.cells, adds):
        return None
    if (
        hunted
        and play_many(RandomPlayer(), prop.cells, adds, SCREEN_GAMES, DEFAULT_SEED)[0].win_rate
        > 1.0 - SCREEN_LOSS
    ):
        return None
    if prop.certificate is None:
        result = solve(prop.cells, adds, budget_nodes=SOLVE_NODES)
        if result.status != SOLVED or result.moves is None:
            return None
    stats = version_stats(prop.cells, adds)
    if stats[VERSIONS[-1]]["scanner"]["win_rate"] == 1.0:
        return None  # the scanner wins every game: the generator rejects it
    row: dict[str, Any] = {
        "group": [cells_n, adds],
        "k": k,
        "board": format_board(prop.cells),
        "adds": adds,
    }
    for v in VERSIONS:
        row[f"score{v}"] = version_score(stats[v], v)
        row[f"tier{v}"] = tier_for(row[f"score{v}"], v)
    if hunted:
        row["hunted"] = True
    return row


def _count(rows: list[dict[str, Any]], group: tuple[int, int], version: int, tier: str) -> int:
    return sum(
        1
        for r in rows
        if tuple(r["group"]) == group and r[f"tier{version}"] == tier and _counts_for(r, version)
    )


def _counts_for(row: dict[str, Any], version: int) -> bool:
    """Whether a row may fill a tier of `version` (hunted rows only fill the current version's)."""
    return not row.get("hunted") or version == VERSIONS[-1]


def _full(rows: list[dict[str, Any]], group: tuple[int, int]) -> bool:
    if group in MIXED_GROUPS:
        return sum(1 for r in rows if tuple(r["group"]) == group) >= MIXED_POOL
    return all(_count(rows, group, v, t) >= PER_TIER for v in VERSIONS for t in TIER_NAMES)


def candidates(mapper, seed: int = SEED) -> tuple[list[dict[str, Any]], dict[tuple[int, int], int]]:
    """Rated candidates, BATCH per group at a time, until every tier of every group holds PER_TIER
    boards by each compared version (MIXED_POOL boards for the mixed-only groups), or MAX_CANDIDATES
    were tried; then the hunt for the current version's HUNT_TIER where it is short (up to
    HUNT_CANDIDATES). Fixed order, so the sample does not depend on the number of processes.
    Returns the rows and, per group, how many hunted candidates were tried."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    tried = dict.fromkeys(GROUPS + MIXED_GROUPS, 0)
    current = VERSIONS[-1]

    def run(groups: list[tuple[int, int]], hunted: bool) -> None:
        items = [
            (c, a, k, seed, hunted)
            for c, a in groups
            for k in range(tried[(c, a)], tried[(c, a)] + BATCH)
        ]
        for row in mapper(candidate, items):
            if (
                row is None
                or row["board"] in seen
                or (hunted and row[f"tier{current}"] != HUNT_TIER)
            ):
                continue
            seen.add(row["board"])
            rows.append(row)
        for g in groups:
            tried[g] += BATCH

    while todo := [g for g in tried if tried[g] < MAX_CANDIDATES and not _full(rows, g)]:
        run(todo, False)
    hunts = dict.fromkeys(GROUPS, 0)
    while todo := [
        g
        for g in GROUPS
        if tried[g] < HUNT_CANDIDATES and _count(rows, g, current, HUNT_TIER) < PER_TIER
    ]:
        for g in todo:
            hunts[g] += BATCH
        run(todo, True)
    return rows, hunts


def measured_loss(row: dict[str, Any]) -> dict[str, float]:
    """Every model's loss rate on the row's board, on its own games (MEASURE_GAMES, MEASURE_SEED)."""
    cells = parse(row["board"])
    return {
        p.name: 1.0
        - play_many(p, cells, row["adds"], MEASURE_GAMES[p.name], MEASURE_SEED)[0].win_rate
        for p in MODELS
    }


def select(rows: list[dict[str, Any]], tier_key: str) -> list[int]:
    """Per group, the first PER_TIER boards of each tier (what generating per tier gives)."""
    version = int(tier_key.removeprefix("tier"))
    chosen = []
    for g in GROUPS:
        for t in TIER_NAMES:
            idx = [
                k
                for k, r in enumerate(rows)
                if tuple(r["group"]) == g and r[tier_key] == t and _counts_for(r, version)
            ]
            chosen += idx[:PER_TIER]
    return chosen


def rerated(row: dict[str, Any]) -> dict[int, float]:
    """The row's score per version, rated again with another seed (the score's own precision)."""
    stats = version_stats(parse(row["board"]), row["adds"], seed=DEFAULT_SEED + 1)
    return {v: version_score(stats[v], v) for v in VERSIONS}


def collect(
    jobs: int = 1,
) -> tuple[list[dict[str, Any]], dict[int, list[int]], list[int], dict[tuple[int, int], int]]:
    """Rated rows (study models' losses filled where needed), the selection per version, the
    mixed-only rows and the hunted candidates tried per group."""
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    try:
        mapper = pool.map if pool is not None else (lambda f, xs: list(map(f, xs)))
        rows, hunts = candidates(mapper)
        chosen = {v: select(rows, f"tier{v}") for v in VERSIONS}
        mixed = [
            k
            for g in MIXED_GROUPS
            for k in [k for k, r in enumerate(rows) if tuple(r["group"]) == g][:MIXED_POOL]
        ]
        need = sorted(set().union(*chosen.values()) | set(mixed))
        for k, loss in zip(need, mapper(measured_loss, [rows[k] for k in need])):
            rows[k]["loss"] = loss
        again = [k for k in need if tuple(rows[k]["group"]) == STABILITY_GROUP]
        for k, scores in zip(again, mapper(rerated, [rows[k] for k in again])):
            rows[k]["again"] = {str(v): s for v, s in scores.items()}
    finally:
        if pool is not None:
            pool.close()
    return rows, chosen, mixed, hunts


# --- statistics ----------------------------------------------------------------------------------

# ranks and Spearman's correlation: pipeline.telemetry.stats (the one copy)


def mann_whitney_greater(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """One-sided p that xs tend to be larger than ys (normal approximation, tie-corrected)."""
    n1, n2 = len(xs), len(ys)
    if not n1 or not n2:
        return None
    r = ranks(list(xs) + list(ys))
    u = sum(r[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    counts: dict[float, int] = {}
    for v in list(xs) + list(ys):
        counts[v] = counts.get(v, 0) + 1
    tie = sum(t**3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1))) if n > 1 else 0.0
    if var <= 0:
        return 1.0
    z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(z / math.sqrt(2))


def bootstrap_interval(
    xs: Sequence[float], ys: Sequence[float], rng: Random, draws: int = BOOTSTRAP
) -> tuple[float, float]:
    """A 90% bootstrap interval of Spearman(xs, ys): boards resampled with replacement."""
    got = []
    for _ in range(draws):
        idx = [rng.randrange(len(xs)) for _ in xs]
        rho = spearman([xs[k] for k in idx], [ys[k] for k in idx])
        if rho is not None:
            got.append(rho)
    got.sort()
    return got[len(got) // 20], got[len(got) - 1 - len(got) // 20]


def pooled_spearman(parts: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float | None:
    """Spearman inside strata, pooled: ranks centred within each stratum, one correlation over all."""
    xs: list[float] = []
    ys: list[float] = []
    for a, b in parts:
        ra, rb = ranks(a), ranks(b)
        xs += [x - statistics.fmean(ra) for x in ra]
        ys += [y - statistics.fmean(rb) for y in rb]
    sxx, syy = sum(x * x for x in xs), sum(y * y for y in ys)
    return None if not sxx or not syy else sum(x * y for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)


def _fmt(x: float | None, spec: str = "+.2f") -> str:
    return "  n/a" if x is None else format(x, spec)


def report(rows: list[dict[str, Any]], version: int, out=sys.stdout) -> dict[str, Any]:
    """Print the tables for one rating version's score; return the figures the verdict reads."""
    score_key, tier_key = f"score{version}", f"tier{version}"
    held = held_out(version)
    models = population(version) + held
    pr = lambda s="": print(s, file=out)  # noqa: E731
    pr(
        f"-- rating version {version}: population {', '.join(population(version))}; held out: {', '.join(held)}"
    )
    main = [r for r in rows if tuple(r["group"]) in GROUPS]
    adds = [r["adds"] for r in main]
    pr(
        f"   Spearman(score, adds) over the four groups: {_fmt(spearman([r[score_key] for r in main], adds))}"
    )
    pr("   Spearman(score, loss rate) overall (all boards) and within each (cells, adds) group:")
    pr(
        "   "
        + f"{'model':<13}{'overall':>8}"
        + "".join(f"{f'{c}/{a}':>8}" for c, a in GROUPS)
        + "   mean in groups"
    )
    verdict: dict[str, Any] = {
        "within": {},
        "tests": [],
        "single_tier": [],
        "intervals": {},
        "mixed_ordered": True,
        "held": held,
    }
    for name in models:
        cells = [spearman([r[score_key] for r in rows], [r["loss"][name] for r in rows])]
        within = []
        for g in GROUPS:
            grp = [r for r in rows if tuple(r["group"]) == g]
            rho = spearman([r[score_key] for r in grp], [r["loss"][name] for r in grp])
            within.append(rho)
            verdict["within"][(name, g)] = rho
        mean = (
            statistics.fmean([w for w in within if w is not None])
            if any(w is not None for w in within)
            else None
        )
        tag = " (held out)" if name in held else ""
        pr(
            "   "
            + f"{name:<13}"
            + "".join(f"{_fmt(x):>8}" for x in cells + within)
            + f"   {_fmt(mean)}{tag}"
        )
    pr("   Within each group: tier n and mean loss rate per model; p = one-sided Mann-Whitney,")
    pr("   harder tier loses more than the next easier one (boards of the two tiers):")
    for g in GROUPS:
        grp = [r for r in rows if tuple(r["group"]) == g]
        present = [t for t in TIER_NAMES if any(r[tier_key] == t for r in grp)]
        pr(
            f"   {g[0]} cells / {g[1]} add{'s' if g[1] != 1 else ''}: tiers "
            + ", ".join(f"{t} {sum(r[tier_key] == t for r in grp)}" for t in present)
        )
        for name in models:
            means = []
            for t in present:
                vals = [r["loss"][name] for r in grp if r[tier_key] == t]
                means.append(f"{t} {statistics.fmean(vals):.2f}")
            tests = []
            for a, b in itertools.pairwise(present):
                xa = [r["loss"][name] for r in grp if r[tier_key] == a]
                xb = [r["loss"][name] for r in grp if r[tier_key] == b]
                p = mann_whitney_greater(xb, xa)
                verdict["tests"].append((g, name, a, b, p))
                tests.append(f"{a}<{b} p={_fmt(p, '.3f')}")
            pr(
                f"      {name:<12} "
                + ", ".join(means)
                + ("   " + "; ".join(tests) if tests else "")
            )
    pr("   Inside single tiers (groups' tiers with 5+ boards): Spearman(score, loss) per model")
    pr("   (n/a: the model's loss rate or the score is constant there):")
    for g in GROUPS:
        grp = [r for r in rows if tuple(r["group"]) == g]
        for t in TIER_NAMES:
            sub = [r for r in grp if r[tier_key] == t]
            if len(sub) < 5:
                continue
            rhos = {
                n: spearman([r[score_key] for r in sub], [r["loss"][n] for r in sub])
                for n in models
            }
            verdict["single_tier"].append((g, t, len(sub), rhos))
            pr(
                f"      {g[0]}/{g[1]} {t:<7} n={len(sub):<3}"
                + " ".join(f"{n[:6]} {_fmt(v)}" for n, v in rhos.items())
            )
            for n, v in rhos.items():
                if v is not None and v <= 0:
                    low, high = bootstrap_interval(
                        [r[score_key] for r in sub],
                        [r["loss"][n] for r in sub],
                        Random(f"{SEED}:{g}:{t}:{n}"),
                    )
                    verdict["intervals"][(g, t, n)] = (low, high)
    tiers_of = [
        [r for r in rows if tuple(r["group"]) == g and r[tier_key] == t]
        for g in GROUPS
        for t in TIER_NAMES
    ]
    tiers_of = [sub for sub in tiers_of if len(sub) >= 5]

    def pooled_over(subs: list[list[dict[str, Any]]]) -> dict[str, float | None]:
        return {
            n: pooled_spearman(
                [([r[score_key] for r in sub], [r["loss"][n] for r in sub]) for sub in subs]
            )
            for n in models
        }

    verdict["pooled"] = pooled_over(tiers_of)
    pr(
        f"   Inside tiers, pooled over those {len(tiers_of)} tiers ({sum(map(len, tiers_of))} boards; ranks centred within each tier),"
    )
    pr("   and over the groups' tiers of one name:")
    pr("      all     " + " ".join(f"{n[:6]} {_fmt(v)}" for n, v in verdict["pooled"].items()))
    for t in TIER_NAMES:
        same = [sub for sub in tiers_of if sub[0][tier_key] == t]
        if same:
            pr(
                f"      {t:<7} "
                + " ".join(f"{n[:6]} {_fmt(v)}" for n, v in pooled_over(same).items())
            )
    again = [r for r in rows if "again" in r]
    if again:
        pr(
            f"   Precision: the {STABILITY_GROUP[0]}/{STABILITY_GROUP[1]} boards rated again with another seed: "
            f"Spearman(first, second) all {_fmt(spearman([r[score_key] for r in again], [r['again'][str(version)] for r in again]))}, "
            + ", ".join(
                f"{t} {_fmt(spearman([r[score_key] for r in again if r[tier_key] == t], [r['again'][str(version)] for r in again if r[tier_key] == t]))}"
                for t in TIER_NAMES
            )
            + f"; mean |difference| {statistics.fmean(abs(r[score_key] - r['again'][str(version)]) for r in again):.2f} points"
        )
    pr(f"   Mixed sample ({len(rows)} boards, all groups): tier n and mean loss rate per model")
    pr("   " + f"{'tier':<8}{'n':>4} " + "".join(f"{n[:10]:>11}" for n in models))
    means_by_tier = {}
    for t in TIER_NAMES:
        sub = [r for r in rows if r[tier_key] == t]
        if not sub:
            pr(f"   {t:<8}{0:>4}")
            continue
        means_by_tier[t] = {n: statistics.fmean(r["loss"][n] for r in sub) for n in models}
        pr(
            "   "
            + f"{t:<8}{len(sub):>4} "
            + "".join(f"{means_by_tier[t][n]:>11.3f}" for n in models)
        )
    present = [t for t in TIER_NAMES if t in means_by_tier]
    verdict["mixed_ordered"] = all(
        means_by_tier[a][n] < means_by_tier[b][n]
        for a, b in itertools.pairwise(present)
        for n in models
    )
    pr(
        f"   tiers ordered for every model on the mixed sample: {'yes' if verdict['mixed_ordered'] else 'NO'}"
    )
    return verdict


def summary(verdict: dict[str, Any], out=sys.stdout) -> None:
    held = verdict["held"]
    within = [v for (n, g), v in verdict["within"].items() if n in held]
    low = min((v for v in within if v is not None), default=None)
    tests = [t for t in verdict["tests"] if t[1] in held]
    failing = [(g, n, a, b, p) for g, n, a, b, p in tests if p is None or p >= 0.05]
    neg = [
        (g, t, n, v)
        for g, t, _, rhos in verdict["single_tier"]
        for n, v in rhos.items()
        if v is not None and v <= 0
    ]
    cells = sum(1 for *_, rhos in verdict["single_tier"] for v in rhos.values() if v is not None)
    print(
        f"   held-out within-group Spearman: lowest {_fmt(low)} (target 0.60 or more); below 0.60: "
        + (
            ", ".join(
                f"{n} {g[0]}/{g[1]} {v:+.2f}"
                for (n, g), v in verdict["within"].items()
                if n in held and v is not None and v < 0.6
            )
            or "none"
        ),
        file=out,
    )
    print(
        f"   adjacent-tier tests (held out) at p < 0.05: {len(tests) - len(failing)} of {len(tests)} pass"
        + (
            ""
            if not failing
            else "; failing: "
            + ", ".join(f"{g[0]}/{g[1]} {n} {a}<{b}" for g, n, a, b, _ in failing)
        ),
        file=out,
    )
    intervals = verdict["intervals"]
    print(
        f"   single-tier correlations not positive: {len(neg)} of {cells}"
        + (
            ""
            if not neg
            else " ("
            + ", ".join(
                f"{g[0]}/{g[1]} {t} {n} {rho:+.3f}, 90% interval {intervals[(g, t, n)][0]:+.2f} to {intervals[(g, t, n)][1]:+.2f}"
                for g, t, n, rho in neg
            )
            + ")"
        ),
        file=out,
    )
    pooled = {n: v for n, v in verdict["pooled"].items() if v is not None}
    print(
        f"   inside tiers, pooled: lowest {min(pooled.values()):+.2f} ({min(pooled, key=lambda n: pooled[n])}); "
        f"not positive: {', '.join(n for n, v in pooled.items() if v <= 0) or 'none'}",
        file=out,
    )
    print(
        f"   tiers ordered for every model on the mixed sample: {'yes' if verdict['mixed_ordered'] else 'NO'}",
        file=out,
    )


def env_jobs(name: str) -> int:
    """A process count from the environment (1 when unset); one line and exit 1 when it is not one."""
    text = os.environ.get(name, "1")
    if not text.strip().isdigit() or int(text) < 1:
        raise SystemExit(f"{name}={text!r}: not a process count (a whole number, 1 or more)")
    return int(text)


def load_dump(name: str, read):
    """What `read` makes of the JSON file named by environment variable `name` (a dump an earlier run
    wrote); one line naming the file and what is wrong, and exit 1, when it cannot."""
    path = os.environ[name]
    try:
        with open(path) as fh:
            return read(json.load(fh))
    except OSError as exc:
        raise SystemExit(f"{name}={path}: cannot read it ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"{name}={path}: line {exc.lineno}: not JSON ({exc.msg})") from None
    except (LookupError, TypeError, ValueError, AttributeError) as exc:
        raise SystemExit(
            f"{name}={path}: not a dump this version writes ({type(exc).__name__}: {exc})"
        ) from None


def _report_saved(saved: dict[str, Any]) -> None:
    """The report from a dump (`STUDY_LOAD`)."""
    rows, mixed = saved["rows"], saved["mixed"]
    chosen = {int(v): c for v, c in saved["chosen"].items()}
    hunts = {(c, a): n for c, a, n in saved["hunts"]}
    keys = ("group", "adds", "loss") + tuple(
        f"{what}{v}" for v in VERSIONS for what in ("score", "tier")
    )
    for k in sorted({k for c in chosen.values() for k in c} | set(mixed)):
        missing = [key for key in keys if key not in rows[k]]
        if missing:
            raise ValueError(f"rows[{k}].{missing[0]} is missing")
    print_study(rows, chosen, mixed, hunts)


def main(argv: Sequence[str] = ()) -> None:
    jobs = env_jobs("STUDY_JOBS")
    start, cpu = time.perf_counter(), time.process_time()
    if os.environ.get("STUDY_LOAD"):  # rows written by an earlier run: the report only
        load_dump("STUDY_LOAD", _report_saved)
        return
    rows, chosen, mixed, hunts = collect(jobs)
    dump = os.environ.get("STUDY_DUMP")
    if dump:
        with open(dump, "w") as fh:
            json.dump(
                {
                    "rows": rows,
                    "chosen": {str(v): c for v, c in chosen.items()},
                    "mixed": mixed,
                    "hunts": [[c, a, n] for (c, a), n in hunts.items()],
                },
                fh,
            )
    print_study(rows, chosen, mixed, hunts)
    print(
        f"   (study took {time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU in the main process, {jobs} job(s))"
    )


def print_study(
    rows: list[dict[str, Any]],
    chosen: dict[int, list[int]],
    mixed: list[int],
    hunts: dict[tuple[int, int], int],
) -> None:
    """The study's whole printed report: the sample, then each compared version's tables and verdict."""
    games = ", ".join(f"{n} {g}" for n, g in MEASURE_GAMES.items())
    tried = {
        g: sum(1 for r in rows if tuple(r["group"]) == g and not r.get("hunted"))
        for g in GROUPS + MIXED_GROUPS
    }
    print(
        f"rating study (seed {SEED}): {len(rows)} accepted candidate boards "
        f"({', '.join(f'{c}/{a} {n}' for (c, a), n in tried.items())}); per group of {', '.join(f'{c}/{a}' for c, a in GROUPS)} "
        f"up to {PER_TIER} per tier kept by each version's tiers (candidates tried until full, at most {MAX_CANDIDATES}); "
        f"{MIXED_POOL} per {', '.join(f'{c}/{a}' for c, a in MIXED_GROUPS)} added to the mixed sample"
    )
    hunted = {g: sum(1 for r in rows if tuple(r["group"]) == g and r.get("hunted")) for g in GROUPS}
    if any(hunts.values()):
        print(
            f"   hunt for version {VERSIONS[-1]}'s {HUNT_TIER} tier (random player's screen: {SCREEN_GAMES} games, loss "
            f"{SCREEN_LOSS:g} or more): "
            + ", ".join(
                f"{c}/{a} {hunted[(c, a)]} found in {n} more candidates"
                for (c, a), n in hunts.items()
                if n
            )
        )
    print(
        f"   loss rates measured on games of their own (seed {MEASURE_SEED}), per board: {games}; standard error at most "
        + ", ".join(f"{n} {0.5 / math.sqrt(g):.3f}" for n, g in MEASURE_GAMES.items())
    )
    print(
        "   (the scores are computed from other games: the rating's, seed "
        f"{DEFAULT_SEED}, at {DEFAULT_PLAYOUTS} playouts)"
    )
    for v in VERSIONS:
        sub = [rows[k] for k in sorted(set(chosen[v]) | set(mixed))]
        verdict = report(sub, v)
        summary(verdict)


if __name__ == "__main__":
    main(sys.argv[1:])
