"""The bench's held-out check pooled over seeds: is one strategy's tier lost less often than another's?

The bench (`bench_search`) checks one seed's 16 puzzles a side; a lean of a point or two needs
more. `gen` makes `bench_search.run`'s puzzles for several seeds (the bench's own budget and count
each) and writes them, one JSON document a line, to a file per strategy and seed; `loss` plays
the held-out models on them (the bench's games, and `LONG` games a model on a seed of its own)
and prints, pooled over the seeds, each strategy's mean held-out loss and the one-sided
Mann-Whitney p of "the other's puzzles are lost more often", as the bench does.

    python -m research.pool_heldout gen 36/1 medium climb DIR 2026 11 12 ...
    python -m research.pool_heldout loss DIR climb random [search]
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.engine.board import parse
from pipeline.formats.puzzle import Puzzle
from pipeline.rating.players import play_many
from research.bench_search import HELD_OUT_GAMES, model_losses, run
from research.study_rating import STUDY_MODELS, mann_whitney_greater

LONG = {"constrained": 200, "tidy": 200, "montecarlo": 60, "tens": 200, "bottomup": 200}
LONG_SEED = 3031  # not the bench's HELD_OUT_SEED


def gen(group: str, tier: str, strategy: str, out: Path, seeds: Sequence[int]) -> None:
    cells, adds = map(int, group.split("/"))
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        r = run(cells, adds, tier, strategy, count=16, seed=seed, budget=40.0)
        with open(out / f"{strategy}-{seed}.jsonl", "w") as f:
            for p in r.puzzles:
                f.write(json.dumps(p.to_document()) + "\n")
        print(f"{strategy} seed {seed}: {len(r.puzzles)} in {r.cpu:.1f} CPU s", flush=True)


def long_losses(p: Puzzle) -> dict[str, float]:
    cells = parse(p.board)
    return {
        m.name: 1.0 - play_many(m, cells, p.adds, LONG[m.name], LONG_SEED)[0].win_rate
        for m in STUDY_MODELS
    }


def losses(out: Path, strategy: str) -> list[dict[str, object]]:
    """Per puzzle of the strategy: seed, score, bench-games and long-games model losses (cached)."""
    cache = out / f"loss-{strategy}.json"
    if cache.exists():
        return list(json.loads(cache.read_text()))
    rows: list[dict[str, object]] = []
    for f in sorted(out.glob(f"{strategy}-*.jsonl")):
        seed = int(f.stem.split("-")[1])
        for line in f.read_text().splitlines():
            p = Puzzle.from_dict(json.loads(line))
            rows.append(
                {
                    "seed": seed,
                    "board": p.board,
                    "score": float(p.difficulty["score"]),
                    "bench": model_losses(p, HELD_OUT_GAMES),
                    "long": long_losses(p),
                }
            )
    cache.write_text(json.dumps(rows))
    return rows


def mean_loss(row: dict[str, object], key: str) -> float:
    values = row[key]
    assert isinstance(values, dict)
    return statistics.fmean(values.values())


def report(out: Path, strategies: Sequence[str]) -> None:
    rows = {s: losses(out, s) for s in strategies}
    for s, rs in rows.items():
        seeds = sorted({int(str(r["seed"])) for r in rs})
        per = ", ".join(
            f"{k} {statistics.fmean(mean_loss(r, 'bench') for r in rs if r['seed'] == k):.3f}"
            for k in seeds
        )
        print(
            f"{s}: {len(rs)} puzzles, score {statistics.fmean(float(str(r['score'])) for r in rs):.2f};"
            f" held-out bench {statistics.fmean(mean_loss(r, 'bench') for r in rs):.3f},"
            f" long {statistics.fmean(mean_loss(r, 'long') for r in rs):.3f}; per seed {per}"
        )
    for i, a in enumerate(strategies):
        for b in strategies[i + 1 :]:
            for key in ("bench", "long"):
                xs = [mean_loss(r, key) for r in rows[b]]
                ys = [mean_loss(r, key) for r in rows[a]]
                p = mann_whitney_greater(xs, ys)
                print(
                    f"{a} vs {b} ({key}): {statistics.fmean(ys):.3f} vs {statistics.fmean(xs):.3f}, p {p:.3f}"
                )


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[0] == "gen":
        gen(args[1], args[2], args[3], Path(args[4]), [int(a) for a in args[5:]])
    else:
        report(Path(args[1]), args[2:])
