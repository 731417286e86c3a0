"""Rating benchmark: what the current rating version costs against the earlier ones, same run.

Backends first: CPU per rating at 27 cells / 2 adds, 30/2, 36/1 and 35/5 (random boards) with the
compiled core and in pure Python (`NUMBERMATCH_PUREPYTHON=1`), each in a fresh process, taking
turns, the least of two runs each counting; the ratio against the target (x30), the players'
moves per CPU second, the machine and its load, and whether every rating came out the same; for
rating version 4 and the default version (BACKEND_VERSIONS).

The score's spread and bias: each player's CPU per game; per rating version compared (3 and 4):
   ms per rating, the score's standard deviation across five rating seeds (SPREAD_SEEDS) on the
   first Stage of each committed Level and random boards, the one the pooled win rates give and
   the version's bound on any board (`RatingVersion.sd_bound`); and the committed stored scores'
   bias: stored score minus the mean of its re-ratings with those independent seeds.
0. Time per rating (27 cells / 2 adds and 36 cells / 1 add, the nightly's sizes, random boards)
   with the simulated players as they are and as they were before they remembered positions
   (`tests/reference_players.py`, from the checkout), the ratio, and whether every rating came out the same.
1. Time per rating at the defaults (27 cells / 1 add and 35 cells / 3 adds, random boards):
   versions 1 (three players, traps), 2 (six players, traps), 3 (seven players, more games for
   the cheap ones, no traps) and 4 (version 3 on the games that bound its spread), with the
   ratios of version 3 to 2 and of 4 to 3.
2. Generation throughput at the nightly job's tier plans (`TIER_PLANS`): puzzles per CPU second
   per tier with the generator rating by version 3, then by version 4 (`GenerateParams
   .rating_version`; same seeds, one process), and the ratio; then the stored scores' bias of each
   version's puzzles: version 3 keeps a board on the rating it was picked by, version 4 stores
   its confirmation on an independent draw.

Whether the score orders boards for players it does not use is `make rating-study`
(`research/study_rating.py`): it takes minutes, so it is not part of `make bench`.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from typing import Any

from pipeline.bench.bench_nightly import machine
from pipeline.bench.checkout import REPO, reference_players, reference_players_module
from pipeline.engine.backend import PURE_ENV, describe
from pipeline.engine.board import cells_of
from pipeline.formats.bundle import Bundle
from pipeline.formats.loader import load_file
from pipeline.formats.puzzle import Puzzle
from pipeline.generation.generator import GenerateParams, GenerationError, generate
from pipeline.generation.requests import TIER_PLANS
from pipeline.rating import CONFIRM_SEED, DEFAULT_SEED
from pipeline.rating.players import PLAYERS, play_many
from pipeline.rating.score import rate
from pipeline.rating.tiers import RATING_VERSION
from pipeline.rating.versions import VERSIONS

TIMING_BOARDS = 10
GENERATE_COUNT = 6
BACKEND_SIZES = ((27, 2), (30, 2), (36, 1), (35, 5))
# Re-rating seeds for the score's spread and the stored scores' bias: none is the seed a stored
# rating was made or picked with (DEFAULT_SEED, CONFIRM_SEED), so each is an independent draw.
SPREAD_SEEDS = tuple(s for s in range(8) if s not in (DEFAULT_SEED, CONFIRM_SEED))[:5]
SPREAD_RANDOM = 5  # random boards a size (BACKEND_SIZES) beside the committed nights' Stages
COMPARED = (3, 4)  # the rating versions the spread, the bias and the cost are printed for
BACKEND_VERSIONS = tuple(dict.fromkeys((4, RATING_VERSION)))  # the backends' rows: 4, the default
BACKEND_TARGET = 30  # the ratio for a rating, compiled against pure Python
_CHILD = (
    "import json, sys; from pipeline.bench.bench_rating import ratings_cpu; "
    "print(json.dumps(ratings_cpu(*map(int, sys.argv[1:]))))"
)


def ratings_cpu(cells_n: int, adds: int, version: int = RATING_VERSION) -> dict[str, Any]:
    """CPU per rating (seconds) by rating `version` and the players' moves per rating over
    TIMING_BOARDS random boards, the backend, and a digest of the ratings (run in a child process
    per backend)."""
    rng = random.Random(cells_n * 10 + adds)
    boards = [bytes(rng.randint(1, 9) for _ in range(cells_n)) for _ in range(TIMING_BOARDS)]
    rate(boards[0], adds, version=version)  # warm: the ray tables, the solver's first imports
    cpu = moves = 0.0
    digest = hashlib.sha256()
    for cells in boards:
        start = time.process_time()
        rating = rate(cells, adds, version=version).to_json()
        cpu += time.process_time() - start
        moves += sum(p["playouts"] * p["mean_moves"] for p in rating["players"].values())
        digest.update(json.dumps(rating, sort_keys=True).encode())
    return {
        "cpu": cpu / len(boards),
        "moves": moves / len(boards),
        "backend": describe(),
        "digest": digest.hexdigest(),
    }


def _child(cells_n: int, adds: int, pure: bool, version: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if pure:
        env[PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cells_n), str(adds), str(version)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, Any] = json.loads(out.stdout)
    return found


def backends() -> None:
    """The compiled core against pure Python, per rating version and size, same run."""
    print(
        f"   backends: CPU per rating, {TIMING_BOARDS} random boards a size, a fresh process per"
        f" backend, the least of 2 runs each, taking turns; machine: {machine()};"
        f" load average {os.getloadavg()[0]:.1f} before"
    )
    for version in BACKEND_VERSIONS:
        default = " (the default)" if version == RATING_VERSION else ""
        print(f"   rating version {version}{default}:", flush=True)
        for cells_n, adds in BACKEND_SIZES:
            _backend_row(cells_n, adds, version)
    print(f"   load average {os.getloadavg()[0]:.1f} after")


def _backend_row(cells_n: int, adds: int, version: int) -> None:
    """One size's row of `backends`."""
    runs = [
        (_child(cells_n, adds, False, version), _child(cells_n, adds, True, version))
        for _ in range(2)
    ]
    fast = min((r[0] for r in runs), key=lambda r: r["cpu"])
    slow = min((r[1] for r in runs), key=lambda r: r["cpu"])
    same = len({r["digest"] for pair in runs for r in pair}) == 1
    label = "compiled" if "compiled" in fast["backend"] else "NOT COMPILED (pure Python)"
    ratio = slow["cpu"] / fast["cpu"]
    print(
        f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''}:"
        f" {label} {fast['cpu'] * 1000:.1f} ms ({fast['moves'] / fast['cpu'] / 1e6:.2f} M moves/s),"
        f" pure Python {slow['cpu'] * 1000:.0f} ms ({slow['moves'] / slow['cpu'] / 1e6:.2f} M moves/s):"
        f" x{ratio:.1f} (target {BACKEND_TARGET}: {'met' if ratio >= BACKEND_TARGET else 'NOT met'});"
        f" ratings {'identical' if same else 'DIFFER'}; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def _time(boards: list[tuple[bytes, int]], version: int) -> float:
    start = time.process_time()
    for cells, adds in boards:
        rate(cells, adds, version=version)
    return (time.process_time() - start) / len(boards)


