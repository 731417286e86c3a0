"""Rating study (`make rating-study`): does the score order boards for players it never saw?

A fixed, seeded sample of solvable, non-trivial boards (what the generator could accept: proposals
by both strategies, solved with a node budget, the scanner not winning every game): CANDIDATES per
(cells, adds) group (27 and 30 cells, 1 and 2 adds), plus MIXED_POOL boards of the nightly job's
other plans (27/3, 36/1) for the mixed sample. Each board is rated once (the version-2 rating; its
first three players play exactly version 1's games, so the version-1 score is recomputed from the
same metrics). Per version, the first PER_TIER boards of each tier of each group are kept (what
generating per tier gives), and those are played by four held-out player models the score does
not use, each of a different policy family:

- `nearest`: attention: the pair whose cells are closest in reading order; adds when stuck.
- `constrained`: strategy: clears the most endangered number (the cell with the fewest partners).
- `tidy`: clears rows (the pair leaving its rows with the fewest numbers) and spends adds on
  impulse (each turn, with probability IMPULSE, while it has one).
- `montecarlo`: simulation: tries TRIALS random pairs, plays one random game out after each, and
  takes the pair whose trial went best.

Printed, for the score before (version 1) and after (version 2): Spearman of the score against
every model's loss rate overall and within each group, tier means and counts within groups with
one-sided Mann-Whitney tests between adjacent tiers, the correlation inside single tiers, and
mixed-sample tier means. `STUDY_JOBS=2` runs on two processes (same output).
"""

from __future__ import annotations

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
from pipeline.engine.rulesets import Ruleset
from pipeline.engine.rules import add_numbers, legal_pairs
from pipeline.generation.proposals import DigitDistribution, propose, reading_order_reduction
from pipeline.rating.players import PLAYERS, Chooser, Pair, ScannerPlayer, play_many, remove_and_track
from pipeline.rating.score import DEFAULT_PLAYOUTS, rate, score_from_metrics
from pipeline.rating.tiers import TIER_NAMES, tier_for
from pipeline.solver.search import SOLVED, solve

SEED = 2027
GROUPS: tuple[tuple[int, int], ...] = ((27, 1), (27, 2), (30, 1), (30, 2))
MIXED_GROUPS: tuple[tuple[int, int], ...] = ((27, 3), (36, 1))
CANDIDATES = 80  # candidate boards per group, rated; the study keeps up to PER_TIER per tier
PER_TIER = 10
MIXED_POOL = 10  # boards per extra group of the mixed sample
SOLVE_NODES = 5_000
IMPULSE = 0.05
TRIALS = 3
HELD_GAMES = {"nearest": 100, "constrained": 100, "tidy": 100, "montecarlo": 40}


# --- held-out player models ------------------------------------------------------------------

def _lowest(pairs: list[Pair], values: list[int], rng: Random) -> Pair:
    """A pair of the lowest value, ties at random."""
    low = min(values)
    return rng.choice([p for p, v in zip(pairs, values) if v == low])


