"""Checking an engine: the suite case by case, then a seeded differential search, each kind of
divergence shrunk (`shrink`). The result is a value; `report` writes it as text, JSON or JUnit.

The search plays random positions (`cases.random_position`, seeds apart from the suite's) and
asks the engine what the suite asks (pairs, add, every removal, perft, a random line), comparing
with the reference in-process. It is bounded by boards, by engine requests and, if asked, by
seconds; with the first two only, the same engine gives the same report.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pipeline.conformance.cases import Case, random_line, random_position, request
from pipeline.conformance.engine import Engine
from pipeline.conformance.protocol import Answer, Request, answer, divergence
from pipeline.conformance.rule_ids import RULES
from pipeline.conformance.shrink import Scenario, Shrunk, shrink
from pipeline.engine.board import format_board
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT

SEARCH_BOARDS = 200  # random positions the search plays by default
SEARCH_REQUESTS = 20_000  # engine requests the search may make by default
SEARCH_SEED = 1_000_003  # the search's positions: random_position(SEARCH_SEED * seed + k)


@dataclass(frozen=True)
class Divergence:
    """One answer that differs from the reference's: where (a case id, or the search), the
    request, both answers, why they differ, and the smallest scenario that still shows it."""

    kind: str
    where: str
    group: str
    request: Request
    expected: Answer
    got: Answer
    why: str
    shrunk: Shrunk | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "where": self.where,
            "rule": self.group,
            "request": self.request,
            "expected": self.expected,
            "got": self.got,
            "why": self.why,
            "shrunk": None if self.shrunk is None else self.shrunk.to_json(),
        }


@dataclass
class SearchResult:
    seed: int
    boards: int = 0
    requests: int = 0
    divergences: int = 0
    stopped: str = "boards"
    first: dict[str, Divergence] = field(default_factory=dict)


@dataclass
class CheckResult:
    engine: str
    suite: str
    ruleset: int
    cases: list[Case]
    failures: dict[str, Divergence]  # case id -> divergence
    first: dict[str, Divergence]  # kind -> the first divergence of the suite, shrunk
    search: SearchResult | None
    seconds: float

    @property
    def divergences(self) -> int:
        return len(self.failures) + (self.search.divergences if self.search else 0)

    @property
    def ok(self) -> bool:
        return self.divergences == 0

    def groups(self) -> dict[str, tuple[int, int]]:
        """Rule (or `random`) -> (cases, failed), every rule of docs/rules.md first."""
        out: dict[str, list[int]] = {rule: [0, 0] for rule in RULES}
        for case in self.cases:
            for group in case.rules or (case.group,):
                tally = out.setdefault(group, [0, 0])
                tally[0] += 1
                tally[1] += case.id in self.failures
        return {g: (n, k) for g, (n, k) in out.items() if n}


def _kind(case: Case) -> str:
    return case.kind


def run_suite(
    engine: Engine, cases: list[Case], progress: Callable[[int, int], None] | None = None
) -> dict[str, Divergence]:
    """Every case once; the divergences by case id."""
    failures: dict[str, Divergence] = {}
    for n, case in enumerate(cases, 1):
        got = engine.ask(case.request)
        why = divergence(case.expect, got)
        if why is not None:
            failures[case.id] = Divergence(
                _kind(case), case.id, case.group, case.request, case.expect, got, why
            )
        if progress is not None and n % 50 == 0:
            progress(n, len(cases))
    return failures


def _expected(req: Request) -> Answer:
    return {k: v for k, v in answer(req, DEFAULT).items() if k != "message"}


def _probes(seed: int, k: int) -> Iterator[Request]:
    """What the search asks about its k-th position."""
    cells, _ = random_position(seed * SEARCH_SEED + k)
    text = format_board(cells)
    rnd = random.Random(seed * SEARCH_SEED + k)
    yield request("pairs", board=text)
    if cells:
        yield request("add", board=text)
    for i, j in DEFAULT.legal_pairs(cells):
        yield request("remove", board=text, pair=str(Move(i, j)))
    yield request("count", board=text, adds=1, depth=2 if len(cells) <= 40 else 1)
    yield request("replay", board=text, adds=1, moves=random_line(cells, 1, rnd, 10))


def search(
    engine: Engine,
    *,
    seed: int = 1,
    boards: int = SEARCH_BOARDS,
    max_requests: int = SEARCH_REQUESTS,
    seconds: float | None = None,
    known: frozenset[str] = frozenset(),
) -> SearchResult:
    """Random positions until a bound; the first divergence of each kind not in `known` is shrunk."""
    result = SearchResult(seed)
    start = time.monotonic()
    for k in range(boards):
        if result.requests >= max_requests:
            result.stopped = "requests"
            break
        if seconds is not None and time.monotonic() - start > seconds:
            result.stopped = "seconds"
            break
        result.boards += 1
        for req in _probes(seed, k):
            result.requests += 1
            want = _expected(req)
            got = engine.ask(req)
            why = divergence(want, got)
            if why is None:
                continue
            result.divergences += 1
            kind = str(req["op"])
            if kind in result.first or kind in known:
                continue
            where = f"search seed {seed}, position {k}"
            result.first[kind] = _shrunk(
                engine, Divergence(kind, where, "search", req, want, got, why)
            )
    return result


def _shrunk(engine: Engine, d: Divergence) -> Divergence:
    scenario = Scenario.of(d.request)
    small = shrink(engine, scenario) if scenario is not None else None
    return Divergence(d.kind, d.where, d.group, d.request, d.expected, d.got, d.why, small)


def check(
    engine: Engine,
    cases: list[Case],
    *,
    suite: str,
    ruleset: int,
    seed: int = 1,
    boards: int = SEARCH_BOARDS,
    max_requests: int = SEARCH_REQUESTS,
    seconds: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CheckResult:
    """The suite, the first divergence of each kind shrunk, then the search (boards > 0)."""
    start = time.monotonic()
    failures = run_suite(engine, cases, progress)
    first: dict[str, Divergence] = {}
    for d in failures.values():
        if d.kind not in first:
            first[d.kind] = _shrunk(engine, d)
    found = None
    if boards > 0:
        found = search(
            engine,
            seed=seed,
            boards=boards,
            max_requests=max_requests,
            seconds=seconds,
            known=frozenset(first),
        )
    return CheckResult(
        engine.name, suite, ruleset, cases, failures, first, found, time.monotonic() - start
    )
