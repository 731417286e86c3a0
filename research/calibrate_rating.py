"""Rating calibration (`make rating-calibration`): where version 3's weights, game counts and tier
boundaries come from. It reads only the rating's own population, on its own sample (seed CAL_SEED,
not the study's), never the study models.

1. Sample: the first PER_GROUP boards the generator could accept (as in the study) of each group of
   the study and of the nightly plans; every population player plays many games on each
   (`CAL_GAMES`), so the loss rates the weights are fitted on are close to exact.
2. Weights: the mix that best stands in for a player it does not contain. For each candidate mix
   (TRIALS Dirichlet draws and the equal mix), each population player's loss rate is predicted by
   the mix of the others (its weight left out, the rest renormalised); the fit is the mean of those
   leave-one-player-out Spearman correlations within (cells, adds) groups. The best mix, rounded to
   0.05 with every player kept at 0.05 or more, is version 3's WEIGHTS_V3.
3. Games: for the CPU a whole version-2 rating takes on this sample (its players, traps and
   min_adds; version 3 measures no traps), the game counts that minimise the score's sampling
   variance: n_i proportional to w_i * sd_i / sqrt(cost_i), with sd_i the player's mean per-game
   standard deviation; rounded to multiples of 8, at least MIN_GAMES.
4. Tiers: the score is the mix's loss rate; the boundaries are the scores at which the strongest
   player's (planner's) loss rate, fitted monotone in the score (pool-adjacent-violators), first
   reaches PLANNER_LOSS: easy = the planner practically never loses, medium = it loses up to about
   3 in 10, hard = up to about 2 in 3, expert beyond.
5. Inside tiers (printed, not fitted): how well a mix orders boards within one tier of one group,
   per player, for the chosen mix, the equal mix and the mix (of WITHIN_TRIALS) whose
   least-followed player is followed best; each for players in the score and left out of it. It
   shows what weighting the odd habits (scanner, proximity) more would buy and cost.

`CAL_JOBS=2` uses two processes; `CAL_DUMP=file.json` writes the sample, `CAL_LOAD=file.json` fits
from a written sample without playing again.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import sys
import time
from random import Random
from typing import Any

from pipeline.generation.proposals import reading_order_reduction
from pipeline.generation.strategies import propose
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.players import PLAYERS_V3 as PLAYERS
from pipeline.rating.players import play_many
from pipeline.rating.score import rate
from pipeline.solver.search import SOLVED, solve
from research.study_rating import (
    DIGITS,
    GROUPS,
    MIXED_GROUPS,
    SOLVE_NODES,
    env_jobs,
    load_dump,
    pooled_spearman,
    spearman,
)

CAL_SEED = 4049
PER_GROUP = 60
BATCH = 20
CAL_GAMES = {
    "random": 256,
    "scanner": 128,
    "lookahead": 128,
    "opener": 64,
    "local": 256,
    "planner": 48,
    "proximity": 256,
}
TRIALS = 3000
PLANNER_LOSS = (0.05, 0.30, 0.65)
MIN_GAMES = 16
WITHIN_BANDS = 4  # equal-count score bands per group: what one tier of a group holds
WITHIN_TRIALS = (
    150  # Dirichlet mixes searched (one play-out each) for the best worst-player order inside tiers
)
WITHIN_REPS = 3  # play-outs of the score behind each printed within-tier figure (fresh draws, not the search's)
NAMES = tuple(p.name for p in PLAYERS)


def board(item: tuple[int, int, int]) -> dict[str, Any] | None:
    """Calibration candidate k of a group, with every population player's loss rate and CPU per game."""
    cells_n, adds, k = item
    strategy = "constructive" if k % 2 else "random"
    prop = propose(
        strategy, cells_n, adds, Random(f"calibrate:{CAL_SEED}:{cells_n}:{adds}:{k}"), DIGITS
    )
    if not reading_order_reduction(prop.cells, adds):
        return None
    certificate = prop.certificate
    if certificate is None:
        result = solve(prop.cells, adds, budget_nodes=SOLVE_NODES)
        if result.status != SOLVED or result.moves is None:
            return None
        certificate = result.moves
    loss, cost = {}, {}
    for p in sorted(PLAYERS, key=lambda p: p.name != "scanner"):
        start = time.process_time()
        st, _ = play_many(p, prop.cells, adds, CAL_GAMES[p.name], DEFAULT_SEED + 7)
        cost[p.name] = (time.process_time() - start) / CAL_GAMES[p.name]
        loss[p.name] = 1.0 - st.win_rate
        if loss["scanner"] == 0.0:
            return None  # the scanner wins every game: the generator rejects it
    start = time.process_time()
    rate(prop.cells, adds, solution=certificate, version=2)
    cost["rating_v2"] = time.process_time() - start
    return {"group": [cells_n, adds], "k": k, "cells": prop.cells.hex(), "loss": loss, "cost": cost}