@dataclass(frozen=True)
class Nearest:
    """The pair whose cells are closest in reading order (what the eye catches first)."""

    name: str = "nearest"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            return _lowest(pairs, [j - i for i, j in pairs], rng)

        return choose


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
                rows[i // WIDTH] - 2 if i // WIDTH == j // WIDTH else min(rows[i // WIDTH], rows[j // WIDTH]) - 1
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


SCANNER = ScannerPlayer()
HELD_OUT = (Nearest(), Constrained(), Tidy(), MonteCarlo())
HELD_NAMES = tuple(p.name for p in HELD_OUT)
RATED_NAMES = tuple(p.name for p in PLAYERS)


# --- the sample ----------------------------------------------------------------------------------

def sample(cells: int, adds: int, count: int) -> list[tuple[bytes, tuple]]:
    """`count` distinct solvable, non-trivial boards (random and constructive proposals, alternating)."""
    digits = DigitDistribution.parse(None)
    out: list[tuple[bytes, tuple]] = []
    seen: set[bytes] = set()
    for k in range(200 * count):
        if len(out) == count:
            break
        strategy = "constructive" if k % 2 else "random"
        prop = propose(strategy, cells, adds, Random(f"study:{SEED}:{cells}:{adds}:{k}"), digits)
        if prop.cells in seen or not reading_order_reduction(prop.cells, adds):
            continue
        certificate = prop.certificate
        if certificate is None:
            result = solve(prop.cells, adds, budget_nodes=SOLVE_NODES)
            if result.status != SOLVED or result.moves is None:
                continue
            certificate = result.moves
        seen.add(prop.cells)
        if play_many(SCANNER, prop.cells, adds, DEFAULT_PLAYOUTS, 0)[0].win_rate == 1.0:
            continue  # the scanner wins every game: the generator rejects it (its rating's own games)
        out.append((prop.cells, tuple(certificate)))
    return out


def rated_row(item: tuple[int, int, bytes, tuple]) -> dict[str, Any] | None:
    """One board's rating (version 2; the version-1 score from the same metrics)."""
    cells_n, adds, cells, certificate = item
    r = rate(cells, adds, solution=certificate, version=2)
    d = r.to_dict()
    if r.score is None or d["players"]["scanner"]["win_rate"] == 1.0:
        return None  # the generator rejects these
    v1 = score_from_metrics({**d, "version": 1})
    return {"group": [cells_n, adds], "board": format_board(cells), "adds": adds, "difficulty": d,
            "score1": v1, "tier1": tier_for(v1, 1), "score": d["score"], "tier": d["tier"],
            "loss": {name: 1.0 - st["win_rate"] for name, st in d["players"].items()}}


def held_out_loss(row: dict[str, Any]) -> dict[str, float]:
    """Each held-out model's loss rate on the row's board."""
    cells = parse(row["board"])
    return {p.name: 1.0 - play_many(p, cells, row["adds"], HELD_GAMES[p.name], SEED)[0].win_rate for p in HELD_OUT}


def select(rows: list[dict[str, Any]], tier_key: str) -> list[int]:
    """Per group, the first PER_TIER boards of each tier (what generating per tier gives)."""
    chosen = []
    for g in GROUPS:
        for t in TIER_NAMES:
            idx = [k for k, r in enumerate(rows) if tuple(r["group"]) == g and r[tier_key] == t]
            chosen += idx[:PER_TIER]
    return chosen


def collect(jobs: int = 1) -> tuple[list[dict[str, Any]], list[int], list[int], list[int]]:
    """Rated rows (held-out losses filled where needed) and the before / after / mixed selections."""
    items = [(c, a, cells, cert) for c, a in GROUPS for cells, cert in sample(c, a, CANDIDATES)]
    items += [(c, a, cells, cert) for c, a in MIXED_GROUPS for cells, cert in sample(c, a, MIXED_POOL)]
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    try:
        mapper = pool.map if pool is not None else (lambda f, xs: list(map(f, xs)))
        rows = [r for r in mapper(rated_row, items) if r is not None]
        before, after = select(rows, "tier1"), select(rows, "tier")
        mixed = [k for k, r in enumerate(rows) if tuple(r["group"]) in MIXED_GROUPS]
        need = sorted(set(before) | set(after) | set(mixed))
        for k, loss in zip(need, mapper(held_out_loss, [rows[k] for k in need])):
            rows[k]["loss"].update(loss)
    finally:
        if pool is not None:
            pool.close()
    return rows, before, after, mixed


# --- statistics ----------------------------------------------------------------------------------

def ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda k: xs[k])
    out = [0.0] * len(xs)
    k = 0
    while k < len(order):
        m = k
        while m + 1 < len(order) and xs[order[m + 1]] == xs[order[k]]:
            m += 1
        for t in range(k, m + 1):
            out[order[t]] = (k + m) / 2 + 1
        k = m + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties averaged); None when undefined."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


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


