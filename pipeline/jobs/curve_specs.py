"""A curve by spec: a built-in name, `FILE` or `FILE:NAME`. Reading a designer's curve file goes
through the validator first (so a file `validate` accepts is a file `assemble --curve` and
`nightly --curve` can read), which is why this lives above the curve language in `formats`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pipeline.errors import shorten
from pipeline.formats.curves import (
    CURVE_KIND,
    Curve,
    CurveError,
    Target,
    builtin_curves,
    parse_curves,
)
from pipeline.formats.loader import load_file
from pipeline.problems import first_problem
from pipeline.rating.tiers import TIER_NAMES
from pipeline.validator import Validator


def read_curve_file(path: str | Path) -> dict[str, Any]:
    """A curve file's data after the validator accepted it; refuses with line and column."""
    path = Path(path)
    if not path.is_file():
        raise CurveError(f"{path}: no such curve file")
    loaded = load_file(path)  # read once: what is validated is what is used
    found = Validator().add_loaded(loaded, str(path))
    if found:
        raise CurveError(f"invalid curve file {first_problem(found)}")
    data = loaded.document.data if loaded.document is not None else None
    if not isinstance(data, dict) or data.get("kind") != CURVE_KIND:
        raise CurveError(f"{path}: not a curve file (expected `kind: {CURVE_KIND}`)")
    return data


def load_curve(spec: str | Curve, _via: tuple[str, ...] = ()) -> Curve:
    """A curve by spec: a built-in name (`ramp`), `FILE` (its only curve, or its job's curve)
    or `FILE:NAME`. (`_via`: the specs whose jobs led here, to refuse a cycle of files.)"""
    if isinstance(spec, str) and spec in _via:
        raise CurveError(
            "curve files name each other in a cycle: "
            + " -> ".join(shorten(s) for s in (*_via, spec))
        )
    if isinstance(spec, Curve):
        return spec
    builtins = builtin_curves()
    if spec in builtins:
        return builtins[spec]
    path, name = (spec, None) if Path(spec).is_file() or ":" not in spec else spec.rsplit(":", 1)
    if not Path(path).is_file():
        raise CurveError(
            f"unknown curve {spec!r}: expected a built-in curve ({', '.join(builtins)}) or FILE[:NAME]"
        )
    data = read_curve_file(path)
    curves = parse_curves(data, str(path))
    if name is None:
        job = data.get("job") or {}
        if isinstance(job.get("curve"), str):
            name = job["curve"]
        elif len(curves) == 1:
            name = next(iter(curves))
        else:
            raise CurveError(f"{path} holds curves {', '.join(curves)}: name one as {path}:NAME")
    if name in curves:
        return curves[name]
    if name in builtins or (":" in name and name != spec):  # a job may name a curve elsewhere
        return load_curve(name, (*_via, spec))
    raise CurveError(f"{path}: no curve named {name!r}; it holds {', '.join(curves) or 'none'}")


def targets(
    curve: str | Curve, levels: int, stages: int, first_level: int = 1
) -> list[list[Target]]:
    """The curve's targets, one list of Stage targets per Level; scores rounded to 2 decimals."""
    return load_curve(curve).targets(levels, stages, first_level)


def tier_needs(
    curve: str | Curve, levels: int, stages: int, first_level: int = 1
) -> dict[str, int]:
    """How many Puzzles of each tier the curve needs, in tier order (tiers it needs none of left out)."""
    counts = Counter(t.tier for row in targets(curve, levels, stages, first_level) for t in row)
    return {name: counts[name] for name in TIER_NAMES if counts[name]}
