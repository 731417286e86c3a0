"""Validator speed: validating 1,000 Stages against merely loading the same YAML.

Certificate replay is what keeps validation cheap, so the figure that matters is the ratio to
a plain `yaml.load` with the C loader (the least any reader of the file pays). Two shapes: one
bundle of 100 Levels x 10 Stages, and 1,000 single-puzzle files in a folder.
"""

from __future__ import annotations

import cProfile
import functools
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import Any

import yaml

from pipeline.engine.board import format_board
from pipeline.engine.moves import ADD, Move
from pipeline.formats.loader import Loader  # type: ignore[attr-defined]
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.rating.tiers import tier_for
from pipeline.rating.versions import score_from_metrics
from pipeline.validator import Validator, collect_files, validate_paths

STAGES = 1000
PER_LEVEL = 10


def _puzzle(rng: Random) -> Puzzle:
    """A solvable puzzle built so its certificate is known: adjacent pairs in reading order,
    optionally doubled by one add, removed from the last pair back to the first."""
    pairs = rng.randint(9, 18)
    values = []
    for _ in range(pairs):
        a = rng.randint(1, 9)
        values += [a, rng.choice([a, 10 - a])]
    start = cells = bytes(values)
    adds = rng.randint(0, 2)
    moves: list[Move] = []
    if adds:
        moves.append(ADD)
        cells = cells + cells
    moves += [Move.pair(i, i + 1) for i in range(len(cells) - 2, -1, -2)]
    board = format_board(start)
    return Puzzle(
        board, adds, tuple(str(m) for m in moves), _difficulty(rng, len(moves), min(adds, 1))
    )


def _difficulty(rng: Random, length: int, min_adds: int) -> dict[str, Any]:
    players = {
        # whole numbers of games won and of moves over the 64 games (the validator checks it: NM315)
        name: {
            "win_rate": round(rng.randint(0, 64) / 64, 4),
            "mean_moves": round(rng.randint(320, 1920) / 64, 4),
            "playouts": 64,
        }
        for name in ("random", "scanner", "lookahead")
    }
    d: dict[str, Any] = {
        "tier": "",
        "score": 0.0,
        "min_adds": min_adds,
        "players": players,
        "trap_density": round(rng.random() / 2, 4),
        "trap_density_sampled": round(rng.random() / 2, 4),
        "certificate_length": length,
        "mean_branching": round(rng.uniform(1, 8), 2),
        "collapse_openings": round(rng.random(), 4),
    }
    score = score_from_metrics(d)
    d["score"], d["tier"] = score, tier_for(score, 1)  # a block without `version` is version 1
    return d


def make_puzzles(count: int = STAGES, seed: int = 1) -> list[Puzzle]:
    rng = Random(seed)
    return [_puzzle(rng) for _ in range(count)]


def bundle_text(puzzles: list[Puzzle]) -> str:
    levels = [
        {
            "level": n + 1,
            "stages": [
                {"stage": s + 1, "target_score": 50.0, "puzzle": p.core_dict()}
                for s, p in enumerate(puzzles[n * PER_LEVEL : (n + 1) * PER_LEVEL])
            ],
        }
        for n in range(len(puzzles) // PER_LEVEL)
    ]
    doc = {
        "schema_version": 1,
        "kind": "bundle",
        "id": "bench-bundle",
        "ruleset": 1,
        "generator": {"name": "numbermatch", "version": "0.1.0", "seed": 1, "params": {}},
        "levels": levels,
    }
    return dump_yaml(doc)


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _load_all(files: list[Path]) -> None:
    for f in files:
        yaml.load(f.read_bytes(), Loader=Loader)


def main(profile: bool = False) -> None:
    puzzles = make_puzzles()
    print(f"   YAML loader: {Loader.__name__}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bundle = folder / "bundle" / "bench.yaml"
        bundle.parent.mkdir()
        bundle.write_text(bundle_text(puzzles), encoding="utf-8")
        single = folder / "puzzles"
        single.mkdir()
        for i, p in enumerate(puzzles):
            (single / f"p{i:04d}.yaml").write_text(dump_yaml(p.to_document()), encoding="utf-8")

        for label, path in (
            ("1 bundle of 1,000 stages", bundle.parent),
            ("1,000 puzzle files", single),
        ):
            files = collect_files([path])
            report = validate_paths([path])
            assert report.ok, report.problems[:3]
            load = _best(functools.partial(_load_all, files))
            check = _best(functools.partial(validate_paths, [path]))
            size = sum(f.stat().st_size for f in files)
            print(
                f"   {label} ({size / 1e6:.2f} MB): yaml.load {load * 1000:.0f} ms, "
                f"validate {check * 1000:.0f} ms, ratio {check / load:.2f}x"
            )
        if profile:
            prof = cProfile.Profile()
            prof.enable()
            run = Validator()
            run.add_file(bundle)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main(profile="--profile" in sys.argv)
