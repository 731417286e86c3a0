"""Helpers several test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset


@lru_cache(maxsize=None)
def unpruned_win(cells: bytes, adds: int, ruleset: Ruleset = DEFAULT) -> bool:
    """Unpruned exhaustive search through the ruleset's public functions: every pair, and an
    add at any time. The yardstick every pruned search is checked against."""
    if not cells:
        return True
    if any(unpruned_win(ruleset.remove_pair(cells, i, j), adds, ruleset) for i, j in ruleset.legal_pairs(cells)):
        return True
    return adds > 0 and unpruned_win(ruleset.add_numbers(cells), adds - 1, ruleset)


def click_cell(page: Any, i: int) -> None:
    """Click a cell of the studio's stage page (a Playwright page) and wait for the next page."""
    with page.expect_navigation():
        page.locator(f'button.cell[data-i="{i}"]').click()


def play(page: Any, move: Move) -> None:
    """Play one move on the studio's stage page: two cell clicks, or Add numbers."""
    if move.is_add:
        with page.expect_navigation():
            page.locator("#add").click()
    else:
        assert move.first is not None and move.second is not None
        click_cell(page, move.first)
        click_cell(page, move.second)