def sample(mapper) -> list[dict[str, Any]]:
    """The first PER_GROUP accepted boards of each group (tried BATCH at a time, in a fixed order)."""
    rows: list[dict[str, Any]] = []
    for g in GROUPS + MIXED_GROUPS:
        got: list[dict[str, Any]] = []
        k = 0
        while len(got) < PER_GROUP and k < 10 * PER_GROUP:
            got += [
                r
                for r in mapper(board, [(g[0], g[1], k + i) for i in range(BATCH)])
                if r is not None
            ]
            k += BATCH
        rows += got[:PER_GROUP]
    return rows


def mix(row: dict[str, Any], weights: dict[str, float]) -> float:
    return sum(w * row["loss"][n] for n, w in weights.items())


def fit(rows: list[dict[str, Any]], weights: dict[str, float]) -> float:
    """Mean leave-one-player-out Spearman within groups."""
    out = []
    for name in NAMES:
        rest = {n: w for n, w in weights.items() if n != name}
        for g in GROUPS:
            grp = [r for r in rows if tuple(r["group"]) == g]
            rho = spearman([mix(r, rest) for r in grp], [r["loss"][name] for r in grp])
            out.append(0.0 if rho is None else rho)
    return statistics.fmean(out)


def rounded(weights: dict[str, float]) -> dict[str, float]:
    """To multiples of 0.05, each at least 0.05, summing to 1 (largest remainders)."""
    units = {n: max(1.0, w * 20) for n, w in weights.items()}
    scale = 20 / sum(units.values())
    base = {n: max(1, int(u * scale)) for n, u in units.items()}
    order = sorted(units, key=lambda n: -(units[n] * scale - base[n]))
    k = 0
    while sum(base.values()) < 20:
        base[order[k % len(order)]] += 1
        k += 1
    while sum(base.values()) > 20:
        big = max(base, key=lambda n: base[n])
        base[big] -= 1
    return {n: base[n] / 20 for n in NAMES}


def allocate(
    rows: list[dict[str, Any]], weights: dict[str, float], cost: dict[str, float], budget: float
) -> dict[str, int]:
    """Games per player for `budget` ms of play (at `cost` ms a game) that make the score's sampling
    variance smallest: n_i proportional to w_i * sd_i / sqrt(cost_i), sd_i the player's mean per-game
    standard deviation on `rows`; rounded to multiples of 8, at least MIN_GAMES."""
    sd = {
        n: statistics.fmean((r["loss"][n] * (1 - r["loss"][n])) ** 0.5 for r in rows) for n in NAMES
    }
    raw = {n: weights[n] * sd[n] / cost[n] ** 0.5 for n in NAMES}
    floor: set[str] = set()  # players held at MIN_GAMES; the others share what is left
    while True:
        left = budget - sum(MIN_GAMES * cost[n] for n in floor)
        scale = left / sum(raw[n] * cost[n] for n in NAMES if n not in floor)
        low = {n for n in NAMES if n not in floor and raw[n] * scale < MIN_GAMES}
        if not low:
            break
        floor |= low
    return {
        n: MIN_GAMES if n in floor else max(MIN_GAMES, 8 * round(raw[n] * scale / 8)) for n in NAMES
    }


