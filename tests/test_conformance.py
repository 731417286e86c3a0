"""The conformance kit (pipeline/conformance): every rule of docs/rules.md has cases, the suite
exports byte for byte, the reference and the JavaScript example conform, each deliberately wrong
engine is found and shrunk small, and a hostile engine gets one line, never a traceback."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.conformance import SUITE_VERSION, report
from pipeline.conformance.cases import build, by_kind
from pipeline.conformance.check import check
from pipeline.conformance.engine import CommandEngine, EngineError, ReferenceEngine
from pipeline.conformance.export import SuiteError, export, read_suite, render
from pipeline.conformance.protocol import answer, answer_line, divergence
from pipeline.conformance.rule_ids import RULES
from pipeline.conformance.shrink import Scenario, shrink
from tests.conformance_variants import VARIANTS
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "conformance"
REFERENCE = f"{sys.executable} -m pipeline.conformance.reference"
JS_ENGINE = ROOT / "examples" / "conformance-js" / "engine.mjs"
CASES = build()


def _bullets(page: str) -> list[str]:
    """The bullets and numbered items of a Markdown page outside code blocks, each with its
    continuation lines joined, whitespace collapsed."""
    items: list[list[str]] = []
    fenced = open_item = False
    for line in page.splitlines():
        if line.startswith("```"):
            fenced, open_item = not fenced, False
        elif fenced or not line.strip():
            open_item = False
        elif re.match(r"\s*(?:-|\d+\.) ", line):
            items.append([line])
            open_item = True
        elif open_item and line.startswith(" "):
            items[-1].append(line)
    return [" ".join(" ".join(item).split()) for item in items]


# --- the rules and the suite ----------------------------------------------------------------


def test_every_rule_of_the_rules_page_has_an_id_and_a_case() -> None:
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    flat = " ".join(page.split())
    for rule, phrase in RULES.items():
        assert phrase in flat, f"{rule}: {phrase!r} is no longer on docs/rules.md"
    bullets = _bullets(page)
    assert len(bullets) >= 20
    for item in bullets:
        ids = [rule for rule, phrase in RULES.items() if phrase in item]
        assert len(ids) == 1, (
            f"docs/rules.md bullet {item[:70]!r} has rule ids {ids}: give it exactly one in "
            "pipeline/conformance/rule_ids.py and a case in pipeline/conformance/cases.py"
        )
    covered = {rule for case in CASES for rule in case.rules}
    assert set(RULES) - covered == set(), "rules without a case"
    assert covered - set(RULES) == set(), "cases naming rules docs/rules.md does not have"


def test_the_suite_covers_the_engine_tests_edges_and_a_seeded_random_set() -> None:
    edges = {c.source["edge"] for c in CASES if c.source["type"] == "edge"}
    for edge in (
        "short last row emptied (collapse of the last row)",
        "collapse changes vertical alignment (a pair across a collapsed row)",
        "row end to next row start through gaps",
        "add fills last row then starts new rows",
        "empty board",
    ):
        assert edge in edges
    seeds = {c.source["seed"] for c in CASES if c.source["type"] == "random"}
    assert len(seeds) >= 60
    kinds = by_kind(CASES)
    assert all(kinds[k] for k in kinds), "every kind of case is in the suite"
    assert len({c.id for c in CASES}) == len(CASES)


def test_every_expected_answer_is_the_reference_answer_without_prose() -> None:
    for case in CASES:
        got = answer(case.request)
        assert divergence(case.expect, got) is None, case.id
        assert "message" not in case.expect


def test_stage_cases_replay_a_certificate_with_the_fewest_adds() -> None:
    stages = [c for c in CASES if c.kind == "stage" and c.data.get("verdict") == "solved"]
    assert len(stages) >= 10
    for c in stages:
        certificate = c.data["certificate"]
        assert certificate.count("+") == c.data["fewest_adds"] and c.request["moves"] == certificate
        if c.request["adds"] == c.data["fewest_adds"]:
            assert c.expect == {"board": "", "adds_left": 0, "status": "won"}
        else:  # one add fewer: the certificate's last add is refused
            last_add = max(k for k, m in enumerate(certificate, 1) if m == "+")
            assert c.expect == {"error": "no-adds", "move": last_add}


def test_export_is_byte_identical_and_reads_back(tmp_path: Path) -> None:
    assert render() == render()
    written = export(tmp_path)
    assert [p.name for p in written][-1] == "suite.json"
    version, ruleset, cases = read_suite(tmp_path)
    assert (version, ruleset) == (SUITE_VERSION, 1)
    in_files = [c for group in by_kind(CASES).values() for c in group]
    assert [c.to_json() for c in cases] == [c.to_json() for c in in_files]
    head = json.loads((tmp_path / "ruleset-1" / "suite.json").read_text())
    assert set(head["rules"]) == set(RULES)
    assert sum(f["cases"] for f in head["files"]) == len(CASES)


def test_the_committed_suite_is_current() -> None:
    for name, data in render().items():
        path = COMMITTED / "ruleset-1" / name
        assert path.is_file() and path.read_bytes() == data, (
            f"{path.relative_to(ROOT)} is out of date: run"
            " `numbermatch conformance export --out conformance` and review the diff"
        )


def test_every_case_line_is_valid_against_the_schema() -> None:
    import jsonschema

    schema = json.loads((ROOT / "schemas" / "conformance-case.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for case in CASES:
        errors = list(validator.iter_errors(case.to_json()))
        assert errors == [], (case.id, errors[0].message)
    broken = CASES[0].to_json() | {"kind": "bogus"}
    assert list(validator.iter_errors(broken))


def test_a_broken_suite_file_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    export(tmp_path)
    pairs = tmp_path / "ruleset-1" / "pairs.jsonl"
    lines = pairs.read_text().splitlines()
    lines[2] = lines[2].replace('"op":"pairs"', '"op":"fly"')
    pairs.write_text("\n".join(lines) + "\n")
    with pytest.raises(SuiteError, match=r"pairs\.jsonl:3: \['request'\]\['op'\]"):
        read_suite(tmp_path / "ruleset-1")
    pairs.write_text("{not json\n")
    with pytest.raises(SuiteError, match=r"pairs\.jsonl:1: not JSON"):
        read_suite(tmp_path)
    result = run("conformance", "check", "--engine", REFERENCE, "--suite", str(tmp_path))
    assert result.exit_code == 1 and "pairs.jsonl:1: not JSON" in result.stderr
    assert "Traceback" not in result.output


# --- the protocol and the reference ---------------------------------------------------------


def test_divergence_takes_pairs_in_any_order_and_names_what_differs() -> None:
    want = {"pairs": ["0,0-0,1", "1,0-1,8"]}
    assert divergence(want, {"pairs": ["1,8-1,0", "0,0-0,1"]}) is None
    assert divergence(want, {"pairs": ["0,0-0,1"]}) == "pairs missing 1,0-1,8"
    assert divergence(want, {"pairs": [*want["pairs"], "0,0-0,1"]}) == (
        "a pair is listed more than once"
    )
    assert "not a pair" in (divergence(want, {"pairs": ["x"]}) or "")
    assert divergence({"error": "values"}, {"error": "values", "message": "any"}) is None
    assert divergence({"error": "no-adds", "move": 2}, {"error": "no-adds", "move": 1})
    assert divergence({"active": 1}, {"active": True})  # JSON true is not 1
    assert divergence({"board": ""}, [1]) == "the answer is not a JSON object"


def test_the_reference_server_answers_garbage_with_bad_request() -> None:
    lines = [
        "not json",
        "[" * 100_000,
        "[1]",
        '{"op": "fly", "board": "19"}',
        '{"op": "pairs", "board": 19}',
        '{"op": "count", "board": "19", "adds": 1, "depth": 9}',
        '{"op": "replay", "board": "19", "adds": 0, "moves": "0,0-0,1"}',
        "",
        '{"op": "pairs", "board": "19"}',
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.conformance.reference"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("error") for a in answers] == ["bad-request"] * 7 + [None]
    assert answers[-1] == {"pairs": ["0,0-0,1"]}
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(answer_line('{"op": "pairs", "board": "19", "ruleset": true}')) == {
        "error": "unknown-ruleset",
        "message": "this engine implements ruleset 1 only",
    }


def test_serve_is_the_reference_behind_the_cli() -> None:
    result = run("conformance", "serve", input='{"op": "add", "board": "1.1"}\n')
    assert result.exit_code == 0 and json.loads(result.stdout) == {"board": "1.111"}


@pytest.mark.slow
def test_check_against_the_reference_reports_no_divergence(tmp_path: Path) -> None:
    junit = tmp_path / "conformance.xml"
    result = run(
        "conformance",
        "check",
        "--engine",
        REFERENCE,
        "--search-boards",
        "40",
        "--junit",
        str(junit),
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(
        f"conforms: 0 of {len(CASES)} cases failed, 0 divergences in the search\n"
    )
    assert "FAIL" not in result.stdout and "search (seed 1): 40 random positions" in result.stdout
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0" and int(root.get("tests") or 0) == len(CASES) + 1


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_both_backends_of_the_engine_conform(backend: str) -> None:
    from pipeline.engine.backend import core, why_pure

    if backend == "compiled" and core is None:
        pytest.skip(f"the compiled core is not in use: {why_pure}")
    result = run(
        "conformance", "check", "--engine", f"{REFERENCE} {backend}", "--search-boards", "40"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("0 divergences in the search\n")


def test_serve_refuses_a_backend_it_cannot_give() -> None:
    result = run("conformance", "serve", "--backend", "fortran")
    assert result.exit_code == 1 and "unknown backend 'fortran'" in result.stderr


@pytest.mark.slow
def test_the_javascript_example_conforms() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the JavaScript example cannot run")
    result = run(
        "conformance", "check", "--engine", f"{node} {JS_ENGINE}", "--search-boards", "60", "--json"
    )
    assert result.exit_code == 0, result.output
    report_json = json.loads(result.stdout)
    assert report_json["ok"] and report_json["failed"] == 0
    assert report_json["search"]["divergences"] == 0 and report_json["search"]["positions"] == 60


# --- wrong engines --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_wrong_engine_is_found_and_shrunk_to_a_few_cells(name: str) -> None:
    result = check(
        ReferenceEngine(VARIANTS[name], name), CASES, suite=SUITE_VERSION, ruleset=1, boards=30
    )
    assert not result.ok and result.first
    for d in result.first.values():
        assert d.shrunk is not None, d.kind
        small = d.shrunk.to_json()
        assert int(str(small["cells"])) <= 18, (name, small)
        moves = small["moves"]
        assert isinstance(moves, list) and len(moves) <= 4, (name, small)
        assert divergence(d.shrunk.expected, d.shrunk.got) is not None
    failing = {g for g, (_, failed) in result.groups().items() if failed}
    expected_rule = {
        "no-row-end": "pair.reading-order",
        "no-collapse": "remove.collapse",
        "diagonal-through-active": "pair.diagonal",
        "add-fills-gaps": "add.no-fill",
    }[name]
    assert expected_rule in failing


def test_shrinking_is_deterministic_and_keeps_the_divergence() -> None:
    engine = ReferenceEngine(VARIANTS["no-collapse"])
    start = Scenario.of(
        {"op": "remove", "ruleset": 1, "board": "5.......5/123456789/1", "pair": "0,0-0,8"}
    )
    assert start is not None
    first, second = shrink(engine, start), shrink(engine, start)
    assert first is not None and first == second
    assert first.scenario.size() < start.size()
    assert shrink(ReferenceEngine(), start) is None  # the right engine shows nothing to shrink


@pytest.mark.slow
def test_a_wrong_engine_command_gets_a_report_json_and_junit(tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    engine = f"{sys.executable} -m tests.conformance_variants no-row-end"
    result = run(
        "conformance",
        "check",
        "--engine",
        engine,
        "--search-boards",
        "5",
        "--json",
        "--junit",
        str(junit),
    )
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert not doc["ok"] and doc["rules"]["pair.reading-order"]["failed"] > 0
    first = {d["kind"]: d for d in doc["first_divergences"]}
    assert first["pairs"]["shrunk"]["cells"] <= 18
    root = ET.parse(junit).getroot()
    assert int(root.get("failures") or 0) == doc["failed"]
    failures = root.findall(".//testsuite[@name='pair.reading-order']/testcase/failure")
    assert failures and "expected" in (failures[0].text or "")
    text = run("conformance", "check", "--engine", engine, "--search-boards", "5")
    again = run("conformance", "check", "--engine", engine, "--search-boards", "5")
    assert text.stdout == again.stdout and "DOES NOT CONFORM" in text.stdout
    assert "shrunk to ........1 (9 cells, 1 number, 0 moves)" in text.stdout


# --- hostile engines ------------------------------------------------------------------------

_HOSTILE = {
    "crash": ("import sys; sys.stderr.write('boom\\n'); sys.exit(7)", "exited with status 7"),
    "hang": ("import time; time.sleep(60)", "gave no answer within 0.5 s"),
    "garbage": ("print('hello'); import time; time.sleep(5)", "not JSON: 'hello'"),
    "huge": (
        "import sys; sys.stdout.write('x' * 3_000_000); sys.stdout.flush()",
        "more than 1,048,576 bytes",
    ),
    "not an object": (
        "print('[1, 2]'); import time; time.sleep(5)",
        "answered [1, 2], not a JSON object",
    ),
    "memory": ("x = bytearray(3 * 1024 ** 3)", "exited with status 1"),
    "nested": ("print('[' * 500_000); import time; time.sleep(5)", "not JSON: '[[["),
}


@pytest.mark.parametrize("kind", sorted(_HOSTILE))
def test_a_hostile_engine_gets_one_line_and_exit_3(kind: str, tmp_path: Path) -> None:
    code, said = _HOSTILE[kind]
    script = tmp_path / "engine.py"
    script.write_text(code + "\n")
    start = time.monotonic()
    result = run(
        "conformance",
        "check",
        "--engine",
        f"{sys.executable} {script}",
        "--timeout",
        "0.5" if kind == "hang" else "20",  # the others answer at once, however loaded the machine
        "--memory-mb",
        "512",
    )
    assert time.monotonic() - start < 30
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("numbermatch: error: engine "), result.stderr
    assert said in lines[0] and "(request 1, parse:" in lines[0]
    assert "Traceback" not in result.output
    if kind == "crash":
        assert lines[0].endswith("its last line on stderr: boom")


def test_a_broken_engine_still_gets_a_junit_report(tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    engine = f"{sys.executable} -c 'import sys; sys.exit(5)'"
    result = run("conformance", "check", "--engine", engine, "--junit", str(junit))
    assert result.exit_code == 3
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error is not None and "exited with status 5" in (error.get("message") or "")


def test_an_engine_that_cannot_start_is_one_line() -> None:
    result = run("conformance", "check", "--engine", "/no/such/engine --flag")
    assert result.exit_code == 3
    assert result.stderr.strip() == (
        "numbermatch: error: engine '/no/such/engine --flag' could not start: No such file or directory"
    )
    assert run("conformance", "check", "--engine", "'unclosed").exit_code == 3


def test_the_engine_process_is_gone_after_a_hang() -> None:
    engine = CommandEngine(f"{sys.executable} -c 'import time; time.sleep(60)'", timeout=0.2)
    with pytest.raises(EngineError, match=r"no answer within 0\.2 s"):
        engine.ask({"op": "pairs", "ruleset": 1, "board": "19"})
    assert engine._proc.poll() is not None
    engine.close()


def test_the_text_report_names_each_rule(tmp_path: Path) -> None:
    result = check(ReferenceEngine(), CASES[:40], suite=SUITE_VERSION, ruleset=1, boards=0)
    text = report.text(result)
    assert text.splitlines()[-1] == "conforms: 0 of 40 cases failed"
    assert "  pass  board.refused (19 cases)" in text
