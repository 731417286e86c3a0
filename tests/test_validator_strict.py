"""The validator is never fooled: floats as integers, octal and tagged YAML, huge integers,
duplicate puzzles, metrics that do not add up; and no module reads YAML around the one loader.
(How `assemble` reads the same YAML is in test_assembler.py; the schema's patterns in
test_validator_schema.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from pipeline.formats.puzzle import puzzle_id
from pipeline.validator import validate_paths, validate_texts
from tests.helpers import codes, edited

ROOT = Path(__file__).resolve().parent.parent

VALID = Path(__file__).parent / "fixtures" / "validator" / "valid"
PUZZLE = (VALID / "puzzle.yaml").read_text(encoding="utf-8")
BUNDLE = (VALID / "bundle.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "old,new",
    [
        ("schema_version: 1", "schema_version: 1.0"),
        ("ruleset: 1", "ruleset: 1.0"),
        ("      playouts: 16", "      playouts: 16.0"),
        ("  certificate_length: 14", "  certificate_length: 14.0"),
    ],
)
def test_whole_number_floats_are_not_integers(old: str, new: str) -> None:
    assert "NM205" in codes(edited(PUZZLE, old, new))


def test_adds_as_a_float_with_its_own_id_is_refused() -> None:
    board = "719473731/547335153"
    text = edited(
        edited(PUZZLE, "adds: 1", "adds: 1.0"),
        "id: nm1-ad6b87a055dd",
        f"id: {puzzle_id(board, 1.0)}",
    )  # type: ignore[arg-type]
    assert "NM205" in codes(text)


@pytest.mark.parametrize("written", ["010", "0_1", "1_", "0b1", "0x1", "+1", "01", "1:30"])
def test_whole_numbers_are_plain_decimal_digits(written: str) -> None:
    """YAML 1.1 reads `010` as 8 (and `0_1`, `0x1`, `+1`, `1:30` as numbers), YAML 1.2 as
    10 or a string; a file whose numbers two readers read differently is refused."""
    problems = validate_texts([("p.yaml", edited(PUZZLE, "adds: 1", f"adds: {written}"))]).problems
    assert [(p.code, p.path, p.line) for p in problems] == [("NM205", "$.adds", 7)], problems
    assert "is not a plain whole number" in problems[0].message
    assert "NM205" in codes(edited(BUNDLE, "- level: 1", "- level: 01"))
    assert "NM205" in codes(edited(PUZZLE, "score:", "score: 1_0.5\n  #"))


def test_an_octal_adds_with_the_id_made_for_8_adds_is_refused() -> None:
    board = "719473731/547335153"
    text = edited(
        edited(PUZZLE, "adds: 1", "adds: 010"), "id: nm1-ad6b87a055dd", f"id: {puzzle_id(board, 8)}"
    )
    assert "NM205" in codes(text)


def test_level_and_stage_numbers_must_be_integers() -> None:
    assert "NM205" in codes(edited(BUNDLE, "- level: 1", "- level: 1.0"))
    assert "NM205" in codes(edited(BUNDLE, "  - stage: 1", "  - stage: 1.0"))


def test_one_puzzle_twice_in_a_bundle_under_a_float_adds_is_refused() -> None:
    doc = yaml.safe_load(BUNDLE)
    first = doc["levels"][0]["stages"][0]["puzzle"]
    twin = dict(first, adds=1.0, id=puzzle_id(first["board"], 1.0))  # type: ignore[arg-type]
    doc["levels"][0]["stages"][1]["puzzle"] = twin
    assert "NM205" in codes(yaml.safe_dump(doc, sort_keys=False))


@pytest.mark.parametrize(
    "tagged",
    [
        "kind: !!timestamp puzzle",
        "kind: !!str puzzle",
        "kind: !!bool puzzle",
        "adds: !!int abc",
        "adds: !!float abc",
        "adds: !!int 1",
        "kind: ! puzzle",
    ],
)
def test_explicit_tags_are_refused_as_documented(tagged: str) -> None:
    key = tagged.split(":")[0]
    line = next(line for line in PUZZLE.splitlines() if line.startswith(key + ":"))
    assert codes(edited(PUZZLE, line, tagged)) == ["NM109"]


def test_min_adds_above_the_certificates_adds_is_refused() -> None:
    text = edited(
        edited(PUZZLE, "adds: 1", "adds: 3"),
        "id: nm1-ad6b87a055dd",
        f"id: {puzzle_id('719473731/547335153', 3)}",
    )
    text = edited(text, "min_adds: 1", "min_adds: 2")  # the solution uses one add: it wins with 1
    assert "NM311" in codes(text)


def test_certificate_length_must_be_the_solutions_length() -> None:
    text = edited(PUZZLE, "certificate_length: 14", "certificate_length: 15")
    assert "NM314" in codes(text)
    report = validate_paths([VALID / "puzzle.yaml"], deep=True)
    assert report.ok  # the check is in the plain layer; --deep adds nothing to disagree with


def test_player_counts_must_be_whole_games() -> None:
    text = edited(
        PUZZLE,
        "      win_rate: 0.125\n      mean_moves: 11.12\n      playouts: 16",
        "      win_rate: 0.11\n      mean_moves: 11.12\n      playouts: 0",
    )
    assert "NM315" in codes(text)
    assert "NM315" in codes(edited(PUZZLE, "win_rate: 0.125", "win_rate: 0.13"))  # 2.08 of 16 games


def test_huge_integers_are_one_problem_each() -> None:
    assert "NM112" in codes(edited(PUZZLE, "seed: 7", "seed: " + "9" * 5000))
    assert "NM112" in codes(edited(PUZZLE, "seed: 7", "seed: 0x" + "f" * 5000))
    assert "NM305" in codes(edited(PUZZLE, "- 0,4-1,4", "- " + "1" * 5000 + ",4-1,4"))


# --- the one YAML reader -------------------------------------------------------------------

# Modules that parse YAML without `pipeline.formats.loader`, and why that is no level-file read
# the loader should make (anything else found by the scan below fails the test).
YAML_READS_ALLOWED = {
    "pipeline/formats/loader.py": "the loader itself",
    "pipeline/formats/index.py": "the level index's bulk scan (a hint of what a file holds: every"
    " file it lists is read by the loader when used, and `validate` refuses duplicate keys)",
    "pipeline/formats/curves.py": "the built-in curves, package data, not a level file",
    "pipeline/telemetry/rescore.py": "the round-trip check of its own edit against its own dump",
    "pipeline/bench/bench_validator.py": "the baseline: a plain C-loader read of the same files",
    "pipeline/bench/bench_stock.py": "the baseline: a plain C-loader read of the same files",
    "pipeline/bench/bench_studio.py": "reads the bench's own night to pick its requests",
}
_YAML_READERS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all"}
_YAML_READERS |= {"compose", "compose_all", "parse", "scan"}


def yaml_reads(source: str) -> list[int]:
    """Lines of `source` that parse YAML: a call of yaml's readers, or a yaml Loader named."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id == "yaml"
                and node.func.attr in _YAML_READERS
            ):
                found.append(node.lineno)
        elif (
            isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("yaml")
            and any(a.name.endswith("Loader") or a.name in _YAML_READERS for a in node.names)
        ):
            found.append(node.lineno)
    return found


def test_every_yaml_read_goes_through_the_loader() -> None:
    """formats/loader.py is the one reader of level files (a size cap, duplicate keys refused,
    numbers as every YAML reader reads them): no other module parses YAML unless it says why."""
    found = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in YAML_READS_ALLOWED:
            found += [f"{rel}:{line}" for line in yaml_reads(path.read_text(encoding="utf-8"))]
    assert found == [], "read YAML through pipeline.formats.loader: " + ", ".join(found)


def test_the_scan_sees_yaml_reads() -> None:
    source = (
        "import yaml\nfrom yaml import CSafeLoader as L\nyaml.load(t, Loader=L)\n"
        "yaml.safe_dump(x)\nyaml.safe_load(t)\n"
    )
    assert yaml_reads(source) == [2, 3, 5]
