"""The one ray table (`board.lines_through`) and its three views: the move generator's forward
rays, the players' crossing lines, and the solver's per-row-pattern masks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.engine.board import WIDTH, crossing_lines, lines_through, rays
from pipeline.solver.mask import forward_masks

DIRECTIONS = ((1, 0), (1, 1), (1, -1))  # column, down-right, down-left (the table's order)


def walk(n: int, rows: list[int], i: int, dr_sign: int, dc: int) -> tuple[int, ...]:
    """Cells met from cell i through the listed rows, nearest first, by coordinates."""
    r, c = divmod(i, WIDTH)
    ahead = [q for q in rows if q > r] if dr_sign > 0 else [q for q in reversed(rows) if q < r]
    out = []
    for k, q in enumerate(ahead, 1):
        col = c + dc * k
        if not 0 <= col < WIDTH or q * WIDTH + col >= n:
            break
        out.append(q * WIDTH + col)
    return tuple(out)


@given(st.integers(0, 120))
def test_every_line_is_the_straight_walk_both_ways(n: int) -> None:
    rows = list(range((n + WIDTH - 1) // WIDTH))
    table = lines_through(n)
    assert len(table) == n
    for i, cell in enumerate(table):
        for (back, fwd), (_, dc) in zip(cell, DIRECTIONS):
            assert fwd == walk(n, rows, i, 1, dc)
            assert back == walk(n, rows, i, -1, -dc)


@given(st.integers(0, 120))
def test_views_are_the_table(n: int) -> None:
    table = lines_through(n)
    assert rays(n) == tuple(tuple(f for _, f in cell if f) for cell in table)
    assert crossing_lines(n) == tuple(
        tuple(line for line in cell if line[0] and line[1]) for cell in table
    )


@settings(max_examples=200)
@given(
    st.integers(1, 90).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(1, (1 << ((n + WIDTH - 1) // WIDTH)) - 1))
    )
)
def test_solver_masks_are_the_rays_of_the_collapsed_board(case: tuple[int, int]) -> None:
    """With some rows gone, a live cell's masks are the rays of the board the live rows make."""
    n, pattern = case
    live = [r for r in range((n + WIDTH - 1) // WIDTH) if pattern >> r & 1]
    base = [i for r in live for i in range(r * WIDTH, min(n, (r + 1) * WIDTH))]  # collapsed -> base
    collapsed = rays(len(base))
    masks = forward_masks(n, pattern)
    for k, i in enumerate(base):
        assert masks[i] == tuple(sum(1 << base[j] for j in ray) for ray in collapsed[k])
