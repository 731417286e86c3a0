"""Every rule and decision of docs/rules.md under a stable id, found on the page by a phrase.

A case names the rules it tests by these ids. tests/test_conformance.py reads docs/rules.md:
every bullet of the page must contain the phrase of exactly one rule (so a new rule on the page
fails until it has an id here) and every rule must have a case in the suite.
"""

from __future__ import annotations

# id -> a phrase of docs/rules.md that only this rule's bullet (or sentence) contains
RULES: dict[str, str] = {
    "board.rows": "9 columns. Cells are in reading order",
    "board.cells": "A cell is **active** (a number 1-9) or a **gap**",
    "board.names": "A cell is named `R,C`",
    "board.notation": "Notation: rows joined by `/`",
    "board.refused": "A row with no active number cannot be written",
    "board.trailing-gaps": "The last row may end in gaps",
    "pair.values": "**Values**: the numbers are equal, or they sum to 10",
    "pair.connection": "**Connection**: the cells lie on one straight path",
    "pair.reading-order": "**reading order**: from one cell to the next in reading order",
    "pair.vertical": "**vertical**: the same column",
    "pair.diagonal": "**diagonal**: the same diagonal",
    "pair.gaps-transparent": "Gaps are transparent, active numbers block",
    "pair.edges": "Reading order does not wrap from the last cell",
    "pair.any-path": "Any one open path is enough",
    "pair.current-board": "A cell never pairs with itself",
    "remove.gaps": "Both cells become gaps; no other cell moves",
    "remove.collapse": "Then every row with no active number left disappears",
    "remove.row-stays": "A row keeping one active number stays",
    "add.append": "Copies the values of all active cells",
    "add.no-fill": "It never fills gaps, shuffles or moves a cell",
    "add.any-time": "It is the player's choice whenever the Stage has an add left",
    "add.empty-board": "On the empty board there is nothing to copy",
    "stage.adds": "it owns its adds left, which start fresh for every Stage",
    "stage.status": "A Stage is **won** when the board is empty",
    "stage.solvable": "A Puzzle is **solvable** when",
    "stage.ruleset": "Every Puzzle names its ruleset",
    "moves.text": "A pair is `R,C-R,C` (first cell first",
}

RANDOM_GROUP = "random"  # the group of the seeded random cases, which test no one rule
