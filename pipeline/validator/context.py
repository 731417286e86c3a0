"""What layer 3 and the deep check share about one document being checked (its own module so
that `semantics` can call `deep` without the two importing each other)."""

from __future__ import annotations

from typing import Any

from pipeline.formats.loader import Document, find_node, position
from pipeline.problems import Problem, json_path

SCORE_TOLERANCE = 0.01
DEEP_TIER_MARGIN = 5.0  # --deep without a recorded rating seed: how far outside the tier counts

Parts = tuple[Any, ...]
CORE_FIELDS = ("id", "ruleset", "board", "adds", "solution", "difficulty")


class Context:
    """One document being checked: where things are, what to skip, what was found."""

    def __init__(self, doc: Document, name: str, bad: set[Parts]) -> None:
        self.doc, self.name = doc, name
        self.bad = bad
        self.under_bad = {b[:n] for b in bad for n in range(len(b) + 1)}
        self.problems: list[Problem] = []

    def is_bad(self, parts: Parts) -> bool:
        """Whether a schema problem lies at or under `parts` (then layer 3 leaves it alone)."""
        return parts in self.under_bad

    def core_ok(self, parts: Parts) -> bool:
        """Whether the puzzle mapping at `parts` and its core fields passed the schema."""
        return parts not in self.bad and not any(self.is_bad(parts + (f,)) for f in CORE_FIELDS)

    def get(self, parts: Parts) -> Any:
        value = self.doc.data
        for part in parts:
            value = value[part]
        return value

    def pos(self, parts: Parts) -> tuple[int | None, int | None]:
        node, _, _ = find_node(self.doc.node, list(parts))
        return position(node)

    def add(self, parts: Parts, code: str, message: str) -> None:
        line, col = self.pos(parts)
        self.problems.append(Problem(self.name, line, col, code, message, json_path(parts)))