def within_bands(
    rows: list[dict[str, Any]],
    weights: dict[str, float],
    games: dict[str, int],
    rng: Random,
    reps: int = 1,
) -> dict[str, float]:
    """Per player, how well the score orders boards inside a tier: Spearman of the score against the
    player's loss rate within each of WITHIN_BANDS equal-count score bands of each group, pooled
    (ranks centred within their band). The score is played out: each player's loss rate drawn from
    its `games` games (binomial on the measured rate), so the score's own noise counts; `reps` times."""
    bands: list[tuple[list[float], list[dict[str, float]]]] = []  # (scores, loss rates) per band
    for g in GROUPS * reps:
        grp = [r for r in rows if tuple(r["group"]) == g]
        score = [
            sum(
                w * sum(rng.random() < r["loss"][n] for _ in range(games[n])) / games[n]
                for n, w in weights.items()
                if w
            )
            for r in grp
        ]
        order = sorted(range(len(grp)), key=lambda k: score[k])
        for b in range(WITHIN_BANDS):
            band = order[b * len(order) // WITHIN_BANDS : (b + 1) * len(order) // WITHIN_BANDS]
            bands.append(([score[k] for k in band], [grp[k]["loss"] for k in band]))
    return {
        n: pooled_spearman([(sc, [loss[n] for loss in losses]) for sc, losses in bands]) or 0.0
        for n in NAMES
    }


def within_tiers(
    rows: list[dict[str, Any]], weights: dict[str, float], cost: dict[str, float], budget: float
) -> tuple[dict[str, float], dict[str, float]]:
    """`within_bands` for the mix itself (each player is in the score) and leave-one-player-out
    (each player against the mix of the others: how a player the score never saw fares in a tier)."""
    rng = Random(f"{CAL_SEED}:within")
    own = within_bands(rows, weights, allocate(rows, weights, cost, budget), rng, WITHIN_REPS)
    unseen = {}
    for name in NAMES:
        rest = {n: (0.0 if n == name else w) for n, w in weights.items()}
        total = sum(rest.values())
        rest = {n: w / total for n, w in rest.items()}
        games = allocate(rows, {n: max(w, 1e-9) for n, w in rest.items()}, cost, budget)
        unseen[name] = within_bands(rows, rest, games, rng, WITHIN_REPS)[name]
    return own, unseen


def pav(xs: list[float], ys: list[float]) -> list[tuple[float, float]]:
    """Monotone (non-decreasing) fit of ys on xs: (x, fitted y) sorted by x."""
    pts = sorted(zip(xs, ys))
    blocks: list[list[float]] = []  # [sum, count, last x]
    for x, y in pts:
        blocks.append([y, 1, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c, lx = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
            blocks[-1][2] = lx
    fitted = []
    k = 0
    for s, c, _ in blocks:
        for _ in range(int(c)):
            fitted.append((pts[k][0], s / c))
            k += 1
    return fitted


def boundaries(rows: list[dict[str, Any]], weights: dict[str, float]) -> list[float]:
    fitted = pav([100 * mix(r, weights) for r in rows], [r["loss"]["planner"] for r in rows])
    out = []
    for target in PLANNER_LOSS:
        at = next((x for x, y in fitted if y >= target), 100.0)
        out.append(float(round(at)))
    return out


def main() -> None:
    jobs = env_jobs("CAL_JOBS")
    start = time.perf_counter()
    if os.environ.get("CAL_LOAD"):  # a sample dumped by an earlier run: the fit only
        load_dump("CAL_LOAD", report)
        return
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    try:
        rows = sample(pool.map if pool else (lambda f, xs: list(map(f, xs))))
    finally:
        if pool is not None:
            pool.close()
    if os.environ.get("CAL_DUMP"):
        with open(os.environ["CAL_DUMP"], "w") as fh:
            json.dump(rows, fh)
    report(rows)
    print(f"   (calibration took {time.perf_counter() - start:.0f} s wall, {jobs} job(s))")


def report(rows: list[dict[str, Any]], out=sys.stdout) -> dict[str, Any]:
    pr = lambda s="": print(s, file=out)  # noqa: E731
    main_rows = [r for r in rows if tuple(r["group"]) in GROUPS]
    pr(
        f"rating calibration (seed {CAL_SEED}): {len(rows)} boards, "
        + ", ".join(
            f"{c}/{a} {sum(tuple(r['group']) == (c, a) for r in rows)}"
            for c, a in GROUPS + MIXED_GROUPS
        )
    )
    rng = Random(CAL_SEED)
    equal = {n: 1 / len(NAMES) for n in NAMES}
    best, best_fit = equal, fit(main_rows, equal)
    pr(f"   equal mix: leave-one-player-out fit {best_fit:.3f}")
    for _ in range(TRIALS):
        draw = [rng.gammavariate(1.0, 1.0) for _ in NAMES]
        w = {n: d / sum(draw) for n, d in zip(NAMES, draw)}
        f = fit(main_rows, w)
        if f > best_fit:
            best, best_fit = w, f
    weights = rounded(best)
    pr(
        f"   best of {TRIALS} mixes: fit {best_fit:.3f}; rounded: fit {fit(main_rows, weights):.3f}: "
        + ", ".join(f"{n} {w:.2f}" for n, w in weights.items())
    )
    for name in NAMES:
        rest = {n: w for n, w in weights.items() if n != name}
        rhos = [
            spearman([mix(r, rest) for r in grp], [r["loss"][name] for r in grp])
            for grp in ([r for r in main_rows if tuple(r["group"]) == g] for g in GROUPS)
        ]
        pr(
            f"      {name:<10} predicted by the others: "
            + " ".join(f"{x:+.2f}" if x is not None else "n/a" for x in rhos)
        )
    cost = {n: statistics.fmean(r["cost"][n] for r in rows) * 1000 for n in NAMES}
    budget = statistics.fmean(r["cost"]["rating_v2"] for r in rows) * 1000
    games = allocate(rows, weights, cost, budget)
    pr("   CPU per game (ms): " + ", ".join(f"{n} {cost[n]:.2f}" for n in NAMES))
    pr(
        f"   games for {budget:.0f} ms of play per rating (a whole version-2 rating on this sample): "
        + ", ".join(f"{n} {games[n]}" for n in NAMES)
        + f" (= {sum(games[n] * cost[n] for n in NAMES):.0f} ms)"
    )
    bounds = boundaries(rows, weights)
    pr(
        f"   tier boundaries (planner's fitted loss reaching {', '.join(f'{t:.2f}' for t in PLANNER_LOSS)}): {bounds}"
    )
    tiers = list(zip(("easy", "medium", "hard", "expert"), [0.0] + bounds, bounds + [100.01]))
    pr("   calibration sample, mean loss rate per tier (own players):")
    for t, lo, hi in tiers:
        sub = [r for r in rows if lo <= 100 * mix(r, weights) < hi]
        if sub:
            pr(
                f"      {t:<7} n={len(sub):<4}"
                + " ".join(f"{n} {statistics.fmean(r['loss'][n] for r in sub):.2f}" for n in NAMES)
            )
    pr(
        f"   inside tiers ({WITHIN_BANDS} equal-count score bands per group of {', '.join(f'{c}/{a}' for c, a in GROUPS)}, score played"
        " out at the games above): Spearman(score, player's loss), pooled over bands;"
    )
    pr("   'unseen': the player against the mix of the others (leave-one-player-out)")
    mixes = {"chosen": weights, "equal": equal}
    draws = Random(f"{CAL_SEED}:within-mixes")
    best_min, best_mix = -2.0, equal
    for _ in range(WITHIN_TRIALS):
        draw = [draws.gammavariate(1.0, 1.0) for _ in NAMES]
        w = {n: d / sum(draw) for n, d in zip(NAMES, draw)}
        low = min(
            within_bands(
                main_rows, w, allocate(rows, w, cost, budget), Random(f"{CAL_SEED}:search")
            ).values()
        )
        if low > best_min:
            best_min, best_mix = low, w
    mixes[f"best worst-player of {WITHIN_TRIALS}"] = best_mix
    within = {}
    for label, w in mixes.items():
        own, unseen = within_tiers(main_rows, w, cost, budget)
        within[label] = (own, unseen)
        pr(f"      {label}: " + ", ".join(f"{n} {w[n]:.2f}" for n in NAMES))
        pr(
            f"         in the score: lowest {min(own.values()):+.2f}, mean {statistics.fmean(own.values()):+.2f}  ("
            + " ".join(f"{n} {v:+.2f}" for n, v in own.items())
            + ")"
        )
        pr(
            f"         unseen:       lowest {min(unseen.values()):+.2f}, mean {statistics.fmean(unseen.values()):+.2f}  ("
            + " ".join(f"{n} {v:+.2f}" for n, v in unseen.items())
            + ")"
        )
    return {"weights": weights, "games": games, "bounds": bounds, "within": within}


if __name__ == "__main__":
    main()
