"""`make telemetry-study`: does a profile fitted to an audience's telemetry rate held-out puzzles
better than the default mix, for audiences unlike it, and how many attempts does it need?

For each audience (a mix of the rating's players unlike version 3's default): the puzzles (the
committed night's bundle and the committed stock) are split in two by a seeded hash. Telemetry is simulated on
the first half (`ATTEMPTS` attempts per puzzle, as `numbermatch telemetry simulate` writes it)
and a profile's weights are fitted to it (`pipeline.telemetry.calibrate.fit_weights`). On the
second half, each puzzle's true loss rate for the audience is measured from many games
(`TRUTH_GAMES` per player of the mix, weighted); the profile's and the default mix's predictions
(from the stored win rates) are compared with it: MAE (loss-rate points) and Spearman, before
(default) and after (profile). Then the fit is repeated with fewer attempts per puzzle to find
the fewest with which the profile beats the default on held-out MAE.

Seeded (`STUDY_SEED`, default 24); `STUDY_JOBS` runs the audiences in that many processes (same
figures for any value). Environment: ATTEMPTS (default 200), TRUTH_GAMES (default 400).
"""

from __future__ import annotations

import hashlib
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# the committed night's bundle and the committed stock of unshipped puzzles
PUZZLES: tuple[Path, ...] = (
    REPO / "generated" / "2026-11-29" / "bundle.yaml",
    REPO / "generated" / "stock",
)
# Three audiences unlike the default (random 0.45, local 0.30, the other five 0.05 each).
AUDIENCES: dict[str, dict[str, float]] = {
    # several of the rating's players left out (random, local, lookahead, planner)
    "narrow": {"scanner": 0.4, "proximity": 0.4, "opener": 0.2},
    # strong players: planner, lookahead, opener
    "strong": {"planner": 0.5, "lookahead": 0.3, "opener": 0.2},
    # weak players: random, scanner, proximity
    "weak": {"random": 0.4, "scanner": 0.3, "proximity": 0.3},
}
ATTEMPT_STEPS = (1, 2, 3, 5, 10, 20, 40, 80, 160)


def _half(pid: str, seed: int) -> int:
    return hashlib.sha256(f"{seed}:{pid}".encode()).digest()[0] & 1


def _true_loss(puzzle: Any, mix: dict[str, float], games: int, seed: int) -> float:
    from pipeline.engine.board import parse
    from pipeline.engine.rulesets import ruleset_for
    from pipeline.rating.players import play_many
    from pipeline.telemetry.simulate import PLAYERS_BY_NAME

    cells, rs = parse(puzzle.board), ruleset_for(puzzle.ruleset)
    loss = 0.0
    for name, w in mix.items():
        stats, _ = play_many(PLAYERS_BY_NAME[name], cells, puzzle.adds, games, seed + 1, ruleset=rs)
        loss += w * (1.0 - stats.win_rate)
    return loss


