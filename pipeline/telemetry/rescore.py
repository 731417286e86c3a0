"""`numbermatch rescore --profile FILE PATH...`: re-score stored puzzles under a rating profile.

A score is computed from the stored win rates, so a profile re-scores a puzzle without replaying
a game. Each difficulty block (a puzzle file's, or every Stage's in a bundle) gets the score and
tier under the profile and a `profile` record (name, digest, weights, tiers); the rest of the
text is kept byte for byte: only the `tier` and `score` values are replaced and the `profile`
block inserted (or replaced) in place. The new text must parse to exactly the old data with the
new blocks and must validate, else the file is not written; writes are atomic, so a failed run
leaves every file as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pipeline.atomic import Snapshot, snapshot, write_guarded
from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.loader import find_node, load_text
from pipeline.formats.puzzle import dump_yaml
from pipeline.formats.scale import BUNDLE_KEY, bundle_scale, convert_target
from pipeline.rating.profile import RatingProfile, rescored
from pipeline.validator import validate_texts


class RescoreError(NumberMatchError):
    """A file that cannot be re-scored (names it and why)."""


@dataclass(frozen=True)
class Rescored:
    """One file's new text and what changed; `base` is the file as it was read (the write is
    refused if it changed on disk since)."""

    path: Path
    text: str
    blocks: int  # difficulty blocks re-scored
    changed: int  # of which the score or tier moved
    base: Snapshot


def _difficulty_paths(data: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    if data.get("kind") == "bundle":
        for stage in Bundle.from_dict(data).stages:
            yield ("levels", stage.level_index, "stages", stage.stage_index, "puzzle", "difficulty")
    elif data.get("kind") == "puzzle":
        yield ("difficulty",)


def _scalar(value: Any) -> str:
    """A scalar as the project's YAML writer spells it."""
    text = yaml.safe_dump(value, default_flow_style=False)
    return text.split("\n...")[0].strip()


def _last_scalar(node: Node) -> Node:
    while isinstance(node, (MappingNode, SequenceNode)) and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    return node


class _Offsets:
    def __init__(self, text: str) -> None:
        self.starts = [0]
        for k, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(k + 1)

    def at(self, mark: yaml.Mark) -> int:
        return self.starts[mark.line] + mark.column


def rescore_text(text: str, name: str, profile: RatingProfile) -> tuple[str, int, int]:
    """(new text, blocks, changed) for one level file's text; RescoreError when it cannot."""
    before = validate_texts([(name, text)])
    if not before.ok:
        raise RescoreError(
            f"{name}: not rescored, the file does not validate: {before.first_problem()}"
        )
    doc = load_text(text, name).document
    if (
        doc is None
        or not isinstance(doc.data, dict)
        or doc.data.get("kind") not in ("puzzle", "bundle")
    ):
        raise RescoreError(f"{name}: not a puzzle file or a bundle")
    offsets = _Offsets(text)
    edits: list[tuple[int, int, str]] = []
    expected = yaml.safe_load(text)
    blocks = changed = 0
    for parts in _difficulty_paths(doc.data):
        node, _, found = find_node(doc.node, list(parts))
        old = _get(doc.data, parts)
        if (
            not found
            or not isinstance(node, MappingNode)
            or node.flow_style
            or Difficulty.from_dict(old).score is None
        ):
            continue
        new = rescored(old, profile)
        blocks += 1
        changed += Difficulty.from_dict(new) != Difficulty.from_dict(old)
        _set(expected, parts, new)
        keys = {k.value: (k, v) for k, v in node.value if isinstance(k, ScalarNode)}
        value = Difficulty.from_dict(new)
        replaced: tuple[tuple[str, Any], ...] = (("tier", value.tier), ("score", value.score))
        for key, scalar in replaced:
            _, v = keys[key]
            edits.append((offsets.at(v.start_mark), offsets.at(v.end_mark), _scalar(scalar)))
        indent = " " * node.value[0][0].start_mark.column
        block = dump_yaml({"profile": new["profile"]}).rstrip("\n").replace("\n", "\n" + indent)
        if "profile" in keys:
            k, v = keys["profile"]
            edits.append((offsets.at(k.start_mark), offsets.at(_last_scalar(v).end_mark), block))
        else:
            end = offsets.at(_last_scalar(node.value[-1][1]).end_mark)
            edits.append((end, end, "\n" + indent + block))
    if doc.data.get("kind") == "bundle" and blocks:
        edits += _bundle_scale_edits(doc, offsets, expected, profile)
    out = text
    for start, end, repl in sorted(edits, reverse=True):
        out = out[:start] + repl + out[end:]
    if yaml.safe_load(out) != expected:
        raise RescoreError(
            f"{name}: not rescored: the file's layout is one this command cannot edit in place "
            "(hand-formatted difficulty blocks?); `numbermatch puzzle --refresh` rewrites it"
        )
    after = validate_texts([(name, out)])
    if not after.ok:
        raise RescoreError(
            f"{name}: not rescored, the result would not validate: {after.first_problem()}"
        )
    return out, blocks, changed


