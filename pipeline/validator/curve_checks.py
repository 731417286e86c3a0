"""Layer 3 for curve files: what the curve schema cannot say (tier names, dips in order, a
target given one way, unique curve names, a job naming a curve that exists). The checks are the
curve reader's own (`pipeline.formats.curves.problems`), so a file `validate` accepts is a file
`assemble --curve` and `nightly --curve` can read."""

from __future__ import annotations

from typing import Any

from pipeline.formats.curves import problems

Parts = tuple[Any, ...]
CODE = "NM320"


def curve_problems(data: Any, is_bad: Any) -> list[tuple[Parts, str, str]]:
    """(parts, code, message) for each problem not under a schema problem already reported."""
    return [
        (parts, CODE, message) for parts, message in problems(data, is_bad) if not is_bad(parts)
    ]
