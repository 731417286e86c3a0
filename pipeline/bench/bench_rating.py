"""Rating benchmark: time per rating, and the check that tiers order every player's win rate.

1. Time per rating at the default settings (35 cells / 3 adds and 27 cells / 1 add), with the
   players' incremental pair tracking against the plain `legal_pairs` path (same ratings), as a
   ratio.
2. Tier order: rate a seeded set of random boards (27 and 35 cells, 1-3 adds, and 0-add boards
   with even value classes) and print each tier's mean win rate for the three rated players and
   for four player models the score does not use (stand-ins for players we were not shown).
   A harder tier must have a strictly lower mean for every one of them.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import random
import statistics
import time
from dataclasses import dataclass
from random import Random

from pipeline.engine.board import CLASS, format_board
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.rating.players import Chooser, Pair, Player, ScannerPlayer, pair_counts_after, play_many, remove_and_track
from pipeline.rating.score import rate
from pipeline.rating.tiers import TIER_NAMES, UNSOLVABLE

TIMING_BOARDS = 20
ORDER_BOARDS = 160
HIDDEN_PLAYOUTS = 64


# --- player models the score does not use ------------------------------------------------

@dataclass(frozen=True)
class EpsilonScanner:
    """The scanner, but 30% of the time it takes a uniformly random pair instead."""

    name: str = "eps-scanner"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        scan = ScannerPlayer().begin(cells, rng, ruleset)

        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            return rng.choice(pairs) if rng.random() < 0.3 else scan(cells, pairs, adds_left)

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
            value = [min(deg[i], deg[j]) for i, j in pairs]
            low = min(value)
            return rng.choice([p for p, v in zip(pairs, value) if v == low])

        return choose


@dataclass(frozen=True)
class Nearest:
    """Takes the pair whose cells are closest in reading order (what the eye catches first)."""

    name: str = "nearest"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            gap = [j - i for i, j in pairs]
            low = min(gap)
            return rng.choice([p for p, g in zip(pairs, gap) if g == low])

        return choose


@dataclass(frozen=True)
class TwoPly:
    """Looks two pairs ahead: the pair whose best follow-up leaves the most legal pairs."""

    name: str = "two-ply"

    def begin(self, cells: bytes, rng: Random, ruleset: Ruleset) -> Chooser:
        def choose(cells: bytes, pairs: list[Pair], adds_left: int) -> Pair:
            best: list[Pair] = []
            top = -1
            for i, j in pairs:
                one = remove_and_track(cells, pairs, i, j)
                if not one.cells:
                    return (i, j)
                value = max(pair_counts_after(one.cells, one.pairs)) + 1 if one.pairs else 0
                if value > top:
                    top, best = value, [(i, j)]
                elif value == top:
                    best.append((i, j))
            return rng.choice(best)

        return choose


HIDDEN: tuple[Player, ...] = (EpsilonScanner(), Constrained(), Nearest(), TwoPly())
RATED = ("random", "scanner", "lookahead")


# --- boards ---------------------------------------------------------------------------------

def random_boards(count: int, seed: int) -> list[tuple[bytes, int]]:
    """Uniform digits, 27 or 35 cells, 1-3 adds; every fifth board has 0 adds and even classes."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        n = rng.choice((27, 35))
        if k % 5 == 0:
            digits: list[int] = []
            while len(digits) < n - 1:  # pairs of the same class, shuffled: n-1 (even) cells
                d = rng.randint(1, 9)
                digits += [d, rng.choice([e for e in range(1, 10) if CLASS[e] == CLASS[d]])]
            rng.shuffle(digits)
            out.append((bytes(digits), 0))
        else:
            out.append((bytes(rng.randint(1, 9) for _ in range(n)), rng.choice((1, 2, 2, 3, 3))))
    return out


def _time(boards: list[tuple[bytes, int]], ruleset: Ruleset) -> list[float]:
    times = []
    for cells, adds in boards:
        start = time.perf_counter()
        rate(cells, adds, ruleset=ruleset)
        times.append(time.perf_counter() - start)
    return times


def _rate_one(item: tuple[bytes, int]) -> dict:
    cells, adds = item
    r = rate(cells, adds)
    wins = {name: r.metrics["players"][name]["win_rate"] for name in RATED}
    for player in HIDDEN:
        wins[player.name] = play_many(player, cells, adds, HIDDEN_PLAYOUTS, 99)[0].win_rate
    return {"board": format_board(cells), "adds": adds, "tier": r.tier, "score": r.score, "wins": wins}


def tier_order(rows: list[dict]) -> tuple[dict[str, dict[str, float]], dict[str, int], bool]:
    """Mean win rate per tier and player, count per tier, and whether every player's mean
    strictly falls from each tier to the next harder one."""
    names = list(RATED) + [p.name for p in HIDDEN]
    means: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for tier in TIER_NAMES:
        group = [r for r in rows if r["tier"] == tier]
        counts[tier] = len(group)
        if group:
            means[tier] = {n: statistics.fmean(r["wins"][n] for r in group) for n in names}
    counts[UNSOLVABLE] = sum(r["tier"] == UNSOLVABLE for r in rows)
    present = [t for t in TIER_NAMES if t in means]
    ordered = len(present) == len(TIER_NAMES) and all(
        means[b][n] < means[a][n] for a, b in zip(present, present[1:]) for n in names
    )
    return means, counts, ordered


def main() -> None:
    # 1. time per rating, fast path against the plain legal_pairs path
    for cells_n, adds in ((35, 3), (27, 1)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [(bytes(rng.randint(1, 9) for _ in range(cells_n)), adds) for _ in range(TIMING_BOARDS)]
        fast = _time(boards, DEFAULT)
        plain = _time(boards, dataclasses.replace(DEFAULT, tracked_pairs=False))
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} at defaults ({TIMING_BOARDS} boards): "
            f"mean {statistics.fmean(fast) * 1000:.0f} ms, max {max(fast) * 1000:.0f} ms per rating; "
            f"plain legal_pairs path mean {statistics.fmean(plain) * 1000:.0f} ms; "
            f"speed-up x{statistics.fmean(plain) / statistics.fmean(fast):.2f}",
            flush=True,
        )

    # 2. tiers order every player's win rate, including models the score does not use
    items = random_boards(ORDER_BOARDS, seed=2026)
    jobs = max(1, min(2, os.cpu_count() or 1))
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        rows = pool.map(_rate_one, items, chunksize=4)
    means, counts, ordered = tier_order(rows)
    names = list(RATED) + [p.name for p in HIDDEN]
    print(f"   tier order on {len(rows)} random boards ({time.perf_counter() - start:.0f} s, {jobs} jobs); mean win rate per tier:")
    print("   " + f"{'tier':<11}{'boards':>6} " + "".join(f"{n:>12}" for n in names))
    for tier in TIER_NAMES:
        if tier in means:
            print("   " + f"{tier:<11}{counts[tier]:>6} " + "".join(f"{means[tier][n]:>12.3f}" for n in names))
        else:
            print("   " + f"{tier:<11}{0:>6}")
    print(f"   {UNSOLVABLE:<11}{counts[UNSOLVABLE]:>6}")
    print(f"   every tier occurs and each harder tier has a lower win rate for every player: {'yes' if ordered else 'NO'}")
