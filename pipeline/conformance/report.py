"""A check's result as text (people), JSON (scripts) and JUnit XML (a client team's CI).

The three say the same: pass or fail per rule of docs/rules.md (and the random group), the
first divergence of each kind with its smallest reproduction, and what the search did. None
holds a time or a date, so two runs on one engine compare equal.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from pipeline.conformance.check import CheckResult, Divergence
from pipeline.conformance.protocol import dumps


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _divergence_lines(d: Divergence) -> list[str]:
    lines = [f"  {d.kind} [{d.group}] {d.where}: {d.why}"]
    lines.append(f"    request   {dumps(d.request)}")
    lines.append(f"    expected  {dumps(d.expected)}")
    lines.append(f"    got       {dumps(d.got)}")
    if d.shrunk is not None:
        s = d.shrunk.to_json()
        moves = s["moves"]
        assert isinstance(moves, list)
        lines.append(
            f"    shrunk to {s['board'] or '(empty board)'!s} ({_count(int(str(s['cells'])), 'cell')},"
            f" {_count(int(str(s['numbers'])), 'number')}, {_count(len(moves), 'move')}): {s['why']}"
        )
        lines.append(f"    request   {dumps(s['request'])}")
        lines.append(f"    expected  {dumps(s['expected'])}")
        lines.append(f"    got       {dumps(s['got'])}")
    return lines


def text(result: CheckResult) -> str:
    """The report for a terminal."""
    out = [
        f"engine {result.engine!r} against the conformance suite {result.suite}"
        f" (ruleset {result.ruleset}): {_count(len(result.cases), 'case')}"
    ]
    for group, (n, failed) in result.groups().items():
        verdict = "pass" if not failed else "FAIL"
        detail = _count(n, "case") if not failed else f"{failed} of {_count(n, 'case')} failed"
        out.append(f"  {verdict}  {group} ({detail})")
    if result.first:
        out.append("first divergence of each kind:")
        for d in result.first.values():
            out.extend(_divergence_lines(d))
    s = result.search
    if s is not None:
        out.append(
            f"search (seed {s.seed}): {_count(s.boards, 'random position')},"
            f" {_count(s.requests, 'request')}, {_count(s.divergences, 'divergence')}"
            + (f" (stopped by the {s.stopped} bound)" if s.stopped != "boards" else "")
        )
        for d in s.first.values():
            out.extend(_divergence_lines(d))
    failed = len(result.failures)
    out.append(
        ("conforms" if result.ok else "DOES NOT CONFORM")
        + f": {failed} of {_count(len(result.cases), 'case')} failed"
        + (f", {s.divergences} divergences in the search" if s is not None else "")
    )
    return "\n".join(out) + "\n"


def to_json(result: CheckResult) -> dict[str, Any]:
    s = result.search
    return {
        "engine": result.engine,
        "suite": result.suite,
        "ruleset": result.ruleset,
        "ok": result.ok,
        "cases": len(result.cases),
        "failed": len(result.failures),
        "rules": {g: {"cases": n, "failed": k} for g, (n, k) in result.groups().items()},
        "first_divergences": [d.to_json() for d in result.first.values()],
        "failures": [d.to_json() for d in result.failures.values()],
        "search": None
        if s is None
        else {
            "seed": s.seed,
            "positions": s.boards,
            "requests": s.requests,
            "divergences": s.divergences,
            "stopped_by": s.stopped,
            "first_divergences": [d.to_json() for d in s.first.values()],
        },
    }


def json_text(result: CheckResult) -> str:
    return json.dumps(to_json(result), indent=2, ensure_ascii=True) + "\n"


def junit(result: CheckResult) -> str:
    """JUnit XML: a test suite per rule (and one for the random cases, one for the search),
    a test case per suite case; a failure carries why, the request and both answers."""
    root = ET.Element("testsuites", name=f"numbermatch conformance {result.suite}")
    by_group: dict[str, list[Any]] = {}
    for case in result.cases:
        by_group.setdefault(case.group, []).append(case)
    total = failures = 0
    for group, cases in by_group.items():
        failed = sum(c.id in result.failures for c in cases)
        suite = ET.SubElement(
            root, "testsuite", name=group, tests=str(len(cases)), failures=str(failed)
        )
        for case in cases:
            tc = ET.SubElement(suite, "testcase", classname=f"conformance.{group}", name=case.id)
            d = result.failures.get(case.id)
            if d is not None:
                f = ET.SubElement(tc, "failure", message=d.why, type=d.kind)
                f.text = "\n".join(line.strip() for line in _divergence_lines(d)[1:])
        total += len(cases)
        failures += failed
    s = result.search
    if s is not None:
        suite = ET.SubElement(
            root,
            "testsuite",
            name="search",
            tests=str(max(1, len(s.first))),
            failures=str(len(s.first) if s.divergences else 0),
        )
        if not s.first:
            tc = ET.SubElement(suite, "testcase", classname="conformance.search", name="random")
            if s.divergences:
                ET.SubElement(tc, "failure", message=f"{s.divergences} divergences", type="search")
        for d in s.first.values():
            tc = ET.SubElement(suite, "testcase", classname="conformance.search", name=d.kind)
            f = ET.SubElement(tc, "failure", message=d.why, type=d.kind)
            f.text = "\n".join(line.strip() for line in _divergence_lines(d)[1:])
        total += max(1, len(s.first))
        failures += len(s.first) if s.divergences else 0
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_error(suite: str, engine: str, message: str) -> str:
    """JUnit XML for a check the engine broke off: one test case in error, saying why."""
    root = ET.Element(
        "testsuites", name=f"numbermatch conformance {suite}", tests="1", failures="0", errors="1"
    )
    group = ET.SubElement(root, "testsuite", name="protocol", tests="1", failures="0", errors="1")
    tc = ET.SubElement(group, "testcase", classname="conformance.protocol", name=engine)
    ET.SubElement(tc, "error", message=message, type="engine")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
