"""Reading a rating-profile file the way the validator reads any level file.

A profile decides every score it touches, so it is checked as strictly as a puzzle: parsed by the
validator's loader (size cap, no tags, no alias bombs), checked against its schema and for
weights summing to 1, tiers from 0 to 100 and the digest (NM317). The first problem is the one
line the command prints.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import NumberMatchError
from pipeline.formats.loader import load_file
from pipeline.problems import first_problem
from pipeline.rating.profile import RatingProfile
from pipeline.validator import Validator


class ProfileFileError(NumberMatchError):
    """A profile file that cannot be used (names the file, the line and what is wrong)."""


def read_profile(path: str | os.PathLike[str]) -> RatingProfile:
    """The profile in `path`; ProfileFileError naming the file, line and problem otherwise."""
    p = Path(path)
    if not p.is_file():
        raise ProfileFileError(f"{p}: no such profile file")
    loaded = load_file(p)
    run = Validator()
    problems = run.add_loaded(loaded, str(p))
    data = loaded.document.data if loaded.document is not None else None
    if not problems and (not isinstance(data, dict) or data.get("kind") != "rating-profile"):
        kind = data.get("kind") if isinstance(data, dict) else None
        raise ProfileFileError(
            f"{p}: not a rating profile (kind {kind!r}; `numbermatch calibrate` writes one)"
        )
    if problems:
        raise ProfileFileError(first_problem(problems))
    assert isinstance(data, dict)
    return RatingProfile.from_block(data, str(p))
