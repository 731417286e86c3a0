"""A deliberately naive, independent reading of the rules (docs/rules.md) on a 2-D grid, for cross-checking.

It shares no code with the engine: rows are lists, cells are (row, col), paths are walked
cell by cell. Slow and obvious on purpose.
"""

from __future__ import annotations

Grid = list[list[int]]  # 0 = gap

PAIRS_TO_TEN = {(1, 9), (2, 8), (3, 7), (4, 6)}


def from_text(text: str) -> Grid:
    return (
        []
        if text == ""
        else [[0 if ch == "." else int(ch) for ch in row] for row in text.split("/")]
    )


def to_text(grid: Grid) -> str:
    return "/".join("".join(str(v) if v else "." for v in row) for row in grid)


def values_match(a: int, b: int) -> bool:
    return a == b or (min(a, b), max(a, b)) in PAIRS_TO_TEN


def exists(grid: Grid, r: int, c: int) -> bool:
    return 0 <= r < len(grid) and 0 <= c < len(grid[r])


def reading_order(grid: Grid) -> list[tuple[int, int]]:
    return [(r, c) for r in range(len(grid)) for c in range(len(grid[r]))]


def connected(grid: Grid, a: tuple[int, int], b: tuple[int, int]) -> bool:
    order = reading_order(grid)
    ia, ib = sorted((order.index(a), order.index(b)))
    if all(grid[r][c] == 0 for r, c in order[ia + 1 : ib]):
        return True  # horizontal, or row end to next row start
    (r1, c1), (r2, c2) = sorted((a, b))
    for dr, dc in ((1, 0), (1, 1), (1, -1)):
        r, c = r1 + dr, c1 + dc
        while r <= r2 and 0 <= c < 9:
            if (r, c) == (r2, c2):
                return True
            if exists(grid, r, c) and grid[r][c]:
                break
            r, c = r + dr, c + dc
    return False


def legal_pairs(grid: Grid) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    cells = [(r, c) for r, c in reading_order(grid) if grid[r][c]]
    out = []
    for x, a in enumerate(cells):
        for b in cells[x + 1 :]:
            if values_match(grid[a[0]][a[1]], grid[b[0]][b[1]]) and connected(grid, a, b):
                out.append((a, b))
    return out


def remove(grid: Grid, a: tuple[int, int], b: tuple[int, int]) -> Grid:
    g = [row[:] for row in grid]
    g[a[0]][a[1]] = 0
    g[b[0]][b[1]] = 0
    return [row for row in g if any(row)]


def add_numbers(grid: Grid) -> Grid:
    flat = [v for row in grid for v in row]
    flat += [v for v in flat if v]
    return [flat[i : i + 9] for i in range(0, len(flat), 9)]