def _generated(tier: str, version: int) -> tuple[float, list[Puzzle], int]:
    """(puzzles per CPU second, the puzzles, attempts) generating GENERATE_COUNT puzzles of
    `tier` at its nightly plan, rating by `version`."""
    plan = TIER_PLANS[tier]
    params = GenerateParams(
        cells=plan.cells,
        adds=plan.adds,
        tier=tier,
        strategy=plan.strategy,
        seed=2026,
        rating_version=version,
    )
    start = time.process_time()
    try:
        result = generate(GENERATE_COUNT, params, jobs=1)
    except GenerationError:
        return 0.0, [], 0
    cpu = time.process_time() - start
    return len(result.puzzles) / cpu, result.puzzles, result.attempts


def _stored(puzzles: list[Puzzle]) -> list[SpreadBoard]:
    return [
        (p.id, cells_of(p.board), p.adds, p.solution, p.rated.score, p.provenance["rating_seed"])
        for p in puzzles
    ]


def players_against_reference() -> None:
    """The current players against the reference players, one rating after the other."""
    if reference_players_module() is None:
        print(
            "   rate with the reference players: skipped (tests/reference_players.py is not here)"
        )
        return
    for cells_n, adds in ((27, 2), (36, 1)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [bytes(rng.randint(1, 9) for _ in range(cells_n)) for _ in range(TIMING_BOARDS)]
        now: list[float] = []
        before: list[float] = []
        same = True
        for cells in boards:  # alternated, so a change in the machine's load hits both alike
            start = time.process_time()
            rating = rate(cells, adds).to_json()
            now.append(time.process_time() - start)
            with reference_players():
                start = time.process_time()
                same = same and rate(cells, adds).to_json() == rating
                before.append(time.process_time() - start)
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU per rating):"
            f" {sum(now) / len(now) * 1000:.0f} ms; with the reference players {sum(before) / len(before) * 1000:.0f} ms:"
            f" x{sum(before) / sum(now):.2f}; ratings {'identical' if same else 'DIFFER'}",
            flush=True,
        )


