"""Fuzzing the gate: mutants of valid puzzle and bundle files through `numbermatch validate`.

Every mutant (bytes, lines, YAML structure, numbers, tags, encodings) must end with exit code
0, 1 or 2, no traceback, in bounded time; and when the validator accepts one, an independent
check must agree: the file parses as plain YAML, each certificate replays to an empty board
under `tests/reference.py` (a naive reading of the rules sharing no engine code), ids are
recomputed, and the derived numbers are consistent. The assembler's reader must accept what
the validator accepts (one loader for every reader).

The default run is short and derandomized; `make fuzz` runs the long campaign
(NM_FUZZ_EXAMPLES mutants per strategy, random seeds) and prints the counts.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.rating.tiers import TIERS_BY_VERSION
from tests import reference
from tests.helpers import run

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "validator" / "valid"
SEEDS = {
    "puzzle": (FIXTURES / "puzzle.yaml").read_text(encoding="utf-8"),
    "bundle": (FIXTURES / "bundle.yaml").read_text(encoding="utf-8"),
}
TIME_BOUND = 10.0  # seconds per mutant (a valid file takes milliseconds; a shared CI box is slow)
CAMPAIGN = int(os.environ.get("NM_FUZZ_EXAMPLES", "0"))

settings.register_profile(
    "gate",
    max_examples=25,
    deadline=None,
    derandomize=True,  # 7 strategies: 175 mutants, a few seconds
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
settings.register_profile(
    "campaign",
    max_examples=max(CAMPAIGN, 1),
    deadline=None,
    derandomize=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
PROFILE = "campaign" if CAMPAIGN else "gate"

COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if CAMPAIGN:
        total = sum(v for k, v in COUNTS.items() if k.startswith("exit "))
        print(
            f"\nfuzz campaign: {total} mutants; "
            + ", ".join(f"{k}: {v}" for k, v in sorted(COUNTS.items()))
        )


# --- mutations --------------------------------------------------------------------------------

NUMBERS = [
    "0",
    "-1",
    "1.0",
    "2.0",
    "0.0",
    "1e308",
    "1e999",
    "-0",
    "+1",
    "0x1F",
    "0o17",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "9" * 5000,
    "0x" + "f" * 5000,
    "1" * 50,
    "2.5",
    "100",
    "101",
    "3",
    "17",
    "65",
    "1:30",
    "true",
    "null",
    "٣",
    "12e",
    "1e-400",
]
TAGS = [
    "!!str",
    "!!int",
    "!!float",
    "!!bool",
    "!!null",
    "!!timestamp",
    "!!binary",
    "!!python/object:os.system",
    "!",
    "!local",
    "!!map",
    "!!seq",
    "!!set",
    "!!omap",
]
SCALARS = [
    "",
    "~",
    "''",
    "'x\\n'",
    '"1,3-2,4\\n"',
    "nm1-000000000000",
    "'+'",
    "0,0-0,1",
    "99999999999,0-0,1",
    "1,3-2,4",
    "a b",
    "../x",
    "123456789/98765",
    "1" * 400,
    "{}",
    "[]",
    "*a",
    "&a 1",
    "<<: {}",
    "? [1]",
    "\t",
    "yes",
    "on",
    "2026-11-29",
    "!!python/name:os.system",
]
TEXT_BITS = [
    "\t",
    "\n",
    "\r\n",
    " ",
    ":",
    "- ",
    "#",
    "&a",
    "*a",
    "---",
    "...",
    "{",
    "[",
    "'",
    '"',
    "%YAML 1.1\n",
    "\ufeff",
    "\x00",
    "\x85",
    "\u2028",
    "é",
    "٣",
]


def _splice(text: str, at: int, cut: int, insert: str) -> str:
    at = at % (len(text) + 1)
    return text[:at] + insert + text[at + cut :]


@st.composite
def byte_mutant(draw: Callable) -> bytes:
    raw = bytearray(SEEDS[draw(st.sampled_from(sorted(SEEDS)))].encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if op == "flip" and at < len(raw):
            raw[at] = draw(st.integers(0, 255))
        elif op == "insert":
            raw[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del raw[at : at + draw(st.integers(1, 40))]
        elif op == "truncate":
            del raw[at:]
    return bytes(raw)


@st.composite
def line_mutant(draw: Callable) -> bytes:
    lines = SEEDS[draw(st.sampled_from(sorted(SEEDS)))].split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(
            st.sampled_from(["delete", "duplicate", "swap", "indent", "dedent", "tail", "insert"])
        )
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = "  " + lines[i]
        elif op == "dedent":
            lines[i] = lines[i][2:]
        elif op == "tail":
            lines[i] += draw(st.sampled_from(TEXT_BITS))
        else:
            lines.insert(i, draw(st.sampled_from(TEXT_BITS + SCALARS)))
        if not lines:
            lines = [""]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


_NUMBER_TOKEN = re.compile(r"(?<=[:\-] )-?[0-9][0-9.e+-]*$", re.M)
_VALUE = re.compile(r"(?<=: )\S.*$|(?<=- )\S.*$", re.M)
_NEW_NUMBER = st.one_of(
    st.sampled_from(NUMBERS),
    st.integers(-10, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def _edit_spots(
    draw: Callable,
    pattern: re.Pattern[str],
    rounds: st.SearchStrategy[int],
    edit: Callable[[Callable, str], str],
) -> bytes:
    """A seed with `rounds` of its `pattern` matches (found again after each edit) rewritten."""
    text = SEEDS[draw(st.sampled_from(sorted(SEEDS)))]
    for _ in range(draw(rounds)):
        a, b = draw(st.sampled_from([m.span() for m in pattern.finditer(text)]))
        text = text[:a] + edit(draw, text[a:b]) + text[b:]
    return text.encode("utf-8", "surrogatepass")


@st.composite
def number_mutant(draw: Callable) -> bytes:
    return _edit_spots(draw, _NUMBER_TOKEN, st.integers(1, 3), lambda d, old: d(_NEW_NUMBER))


@st.composite
def tag_mutant(draw: Callable) -> bytes:
    return _edit_spots(
        draw, _VALUE, st.integers(1, 2), lambda d, old: d(st.sampled_from(TAGS)) + " " + old
    )


@st.composite
def scalar_mutant(draw: Callable) -> bytes:
    new = st.one_of(st.sampled_from(SCALARS + NUMBERS), st.text(max_size=12))
    return _edit_spots(draw, _VALUE, st.just(1), lambda d, old: d(new))


def _paths(node: Any, here: tuple = ()) -> list[tuple]:
    out = [here]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, here + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, here + (i,))
    return out


VALUES = [
    None,
    True,
    0,
    1,
    2,
    -1,
    2.0,
    1.0,
    0.0,
    0.5,
    101,
    10**30,
    "",
    "x",
    "nm1-000000000000",
    "+",
    "0,0-0,1",
    [],
    {},
    [1],
    {"a": 1},
    "1" * 300,
    float("inf"),
]


@st.composite
def structure_mutant(draw: Callable) -> bytes:
    data = yaml.safe_load(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        if not path:
            continue
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        key = path[-1]
        op = draw(st.sampled_from(["replace", "delete", "add", "wrap", "copy"]))
        if op == "replace":
            parent[key] = draw(st.sampled_from(VALUES))
        elif op == "delete":
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "id", "kind", "level", "tier", "1"]))] = draw(
                st.sampled_from(VALUES)
            )
        elif op == "add" and isinstance(parent, list):
            parent.append(parent[key])  # a second reference: duplicates ids, stages, moves
        elif op == "wrap":
            parent[key] = [parent[key]]
        elif op == "copy" and isinstance(parent, list) and len(parent) > 1:
            parent[key] = parent[0]
    return yaml.safe_dump(data, sort_keys=draw(st.booleans()), allow_unicode=True).encode("utf-8")


@st.composite
def encoding_mutant(draw: Callable) -> bytes:
    text = SEEDS[draw(st.sampled_from(sorted(SEEDS)))]
    text = _splice(
        text,
        draw(st.integers(0, len(text))),
        0,
        draw(st.sampled_from(["é", "٣", "\u2028", "\ufeff", "😀"])),
    )
    codec = draw(
        st.sampled_from(
            ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252"]
        )
    )
    return text.encode(codec, "replace")


# --- the independent check ----------------------------------------------------------------------

_MOVE = re.compile(r"([0-9]+),([0-8])-([0-9]+),([0-8])")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _replays(board: str, adds: int, solution: list[str]) -> bool:
    """The certificate empties the board within `adds`, by the naive reference rules."""
    grid = reference.from_text(board)
    left = adds
    for text in solution:
        if not grid:
            return False  # a move after the win
        if text == "+":
            if left == 0:
                return False
            grid, left = reference.add_numbers(grid), left - 1
            continue
        m = _MOVE.fullmatch(text)
        if m is None:
            return False
        r1, c1, r2, c2 = map(int, m.groups())
        a, b = sorted([(r1, c1), (r2, c2)])
        if (a, b) not in reference.legal_pairs(grid):
            return False
        grid = reference.remove(grid, a, b)
    return not grid


def _check_puzzle(p: dict[str, Any]) -> None:
    board, adds, ruleset, solution, d = (
        p["board"],
        p["adds"],
        p["ruleset"],
        p["solution"],
        p["difficulty"],
    )
    assert isinstance(board, str) and re.fullmatch(r"(?:[1-9.]{9}/)*[1-9.]{1,9}", board), board
    assert _is_int(adds) and adds >= 0 and _is_int(ruleset) and ruleset == 1
    digest = hashlib.sha256(f"{ruleset}|{board}|{adds}".encode()).hexdigest()[:12]
    assert p["id"] == f"nm{ruleset}-{digest}"
    assert isinstance(solution, list) and all(isinstance(m, str) for m in solution)
    assert _replays(board, adds, solution), "certificate does not replay under tests/reference.py"
    used = solution.count("+")
    assert d["certificate_length"] == len(solution) and _is_int(d["certificate_length"])
    assert d["min_adds"] is None or (
        _is_int(d["min_adds"]) and 0 <= d["min_adds"] <= min(adds, used)
    )
    score = d["score"]
    assert isinstance(score, (int, float)) and not isinstance(score, bool) and 0 <= score <= 100
    table = TIERS_BY_VERSION[d.get("version", 1)]  # each rating version has its own tier table
    assert d["tier"] == next((name for name, lo, hi in table if lo <= score < hi), table[-1][0])
    for stats in d["players"].values():
        games = stats["playouts"]
        assert _is_int(games) and games >= 0
        assert 0 <= stats["win_rate"] <= 1 and math.isfinite(stats["mean_moves"])
        if games == 0:
            assert stats["win_rate"] == 0 and stats["mean_moves"] == 0


def independent_check(raw: bytes, path: Path) -> None:
    text = raw.decode("utf-8")
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(doc, dict) and doc["schema_version"] == 1 and _is_int(doc["schema_version"])
    if doc["kind"] == "puzzle":
        _check_puzzle(doc)
    else:
        assert doc["kind"] == "bundle" and _is_int(doc["ruleset"])
        seen: set[str] = set()
        for li, level in enumerate(doc["levels"], 1):
            assert _is_int(level["level"]) and level["level"] == li
            for si, stage in enumerate(level["stages"], 1):
                assert _is_int(stage["stage"]) and stage["stage"] == si
                puzzle = stage["puzzle"]
                _check_puzzle(puzzle)
                assert puzzle["ruleset"] == doc["ruleset"]
                assert puzzle["id"] not in seen, "a puzzle twice in one bundle"
                seen.add(puzzle["id"])
    # every reader agrees: the assembler's loader takes what the validator took
    from pipeline.jobs.inputs import load_puzzles

    assert load_puzzles([path])


# --- the property ---------------------------------------------------------------------------------


def run_gate(raw: bytes, folder: Path, name: str = "mutant.yaml") -> int:
    path = folder / name
    path.write_bytes(raw)
    start = time.perf_counter()
    result = run(*["validate", str(path), "--format", "json"])
    elapsed = time.perf_counter() - start
    COUNTS[f"exit {result.exit_code}"] += 1
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-2000:])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    assert elapsed < TIME_BOUND, f"{elapsed:.1f} s"
    if result.exit_code == 0:
        COUNTS["accepted"] += 1
        independent_check(raw, path)
    else:
        for code in set(re.findall(r'"code": "(NM[0-9]+)"', result.output)):
            COUNTS[code] += 1
    return result.exit_code


STRATEGIES = {
    "bytes": byte_mutant(),
    "lines": line_mutant(),
    "numbers": number_mutant(),
    "tags": tag_mutant(),
    "scalars": scalar_mutant(),
    "structure": structure_mutant(),
    "encodings": encoding_mutant(),
}


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_every_mutant_ends_cleanly_and_accepted_ones_are_really_valid(
    kind: str, tmp_path: Path
) -> None:
    @settings(settings.get_profile(PROFILE))
    @given(STRATEGIES[kind])
    def check(raw: bytes) -> None:
        COUNTS[f"strategy {kind}"] += 1
        run_gate(raw, tmp_path)

    check()


def test_the_seeds_themselves_pass(tmp_path: Path) -> None:
    for kind, text in SEEDS.items():
        assert run_gate(text.encode(), tmp_path, f"{kind}.yaml") == 0
