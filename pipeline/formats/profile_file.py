"""The rating-profile file (`kind: rating-profile`, schema `schemas/rating-profile.schema.json`):

    # yaml-language-server: $schema=../schemas/rating-profile.schema.json
    schema_version: 1
    kind: rating-profile
    name: casual-2026-12
    rating_version: 3
    weights: {random: 0.52, scanner: 0.0, lookahead: 0.1, opener: 0.0, local: 0.38, planner: 0.0, proximity: 0.0}
    tiers: {easy: [0.0, 44.1], medium: [44.1, 57.3], hard: [57.3, 86.0], expert: [86.0, 100.0]}
    digest: sha256:...          # of name, rating_version, weights and tiers
    fitted_from: {records, bad_records, attempts, abandons, puzzles, telemetry_digest, date}
    heldout: {folds, puzzles, fitted: {mae, spearman}, default: {mae, spearman}}

The text depends only on its inputs (keys in this order), so the same telemetry and options give
a byte-identical file. Reading one (hostile input included) is the validator's job:
`pipeline.validator.profiles.read_profile`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.atomic import write_guarded
from pipeline.formats.puzzle import SCHEMA_VERSION, dump_yaml
from pipeline.rating.profile import RatingProfile
from pipeline.schemas import schema_hint

PROFILE_KIND = "rating-profile"


def profile_document(
    profile: RatingProfile,
    fitted_from: Mapping[str, Any] | None = None,
    heldout: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The profile file's mapping, keys in their fixed order."""
    block = profile.block()
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": PROFILE_KIND,
        "name": profile.name,
        "rating_version": profile.version,
        "weights": block["weights"],
        "tiers": block["tiers"],
        "digest": profile.digest,
    }
    if fitted_from is not None:
        doc["fitted_from"] = dict(fitted_from)
    if heldout is not None:
        doc["heldout"] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in heldout.items()}
    return doc


def profile_text(doc: Mapping[str, Any], hint_for: str | os.PathLike[str] | None = None) -> str:
    """The YAML text of a profile file; with `hint_for`, the schema modeline as seen from there."""
    hint = schema_hint(PROFILE_KIND, Path(hint_for).parent) if hint_for is not None else None
    return dump_yaml(dict(doc), hint)


def write_profile(
    path: str | os.PathLike[str], doc: Mapping[str, Any], *, force: bool = False
) -> Path:
    """Write a profile file through the guarded write (a failed write leaves the old file; a
    file of another kind is refused unless `force`)."""
    return write_guarded(
        path, profile_text(doc, hint_for=path), kinds=("rating-profile",), force=force
    )
