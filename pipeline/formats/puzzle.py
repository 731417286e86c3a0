"""The Puzzle document: what a puzzle file holds, its content-derived id, and its YAML text.

A puzzle file (kind `puzzle`, schema `schemas/puzzle.schema.json`) looks like:

    # yaml-language-server: $schema=<path>/schemas/puzzle.schema.json
    schema_version: 1
    kind: puzzle
    id: nm1-3f2a9c0d1e7b
    ruleset: 1
    board: 123456789/98765
    adds: 1
    solution: ['0,0-1,0', '+', ...]
    difficulty: {tier: medium, score: 41.2, ...metrics}
    provenance: {generator: numbermatch 0.1.0, strategy: random, seed: 7, params: {...}}

Keys are always written in this order so diffs between runs stay readable.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from pipeline import __version__
from pipeline.engine.canonical import canonical_key
from pipeline.engine.rulesets import DEFAULT
from pipeline.formats.difficulty import Difficulty
from pipeline.rating.profile import RatingProfile, rescored

SCHEMA_VERSION = 1
PUZZLE_KIND = "puzzle"
BUNDLE_KIND = "bundle"
GENERATOR_NAME = f"numbermatch {__version__}"

try:  # the C emitter/loader when PyYAML was built with libyaml
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]


def puzzle_id(board: str, adds: int, ruleset: int = DEFAULT.number) -> str:
    """A stable id derived from what makes a puzzle itself: ruleset, board and adds."""
    digest = hashlib.sha256(f"{ruleset}|{board}|{adds}".encode()).hexdigest()
    return f"nm{ruleset}-{digest[:12]}"


@dataclass(frozen=True)
class Puzzle:
    """A validated starting board plus its rule-relevant configuration and evidence."""

    board: str
    adds: int
    solution: tuple[str, ...]
    difficulty: dict[str, Any]
    ruleset: int = DEFAULT.number
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return puzzle_id(self.board, self.adds, self.ruleset)

    @property
    def rated(self) -> Difficulty:
        """The difficulty block as a value: where its score and tier are read."""
        return Difficulty.from_dict(self.difficulty)

    @property
    def key(self) -> str:
        """The canonical key: the same for every relabelled copy (`pipeline.engine.canonical`)."""
        return canonical_key(self.board, self.adds, self.ruleset)

    @property
    def tier(self) -> str:
        return self.rated.tier

    def core_dict(self) -> dict[str, Any]:
        """The puzzle as a bundle embeds it: no schema header, no provenance."""
        return {
            "id": self.id,
            "ruleset": self.ruleset,
            "board": self.board,
            "adds": self.adds,
            "solution": list(self.solution),
            "difficulty": dict(self.difficulty),
        }

    def to_document(self) -> dict[str, Any]:
        """The puzzle as a standalone file."""
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "kind": PUZZLE_KIND}
        doc.update(self.core_dict())
        if self.provenance:
            doc["provenance"] = dict(self.provenance)
        return doc

    def under(self, profile: RatingProfile | None) -> Puzzle:
        """This puzzle scored under a rating profile (its difficulty block re-scored from the
        stored win rates, the profile recorded); itself when `profile` is None."""
        if profile is None:
            return self
        return dataclasses.replace(self, difficulty=rescored(self.difficulty, profile))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Puzzle:
        """Build from a (schema-valid) puzzle mapping, standalone or embedded in a bundle."""
        return cls(
            board=str(data["board"]),
            adds=int(data["adds"]),
            solution=tuple(str(m) for m in data.get("solution") or ()),
            difficulty=dict(data.get("difficulty") or {}),
            ruleset=int(data.get("ruleset", DEFAULT.number)),
            provenance=dict(data.get("provenance") or {}),
        )


def dump_yaml(doc: Any, schema_hint: str | None = None) -> str:
    """YAML text with keys in insertion order; optional editor modeline on the first line."""
    text = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )
    if schema_hint:
        text = f"# yaml-language-server: $schema={schema_hint}\n" + text
    return text
