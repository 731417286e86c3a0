"""The suite's cases: every rule of docs/rules.md, the engine tests' edges, and a seeded random set.

A case is one request and the answer the reference gives it (`protocol.answer`), with what it
tests, where it comes from and the rules (`rule_ids.RULES`) it exercises. The hand-written
cases are the rules page's worked examples and the edges tests/test_rules.py knows; the random
cases are positions reached by random play from seeded random boards (`random_position`), so
anyone with this module can rebuild them from the seed. Building the suite twice gives the same
cases in the same order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pipeline.conformance import SUITE_RULESET
from pipeline.conformance.protocol import Request, answer, blockers, pair_cells, pair_error
from pipeline.conformance.rule_ids import RANDOM_GROUP
from pipeline.engine.board import WIDTH, format_board, parse
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT
from pipeline.solver.advice import fewest_adds

KINDS = ("parse", "pairs", "remove", "add", "count", "replay", "stage")
RANDOM_BOARDS = (
    60  # seeded random positions, each giving a pairs, add, remove, count and replay case
)
RANDOM_STAGES = 16  # seeded random Stages solved for their fewest adds
STAGE_ADDS = 2  # the adds allocation of the random Stages
STAGE_NODES = 20_000  # the solver's node budget per step of the fewest-adds search (deterministic)
FIRST_SEED = 1


@dataclass(frozen=True)
class Case:
    """One request with its expected answer and where it comes from."""

    id: str
    kind: str
    tests: str
    source: dict[str, Any]
    rules: tuple[str, ...]
    request: Request
    expect: dict[str, Any]
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def group(self) -> str:
        """The first rule it tests, or the random group."""
        return self.rules[0] if self.rules else RANDOM_GROUP

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "tests": self.tests,
            "source": self.source,
            "rules": list(self.rules),
            "request": self.request,
            "expect": self.expect,
        }
        if self.data:
            out["data"] = self.data
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Case:
        return cls(
            obj["id"],
            obj["kind"],
            obj["tests"],
            obj["source"],
            tuple(obj["rules"]),
            obj["request"],
            obj["expect"],
            obj.get("data", {}),
        )


def request(op: str, **fields: Any) -> Request:
    """A protocol request for ruleset 1 (the ruleset first, as every case writes it)."""
    return {"op": op, "ruleset": SUITE_RULESET, **fields}


class _Builder:
    def __init__(self) -> None:
        self.cases: list[Case] = []
        self.ids: dict[str, int] = {}

    def add(
        self,
        kind: str,
        req: Request,
        tests: str,
        rules: tuple[str, ...] | str,
        source: dict[str, Any],
        data: dict[str, Any] | None = None,
        slug: str | None = None,
    ) -> Case:
        rules = (rules,) if isinstance(rules, str) else rules
        base = f"{kind}/{slug or (rules[0] if rules else 'case')}"
        number = self.ids[base] = self.ids.get(base, 0) + 1
        expect = {k: v for k, v in answer(req).items() if k != "message"}  # codes, not prose
        case = Case(f"{base}-{number}", kind, tests, source, rules, req, expect, dict(data or {}))
        self.cases.append(case)
        return case


def _rule(rule: str, note: str | None = None) -> dict[str, Any]:
    return {"type": "rule", "rule": rule, **({"note": note} if note else {})}


def _edge(name: str) -> dict[str, Any]:
    return {"type": "edge", "edge": name, "from": "tests/test_rules.py"}


# --- hand-written cases ---------------------------------------------------------------------

# (board, rules, what it tests, source, pairs whose refusal the case explains)
_PAIRS: list[tuple[str, tuple[str, ...], str, dict[str, Any], tuple[str, ...]]] = [
    (
        "123456789/98.654321/135",
        ("board.rows", "pair.connection"),
        "the first worked example: every kind of connection on one board",
        _rule("board.rows", "docs/rules.md worked example"),
        ("0,0-0,1", "0,2-1,2"),
    ),
    (
        "1.......9/3.5",
        ("pair.reading-order", "pair.gaps-transparent"),
        "1 and 9 at the two ends of a row of gaps pair; 3 and 5 do not",
        _rule("pair.reading-order", "docs/rules.md worked example"),
        ("1,0-1,2",),
    ),
    (
        "5.......3/7",
        ("pair.reading-order",),
        "the end of a row connects to the start of the next",
        _rule("pair.reading-order", "docs/rules.md worked example"),
        (),
    ),
    (
        "12.4.....",
        ("pair.values",),
        "no two values match: no pairs",
        _rule("pair.values", "docs/rules.md worked example"),
        ("0,0-0,1", "0,1-0,3"),
    ),
    (
        "19......./5.......5/2",
        ("pair.values", "pair.reading-order"),
        "1+9 side by side, 5 and 5 across a row of gaps",
        _rule("pair.values", "docs/rules.md worked example"),
        ("1,8-2,0",),
    ),
    (
        "1......../.......9",
        ("pair.reading-order", "pair.gaps-transparent"),
        "reading order through the rest of a row and the start of the next",
        _rule("pair.reading-order", "docs/rules.md worked example"),
        (),
    ),
    (
        "4.2.1.8.6/..6.3....",
        ("pair.reading-order",),
        "the published example (its 10-cell row read as 9): only 6 at 0,8 and 6 at 1,2 pair",
        _rule("pair.reading-order", "the published rules' example"),
        ("0,0-0,2",),
    ),
    (
        "123456789/987654321/135",
        ("pair.vertical", "pair.diagonal", "pair.reading-order"),
        "a full board: vertical, diagonal and row-end pairs together",
        _rule("pair.vertical"),
        ("0,0-0,8",),
    ),
    ("11", ("pair.values",), "equal values pair", _rule("pair.values"), ()),
    ("55", ("pair.values",), "5 pairs with 5", _rule("pair.values"), ()),
    ("99", ("pair.values",), "9 pairs with 9", _rule("pair.values"), ()),
    ("19", ("pair.values",), "1+9 = 10", _rule("pair.values"), ()),
    ("28", ("pair.values",), "2+8 = 10", _rule("pair.values"), ()),
    ("37", ("pair.values",), "3+7 = 10", _rule("pair.values"), ()),
    ("64", ("pair.values",), "6+4 = 10, the larger first", _rule("pair.values"), ()),
    (
        "56",
        ("pair.values",),
        "5 and 6 neither match nor make 10",
        _rule("pair.values"),
        ("0,0-0,1",),
    ),
    ("45", ("pair.values",), "4 and 5 make 9, not 10", _rule("pair.values"), ("0,0-0,1",)),
    ("98", ("pair.values",), "9 and 8 do not pair", _rule("pair.values"), ("0,0-0,1",)),
    ("5.1.2.3.4", ("pair.values",), "5 pairs only with 5", _rule("pair.values"), ("0,0-0,2",)),
    (
        "3...7",
        ("pair.reading-order",),
        "horizontal through gaps",
        _edge("horizontal through gaps"),
        (),
    ),
    (
        "213131313/.42424242/8",
        ("pair.vertical", "pair.gaps-transparent"),
        "vertical through a gap",
        _edge("vertical through gaps"),
        (),
    ),
    (
        "612121212/2.2121212/214",
        ("pair.diagonal",),
        "diagonal down-right through a gap",
        _edge("diagonal down-right"),
        (),
    ),
    (
        "121212126/2121212.2/212121412",
        ("pair.diagonal",),
        "diagonal down-left through a gap",
        _edge("diagonal down-left"),
        (),
    ),
    (
        "12121213./..7121212",
        ("pair.reading-order", "pair.gaps-transparent"),
        "row end to row start through gaps",
        _edge("row end to next row start through gaps"),
        (),
    ),
    (
        "1212123../..7212121",
        ("pair.reading-order",),
        "row end to row start through trailing and leading gaps",
        _edge("row end to next row start skips trailing and leading gaps"),
        (),
    ),
    (
        "512121215",
        ("pair.edges",),
        "reading order does not wrap from the last cell to the first",
        _edge("no wrap from last cell to first"),
        ("0,0-0,8",),
    ),
    (
        "........1/2......../9",
        ("pair.edges",),
        "a down-right diagonal ends at the right edge: 0,8 does not see 2,0 (flat index + 10)",
        _rule("pair.edges"),
        ("0,8-2,0",),
    ),
    (
        "1......../5.2.....5",
        ("pair.edges",),
        "a down-left diagonal never wraps: 1,0 does not see 1,8 (flat index + 8)",
        _rule("pair.edges"),
        ("1,0-1,8",),
    ),
    (
        "........5/5..5",
        ("pair.edges",),
        "the down-left path from 0,8 ends where the short last row has no cell",
        _rule("pair.edges"),
        (),
    ),
    (
        "123456789/12",
        ("pair.edges", "pair.vertical"),
        "vertical and diagonal paths stop where the short last row has no cell",
        _rule("pair.edges"),
        (),
    ),
    (
        "312121212/217121212",
        ("pair.connection",),
        "no bending paths: 3 at 0,0 and 7 at 1,2 share no line",
        _edge("no bending paths"),
        ("0,0-1,2",),
    ),
    (
        "1......../9",
        ("pair.any-path",),
        "open vertically and in reading order at once: still one pair",
        _rule("pair.any-path"),
        (),
    ),
    (
        "5",
        ("pair.current-board",),
        "a single cell never pairs with itself",
        _edge("a cell never pairs with itself"),
        ("0,0-0,0",),
    ),
    (
        "3.2.7",
        ("pair.gaps-transparent",),
        "an active cell blocks a horizontal path",
        _edge("active cell blocks horizontal"),
        ("0,0-0,4",),
    ),
    (
        "213131313/524242424/813",
        ("pair.gaps-transparent", "pair.vertical"),
        "an active cell blocks a vertical path",
        _edge("active cell blocks vertical"),
        ("0,0-2,0",),
    ),
    (
        "612121212/252121212/214",
        ("pair.gaps-transparent", "pair.diagonal"),
        "an active cell blocks a diagonal path",
        _edge("active cell blocks diagonal"),
        ("0,0-2,2",),
    ),
    (
        "9..5.",
        ("board.trailing-gaps",),
        "a last row ending in gaps is a board; its gaps are cells",
        _rule("board.trailing-gaps"),
        ("0,0-0,3",),
    ),
    ("", ("stage.status",), "the empty board has no pairs", _edge("empty board"), ()),
    (
        "1.......2/9.......3",
        ("pair.current-board", "remove.collapse"),
        "after the collapse of a row, 0,0 and 1,0 are neighbours (see remove.collapse)",
        _edge("collapse changes vertical alignment"),
        (),
    ),
    (
        "1.......2/5.......5/9.......3",
        ("pair.current-board",),
        "before the collapse, 0,0 and 2,0 are blocked by the 5 between",
        _edge("collapse changes vertical alignment"),
        ("0,0-2,0",),
    ),
]

# (board, pair, rules, what it tests, source)
_REMOVES: list[tuple[str, str, tuple[str, ...], str, dict[str, Any]]] = [
    (
        "19......./5.......5/2",
        "0,0-0,1",
        ("remove.collapse",),
        "the emptied first row disappears",
        _rule("remove.collapse", "docs/rules.md worked example"),
    ),
    (
        "1.......9/3.5",
        "0,0-0,8",
        ("remove.collapse",),
        "the emptied first row disappears, the short row moves up",
        _rule("remove.collapse", "docs/rules.md worked example"),
    ),
    (
        "123456789/12",
        "0,0-1,0",
        ("remove.gaps",),
        "both cells become gaps, nothing moves",
        _edge("gaps stay in place"),
    ),
    (
        "5.......5/123456789/1",
        "0,0-0,8",
        ("remove.collapse", "board.names"),
        "an emptied row disappears and the columns are kept",
        _edge("emptied row disappears and columns are kept"),
    ),
    (
        "3......../7......../123456789",
        "0,0-1,0",
        ("remove.collapse",),
        "one removal empties two rows",
        _edge("two rows emptied at once"),
    ),
    (
        "123456789/4.6",
        "1,0-1,2",
        ("remove.collapse",),
        "the collapse of the short last row",
        _edge("short last row emptied (collapse of the last row)"),
    ),
    (
        "123456789/4.6..1",
        "1,0-1,2",
        ("remove.row-stays",),
        "the last row keeps one number: it stays with its gaps",
        _rule("remove.row-stays"),
    ),
    (
        "55......1/2",
        "0,0-0,1",
        ("remove.row-stays",),
        "a row keeping one number stays, gaps and all",
        _edge("row keeping one number stays with its gaps"),
    ),
    (
        "1.......2/5.......5/9.......3",
        "1,0-1,8",
        ("remove.collapse", "pair.current-board"),
        "a pair across a collapsed row: the middle row goes, 1 and 9 become neighbours",
        _edge("collapse changes vertical alignment (a pair across a collapsed row)"),
    ),
    (
        "11",
        "0,0-0,1",
        ("remove.collapse", "stage.status"),
        "the last pair empties the board",
        _rule("remove.collapse"),
    ),
    (
        "1.3.5.7.9/1.5.3.7",
        "0,8-1,0",
        ("remove.gaps", "pair.reading-order"),
        "a pair across the row end leaves both rows",
        _rule("remove.gaps"),
    ),
    (
        "12",
        "0,0-0,1",
        ("pair.values",),
        "a pair of values that do not match is refused",
        _rule("pair.values"),
    ),
    (
        "11",
        "0,0-0,0",
        ("pair.current-board",),
        "a cell cannot pair with itself",
        _rule("pair.current-board"),
    ),
    ("1.1", "0,0-0,1", ("board.cells",), "a gap cannot be part of a pair", _rule("board.cells")),
    ("11", "0,0-5,5", ("board.cells", "board.names"), "a cell off the board", _rule("board.names")),
    (
        "11",
        "0,1-0,0",
        ("moves.text",),
        "a pair written second cell first names the same pair",
        _rule("moves.text"),
    ),
]

# (board, rules, what it tests, source)
_ADDS: list[tuple[str, tuple[str, ...], str, dict[str, Any]]] = [
    (
        "1234.6789/9..5.",
        ("add.append", "board.trailing-gaps"),
        "the copies go after the trailing gaps of the last row",
        _rule("add.append", "docs/rules.md worked example"),
    ),
    (
        "123456789/98765",
        ("add.append",),
        "the copies fill the last row to 9, then start new rows",
        _rule("add.append", "docs/rules.md worked example"),
    ),
    ("5", ("add.append",), "one number, copied once", _rule("add.append")),
    (
        "1234",
        ("add.append",),
        "adds onto a partial last row",
        _edge("add fills last row then starts new rows"),
    ),
    (
        "12345678",
        ("add.append",),
        "adds onto a partial last row, then a new row",
        _edge("add fills last row then starts new rows"),
    ),
    (
        "123456789/1.",
        ("add.no-fill",),
        "trailing gaps are kept and the copies start after them",
        _edge("add keeps trailing gaps and appends after them"),
    ),
    (
        "123456789",
        ("add.append",),
        "a full last row: the copies start a new row",
        _rule("add.append"),
    ),
    ("1.1", ("add.no-fill",), "the gap between is not filled", _rule("add.no-fill")),
    (
        "1.......1/.3......2",
        ("add.no-fill",),
        "no gap is filled, no cell moves",
        _rule("add.no-fill"),
    ),
    (
        "",
        ("add.empty-board",),
        "nothing to copy on the empty board: refused",
        _rule("add.empty-board"),
    ),
]

# (board, adds, depth, rules, what it tests)
_COUNTS: list[tuple[str, int, int, tuple[str, ...], str]] = [
    ("", 1, 3, ("stage.status",), "the empty board has no move, not even an add"),
    ("19", 0, 3, ("pair.values",), "one pair, then the empty board"),
    ("19", 1, 3, ("add.any-time", "stage.adds"), "an add is a move also while a pair remains"),
    ("12", 2, 3, ("stage.adds",), "only adds, and only as many as are left"),
    (
        "1.......9/3.5",
        1,
        3,
        ("pair.reading-order", "add.any-time"),
        "a worked example, with an add",
    ),
    ("19......./5.......5/2", 1, 3, ("remove.collapse",), "collapses change what follows"),
    (
        "123456789/98.654321/135",
        0,
        3,
        ("pair.connection",),
        "every connection kind, three moves deep",
    ),
    ("1.......2/5.......5/9.......3", 0, 2, ("pair.current-board",), "a collapse opens a new pair"),
]

# (board, adds, moves, rules, what it tests)
_REPLAYS: list[tuple[str, int, tuple[str, ...], tuple[str, ...], str]] = [
    (
        "19......./5.......5/2",
        0,
        ("0,0-0,1", "0,0-0,8"),
        ("board.names", "remove.collapse"),
        "cells are named on the board as it is now: after the collapse 5 and 5 are row 0",
    ),
    ("19", 0, ("0,0-0,1",), ("stage.status",), "the empty board is a won Stage"),
    ("19", 2, ("0,0-0,1",), ("stage.status", "stage.adds"), "won with adds left"),
    ("5", 1, ("+",), ("add.append", "stage.adds"), "an add uses one of the Stage's adds"),
    ("12", 0, (), ("stage.status",), "no pair, no add: stuck"),
    ("12", 1, (), ("stage.status",), "no pair but an add left: in play"),
    ("19", 1, ("+",), ("add.any-time",), "an add while a pair remains"),
    ("19", 0, ("+",), ("stage.adds",), "an add with no add left is refused"),
    (
        "55",
        1,
        ("0,0-0,1", "+"),
        ("add.empty-board", "moves.text"),
        "an add on the empty board is refused as move 2",
    ),
    ("1.......9/3.5", 0, ("0,0-0,8",), ("stage.status",), "3 and 5 left: stuck"),
    (
        "1.......2/5.......5/9.......3",
        0,
        ("1,0-1,8", "0,0-1,0"),
        ("pair.current-board", "board.names"),
        "a pair across a collapsed row, played",
    ),
    ("12", 0, ("0,0-0,1",), ("moves.text", "pair.values"), "an illegal first move is move 1"),
    (
        "19......./5.......5/2",
        0,
        ("0,0-0,1", "1,0-1,8"),
        ("moves.text", "board.names"),
        "a move naming a cell as it was before the collapse is refused (off the board)",
    ),
]

# (board, what is wrong)
_INVALID: list[tuple[str, str]] = [
    ("123456789/........./1", "a row with no active number"),
    ("4.2.1.8.6/..6.3.....", "a row of 10 cells (the published page's typo)"),
    ("12345678/1", "a short row that is not the last"),
    ("123456789/", "an empty last row"),
    ("1//2", "an empty row between two slashes"),
    ("/", "two empty rows"),
    (".", "a board of one gap"),
    ("...", "a last row of gaps only"),
    ("123456789/.........", "a last row of gaps only after a full row"),
    ("12x", "a letter"),
    ("102", "0 is not a cell (gaps are '.')"),
    ("1 2", "a space"),
    (" 12", "a leading space"),
    ("12\n", "a newline"),
    ("1234567890", "ten cells in one row"),
    ("\uff11\uff12", "full-width digits"),
    ("\u0661\u0662", "Arabic-Indic digits"),
    ("-1", "a sign"),
]
_VALID: list[tuple[str, tuple[str, ...], str]] = [
    ("123456789/98.654321/135", ("board.notation",), "the notation's example"),
    ("", ("board.notation", "stage.status"), "the empty text is the empty board"),
    ("5", ("board.rows",), "a board of one cell"),
    ("9..5.", ("board.trailing-gaps",), "a last row ending in gaps"),
    ("........1/1", ("board.rows",), "a full row of gaps but one"),
    ("123456789/123456789", ("board.rows",), "two full rows"),
]


def _pair_reason(cells: bytes, text: str) -> dict[str, Any]:
    i, j = pair_cells(text)
    code = pair_error(DEFAULT, cells, i, j)
    out: dict[str, Any] = {"error": code}
    if code == "blocked":
        out["blocked_by"] = blockers(cells, min(i, j), max(i, j))
    return out


def _hand_written(b: _Builder) -> None:
    for text, why in _INVALID:
        b.add(
            "parse",
            request("parse", board=text),
            f"refuse {why}",
            "board.refused",
            _rule("board.refused"),
        )
    for text, rules, why in _VALID:
        b.add("parse", request("parse", board=text), why, rules, _rule(rules[0]))
    b.add(
        "parse",
        request("pairs", board="12x"),
        "every op refuses an invalid board",
        "board.refused",
        _rule("board.refused"),
    )
    b.add(
        "pairs",
        {"op": "pairs", "ruleset": 2, "board": "19"},
        "a ruleset the engine does not implement is refused, never guessed",
        "stage.ruleset",
        _rule("stage.ruleset"),
    )
    for text, rules, why, source, illegal in _PAIRS:
        cells = parse(text)
        data = {"illegal": {p: _pair_reason(cells, p) for p in illegal}} if illegal else None
        b.add("pairs", request("pairs", board=text), why, rules, source, data)
        for p in illegal:
            reason = _pair_reason(cells, p)
            by = f" by {', '.join(reason['blocked_by'])}" if reason.get("blocked_by") else ""
            b.add(
                "remove",
                request("remove", board=text, pair=p),
                f"{p} is not a pair on {text or '(empty)'}: {reason['error']}{by}",
                rules,
                source,
            )
    for text, p, rules, why, source in _REMOVES:
        b.add("remove", request("remove", board=text, pair=p), why, rules, source)
    for text, rules, why, source in _ADDS:
        b.add("add", request("add", board=text), why, rules, source)
    for text, adds, depth, rules, why in _COUNTS:
        b.add(
            "count",
            request("count", board=text, adds=adds, depth=depth),
            why,
            rules,
            _rule(rules[0]),
        )
    for text, adds, moves, rules, why in _REPLAYS:
        b.add(
            "replay",
            request("replay", board=text, adds=adds, moves=list(moves)),
            why,
            rules,
            _rule(rules[0]),
        )
    for text, adds in (
        ("19", 1),
        ("5", 2),
        ("12", 2),
        ("1.......9/3.5", 2),
        ("123456789/987654321/135", 1),
    ):
        _stage(b, parse(text), adds, _rule("stage.solvable"), ("stage.solvable", "stage.status"))


# --- Stages ---------------------------------------------------------------------------------


def _stage(
    b: _Builder, cells: bytes, adds: int, source: dict[str, Any], rules: tuple[str, ...]
) -> None:
    """A Stage's verdict and fewest adds (the solver's, within a node budget), checked by
    replaying the certificate with the fewest adds (won) and with one add fewer (refused)."""
    text = format_board(cells)
    found = fewest_adds(cells, adds, budget=STAGE_NODES)
    data: dict[str, Any] = {"verdict": str(found.status), "adds": adds}
    slug = "random" if source["type"] == "random" else None
    if found.fewest is None:
        b.add(
            "stage",
            request("replay", board=text, adds=adds, moves=[]),
            f"{text or '(empty)'} with {adds} adds: {found.status} (the position before any move)",
            rules,
            source,
            data,
            slug,
        )
        return
    moves = [str(m) for m in found.moves]
    data.update({"fewest_adds": found.fewest, "exact": found.exact, "certificate": moves})
    b.add(
        "stage",
        request("replay", board=text, adds=found.fewest, moves=moves),
        f"{text} is won with {found.fewest} adds: its certificate replays to the empty board",
        rules,
        source,
        data,
        slug,
    )
    if found.fewest > 0:
        b.add(
            "stage",
            request("replay", board=text, adds=found.fewest - 1, moves=moves),
            f"{text}: with one add fewer the certificate's last add is refused",
            (*rules, "stage.adds") if rules else (),
            source,
            data,
            slug,
        )


# --- the seeded random set ------------------------------------------------------------------


def random_position(seed: int) -> tuple[bytes, int]:
    """A random board of 9-40 digits, then up to 24 random moves (mostly pairs, sometimes an
    add while the board is small): (cells, moves played). The same seed, the same position."""
    rnd = random.Random(seed)
    cells = bytes(rnd.randint(1, 9) for _ in range(rnd.randint(9, 40)))
    played = 0
    for _ in range(rnd.randint(0, 24)):
        pairs = DEFAULT.legal_pairs(cells)
        if not cells:
            break
        if pairs and rnd.random() < 0.85:
            cells = DEFAULT.remove_pair(cells, *rnd.choice(pairs))
        elif len(cells) < 80:
            cells = DEFAULT.add_numbers(cells)
        played += 1
    return cells, played


def random_line(cells: bytes, adds: int, rnd: random.Random, length: int) -> list[str]:
    """Up to `length` legal moves from a position, chosen by `rnd` (adds while allowed)."""
    moves: list[str] = []
    for _ in range(length):
        options = [Move(i, j) for i, j in DEFAULT.legal_pairs(cells)]
        if adds and cells and (not options or rnd.random() < 0.15):
            cells, adds = DEFAULT.add_numbers(cells), adds - 1
            moves.append("+")
            continue
        if not options:
            break
        m = rnd.choice(options)
        assert m.first is not None and m.second is not None
        cells = DEFAULT.remove_pair(cells, m.first, m.second)
        moves.append(str(m))
    return moves


def _random_set(b: _Builder) -> None:
    for seed in range(FIRST_SEED, FIRST_SEED + RANDOM_BOARDS):
        cells, played = random_position(seed)
        text = format_board(cells)
        source = {
            "type": "random",
            "seed": seed,
            "recipe": f"pipeline.conformance.cases.random_position({seed}): {played} random moves",
        }
        rnd = random.Random(seed * 7919)
        slug = "random"
        b.add(
            "pairs",
            request("pairs", board=text),
            "random position: its pairs",
            (),
            source,
            slug=slug,
        )
        if cells:
            b.add(
                "add",
                request("add", board=text),
                "random position: Add numbers",
                (),
                source,
                slug=slug,
            )
        pairs = DEFAULT.legal_pairs(cells)
        for i, j in rnd.sample(pairs, min(2, len(pairs))):
            b.add(
                "remove",
                request("remove", board=text, pair=str(Move(i, j))),
                "random position: a legal removal",
                (),
                source,
                slug=slug,
            )
        active = [k for k, v in enumerate(cells) if v]
        listed = set(pairs)
        refused = [
            (i, j) for x, i in enumerate(active) for j in active[x + 1 :] if (i, j) not in listed
        ]
        if refused:
            i, j = rnd.choice(refused)
            pair = f"{i // WIDTH},{i % WIDTH}-{j // WIDTH},{j % WIDTH}"
            b.add(
                "remove",
                request("remove", board=text, pair=pair),
                "random position: an illegal removal is refused with its reason",
                (),
                source,
                {"illegal": {pair: _pair_reason(cells, pair)}},
                slug,
            )
        depth, adds = (3, 1) if len(cells) <= 30 else (2, 1)
        b.add(
            "count",
            request("count", board=text, adds=adds, depth=depth),
            f"random position: perft to depth {depth} with {adds} add",
            (),
            source,
            slug=slug,
        )
        moves = random_line(cells, 1, rnd, 12)
        b.add(
            "replay",
            request("replay", board=text, adds=1, moves=moves),
            "random position: a random line of legal moves",
            (),
            source,
            slug=slug,
        )
    for seed in range(FIRST_SEED, FIRST_SEED + RANDOM_STAGES):
        rnd = random.Random(10_000 + seed)
        cells = bytes(rnd.randint(1, 9) for _ in range(rnd.randint(8, 18)))
        source = {
            "type": "random",
            "seed": 10_000 + seed,
            "recipe": "random.Random(seed): 8-18 digits 1-9",
        }
        _stage(b, cells, STAGE_ADDS, source, ())


def build() -> list[Case]:
    """Every case of the suite, in a fixed order: hand-written first, then the random set."""
    b = _Builder()
    _hand_written(b)
    _random_set(b)
    return b.cases


def by_kind(cases: list[Case]) -> dict[str, list[Case]]:
    """The cases grouped by kind, in `KINDS` order (one file each)."""
    return {kind: [c for c in cases if c.kind == kind] for kind in KINDS}
