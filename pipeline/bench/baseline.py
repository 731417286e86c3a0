"""The plain baseline the solver benchmark measures against: depth-first search with a visited set.

It is what the issue calls "a straightforward depth-first search with a visited set": the public
engine functions (`legal_pairs`, `remove_pair`, `add_numbers`), every legal move at every state,
adds tried after the pairs, a set of visited (cells, adds left) states, no pruning, no ordering.
"""

from __future__ import annotations

import sys

from pipeline.engine.rules import add_numbers, legal_pairs, remove_pair


class BaselineCapped(Exception):
    """The node cap ran out before an answer."""


def baseline_solve(cells: bytes, adds: int, node_cap: int | None = None) -> tuple[bool, int]:
    """(solvable, nodes expanded). Raises BaselineCapped when `node_cap` expansions were not enough."""
    visited: set[tuple[bytes, int]] = set()
    nodes = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def dfs(c: bytes, a: int) -> bool:
        nonlocal nodes
        if not c:
            return True
        key = (c, a)
        if key in visited:
            return False
        visited.add(key)
        nodes += 1
        if node_cap is not None and nodes > node_cap:
            raise BaselineCapped
        for i, j in legal_pairs(c):
            if dfs(remove_pair(c, i, j), a):
                return True
        return a > 0 and dfs(add_numbers(c), a - 1)

    return dfs(cells, adds), nodes
