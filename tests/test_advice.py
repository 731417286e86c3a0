"""The one hint and the one fewest-adds search (`pipeline.solver.advice`), and the front ends
that use them: `numbermatch play` and the studio give the same answers on the same positions."""

from __future__ import annotations

import random
import re

import pytest

from pipeline.cli.play_cmds import Game
from pipeline.engine.board import parse
from pipeline.engine.moves import ADD
from pipeline.engine.rulesets import DEFAULT
from pipeline.solver import SOLVED, UNSOLVABLE, SolveResult, advice, solve
from pipeline.studio import game


def positions(count: int, seed: int = 7) -> list[tuple[bytes, int]]:
    """Seeded random positions: a few pairs played from random 18-27-cell starts, 0-2 adds left."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cells = bytes(rng.randint(1, 9) for _ in range(rng.choice((18, 27))))
        for _ in range(rng.randint(0, 3)):
            pairs = DEFAULT.legal_pairs(cells)
            if not pairs:
                break
            cells = DEFAULT.remove_pair(cells, *rng.choice(pairs))
        if cells:
            out.append((cells, rng.randint(0, 2)))
    return out


def _play_hint(cells: bytes, adds: int, budget: int) -> str:
    reply = Game(cells, adds, hint_nodes=budget).command("?")
    if (m := re.match(r"hint: (\S+) keeps the Stage winnable", reply)) is not None:
        return m.group(1)
    if reply.startswith("hint: +"):
        return "+"
    return "none: " + ("unsolvable" if "cannot be won" in reply else "unknown")


def _studio_hint(cells: bytes, adds: int, budget: int) -> str:
    h = game.hint(game.replay(cells, adds, ()), budget)
    if h.status == SOLVED and h.move is not None:
        return str(h.move)
    return f"none: {h.status}"


def _play_fewest(cells: bytes, adds: int, budget: int) -> str:
    reply = Game(cells, adds, hint_nodes=budget).command("w")
    if (m := re.match(r"winnable with (\d+) of the", reply)) is not None:
        return m.group(1) + ("" if "could not decide" in reply else " exact")
    return reply.split(":")[0]


def _studio_fewest(cells: bytes, adds: int, budget: int) -> str:
    w = game.winnable(game.replay(cells, adds, ()), budget)
    if w.status == SOLVED:
        return f"{w.fewest}" + (" exact" if w.exact else "")
    return "not winnable" if w.status == UNSOLVABLE else "unknown"


@pytest.mark.parametrize("budget", [40, 400, 20_000])
def test_play_and_the_studio_give_the_same_hint_and_fewest_adds(budget: int) -> None:
    """Under the same node budget, on the same positions (small budgets included, where the
    two used to differ: play tried each pair with a full budget and searched adds upwards)."""
    for cells, adds in positions(40):
        assert _play_hint(cells, adds, budget) == _studio_hint(cells, adds, budget), (cells, adds)
        assert _play_fewest(cells, adds, budget) == _studio_fewest(cells, adds, budget), (
            cells,
            adds,
        )


def test_fewest_adds_is_the_ratings_min_adds() -> None:
    """The rating's min_adds is the same search from the certificate, kept only when proved."""
    from pipeline.rating.score import rate

    board = "123456789/987654321/135"
    rating = rate(board, 2, playouts=4)
    certificate = solve(parse(board), 2).moves
    assert certificate is not None
    found = advice.fewest_adds(parse(board), 2, budget=5_000, certificate=certificate)
    assert rating.min_adds == found.proved


def test_fewest_adds_on_small_positions() -> None:
    won = advice.fewest_adds(parse("19"), 1, budget=1_000)
    assert (won.status, won.fewest, won.exact) == (SOLVED, 0, True)
    needs_add = advice.fewest_adds(parse("1.......9/5"), 1, budget=1_000)  # 1,9 then 5 alone
    assert (needs_add.fewest, needs_add.exact) == (1, True)
    assert advice.fewest_adds(parse("12"), 0, budget=1_000).status == UNSOLVABLE


def test_a_hint_is_a_pair_when_a_pair_keeps_the_stage_winnable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = advice.solve
    start = parse("123456789/987654321/135")

    def add_first(cells: bytes, adds: int, **kw: object) -> SolveResult:
        result = real(cells, adds, **kw)  # type: ignore[arg-type]
        if cells == start and result.moves is not None:  # a winning line that adds first
            line = real(cells + cells.replace(b"\x00", b""), adds - 1, **kw)  # type: ignore[arg-type]
            if line.moves is not None:
                return SolveResult(SOLVED, (ADD, *line.moves), result.nodes + line.nodes, 0.0)
        return result

    monkeypatch.setattr(advice, "solve", add_first)
    assert add_first(start, 2).moves[0].is_add  # type: ignore[index]
    h = advice.hint(start, 2, budget=200_000)
    assert (
        h.status == SOLVED
        and h.move is not None
        and h.move.first is not None
        and h.move.second is not None
    )
    after = DEFAULT.remove_pair(start, h.move.first, h.move.second)
    assert real(after, 2).status == SOLVED
