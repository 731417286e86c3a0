"""The bundle document as a value (`pipeline.formats.bundle`): parsed once by `Bundle.from_dict`,
walked by every reader instead of the document's `levels` and `stages`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.formats.bundle import Bundle, BundleError, Stage
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.slot import Slot
from tests import helpers

ROOT = Path(__file__).resolve().parent.parent
NIGHTS = sorted((ROOT / "generated").glob("*/bundle.yaml"))

# Where a document's `levels`/`stages` may be indexed, and why: a whole file, or one expression.
ALLOWED = {
    "pipeline/formats/bundle.py": "the parser: Bundle.from_dict",
    "pipeline/validator/semantics.py": "checks documents the schema may have found malformed and"
    " reports each problem at its JSON path, so it walks what is there, not a value",
    "pipeline/formats/curves.py": "curve files: a curve's levels/stages, not a bundle",
    "pipeline/schema_checks.py": "the schemas' checks generated ahead (`make schemas`): the schema"
    " walks the document it checks",
    "pipeline/telemetry/observed.py": "the observed-difficulty report's own rows, not a bundle",
    "pipeline/bench/bench_stock.py": "the baseline measures a raw C-loader read of every file;"
    " a value would change what it measures",
}
ALLOWED_EXPRESSIONS = {
    (
        "pipeline/jobs/nightly/options.py",
        "settings.get('levels')",
    ): "the nightly's settings: a count, not a bundle",
    (
        "pipeline/jobs/nightly/options.py",
        "settings.get('stages')",
    ): "the nightly's settings: a count, not a bundle",
}


def key_reads(source: str) -> list[tuple[int, str]]:
    """(line, text) of every read `x["levels"]`, `x["stages"]`, `x.get("levels")`, `x.get("stages")`."""
    return helpers.key_reads(source, ("levels", "stages"))


def test_nothing_walks_a_bundle_document_outside_the_value() -> None:
    offenders = []
    for path in sorted([*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "research").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        offenders += [
            f"{rel}:{line}: {text}"
            for line, text in key_reads(path.read_text(encoding="utf-8"))
            if (rel, text) not in ALLOWED_EXPRESSIONS
        ]
    assert offenders == [], (
        "walk a bundle through pipeline.formats.bundle.Bundle:\n  " + "\n  ".join(offenders)
    )
    stale = [rel for rel in ALLOWED if not key_reads((ROOT / rel).read_text(encoding="utf-8"))]
    assert stale == [], f"allowed but no longer needed: {stale}"


def test_the_scan_finds_each_form() -> None:
    source = 'a = d["levels"]\nb = lv["stages"][0]\nc = d.get("levels")\nd.get("stages", [])\ne = d["level"]\nd["levels"] = 1\n'
    assert sorted(line for line, _ in key_reads(source)) == [1, 2, 3, 4]


@pytest.mark.parametrize("path", NIGHTS, ids=lambda p: p.parent.name)
def test_the_committed_nights_read_as_values(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    bundle = Bundle.from_dict(doc, str(path))
    assert bundle.id == doc["id"] and bundle.ruleset == doc["ruleset"]
    assert bundle.first_level == doc.get("first_level", 1)
    assert len(bundle.levels) == len(doc["levels"])
    for level, raw_level in zip(bundle.levels, doc["levels"]):
        assert [s.data for s in level] == raw_level["stages"]
        for stage, raw in zip(level, raw_level["stages"]):
            # the round trip: the value gives back the stored stage, field by field
            assert stage.slot == Slot(raw_level["level"], raw["stage"])
            assert stage.target_score == raw["target_score"]
            assert stage.puzzle.core_dict() == raw["puzzle"]
            assert stage.puzzle.id == raw["puzzle"]["id"]
            assert bundle.stage(stage.slot) is stage
            here = doc["levels"][stage.level_index]["stages"][stage.stage_index]
            assert here is stage.data
    assert bundle.stage(Slot(bundle.first_level + len(bundle.levels), 1)) is None


def _doc(**extra: object) -> dict:
    puzzle = Puzzle("123456789/98765", 1, ("+",), {"tier": "easy", "score": 8.5}).core_dict()
    doc = {
        "kind": "bundle",
        "id": "b",
        "ruleset": 1,
        "levels": [{"level": 3, "stages": [{"stage": 1, "target_score": 8, "puzzle": puzzle}]}],
    }
    doc.update(extra)
    return doc


def test_text_form_and_a_pasteable_repr() -> None:
    bundle = Bundle.from_dict(_doc(first_level=3))
    stage = bundle.stages[0]
    assert str(stage) == f"L3.S1 {stage.puzzle.id} (target 8)"
    assert str(bundle) == "b: Levels 3-3, 1 Stages"
    assert stage.path == "$.levels[0].stages[0]"
    assert stage.target_score == 8.0 and isinstance(stage.target_score, float)
    assert eval(repr(stage), {"Stage": Stage, "Slot": Slot, "Puzzle": Puzzle}) == stage
    assert (
        eval(repr(bundle), {"Bundle": Bundle, "Stage": Stage, "Slot": Slot, "Puzzle": Puzzle})
        == bundle
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "puzzle"}, "in.yaml: is not a bundle (kind 'puzzle')"),
        (["not", "a", "mapping"], "in.yaml: is not a bundle (kind None)"),
        ({"kind": "bundle", "levels": {}}, "in.yaml: $.levels: expected a list of Levels"),
        (
            {"kind": "bundle", "levels": [{"level": 1}]},
            "in.yaml: $.levels[0].stages: expected a list of stages",
        ),
        (
            {"kind": "bundle", "levels": [{"stages": ["x"]}]},
            "in.yaml: $.levels[0].stages[0]: expected a stage mapping",
        ),
        (
            {"kind": "bundle", "levels": [{"stages": [{"stage": 1}]}]},
            "in.yaml: $.levels[0].stages[0].puzzle: expected a puzzle mapping",
        ),
        (
            {"kind": "bundle", "levels": [{"stages": [{"puzzle": {"adds": 1}}]}]},
            "in.yaml: $.levels[0].stages[0].puzzle.board: expected board notation (a string), found nothing",
        ),
        (
            {"kind": "bundle", "levels": [{"stages": [{"puzzle": {"board": "12", "adds": "2"}}]}]},
            "in.yaml: $.levels[0].stages[0].puzzle.adds: expected a whole number 0 or more, found str '2'",
        ),
        (
            {
                "kind": "bundle",
                "levels": [{"stages": [{"puzzle": {"board": "12", "adds": 1, "solution": 3}}]}],
            },
            "in.yaml: $.levels[0].stages[0].puzzle: expected a solution list and a difficulty mapping",
        ),
    ],
)
def test_a_malformed_document_is_one_error_naming_the_place(doc: object, message: str) -> None:
    with pytest.raises(BundleError) as caught:
        Bundle.from_dict(doc, "in.yaml")
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_first_level_numbers_the_levels() -> None:
    bundle = Bundle.from_dict(_doc(first_level=3))
    assert bundle.stages[0].slot == Slot(3, 1) and list(bundle.level_numbers) == [3]
    assert Bundle.from_dict(_doc()).stages[0].slot == Slot(1, 1)  # absent: Level 1
    assert Bundle.from_dict(_doc(first_level=True)).first_level == 1  # a bool is no number


def test_locate_names_the_levels_and_stages_there_are() -> None:
    bundle = Bundle.from_dict(_doc(first_level=3))
    assert bundle.locate(Slot(3, 1), "b.yaml") is bundle.stages[0]
    for slot, message in [
        (Slot(1, 1), "b.yaml: has Levels 3-3; there is no L1"),
        (Slot(3, 2), "b.yaml: Level 3 has Stages 1-1; there is no S2"),
    ]:
        with pytest.raises(BundleError, match=message.replace(".", r"\.")):
            bundle.locate(slot, "b.yaml")
    with pytest.raises(BundleError, match=r"b\.yaml: the bundle has no Levels"):
        Bundle.from_dict(_doc(levels=[])).locate(Slot(1, 1), "b.yaml")