# (label, cells, adds, certificate or None, stored score or None, rating seed of the stored score)
SpreadBoard = tuple[str, bytes, int, tuple[str, ...] | None, float | None, int]


def committed_stages() -> list[SpreadBoard]:
    """Every scored Stage of the committed nights (`generated/<date>/bundle.yaml` in the
    checkout; none outside one), with its stored score (a bundle's ratings use DEFAULT_SEED)."""
    out: list[SpreadBoard] = []
    for path in sorted((REPO / "generated").glob("*/bundle.yaml")):
        loaded = load_file(path)
        if loaded.document is None:
            continue
        bundle = Bundle.from_dict(loaded.document.data, str(path))
        for stage in bundle.stages:
            p = stage.puzzle
            score = p.rated.score
            if score is not None:
                label = f"{path.parent.name} {stage.slot}"
                out.append((label, cells_of(p.board), p.adds, p.solution, score, DEFAULT_SEED))
    return out


def random_boards() -> list[SpreadBoard]:
    """SPREAD_RANDOM random boards of each of BACKEND_SIZES (no stored score)."""
    out: list[SpreadBoard] = []
    for cells_n, adds in BACKEND_SIZES:
        rng = random.Random(cells_n * 10 + adds)
        for i in range(SPREAD_RANDOM):
            cells = bytes(rng.randint(1, 9) for _ in range(cells_n))
            out.append((f"random {cells_n}/{adds} #{i}", cells, adds, None, None, DEFAULT_SEED))
    return out


Rerated = tuple[SpreadBoard, list[float], float]


def re_rated(boards: list[SpreadBoard], version: int) -> tuple[list[Rerated], float]:
    """Each solvable board's scores by `version` with every SPREAD_SEEDS seed, the score's
    standard deviation its pooled win rates give (players' games are independent draws:
    the sum of (100 w)^2 p (1 - p) / n), and the CPU seconds per rating."""
    record = VERSIONS[version]
    out = []
    start, ratings = time.process_time(), 0
    for board in boards:
        _, cells, adds, solution, _, _ = board
        scores, wins = [], {name: 0.0 for name in record.players}
        for seed in SPREAD_SEEDS:
            rating = rate(cells, adds, seed=seed, solution=solution, version=version)
            ratings += 1
            if rating.score is None:
                break
            scores.append(rating.score)
            for name, stats in rating.metrics["players"].items():
                wins[name] += stats["win_rate"] / len(SPREAD_SEEDS)
        if len(scores) == len(SPREAD_SEEDS):
            variance = sum(
                (100 * w) ** 2 * wins[name] * (1 - wins[name]) / record.games(name, 64)
                for name, w in record.weights.items()
            )
            out.append((board, scores, variance**0.5))
    return out, (time.process_time() - start) / max(1, ratings)


def bias_line(rows: list[Rerated]) -> str:
    """Stored score minus the mean of the independent re-ratings: mean (with its standard
    error), lowest, highest, over the boards that have a stored score."""
    gaps = [b[4] - statistics.fmean(scores) for b, scores, _ in rows if b[4] is not None]
    if len(gaps) < 2:
        return "no stored scores"
    se = statistics.stdev(gaps) / len(gaps) ** 0.5
    return (
        f"{statistics.fmean(gaps):+.2f} +- {se:.2f} (s.e.) points over {len(gaps)} boards,"
        f" from {min(gaps):+.2f} to {max(gaps):+.2f}; mean |gap| {statistics.fmean(map(abs, gaps)):.2f}"
    )


def spread_line(rows: list[Rerated]) -> str:
    """The score's standard deviation across SPREAD_SEEDS (mean and highest over the boards),
    and the one the pooled win rates give (less noisy than five seeds' spread)."""
    sds = [statistics.stdev(scores) for _, scores, _ in rows]
    binomial = [sd for _, _, sd in rows]
    worst = max(range(len(sds)), key=sds.__getitem__)
    return (
        f"SD across seeds {statistics.fmean(sds):.2f} mean, {sds[worst]:.2f} highest"
        f" ({rows[worst][0][0]}); from the win rates {statistics.fmean(binomial):.2f} mean,"
        f" {max(binomial):.2f} highest; {len(sds)} boards"
    )


