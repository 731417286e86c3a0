"""`explain`: a rating's parts come from the same weights as the score, name what decides the
tier, and say it in one line; `rate --explain` prints it as text and JSON."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pipeline.rating.explain import Explanation, explain
from pipeline.rating.score import rate
from pipeline.rating.tiers import TIERS_BY_VERSION
from pipeline.rating.versions import weights_for
from tests.helpers import run

BOARDS = [
    ("4.......3/1.......9/.6......7", 0),
    ("325288874/281771854/261119174/71948894", 2),
    ("123456789/98765", 1),
    ("869497867/619968143/932951221/81545236", 1),
]


@pytest.fixture(scope="module")
def rated() -> list[dict]:
    return [rate(board, adds, playouts=24).to_dict() for board, adds in BOARDS]


def test_points_add_up_to_the_score(rated) -> None:
    for d in rated:
        e = explain(d)
        assert isinstance(e, Explanation)
        assert [p.name for p in e.parts] == list(weights_for(d))
        assert sum(p.points for p in e.parts) == pytest.approx(d["score"], abs=0.01)
        assert all(p.weight == weights_for(d)[p.name] for p in e.parts)
        assert e.tier == d["tier"] and e.score == d["score"]


def test_deciding_metrics_reach_the_tier_floor(rated) -> None:
    for d in rated:
        e = explain(d)
        low, high = next((lo, hi) for name, lo, hi in TIERS_BY_VERSION[e.version] if name == e.tier)
        assert e.decide, d
        up = sum(p.points for p in e.parts if p.name in e.decide)
        if low > 0:
            assert up >= low
        if high < 100:  # giving the deciding metrics full points passes the ceiling
            spare = sum(100 * p.weight - p.points for p in e.parts if p.name in e.decide)
            assert e.score + spare >= high


def test_summary_names_the_tier_and_a_metric(rated) -> None:
    for d in rated:
        e = explain(d)
        assert e.summary.lower().startswith(e.tier)
        assert "\n" not in e.summary
        assert e.summary in str(e)


def test_value_is_frozen_and_json_ready(rated) -> None:
    e = explain(rated[1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.tier = "easy"  # type: ignore[misc]
    d = json.loads(json.dumps(e.to_dict()))
    assert set(d) == {"tier", "score", "version", "metrics", "decide", "summary"}
    assert {m["name"] for m in d["metrics"]} == set(weights_for(rated[1]))


def test_unsolvable_and_bad_blocks() -> None:
    e = explain(rate("12", 0, playouts=4).to_dict())
    assert e.tier == "unsolvable" and e.score is None and e.decide == ()
    with pytest.raises(ValueError, match="rating version"):
        explain({"version": 99, "tier": "easy", "score": 1.0, "players": {}})
    with pytest.raises(ValueError, match="lacks"):
        explain({"tier": "easy", "score": 1.0, "players": {}})


def test_rate_explain_text_and_json() -> None:
    board, adds = BOARDS[2]
    out = run(*["rate", board, "--adds", str(adds), "--playouts", "16", "--explain"])
    assert out.exit_code == 0, out.output
    assert "decides the tier" in out.output and "points" in out.output
    out = run(*["rate", board, "--adds", str(adds), "--playouts", "16", "--explain", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["explain"]["tier"] == doc["tier"]
    assert sum(m["points"] for m in doc["explain"]["metrics"]) == pytest.approx(
        doc["score"], abs=0.05
    )
    out = run(*["rate", "12x", "--explain"])
    assert out.exit_code == 1 and "Traceback" not in out.output


def _named(e: Explanation) -> set[str]:
    """The metrics the summary names (a player as `the NAME player`, another metric by its label)."""
    return {p.name for p in e.parts if f"the {p.name} player" in e.summary or p.label in e.summary}


def test_summary_names_exactly_the_metrics_that_decide_the_tier(rated) -> None:
    committed = [dict(b) for b in _committed_blocks()]
    for d in rated + committed:
        e = explain(d)
        if e.tier != "unsolvable":
            assert _named(e) == set(e.decide), (e.summary, e.decide)


def test_an_easy_tier_decided_by_the_random_player_says_so() -> None:
    """Random decides easy (the table's mark) while lookahead and opener win every game and
    score 0 points; the sentence named those two. Players are named as the tables name them."""
    d = {
        "version": 3,
        "tier": "easy",
        "score": 14.68,
        "min_adds": 1,
        "players": {
            "random": {"win_rate": 0.8101},
            "scanner": {"win_rate": 0.875},
            "lookahead": {"win_rate": 1.0},
            "opener": {"win_rate": 1.0},
            "local": {"win_rate": 0.8164},
            "planner": {"win_rate": 1.0},
            "proximity": {"win_rate": 1.0},
        },
    }
    e = explain(d)
    assert e.decide == ("random",)
    assert e.summary == "Easy because the random player wins 81% of games."
    assert "lookahead" not in e.summary and "opener" not in e.summary


def _committed_blocks() -> list[dict]:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    return [
        yaml.safe_load(p.read_text())["difficulty"]
        for p in sorted(root.glob("generated/**/nm*-*.yaml"))[:40]
    ]


def test_the_report_and_the_studio_show_the_same_sentence() -> None:
    """One sentence everywhere: the CLI prints `explain().summary`, report.html and the
    studio's cards show the very same text for the same stage."""
    from html import escape
    from pathlib import Path

    import yaml

    from pipeline.jobs.report_html import render_report_html
    from pipeline.studio.app import explained

    root = Path(__file__).resolve().parent.parent
    doc = yaml.safe_load(
        sorted(root.glob("generated/*/bundle.yaml"))[-1].read_text(encoding="utf-8")
    )
    html = render_report_html(doc)
    for level in doc["levels"][:2]:
        for stage in level["stages"]:
            summary = explain(stage["puzzle"]["difficulty"]).summary
            assert f'<p class="summary">{escape(summary)}</p>' in html
            assert explained(stage["puzzle"]["difficulty"]).summary == summary


def test_each_player_has_one_name_in_sentences_and_tables() -> None:
    """A sentence calls a player by the name the tables give it (`the local player`), never by
    a description; the description is the table's, once."""
    from pipeline.rating.versions import LABELS, WEIGHTS_V3

    for name in WEIGHTS_V3:
        d = {
            "version": 3,
            "tier": "expert",
            "score": 100.0,
            "min_adds": 0,
            "players": {n: {"win_rate": 0.0 if n == name else 1.0} for n in WEIGHTS_V3},
        }
        part = next(p for p in explain(d).parts if p.name == name)
        from pipeline.rating.explain import _phrase

        assert _phrase(part) == f"the {name} player loses every game"
        assert name not in LABELS[name] or name == "random"  # a description, not a second name
