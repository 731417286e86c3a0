"""Studio latency: a move request and a hint, over HTTP to a real server, on 27-36-cell boards.

Run: `python -m pipeline.bench studio` (or `make bench` for every benchmark). It serves the
newest night under `generated/` (or generates a small one in a temp folder when there is none)
with uvicorn on 127.0.0.1, and for Stages whose starting board has 27-36 cells takes the
position a third of the way through the certificate. Per position it times

- a move: the click that completes a pair (`GET /act`, the engine replays the game and plays
  the pair, 303) plus the page it redirects to (`GET /stage`, replay and render), end to end;
- a hint: `GET /stage?note=hint` (replay, solver with the studio's node budget, render);
- a swap page: `GET /swap` for each Stage of the bundle (the pool, or for a night drawn from
  the stock the nights' stock; validated once and cached, ranked, and `swap`'s own choice,
  `choose_replacement`).

Baselines in the same run, on the same positions: the engine's own replay-and-play in-process
(`game.replay` + `Position.then`) for a move, and `solve` in-process for a hint; the ratios say
what HTTP, templates and the page cost on top. For the swap page the baseline is
`choose_replacement` in-process, and the line after it times what the page did before it had a
pure choice: `swap_stage(write=False)`, which reads and validates the whole bundle twice.
"""

from __future__ import annotations

import datetime as dt
import http.client
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml

from pipeline.engine.board import format_board, parse
from pipeline.engine.moves import Move
from pipeline.formats.bundle import Bundle
from pipeline.formats.night import POOL_DIR
from pipeline.formats.puzzle import Puzzle, dump_yaml
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.jobs.inputs import load_puzzles
from pipeline.jobs.nightly import NightlyOptions, run_nightly
from pipeline.jobs.swap import SwapError, choose_replacement, swap_stage
from pipeline.solver import SOLVED, solve
from pipeline.solver.budgets import HINT_BUDGET_NODES
from pipeline.stock.store import nights_folder
from pipeline.studio import game
from pipeline.studio.server import Background

MAX_STAGES = 30
EXTRA_36 = 10  # random 36-cell boards with 1 add (the expert plan's size) when the night has none
ROUNDS = 3


def _night(tmp: Path) -> tuple[Path, str]:
    """(root, bundle path relative to it): the newest generated night, or a small fresh one."""
    generated = Path("generated")
    bundles = sorted(generated.glob("*/bundle.yaml"), reverse=True) if generated.is_dir() else []
    if bundles:
        return generated, bundles[0].relative_to(generated).as_posix()

    result = run_nightly(
        NightlyOptions(date=dt.date(2026, 1, 2), seed=20260102, levels=2, stages=6, out=tmp, jobs=1)
    )
    return tmp, result.bundle_path.relative_to(tmp).as_posix()