def _fmt(x: float | None, spec: str = "+.2f") -> str:
    return "  n/a" if x is None else format(x, spec)


def report(rows: list[dict[str, Any]], score_key: str, tier_key: str, title: str, out=sys.stdout) -> dict[str, Any]:
    """Print the tables for one score; return the figures the verdict reads."""
    models = RATED_NAMES + HELD_NAMES
    pr = lambda s="": print(s, file=out)  # noqa: E731
    pr(f"-- {title}")
    main = [r for r in rows if tuple(r["group"]) in GROUPS]
    adds = [r["adds"] for r in main]
    pr(f"   Spearman(score, adds) over the four groups: {_fmt(spearman([r[score_key] for r in main], adds))}")
    pr("   Spearman(score, loss rate) overall (all boards) and within each (cells, adds) group:")
    pr("   " + f"{'model':<13}{'overall':>8}" + "".join(f"{f'{c}/{a}':>8}" for c, a in GROUPS) + "   mean in groups")
    verdict: dict[str, Any] = {"within": {}, "tests": [], "single_tier": [], "mixed_ordered": True}
    for name in models:
        cells = [spearman([r[score_key] for r in rows], [r["loss"][name] for r in rows])]
        within = []
        for g in GROUPS:
            grp = [r for r in rows if tuple(r["group"]) == g]
            rho = spearman([r[score_key] for r in grp], [r["loss"][name] for r in grp])
            within.append(rho)
            verdict["within"][(name, g)] = rho
        mean = statistics.fmean([w for w in within if w is not None]) if any(w is not None for w in within) else None
        held = " (held out)" if name in HELD_NAMES else ""
        pr("   " + f"{name:<13}" + "".join(f"{_fmt(x):>8}" for x in cells + within) + f"   {_fmt(mean)}{held}")
    pr("   Within each group: tier n and mean loss rate per held-out model; p = one-sided Mann-Whitney,")
    pr("   harder tier loses more than the next easier one (boards of the two tiers):")
    for g in GROUPS:
        grp = [r for r in rows if tuple(r["group"]) == g]
        present = [t for t in TIER_NAMES if any(r[tier_key] == t for r in grp)]
        pr(f"   {g[0]} cells / {g[1]} add{'s' if g[1] != 1 else ''}: tiers " + ", ".join(
            f"{t} {sum(r[tier_key] == t for r in grp)}" for t in present))
        for name in HELD_NAMES:
            means = []
            for t in present:
                vals = [r["loss"][name] for r in grp if r[tier_key] == t]
                means.append(f"{t} {statistics.fmean(vals):.2f}")
            tests = []
            for a, b in zip(present, present[1:]):
                xa = [r["loss"][name] for r in grp if r[tier_key] == a]
                xb = [r["loss"][name] for r in grp if r[tier_key] == b]
                p = mann_whitney_greater(xb, xa)
                verdict["tests"].append((g, name, a, b, p))
                tests.append(f"{a}<{b} p={_fmt(p, '.3f')}")
            pr(f"      {name:<12} " + ", ".join(means) + ("   " + "; ".join(tests) if tests else ""))
    pr("   Inside single tiers (groups' tiers with 5+ boards): Spearman(score, loss) per model:")
    for g in GROUPS:
        grp = [r for r in rows if tuple(r["group"]) == g]
        for t in TIER_NAMES:
            sub = [r for r in grp if r[tier_key] == t]
            if len(sub) < 5:
                continue
            rhos = {n: spearman([r[score_key] for r in sub], [r["loss"][n] for r in sub]) for n in models}
            verdict["single_tier"].append((g, t, len(sub), rhos))
            pr(f"      {g[0]}/{g[1]} {t:<7} n={len(sub):<3}" + " ".join(f"{n[:6]} {_fmt(v)}" for n, v in rhos.items()))
    pr(f"   Mixed sample ({len(rows)} boards, all groups): tier n and mean loss rate per model")
    pr("   " + f"{'tier':<8}{'n':>4} " + "".join(f"{n[:10]:>11}" for n in models))
    means_by_tier = {}
    for t in TIER_NAMES:
        sub = [r for r in rows if r[tier_key] == t]
        if not sub:
            pr(f"   {t:<8}{0:>4}")
            continue
        means_by_tier[t] = {n: statistics.fmean(r["loss"][n] for r in sub) for n in models}
        pr("   " + f"{t:<8}{len(sub):>4} " + "".join(f"{means_by_tier[t][n]:>11.3f}" for n in models))
    present = [t for t in TIER_NAMES if t in means_by_tier]
    verdict["mixed_ordered"] = all(means_by_tier[a][n] < means_by_tier[b][n] for a, b in zip(present, present[1:]) for n in models)
    pr(f"   tiers ordered for every model on the mixed sample: {'yes' if verdict['mixed_ordered'] else 'NO'}")
    return verdict


