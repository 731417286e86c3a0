"""Writers racing on one bundle: many trials of concurrent swaps and a hand edit on one night. Every
writer that reports success has its edit on disk; every other one was refused in one line; the
puzzle a swap takes out is always in the bundle or in the pool.

`make test` runs a few trials; `make fuzz` runs NM_WRITER_TRIALS (default 100 there)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipeline.atomic import WriteRefused, snapshot, write_guarded
from pipeline.jobs.inputs import load_puzzles
from pipeline.jobs.swap import SwapError, commit_swap, swap_stage
from pipeline.validator import validate_paths
from tests.helpers import numbermatch_argv

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("NM_WRITER_TRIALS", "4"))
REFUSED = "changed on disk since it was read; nothing written"


def ids(bundle: Path) -> list[str]:
    doc = yaml.safe_load(bundle.read_text())
    return [s["puzzle"]["id"] for lv in doc["levels"] for s in lv["stages"]]


def _swap(bundle: Path, stage: int, start: Any, results: Any) -> None:
    pool = load_puzzles([bundle.parent / "pool"])
    try:
        result = swap_stage(bundle, 1, stage, pool, write=False)
        start.wait()
        commit_swap(result, bundle.parent / "pool")
        results.put((f"S{stage}", "ok", result.old_id, result.new.id))
    except SwapError as exc:
        results.put((f"S{stage}", str(exc), "", ""))


def _hand_edit(bundle: Path, start: Any, results: Any) -> None:
    base = snapshot(bundle)
    start.wait()
    try:
        write_guarded(bundle, base.text + "# checked by Ann\n", base=base)
        results.put(("hand", "ok", "", ""))
    except WriteRefused as exc:
        results.put(("hand", str(exc), "", ""))


def _check(bundle: Path, before: list[str], outcomes: dict[str, tuple[str, str, str]]) -> None:
    after = ids(bundle)
    pool = {p.stem for p in (bundle.parent / "pool").glob("*.yaml")}
    assert any(o[0] == "ok" for o in outcomes.values()), outcomes
    for who, (outcome, old, new) in outcomes.items():
        if who == "hand":
            assert (outcome == "ok") == bundle.read_text().endswith("# checked by Ann\n"), outcomes
        else:
            k = int(who[1:]) - 1
            if outcome == "ok":
                assert after[k] == new and old in pool, (who, outcomes)
            else:
                assert after[k] == before[k] and before[k] not in pool, (who, outcomes)
        if outcome != "ok":
            assert outcome.endswith(REFUSED) and "\n" not in outcome, outcome
    assert validate_paths([bundle]).ok


def test_swaps_and_a_hand_edit_racing_on_one_bundle(night_copy: Path, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    landed = refused = 0
    for trial in range(TRIALS):
        folder = tmp_path / f"t{trial}"
        shutil.copytree(night_copy / "2026-01-02", folder)
        bundle = folder / "bundle.yaml"
        before = ids(bundle)
        start = ctx.Barrier(3)
        results = ctx.Queue()
        procs = [
            ctx.Process(target=_swap, args=(bundle, 1, start, results)),
            ctx.Process(target=_swap, args=(bundle, 3, start, results)),
            ctx.Process(target=_hand_edit, args=(bundle, start, results)),
        ]
        for p in procs:
            p.start()
        got = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        _check(bundle, before, {who: (outcome, old, new) for who, outcome, old, new in got})
        landed += sum(o == "ok" for _, o, _, _ in got)
        refused += sum(o != "ok" for _, o, _, _ in got)
    print(
        f"\nwriters race: {TRIALS} trials of 3 writers: {landed} edits landed and on disk,"
        f" {refused} refused in one line, 0 lost"
    )


@pytest.mark.parametrize("trial", range(max(1, TRIALS // 4)))
def test_two_swap_commands_at_once_never_lose_a_stage(
    night_copy: Path, tmp_path: Path, trial: int
) -> None:
    """Two `swap` runs at once on different stages once both printed success and one stage was
    lost (3 of 3 trials)."""
    folder = tmp_path / "night"
    shutil.copytree(night_copy / "2026-01-02", folder)
    bundle = folder / "bundle.yaml"
    before = ids(bundle)
    procs = {
        stage: subprocess.Popen(
            numbermatch_argv() + ["swap", str(bundle), f"L1.S{stage}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for stage in (2, 4)
    }
    after_outputs = {stage: p.communicate(timeout=120) for stage, p in procs.items()}
    after = ids(bundle)
    for stage, (out, err) in after_outputs.items():
        k = stage - 1
        if procs[stage].returncode == 0:
            assert after[k] != before[k] and f"-> {after[k]}" in out, (stage, out, err)
        else:
            assert err.count("\n") == 1 and REFUSED in err, (stage, out, err)
            assert after[k] == before[k]
    assert validate_paths([bundle]).ok
