"""Fit the search's screen (`pipeline.generation.screen.FIT`) on rated random boards.

Run: `python -m research.fit_screen [BOARDS_PER_SIZE] [OUT.jsonl]`. For each board size and adds
allocation the nightly and the bench use, it rates random solvable boards in full and records
the win/loss sequence of each player the screen plays (their games on the rating's own seed: the
screen plays exactly these games, so what it learns the rating reuses). For each screening stage
(`STAGES`: how many games of which players) it fits, by least squares, the full score on
(1, each player's loss rate over its first games, adds), and prints the stage with its line and
RMS error: the rows of `STAGES`.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from pipeline.engine.rulesets import DEFAULT
from pipeline.generation.proposals import DigitDistribution, reading_order_reduction
from pipeline.generation.screen import STAGES
from pipeline.rating import DEFAULT_SEED
from pipeline.rating.players import PLAYERS, Games
from pipeline.rating.score import rate
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import SOLVED, solve

SIZES = ((27, 2), (27, 3), (30, 2), (30, 1), (36, 1))  # the bench's and the nightly's tier plans
# each screened player and the most games of it a stage plays
SCREENED: dict[str, int] = {
    name: max(n for stage in STAGES for who, n in stage.games if who == name)
    for name in sorted({name for stage in STAGES for name, _ in stage.games})
}


def sample(cells: int, adds: int, boards: int) -> list[dict]:
    """`boards` rated random solvable boards of this size, with the game results of each player the screen plays."""
    digits, k = DigitDistribution.parse(None), 0
    rows: list[dict] = []
    while len(rows) < boards:
        rng = random.Random(f"fit-screen:{cells}:{adds}:{k}")
        k += 1
        board = bytes(digits.draw(rng, cells))
        if not reading_order_reduction(board, adds, DEFAULT.class_of):
            continue
        solved = solve(board, adds, ruleset=DEFAULT, budget_nodes=DEFAULT_SOLVE_NODES)
        if solved.status != SOLVED or solved.moves is None:
            continue
        # the screened players' games on the rating's own seed, which the rating takes over
        games = {
            p.name: Games(p, board, adds, DEFAULT_SEED, DEFAULT, record=p.name == "random")
            for p in PLAYERS
            if p.name in SCREENED
        }
        rating = rate(board, adds, solution=solved.moves, played=tuple(games.values()))
        if rating.score is None:
            continue
        lost = {
            name: "".join("0" if g.won else "1" for g in games[name].first(n))
            for name, n in SCREENED.items()
        }
        rows.append({"cells": cells, "adds": adds, "score": rating.score, "lost": lost})
    return rows


def least_squares(x: list[list[float]], y: list[float]) -> list[float]:
    """The coefficients minimising the squared error of x @ c - y (normal equations, Gauss-Jordan)."""
    n = len(x[0])
    a = [
        [sum(row[i] * row[j] for row in x) for j in range(n)]
        + [sum(row[i] * t for row, t in zip(x, y))]
        for i in range(n)
    ]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[pivot] = a[pivot], a[c]
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [u - f * v for u, v in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] for i in range(n)]


def fit(rows: list[dict]) -> None:
    """Print each stage of `STAGES` with its line (intercept, a slope per player, per add) and RMS error."""
    y = [r["score"] for r in rows]
    for stage in STAGES:
        x = [
            [
                1.0,
                *(r["lost"][name][:n].count("1") / n for name, n in stage.games),
                float(r["adds"]),
            ]
            for r in rows
        ]
        coef = least_squares(x, y)
        rms = (
            sum((sum(c * v for c, v in zip(coef, row)) - t) ** 2 for row, t in zip(x, y)) / len(y)
        ) ** 0.5
        slopes = ", ".join(f"{c:.2f}" for c in coef[1:-1])
        print(
            f"    Stage({stage.games!r}, {coef[0]:.2f}, ({slopes}), {coef[-1]:.2f}, {rms:.2f}, below={stage.below}),"
        )


def main() -> None:
    boards = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    rows = []
    if out is not None and out.exists():
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        for cells, adds in SIZES:
            rows += sample(cells, adds, boards)
        if out is not None:
            out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(
        f"{len(rows)} boards ({', '.join(f'{c}/{a}' for c, a in SIZES)}); scores {min(r['score'] for r in rows):g}-"
        f"{max(r['score'] for r in rows):g}"
    )
    fit(rows)


if __name__ == "__main__":
    main()
