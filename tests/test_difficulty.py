"""The difficulty block as a value (`pipeline.formats.difficulty.Difficulty`), and the one place
its `score` and `tier` keys are read (`pipeline.rating.versions.stored_score`/`stored_tier`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.difficulty import Difficulty
from pipeline.formats.puzzle import Puzzle
from pipeline.rating.tiers import tier_for
from tests import helpers

ROOT = Path(__file__).resolve().parent.parent

# Where `["score"]`, `["tier"]`, `.get("score")` or `.get("tier")` may appear, and why.
ALLOWED = {
    "pipeline/rating/versions.py": "the accessor: stored_score and stored_tier",
    "pipeline/formats/curves.py": "curve targets ({score: 42} / {tier: hard}), not difficulty blocks",
    "pipeline/schemas.py": "the schema's `tier` definition, not a difficulty block",
    "pipeline/schema_checks.py": "the schemas' checks generated ahead (`make schemas`), not a block",
}


def key_reads(source: str) -> list[tuple[int, str]]:
    """(line, text) of every read `x["score"]`, `x["tier"]`, `x.get("score")`, `x.get("tier")`
    (writing a block, as the rating and the benches do, is not reading it)."""
    return helpers.key_reads(source, ("score", "tier"))


def test_nothing_reads_a_difficulty_score_or_tier_outside_the_accessor() -> None:
    offenders = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        offenders += [
            f"{rel}:{line}: {text}" for line, text in key_reads(path.read_text(encoding="utf-8"))
        ]
    assert offenders == [], "read the score and tier through Difficulty:\n  " + "\n  ".join(
        offenders
    )


def test_the_scan_finds_each_form() -> None:
    source = 'a = d["score"]\nb = p["difficulty"]["tier"]\nc = d.get("score")\nd.get("tier", "?")\ne = d["min_adds"]\nd["score"] = 1\n'
    assert [line for line, _ in key_reads(source)] == [1, 2, 3, 4]


def test_a_block_read_once() -> None:
    block = {"version": 3, "tier": "hard", "score": 61.25, "min_adds": 1, "players": {}}
    d = Difficulty.from_dict(block)
    assert (d.tier, d.score, d.version) == ("hard", 61.25, 3)
    assert str(d) == "hard (score 61.25)" and d.score_text(1) == "61.2"
    assert eval(repr(d)) == d  # a pasteable repr
    assert d.data["min_adds"] == 1


def test_unsolvable_version_one_and_missing_blocks() -> None:
    assert Difficulty.from_dict({"tier": "unsolvable", "score": None}) == Difficulty(
        "unsolvable", None, 1
    )
    assert not Difficulty.from_dict({"tier": "unsolvable", "score": None}).solvable
    assert Difficulty.from_dict({"tier": "easy", "score": 3}).score == 3.0
    assert Difficulty.from_dict(None) == Difficulty("None", None, 1)
    assert Difficulty.from_dict({"tier": "easy", "score": True}).score is None  # a bool is no score


class _Halve:
    """A stand-in rating profile: half the stored score."""

    def score_of(self, difficulty: Difficulty) -> float | None:
        return None if difficulty.score is None else difficulty.score / 2

    def tier_for(self, score: float) -> str:  # a profile's tiers: here version 3's
        return tier_for(score, 3)


def test_a_profile_decides_the_score_in_one_place() -> None:
    d = Difficulty.from_dict({"version": 3, "tier": "hard", "score": 70.0})
    assert d.score_under() == 70.0 and d.tier_under() == "hard"
    assert d.score_under(_Halve()) == 35.0
    assert d.tier_under(_Halve()) == tier_for(35.0, 3)


@pytest.mark.parametrize("score", [12.5, 88.0])
def test_a_puzzle_reads_its_block_through_the_value(score: float) -> None:
    p = Puzzle(
        board="1928", adds=0, solution=(), difficulty={"tier": tier_for(score), "score": score}
    )
    assert p.rated.score == score and p.tier == tier_for(score)