def summary(verdict: dict[str, Any], out=sys.stdout) -> None:
    within = [v for (n, g), v in verdict["within"].items() if n in HELD_NAMES]
    low = min((v for v in within if v is not None), default=None)
    failing = [(g, n, a, b, p) for g, n, a, b, p in verdict["tests"] if p is None or p >= 0.05]
    neg = [(g, t, n) for g, t, _, rhos in verdict["single_tier"] for n, v in rhos.items() if v is not None and v <= 0]
    print(f"   held-out within-group Spearman: lowest {_fmt(low)} (target 0.60 or more)", file=out)
    print(f"   adjacent-tier tests at p < 0.05: {len(verdict['tests']) - len(failing)} of {len(verdict['tests'])} pass"
          + ("" if not failing else "; failing: " + ", ".join(f"{g[0]}/{g[1]} {n} {a}<{b}" for g, n, a, b, _ in failing)), file=out)
    print(f"   single-tier correlations not positive: {len(neg)}"
          + ("" if not neg else " (" + ", ".join(f"{g[0]}/{g[1]} {t} {n}" for g, t, n in neg[:12]) + ")"), file=out)


def main(argv: Sequence[str] = ()) -> None:
    jobs = int(os.environ.get("STUDY_JOBS", "1"))
    start, cpu = time.perf_counter(), time.process_time()
    rows, before, after, mixed = collect(jobs)
    dump = os.environ.get("STUDY_DUMP")
    if dump:
        with open(dump, "w") as fh:
            json.dump({"rows": rows, "before": before, "after": after, "mixed": mixed}, fh)
    games = ", ".join(f"{n} {g}" for n, g in HELD_GAMES.items())
    print(f"rating study (seed {SEED}): {len(rows)} rated boards, {CANDIDATES} candidates per group of "
          f"{', '.join(f'{c}/{a}' for c, a in GROUPS)} (up to {PER_TIER} per tier kept, by each version's tiers), "
          f"{MIXED_POOL} per {', '.join(f'{c}/{a}' for c, a in MIXED_GROUPS)} added to the mixed sample")
    print(f"   held-out games per board: {games}; standard error of a held-out loss rate at most "
          + ", ".join(f"{n} {0.5 / math.sqrt(g):.3f}" for n, g in HELD_GAMES.items()))
    for chosen, title, key, tier in ((before, "before: rating version 1", "score1", "tier1"),
                                     (after, "after: rating version 2", "score", "tier")):
        sub = [rows[k] for k in sorted(set(chosen) | set(mixed))]
        verdict = report(sub, key, tier, title)
        summary(verdict)
    print(f"   (study took {time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU in the main process, {jobs} job(s))")


if __name__ == "__main__":
    main(sys.argv[1:])