def _bundle_scale_edits(
    doc: Any, offsets: _Offsets, expected: dict[str, Any], profile: RatingProfile
) -> list[tuple[int, int, str]]:
    """A re-scored bundle says which scale its scores are on (`score_profile`), and its Stages'
    targets move to that scale too (each keeps its tier and its place in it), so every reader
    compares scores with targets on one scale."""
    edits = []
    data = doc.data
    old = bundle_scale(data, "bundle")
    for stage in Bundle.from_dict(data).stages:
        if stage.target_score is None:
            continue
        parts = ("levels", stage.level_index, "stages", stage.stage_index, "target_score")
        node, _, found = find_node(doc.node, list(parts))
        if not found or not isinstance(node, ScalarNode):
            continue
        version = Difficulty.from_dict(stage.puzzle.difficulty).version
        moved = convert_target(stage.target_score, old, profile, version)
        _set(expected, parts, moved)
        edits.append((offsets.at(node.start_mark), offsets.at(node.end_mark), _scalar(moved)))
    expected[BUNDLE_KEY] = profile.block()
    block = dump_yaml({BUNDLE_KEY: profile.block()}).rstrip("\n")
    keys = {k.value: (k, v) for k, v in doc.node.value if isinstance(k, ScalarNode)}
    if BUNDLE_KEY in keys:
        k, v = keys[BUNDLE_KEY]
        edits.append((offsets.at(k.start_mark), offsets.at(_last_scalar(v).end_mark), block))
    else:  # before the Levels (the last key the project's writer puts first)
        first = next((k for k, _ in doc.node.value if getattr(k, "value", None) == "levels"), None)
        if first is not None:
            at = offsets.at(first.start_mark)
            edits.append((at, at, block + "\n"))
    return edits


def _get(data: Any, parts: tuple[Any, ...]) -> Any:
    for p in parts:
        data = data[p]
    return data


def _set(data: Any, parts: tuple[Any, ...], value: Any) -> None:
    _get(data, parts[:-1])[parts[-1]] = value


def rescore_file(path: str | os.PathLike[str], profile: RatingProfile) -> Rescored:
    """Re-score one file's text (not written: see `write_rescored`)."""
    p = Path(path)
    base = snapshot(p)
    if base.data is None:
        raise RescoreError(f"{p}: no such file")
    try:
        text = base.data.decode("utf-8")
    except UnicodeDecodeError:
        raise RescoreError(f"{p}: not UTF-8 text") from None
    out, blocks, changed = rescore_text(text, str(p), profile)
    return Rescored(p, out, blocks, changed, base)


def write_rescored(result: Rescored) -> None:
    """Write a re-scored file (atomic, under the file's lock, refused when it changed since it
    was read: `pipeline.atomic.write_guarded`); unchanged text is not rewritten."""
    if result.base.text != result.text:
        write_guarded(result.path, result.text, base=result.base)