def _boards_36(root: Path, count: int) -> list[tuple[str, dict[str, Any]]]:
    """Solvable random 36-cell boards with 1 add, written as puzzle files under `root`."""
    rng = random.Random(36)
    out: list[tuple[str, dict[str, Any]]] = []
    while len(out) < count:
        cells = bytes(rng.randint(1, 9) for _ in range(36))
        result = solve(cells, 1, budget_nodes=HINT_BUDGET_NODES)
        if result.status != SOLVED or result.moves is None:
            continue
        puzzle = Puzzle(format_board(cells), 1, tuple(str(m) for m in result.moves), {})
        path = root / "bench36" / f"{puzzle.id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_yaml(puzzle.to_document()), encoding="utf-8")
        out.append((path.relative_to(root).as_posix(), puzzle.core_dict()))
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _line(name: str, values: list[float], base: list[float]) -> str:
    med, p95 = statistics.median(values), _percentile(values, 0.95)
    bmed, bp95 = statistics.median(base), _percentile(base, 0.95)
    return (
        f"   {name:<6} n={len(values):<4} median {med * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"
        f"   | in-process baseline median {bmed * 1000:7.2f} ms p95 {bp95 * 1000:7.2f} ms"
        f"   | ratio median {med / bmed:6.1f}x p95 {p95 / bp95:6.1f}x"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, bundle = _night(Path(tmp))
        doc = yaml.safe_load((root / bundle).read_text(encoding="utf-8"))
        sources = [
            ({"path": bundle, "at": stage.slot.short}, stage.puzzle.core_dict())
            for stage in Bundle.from_dict(doc, bundle).stages
            if 27 <= len(parse(stage.puzzle.board)) <= 36
        ]
        sources = sources[:: max(1, len(sources) // MAX_STAGES)][:MAX_STAGES]  # every tier
        if not any(len(parse(p["board"])) == 36 for _, p in sources):
            if root == Path("generated"):  # never write into the real night: serve a copy
                shutil.copytree(root / Path(bundle).parent, Path(tmp) / Path(bundle).parent)
                if (root / STOCK_DIR).is_dir():  # a night drawn from the stock swaps from it
                    shutil.copytree(root / STOCK_DIR, Path(tmp) / STOCK_DIR)
                root = Path(tmp)
            sources += [({"path": rel}, p) for rel, p in _boards_36(root, EXTRA_36)]
        positions = []
        for where, p in sources:
            moves = game.parse_moves(";".join(p["solution"]))
            k = len(moves) // 3
            while k < len(moves) and moves[k].is_add:
                k += 1
            if k < len(moves):
                positions.append((where, parse(p["board"]), p["adds"], moves[:k], moves[k]))
        sizes = Counter(len(c) for _, c, _, _, _ in positions)
        print(
            f"   {bundle}: {len(positions)} positions; board cells: {dict(sorted(sizes.items()))}"
        )

        served = Background(root).__enter__()
        conn = http.client.HTTPConnection("127.0.0.1", int(served.url.rsplit(":", 1)[1]))

        def get(url: str) -> http.client.HTTPResponse:
            conn.request("GET", url)
            response = conn.getresponse()
            response.read()
            if response.status not in (200, 303):
                raise RuntimeError(f"{url}: HTTP {response.status}")
            return response

        move_t: list[float] = []
        move_base: list[float] = []
        hint_t: list[float] = []
        hint_base: list[float] = []
        try:
            for _ in range(ROUNDS):
                for where, cells, adds, played, nxt in positions:
                    assert isinstance(nxt, Move) and nxt.first is not None
                    state = {**where, "m": game.moves_text(played)}
                    start = time.perf_counter()
                    redirect = get(
                        "/act?" + urlencode({**state, "sel": nxt.first, "click": nxt.second})
                    )
                    get(redirect.getheader("location") or "")
                    move_t.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    game.replay(cells, adds, played).then(nxt)
                    move_base.append(time.perf_counter() - start)

                    start = time.perf_counter()
                    get("/stage?" + urlencode({**state, "note": "hint"}))
                    hint_t.append(time.perf_counter() - start)
                    pos = game.replay(cells, adds, played)
                    start = time.perf_counter()
                    solve(pos.cells, pos.adds_left, budget_nodes=HINT_BUDGET_NODES)
                    hint_base.append(time.perf_counter() - start)
        finally:
            conn.close()
            served.__exit__(None, None, None)
        print(_line("move", move_t, move_base))
        print(_line("hint", hint_t, hint_base))
        _swap_pages(root, bundle, doc)


def _swap_pages(root: Path, bundle: str, doc: dict[str, Any]) -> None:
    """GET /swap per Stage against `choose_replacement` in-process, and the old way's cost."""
    pool_dir = root / Path(bundle).parent / POOL_DIR
    if not pool_dir.is_dir():  # a night drawn from the stock: the page offers the nights' stock
        pool_dir = nights_folder(root / bundle) / STOCK_DIR
    if not pool_dir.is_dir():
        print("   swap page: skipped (the night has no pool/ and no stock beside it)")
        return
    print(f"   swap page: candidates from {pool_dir.relative_to(root).as_posix()}/")
    pool = load_puzzles([pool_dir])
    value = Bundle.from_dict(doc, bundle)
    stages = [s.data for s in value.stages]
    ats = [(s.slot.level, s.slot.stage) for s in value.stages][:MAX_STAGES]
    page_t: list[float] = []
    pure_t: list[float] = []
    old_t: list[float] = []
    with Background(root) as served:
        conn = http.client.HTTPConnection("127.0.0.1", int(served.url.rsplit(":", 1)[1]))
        try:
            for rnd in range(ROUNDS):
                for flat, (level, stage) in enumerate(ats):
                    start = time.perf_counter()
                    conn.request(
                        "GET", "/swap?" + urlencode({"path": bundle, "at": f"{level}.{stage}"})
                    )
                    response = conn.getresponse()
                    response.read()
                    page_t.append(time.perf_counter() - start)
                    if response.status != 200:
                        raise RuntimeError(f"/swap {level}.{stage}: HTTP {response.status}")
                    start = time.perf_counter()
                    try:
                        choose_replacement(stages, flat, pool, f"L{level}.S{stage}")
                    except SwapError:
                        pass
                    pure_t.append(time.perf_counter() - start)
                    if rnd or flat >= 10:
                        # the old way is slow: ten Stages once is enough to see it
                        continue
                    start = time.perf_counter()
                    try:
                        swap_stage(root / bundle, level, stage, pool, write=False)
                    except SwapError:
                        pass
                    old_t.append(time.perf_counter() - start)
        finally:
            conn.close()
    print(_line("swap page", page_t, pure_t))
    print(
        f"   (before choose_replacement the page ran swap_stage(write=False): median {statistics.median(old_t) * 1000:.1f} ms"
        f" per Stage in-process, {statistics.median(old_t) / statistics.median(page_t):.1f}x this whole page)"
    )