def run_audience(
    name: str,
    mix: dict[str, float],
    *,
    attempts: int,
    truth_games: int,
    seed: int,
    puzzles: Path | tuple[Path, ...] = PUZZLES,
    steps: tuple[int, ...] = (),
) -> dict[str, Any]:
    """One audience's row: weights, held-out MAE and Spearman before/after, attempts needed."""
    from pipeline.rating.profile import PLAYER_NAMES
    from pipeline.rating.versions import WEIGHTS_V3
    from pipeline.telemetry.calibrate import Sample, fit_weights, predict
    from pipeline.telemetry.catalogue import Catalogue, load_catalogue
    from pipeline.telemetry.records import PuzzleCounts, Telemetry
    from pipeline.telemetry.simulate import simulate
    from pipeline.telemetry.stats import mae, spearman

    catalogue = load_catalogue([puzzles] if isinstance(puzzles, Path) else list(puzzles))
    ids = sorted(
        pid
        for pid, p in catalogue.puzzles.items()
        if p.difficulty.get("version") in (3, 4) and p.difficulty.get("score") is not None
    )
    fit_ids = [pid for pid in ids if _half(pid, seed) == 0]
    test_ids = [pid for pid in ids if _half(pid, seed) == 1]
    fit_cat = Catalogue({pid: catalogue.puzzles[pid] for pid in fit_ids}, ())
    records = simulate(fit_cat, tuple(mix.items()), max((attempts, *steps)), seed)

    def fitted(n: int) -> tuple[float, ...]:
        counts: dict[str, list[int]] = {}
        for r in records:
            c = counts.setdefault(r["puzzle"], [0, 0, 0])
            if c[0] >= n:
                continue
            c[0] += 1
            c[1] += r["outcome"] == "won"
            c[2] += r["outcome"] == "abandoned"
        t = Telemetry(
            {pid: PuzzleCounts(pid, *c) for pid, c in counts.items()}, len(records), (), "", ()
        )
        data = [
            Sample(
                pid,
                tuple(
                    1.0 - float(fit_cat.puzzles[pid].difficulty["players"][p]["win_rate"])
                    for p in PLAYER_NAMES
                ),
                t.counts[pid].finished,
                t.counts[pid].losses,
            )
            for pid in fit_ids
            if t.counts[pid].finished
        ]
        return fit_weights(data)

    def held_sample(pid: str) -> Sample:
        d = catalogue.puzzles[pid].difficulty
        return Sample(
            pid, tuple(1.0 - float(d["players"][p]["win_rate"]) for p in PLAYER_NAMES), 1, 0
        )

    truth = [_true_loss(catalogue.puzzles[pid], mix, truth_games, seed) for pid in test_ids]
    default = tuple(WEIGHTS_V3[p] for p in PLAYER_NAMES)
    held = [held_sample(pid) for pid in test_ids]

    def figures(weights: tuple[float, ...]) -> dict[str, float | None]:
        pred = [predict(weights, s) for s in held]
        sp = spearman(pred, truth)
        return {"mae": round(mae(pred, truth), 4), "spearman": None if sp is None else round(sp, 4)}

    weights = fitted(attempts)
    before = figures(default)
    row: dict[str, Any] = {
        "audience": name,
        "mix": mix,
        "fit_puzzles": len(fit_ids),
        "test_puzzles": len(test_ids),
        "attempts": attempts,
        "weights": {p: round(w, 3) for p, w in zip(PLAYER_NAMES, weights) if w >= 0.005},
        "before": before,
        "after": figures(weights),
    }
    curve = [(n, figures(fitted(n))["mae"]) for n in steps]
    row["by_attempts"] = curve
    base = before["mae"] or 0.0
    row["attempts_needed"] = next((n for n, m in curve if m is not None and m < base), None)
    return row


def _row(args: tuple[str, dict[str, float], int, int, int]) -> dict[str, Any]:
    name, mix, attempts, truth, seed = args
    return run_audience(
        name, mix, attempts=attempts, truth_games=truth, seed=seed, steps=ATTEMPT_STEPS
    )


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        sys.exit(f"telemetry-study: {name}={raw!r} is not a whole number")
    if value < 1:
        sys.exit(f"telemetry-study: {name} must be 1 or more, got {value}")
    return value


def main() -> None:
    seed = _env_int("STUDY_SEED", 24)
    jobs = _env_int("STUDY_JOBS", 1)
    attempts = _env_int("ATTEMPTS", 200)
    truth = _env_int("TRUTH_GAMES", 400)
    tasks = [(name, mix, attempts, truth, seed) for name, mix in AUDIENCES.items()]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
            rows = list(pool.map(_row, tasks))
    else:
        rows = [_row(t) for t in tasks]
    print(
        f"telemetry study: seed {seed}, {attempts} attempts per fitted puzzle, {truth} games per player for the truth"
    )
    print(
        f"{'audience':<8} {'mix':<42} {'puzzles':>9}  {'MAE before':>10} {'after':>6}  {'Spearman before':>15} {'after':>6}  needs"
    )
    for r in rows:
        mix = ",".join(f"{k}:{v:g}" for k, v in r["mix"].items())
        sb, sa = r["before"]["spearman"], r["after"]["spearman"]
        needed = "-" if r["attempts_needed"] is None else f"{r['attempts_needed']} attempts"
        print(
            f"{r['audience']:<8} {mix:<42} {r['fit_puzzles']:>4}/{r['test_puzzles']:<4}  "
            f"{r['before']['mae'] * 100:>9.1f}p {r['after']['mae'] * 100:>5.1f}p  "
            f"{'n/a' if sb is None else f'{sb:.3f}':>15} {'n/a' if sa is None else f'{sa:.3f}':>6}  {needed}"
        )
    print()
    for r in rows:
        steps = ", ".join(f"{n}: {m * 100:.1f}p" for n, m in r["by_attempts"])
        print(
            f"{r['audience']}: fitted weights {r['weights']}; held-out MAE by attempts per puzzle: {steps} "
            f"(default {r['before']['mae'] * 100:.1f}p)"
        )


if __name__ == "__main__":
    main()
