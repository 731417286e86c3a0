"""The scale a score is on: the rating's own, or a rating profile's. One scale per bundle.

A difficulty block scored under a profile says so (`difficulty.profile`); a bundle whose scores
are on a profile says so too (`score_profile`, the same record, written by `rescore --profile` and
by a night or an assembly under a profile), and its Stages' scores and `target_score`s are all on
it. Readers and writers (swap, the studio's Save, assemble, the report, the nightly, the stock)
call the few functions here, so a score is never compared with one on another scale: a puzzle
going into a bundle is put on the bundle's scale (`on_scale`: its stored win rates re-scored,
no game replayed), one going into the stock on the rating's own (the stock holds one scale), and
`mixed` names puzzles that cannot share a bundle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle, BundleError
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.puzzle import Puzzle
from pipeline.rating.profile import ProfileError, RatingProfile, profile_of, rescored
from pipeline.rating.tiers import TIERS_BY_VERSION

BUNDLE_KEY = "score_profile"  # the bundle's record of the profile its scores are on


class ScaleError(NumberMatchError):
    """Scores on two scales that one file or command would mix (names both)."""


def bundle_profile(doc: Mapping[str, Any], name: str = "bundle") -> RatingProfile | None:
    """The profile a bundle document's scores are on (None: the rating's own scale)."""
    block = doc.get(BUNDLE_KEY) if isinstance(doc, Mapping) else None
    if block is None:
        return None
    if not isinstance(block, Mapping):
        raise ScaleError(f"{name}: $.{BUNDLE_KEY}: must be a rating profile record")
    try:
        return RatingProfile.from_block(block, f"{name}: $.{BUNDLE_KEY}")
    except ProfileError as exc:
        raise ScaleError(str(exc)) from exc


def block_profile(difficulty: Mapping[str, Any]) -> RatingProfile | None:
    """The profile a difficulty block is scored under (None: its rating version's own mix; a
    malformed record counts as none here: the validator reports it as NM317)."""
    try:
        return profile_of(difficulty)
    except ProfileError:
        return None


def same_scale(a: RatingProfile | None, b: RatingProfile | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.digest == b.digest)


def scale_name(profile: RatingProfile | None) -> str:
    """`the rating's own scale` or `profile 'casual' (sha256:1234abcd)`, for messages."""
    if profile is None:
        return "the rating's own scale"
    return f"profile {profile.name!r} ({profile.digest[:15]})"


def tiers_of(profile: RatingProfile | None, version: int | None = None) -> Sequence[Any]:
    """The tier table (name, low, high) a score on this scale is read by."""
    if profile is not None:
        return profile.tiers
    if version in TIERS_BY_VERSION:
        return TIERS_BY_VERSION[version]
    return TIERS_BY_VERSION[max(TIERS_BY_VERSION)]


def on_scale(difficulty: Mapping[str, Any], profile: RatingProfile | None) -> dict[str, Any]:
    """The block scored on `profile`'s scale (None: the rating's own), from its stored win rates;
    unchanged when it already is. ScaleError when it cannot be (another rating version)."""
    if same_scale(block_profile(difficulty), profile):
        return dict(difficulty)
    try:
        return rescored(difficulty, profile)
    except ProfileError as exc:
        raise ScaleError(str(exc)) from exc


def convert_target(
    score: float, source: RatingProfile | None, target: RatingProfile | None, version: int = 3
) -> float:
    """A curve target moved from one scale to another: the same place within its tier (a curve
    says "medium, halfway"), so a target keeps its tier and its position in it."""
    if same_scale(source, target):
        return score
    old, new = tiers_of(source, version), tiers_of(target, version)
    by_name = {name: (low, high) for name, low, high in new}
    for name, low, high in old:
        if (low <= score < high or (score == high == old[-1][2])) and name in by_name:
            lo2, hi2 = by_name[name]
            return round(float(lo2 + (score - low) / (high - low) * (hi2 - lo2)), 2)
    return score


def off_scale(
    blocks: Iterable[tuple[str, Mapping[str, Any]]],
    want: RatingProfile | None,
    where: str = "the bundle",
) -> str | None:
    """One line naming the first (name, difficulty block) scored on another scale than `want`
    (the scale of `where`), or None when all are on it."""
    for name, block in blocks:
        found = block_profile(block)
        if not same_scale(found, want):
            return (
                f"{name} is scored on {scale_name(found)}, {where} on {scale_name(want)}:"
                " one bundle holds one scale (`numbermatch rescore --profile` puts files on one)"
            )
    return None


def check_same(blocks: Iterable[tuple[str, Mapping[str, Any]]]) -> RatingProfile | None:
    """The one scale these blocks share (the first one's); ScaleError naming the first that
    differs (what assemble refuses: puzzles on two scales cannot make one bundle)."""
    items = list(blocks)
    if not items:
        return None
    want = block_profile(items[0][1])
    problem = off_scale(items[1:], want, items[0][0])
    if problem is not None:
        raise ScaleError(problem)
    return want


def tier_of(score: float, profile: RatingProfile | None) -> str:
    """The tier of a score (a target's) on this scale."""
    if profile is not None:
        return profile.tier_for(score)
    for name, low, high in tiers_of(None):
        if low <= score < high:
            return str(name)
    return str(tiers_of(None)[-1][0])


def puzzle_on(puzzle: Puzzle, profile: RatingProfile | None) -> Puzzle:
    """The puzzle with its difficulty on `profile`'s scale (`on_scale`); itself when it is."""
    if same_scale(block_profile(puzzle.difficulty), profile):
        return puzzle
    return dataclasses.replace(puzzle, difficulty=on_scale(puzzle.difficulty, profile))


def on_bundle_scale(
    puzzles: Iterable[Puzzle], doc: Mapping[str, Any], name: str = "bundle"
) -> list[Puzzle]:
    """Candidates for a bundle's Stages, each on the bundle's scale (`bundle_scale`: ScaleError
    for a bundle on two); one that cannot be put on it (another rating version) is left out."""
    scale = bundle_scale(doc, name)
    out = []
    for p in puzzles:
        try:
            out.append(puzzle_on(p, scale))
        except ScaleError:
            continue
    return out


def stage_blocks(doc: Mapping[str, Any], name: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(`name:L1.S2`, difficulty block) of every scored Stage of a bundle document."""
    try:
        stages = Bundle.from_dict(doc, name).stages
    except BundleError:
        return []
    out = []
    for s in stages:
        block = s.data.get("puzzle", {}).get("difficulty") if isinstance(s.data, Mapping) else None
        if isinstance(block, Mapping) and Difficulty.from_dict(block).score is not None:
            out.append((f"{name}:{s.slot}", block))
    return out


def stages_scale(stages: Iterable[Mapping[str, Any]]) -> RatingProfile | None:
    """The scale of a validated bundle's Stage mappings (its first scored Stage's: NM322 holds
    the others to it)."""
    for stage in stages:
        puzzle = stage.get("puzzle") if isinstance(stage, Mapping) else None
        block = puzzle.get("difficulty") if isinstance(puzzle, Mapping) else None
        if isinstance(block, Mapping) and Difficulty.from_dict(block).score is not None:
            return block_profile(block)
    return None


def puzzles_tiers(puzzles: Iterable[Puzzle]) -> Sequence[Any]:
    """The tier table of the scale these puzzles are on (a bundle's: one scale), for charts."""
    for p in puzzles:
        if p.rated.score is not None:
            return tiers_of(block_profile(p.difficulty), p.rated.version)
    return tiers_of(None)


def bundle_scale(doc: Mapping[str, Any], name: str = "bundle") -> RatingProfile | None:
    """The one scale a bundle's scores are on: its `score_profile` record, or for a bundle
    without one (written before bundles recorded it) the scale its Stages share. ScaleError in
    one line naming the first Stage on another: every reader and writer refuses a mixed bundle."""
    blocks = stage_blocks(doc, name)
    if isinstance(doc, Mapping) and doc.get(BUNDLE_KEY) is not None:
        want = bundle_profile(doc, name)
        problem = off_scale(blocks, want, name)
        if problem is not None:
            raise ScaleError(problem)
        return want
    return check_same(blocks)


__all__ = [
    "BUNDLE_KEY",
    "ScaleError",
    "block_profile",
    "bundle_profile",
    "bundle_scale",
    "check_same",
    "convert_target",
    "off_scale",
    "on_bundle_scale",
    "on_scale",
    "puzzle_on",
    "puzzles_tiers",
    "same_scale",
    "scale_name",
    "stage_blocks",
    "stages_scale",
    "tier_of",
    "tiers_of",
]
