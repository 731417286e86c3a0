"""The canonical key of a puzzle: one name for every board that plays as the same puzzle.

Two cells pair exactly when their values are in the same class of the ruleset (`Ruleset.
value_class`; ruleset 1: 1/9, 2/8, 3/7, 4/6, 5), and Add numbers copies what is left, so it
copies classes too. Two boards with the same class layout (the board with every digit replaced
by its class, gaps kept) therefore have the same legal pairs now and after every move and every
add: they play move for move alike. The mirror v -> 10 - v is one such copy, and so is any
board with some 1s turned into 9s. A player who met one has met them all.

    class_layout("19.55", ruleset) == "11.55"
    canonical_key("915/3", 1) == canonical_key("195/7", 1) == "nmc1-..."

The key hashes the ruleset number, the class layout and the adds (the same board with another
adds allocation is another puzzle). It is the key "never ship twice" is checked on. A puzzle's
`id` stays what it was (a hash of the exact board): ids in existing files keep validating and
name one exact board; the key is derived, never stored in a file, so it cannot go stale.
"""

from __future__ import annotations

import hashlib

from pipeline.engine.board import WIDTH, parse
from pipeline.engine.rulesets import DEFAULT, Ruleset, ruleset_for

KEY_PREFIX = "nmc"  # nmc<ruleset>-<16 hex digits>
_CLASS_TEXT = "." + "".join(chr(ord("0") + k) for k in range(1, 256))  # class k as a character


def class_layout(board: str, ruleset: Ruleset | int = DEFAULT) -> str:
    """The board's value-class pattern in board notation: equal layouts play alike.

    Raises NotationError (a ValueError naming the board) for a board that does not parse."""
    cells = parse(board).translate(ruleset_for(ruleset).class_of)
    text = "".join(_CLASS_TEXT[k] for k in cells)
    return "/".join(text[s : s + WIDTH] for s in range(0, len(text), WIDTH))


def key_of_layout(layout: str, adds: int, ruleset_number: int) -> str:
    """The canonical key of a class layout with its adds under a ruleset number."""
    digest = hashlib.sha256(f"{ruleset_number}|{layout}|{adds}".encode()).hexdigest()
    return f"{KEY_PREFIX}{ruleset_number}-{digest[:16]}"


def canonical_key(board: str, adds: int, ruleset: Ruleset | int = DEFAULT) -> str:
    """The key shared by every board of this board's class layout, with its adds and ruleset."""
    rs = ruleset_for(ruleset)
    return key_of_layout(class_layout(board, rs), adds, rs.number)


__all__ = ["KEY_PREFIX", "canonical_key", "class_layout", "key_of_layout"]
