"""Publishing a night (`pipeline.jobs.publish`): the sweep, the lock and the staging folders touch
only what the job made."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pipeline.jobs.nightly import NightlyOptions, run_nightly
from pipeline.jobs.publish import make_staging, publish, sweep


def test_the_sweep_touches_only_what_the_job_made(tmp_path: Path) -> None:
    for name in (
        ".backup.tmp-2025",
        ".photos.old-2020",
        ".2026-03-02.tmp-abcdefgh",
        ".2026-03-02.old-77",
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "keep.txt").write_text("mine")
    ours = make_staging(tmp_path, "2026-03-02")
    sweep(tmp_path)
    assert not ours.exists()  # a staging folder this program made (exact name, marker inside)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [
        ".2026-03-02.old-77",
        ".2026-03-02.tmp-abcdefgh",
        ".backup.tmp-2025",
        ".photos.old-2020",
    ]
    assert all((tmp_path / name / "keep.txt").read_text() == "mine" for name in left)


def test_a_night_renamed_aside_by_a_killed_swap_is_recognised_by_its_marker(tmp_path: Path) -> None:
    night = tmp_path / "2026-03-02"
    night.mkdir()
    (night / "bundle.yaml").write_text("old night\n")
    staging = make_staging(tmp_path, "2026-03-02")
    (staging / "bundle.yaml").write_text("new night\n")
    publish(staging, night)
    assert (night / "bundle.yaml").read_text() == "new night\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2026-03-02"]
    assert sorted(p.name for p in night.iterdir()) == ["bundle.yaml"]  # no marker left in the night


def test_a_nightly_run_leaves_foreign_hidden_folders_alone(tmp_path: Path) -> None:
    for name in (".backup.tmp-2025", ".photos.old-2020"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a-file").write_text("precious")
    run_nightly(
        NightlyOptions(
            date=dt.date(2026, 3, 2), seed=20260302, levels=1, stages=2, out=tmp_path, jobs=1
        )
    )
    for name in (".backup.tmp-2025", ".photos.old-2020"):
        assert (tmp_path / name / "a-file").read_text() == "precious"
    assert not (tmp_path / "backup").exists() and not (tmp_path / "photos").exists()
