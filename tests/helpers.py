"""Helpers several test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

from functools import lru_cache

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
