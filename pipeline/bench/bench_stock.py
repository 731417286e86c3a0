"""Stock at scale: 100,000 puzzles in stock, the index against reading the YAML files.

Targets (issue 27): refreshing the index after one new night at most 2 s, a night's stock query
at most 1 s, the repeat check of `validate` at most 30 s. The baseline, measured in the same
run, is what each of them costs without the index: reading every YAML file once (the C loader)
and computing every canonical key. The files are synthesised in a temporary folder in the form
the pipeline writes them (`NM_BENCH_STOCK` sets how many; default 100,000).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from random import Random

import yaml

from pipeline.engine.canonical import canonical_key
from pipeline.formats.curves import builtin_curves
from pipeline.formats.index import LevelIndex
from pipeline.formats.puzzle import puzzle_id
from pipeline.generation.requests import generation_counts
from pipeline.jobs.curve_specs import load_curve
from pipeline.jobs.nightly import DEFAULT_LEVELS, DEFAULT_STAGES, NIGHT_CURVE
from pipeline.stock.night import draw
from pipeline.validator import Validator

TIERS = (
    ("easy", 20.0, 27, 3),
    ("medium", 47.0, 30, 2),
    ("hard", 70.0, 30, 1),
    ("expert", 90.0, 36, 1),
)
NIGHTS = 30  # bundles of 60 Stages already shipped
STAGES = 60


def _board(rng: Random, cells: int) -> str:
    digits = "".join(rng.choice("123456789") for _ in range(cells))
    return "/".join(digits[k : k + 9] for k in range(0, cells, 9))


def _puzzle_text(board: str, adds: int, tier: str, score: float, day: str) -> str:
    return (
        "# yaml-language-server: $schema=../../../../schemas/puzzle.schema.json\n"
        f"schema_version: 1\nkind: puzzle\nid: {puzzle_id(board, adds)}\nruleset: 1\nboard: {board}\nadds: {adds}\n"
        "solution:\n- 0,0-0,1\n- +\n- 1,0-1,1\n"
        f"difficulty:\n  version: 3\n  tier: {tier}\n  score: {score:.2f}\n  min_adds: 1\n"
        "  certificate_length: 3\n  mean_branching: 3.1\n  collapse_openings: 0.2\n"
        f"provenance:\n  generator: numbermatch 0.1.0\n  strategy: random\n  seed: 1\n  attempt: 0\n  stocked: '{day}'\n"
    )


def _stage_text(level: int, stage: int, board: str, adds: int, tier: str, score: float) -> str:
    return (
        f"  - stage: {stage}\n    target_score: {score:.1f}\n    puzzle:\n      id: {puzzle_id(board, adds)}\n"
        f"      ruleset: 1\n      board: {board}\n      adds: {adds}\n      solution: ['0,0-0,1']\n"
        f"      difficulty: {{version: 3, tier: {tier}, score: {score:.2f}}}\n"
    )


def _bundle_text(rng: Random, night: int) -> str:
    out = [f"schema_version: 1\nkind: bundle\nid: nightly-{night}\nruleset: 1\nlevels:\n"]
    for level in range(1, STAGES // 6 + 1):
        out.append(f"- level: {level}\n  stages:\n")
        for stage in range(1, 7):
            tier, centre, cells, adds = TIERS[rng.randrange(4)]
            out.append(
                _stage_text(
                    level, stage, _board(rng, cells), adds, tier, centre + rng.uniform(-5, 5)
                )
            )
    return "".join(out)


def _write_stock(root: Path, rng: Random, count: int, day: str) -> list[Path]:
    paths = []
    for _ in range(count):
        tier, centre, cells, adds = TIERS[rng.randrange(4)]
        board = _board(rng, cells)
        path = root / "stock" / "1" / f"{cells}x{adds}" / f"{puzzle_id(board, adds)}.yaml"
        path.write_text(_puzzle_text(board, adds, tier, centre + rng.uniform(-8, 8), day))
        paths.append(path)
    return paths


def _read_everything(root: Path) -> int:
    """The baseline: every level file read with the C loader, every canonical key computed."""
    keys = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(".yaml"):
                continue
            data = yaml.load(Path(folder, name).read_text(), Loader=yaml.CSafeLoader)
            puzzles = (
                [data]
                if data.get("kind") == "puzzle"
                else [s["puzzle"] for lv in data["levels"] for s in lv["stages"]]
            )
            for p in puzzles:
                canonical_key(p["board"], p["adds"], 1)
                keys += 1
    return keys


def main() -> None:
    count = int(os.environ.get("NM_BENCH_STOCK", "100000"))
    rng = Random(27)
    root = Path(tempfile.mkdtemp(prefix="nm-bench-stock-"))
    try:
        for cells, adds in {(t[2], t[3]) for t in TIERS}:
            (root / "stock" / "1" / f"{cells}x{adds}").mkdir(parents=True)
        started = time.perf_counter()
        stock = _write_stock(root, rng, count, "2026-01-01")
        for night in range(NIGHTS):
            folder = root / f"2026-01-{night + 1:02d}"
            folder.mkdir()
            (folder / "bundle.yaml").write_text(_bundle_text(rng, night))
        print(
            f"   synthesised {count:,} stock files and {NIGHTS} bundles of {STAGES} Stages in"
            f" {time.perf_counter() - started:.1f} s"
        )

        started = time.perf_counter()
        baseline_keys = _read_everything(root)
        baseline = time.perf_counter() - started
        print(
            f"   baseline: reading every YAML file and its keys: {baseline:.2f} s ({baseline_keys:,} puzzles)"
        )

        started = time.perf_counter()
        with LevelIndex(root) as index:
            built = index.refresh()
        cold = time.perf_counter() - started
        print(f"   index built from nothing: {cold:.2f} s ({built.read:,} files read)")

        # one new night: a bundle, 60 stock files gone, 30 new stock files
        for path in stock[:STAGES]:
            path.unlink()
        tonight = root / "2026-02-01"
        tonight.mkdir()
        (tonight / "bundle.yaml").write_text(_bundle_text(rng, 99))
        _write_stock(root, rng, STAGES // 2, "2026-02-01")
        started = time.perf_counter()
        with LevelIndex(root) as index:
            after = index.refresh()
        refresh = time.perf_counter() - started
        _line(
            "index refresh after one new night",
            refresh,
            2.0,
            baseline,
            f"{after.read} files read, {after.dropped} dropped",
        )

        curve = load_curve(NIGHT_CURVE)
        targets: dict[str, list[float]] = {}
        for level in curve.targets(DEFAULT_LEVELS, DEFAULT_STAGES, 1):
            for t in level:
                targets.setdefault(t.tier, []).append(t.score)
        wanted = generation_counts(builtin_curves()[NIGHT_CURVE], DEFAULT_LEVELS, DEFAULT_STAGES, 1)
        with LevelIndex(root) as index:
            index.refresh()  # as the night has it (the refresh is the figure above)
            started = time.perf_counter()
            drawn = draw(root, targets, wanted, 1, index=index)
            query = time.perf_counter() - started
        _line(
            "a night's stock query (default night, its files read)",
            query,
            1.0,
            baseline,
            f"{sum(len(v) for v in drawn.puzzles.values())} puzzles drawn",
        )

        started = time.perf_counter()
        run = Validator()
        run.add_file(tonight / "bundle.yaml")
        problems = run.check_against(root)
        check = time.perf_counter() - started
        _line(
            "validate --against: the new night against everything",
            check,
            30.0,
            baseline,
            f"{len(problems)} repeats",
        )
        started = time.perf_counter()
        with LevelIndex(root) as index:
            index.refresh()
            repeats = index.repeats()
        every = time.perf_counter() - started
        _line(
            "repeat check of everything against everything",
            every,
            30.0,
            baseline,
            f"{len(repeats)} repeats",
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _line(what: str, seconds: float, target: float, baseline: float, note: str) -> None:
    verdict = "ok" if seconds <= target else "OVER TARGET"
    print(
        f"   {what}: {seconds:.3f} s (target <= {target:g} s: {verdict}); {baseline / max(seconds, 1e-9):.0f}x"
        f" faster than reading the files ({note})"
    )


if __name__ == "__main__":
    main()