def player_costs() -> dict[str, float]:
    """CPU seconds per game of each player, over the random boards (the cost the game counts
    of a version are weighed against)."""
    boards = random_boards()
    out = {}
    for player in PLAYERS:
        start = time.process_time()
        for _, cells, adds, _, _, _ in boards:
            play_many(player, cells, adds, 50, DEFAULT_SEED)
        out[player.name] = (time.process_time() - start) / (50 * len(boards))
    return out


def spread_and_bias() -> None:
    """Per compared version: ms per rating, the score's SD across seeds (and its bound) on the
    first Stage of each committed Level and random boards; the committed stored scores' bias."""
    night, extra = committed_stages(), random_boards()
    firsts = [b for b in night if b[0].endswith(".S1")]
    print(
        f"   the score across rating seeds {', '.join(map(str, SPREAD_SEEDS))}"
        f" ({len(firsts)} committed Levels' first Stages and {len(extra)} random boards;"
        f" the bias over all {len(night)} committed Stages); load average {os.getloadavg()[0]:.1f}"
    )
    costs = player_costs()
    print(
        "   CPU per game: " + ", ".join(f"{name} {cpu * 1e6:.1f} us" for name, cpu in costs.items())
    )
    for version in COMPARED:
        record = VERSIONS[version]
        rows, cpu = re_rated(firsts + extra, version)
        games = sum(record.games(n, 64) for n in record.players)
        print(
            f"   version {version}: {cpu * 1000:.0f} ms per rating ({games} games);"
            f" {spread_line(rows)}; at most {record.sd_bound(64):.2f} on any board",
            flush=True,
        )
    stored, _ = re_rated(night, 3)  # the committed nights are version 3's, not confirmed
    print(f"   committed scores (version 3, no confirmation) - re-ratings: {bias_line(stored)}")


def main() -> None:
    backends()
    players_against_reference()
    spread_and_bias()
    for cells_n, adds in ((27, 1), (35, 3)):
        rng = random.Random(cells_n * 10 + adds)
        boards = [
            (bytes(rng.randint(1, 9) for _ in range(cells_n)), adds) for _ in range(TIMING_BOARDS)
        ]
        t = {v: _time(boards, v) for v in sorted(VERSIONS)}
        print(
            f"   rate {cells_n} cells / {adds} add{'s' if adds != 1 else ''} ({TIMING_BOARDS} boards, CPU): "
            + ", ".join(f"version {v} {ms * 1000:.0f} ms" for v, ms in t.items())
            + f" per rating; version 3 / version 2 x{t[3] / t[2]:.2f}, version 4 / version 3"
            f" x{t[4] / t[3]:.2f}",
            flush=True,
        )
    old, new = COMPARED
    print(
        f"   generation at the nightly tier plans ({GENERATE_COUNT} puzzles per tier, 1 process,"
        f" seed 2026), then each puzzle re-rated with seeds {', '.join(map(str, SPREAD_SEEDS))}:"
    )
    print(
        f"   {'tier':<7} {'cells':>5} {'adds':>4} {f'v{old} puzzles/CPU s':>17} {'attempts':>8}"
        f" {f'v{new} puzzles/CPU s':>17} {'attempts':>8} {f'v{new}/v{old}':>6}"
    )
    made: dict[int, list[Puzzle]] = {old: [], new: []}
    for tier, plan in TIER_PLANS.items():
        r1, p1, a1 = _generated(tier, old)
        r2, p2, a2 = _generated(tier, new)
        made[old] += p1
        made[new] += p2
        ratio = f"{r2 / r1:.2f}" if r1 and r2 else "-"
        print(
            f"   {tier:<7} {plan.cells:>5} {plan.adds:>4} {r1:>17.3f} {a1:>8} {r2:>17.3f} {a2:>8} {ratio:>6}",
            flush=True,
        )
    for version, puzzles in made.items():
        confirmed = (
            "confirmed on an independent draw" if VERSIONS[version].confirms else "no confirmation"
        )
        rows, _ = re_rated(_stored(puzzles), version)
        print(
            f"   stored scores, version {version} ({confirmed}) - re-ratings: {bias_line(rows)}",
            flush=True,
        )
