"""Target difficulty curves: for each (Level, Stage) slot, the score a Puzzle there should have.

A curve is designers' data: a YAML curve file (`kind: curves`, schema `schemas/curve.schema.json`,
checked by `numbermatch validate`) holds named curves. Each curve gives

- `levels`: explicit Levels, each a list of Stage targets (a score such as `42`, a tier name
  such as `hard` meaning the middle of that tier, or `{tier: hard, at: 0.8}`, or `{score: 42}`),
  optionally with per-Level `constraints`; they are the game's first Levels, in order;
- `shape`: a rule for every later Level: a line from `start` to `finish` inside each Level,
  optional `dips` (breathers), an optional `boss` Stage, and `rise`, which moves the start and
  finish of each next Level `step` of the remaining way towards limits, so difficulty keeps
  climbing over weeks of Levels without ever passing the limits;
- `constraints` for every Level: `at_least`/`at_most` Stages of a tier and a minimum number of
  distinct digit `layouts`.

A target given as a tier position follows the tier table (`pipeline.rating.tiers`) if its
thresholds are retuned; the slot's tier is always `tier_for(target score)`. Levels are counted
in the game's sequence: a night that continues at Level 51 asks the curve for Levels 51, 52, ...
(0-based inside this module, 1-based in files and bundles).

The three built-in curves (`ramp`, `sawtooth`, `flat`) and the example `campaign` are curve
files shipped in the package (`pipeline/formats/curve_files/builtin.yaml`), expanded by the same
code as any designer's file, with one difference: a built-in curve serves any Level shape (it
`stretch`es). A written Level of n Stages asked for with m Stages is resampled (`stretched`):
Stage j of m sits at position j x (n-1)/(m-1) along the written targets, reading the line
between its two neighbours inside one tier and the earlier one's score across a tier change;
a `layouts` minimum above m asks for m. A designer's curve keeps its written Levels exactly as
written and refuses another number of Stages, saying so.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.curve_names import CURVE_HELP as CURVE_HELP  # the names live there for --help
from pipeline.formats.curve_names import CURVE_METAVAR as CURVE_METAVAR
from pipeline.formats.curve_names import DEFAULT_CURVE as DEFAULT_CURVE
from pipeline.formats.curve_names import shape_text as shape_text
from pipeline.rating.tiers import TIER_NAMES, tier_for, tier_range

CURVE_KIND = "curves"
BUILTIN_FILE = Path(__file__).resolve().parent / "curve_files" / "builtin.yaml"
DEFAULT_AT = 0.5  # a bare tier name aims at the middle of the tier


class CurveError(NumberMatchError):
    """An unknown curve name, a curve file that does not hold together, or an impossible shape."""


@dataclass(frozen=True)
class Target:
    """What one slot of a bundle asks for (0-based level in the game's sequence, 0-based stage)."""

    level: int
    stage: int
    score: float

    @property
    def tier(self) -> str:
        return tier_for(self.score)


def at(tier: str, fraction: float) -> float:
    """The score `fraction` of the way through `tier`'s range."""
    span = tier_range(tier)
    if span is None:
        raise ValueError(f"unknown tier {tier!r}")
    low, high = span
    return low + (high - low) * fraction


# --- the parts of a curve -----------------------------------------------------------------

Parts = tuple[Any, ...]


class _Problem(Exception):
    """A curve-file problem at a JSON path (turned into a CurveError or a validator Problem)."""

    def __init__(self, parts: Parts, message: str) -> None:
        super().__init__(message)
        self.parts, self.message = parts, message


Found = list[tuple[Parts, str]]


def _each(found: Found | None, read: Callable[..., Any], *args: Any) -> Any:
    """`read(*args)`; when collecting (`found` is a list), a problem is added to it and None is
    read instead, so the parts after it are still checked (the validator reports every one)."""
    if found is None:
        return read(*args)
    try:
        return read(*args)
    except _Problem as exc:
        found.append((exc.parts, exc.message))
        return None


@dataclass(frozen=True)
class Point:
    """A target: an explicit score, or a position `at` (0-1) inside a tier's range."""

    score: float | None = None
    tier: str | None = None
    at: float = DEFAULT_AT

    @property
    def value(self) -> float:
        return self.score if self.score is not None else at(self.tier or "", self.at)

    def text(self) -> str:
        return f"{self.score:g}" if self.score is not None else f"{self.tier} {self.at:g}"


@dataclass(frozen=True)
class Dip:
    """A breather `at` a fraction of the Level: the line climbs to `peak` of the way, drops to `to`."""

    at: float
    peak: float
    to: float


@dataclass(frozen=True)
class Boss:
    """A Stage (1-based; negative counts from the end) that targets `point` from Level `from_level` on."""

    stage: int
    point: Point
    from_level: int = 1


@dataclass(frozen=True)
class Rise:
    """Each next Level closes `step` of the remaining way from the first ends to these limits."""

    start: Point
    finish: Point
    step: float


@dataclass(frozen=True)
class Shape:
    """Start-to-finish line inside each Level, with dips, a boss Stage and a rise across Levels."""

    start: Point
    finish: Point
    rise: Rise | None = None
    dips: tuple[Dip, ...] = ()
    boss: Boss | None = None

    def ends(self, level: int) -> tuple[float, float]:
        """The first and last Stage's targets of (0-based, game-wide) `level`."""
        if self.rise is None:
            return self.start.value, self.finish.value
        keep = (1.0 - self.rise.step) ** level  # share of the way still left to the limits
        return _toward(self.start, self.rise.start, keep), _toward(
            self.finish, self.rise.finish, keep
        )

    def score(self, level: int, stage: int, stages: int) -> float:
        start, end = self.ends(level)
        if self.boss is not None and level + 1 >= self.boss.from_level:
            position = self.boss.stage if self.boss.stage > 0 else stages + 1 + self.boss.stage
            if position == stage + 1:
                return self.boss.point.value
        cuts = [math.ceil(stages * d.at) for d in self.dips]
        bounds = [0, *cuts, stages]
        if not self.dips or any(b - a < 2 for a, b in itertools.pairwise(bounds)):
            return start + (end - start) * _fraction(
                stage, stages
            )  # too short to dip: a plain line
        segment = max(i for i, b in enumerate(bounds[:-1]) if b <= stage)
        low = 0.0 if segment == 0 else self.dips[segment - 1].to
        high = 1.0 if segment == len(self.dips) else self.dips[segment].peak
        f = _fraction(stage - bounds[segment], bounds[segment + 1] - bounds[segment])
        if low == 0.0:
            return start + (end - start) * high * f
        bottom = start + (end - start) * low
        top = end if high == 1.0 else start + (end - start) * high
        return bottom + (top - bottom) * f


def _toward(first: Point, limit: Point, keep: float) -> float:
    """`keep` of the way back from `limit` to `first`; inside one tier's range when both are
    positions in the same tier (so they follow the tier table)."""
    if first.score is None and limit.score is None and first.tier == limit.tier:
        return at(first.tier or "", limit.at - (limit.at - first.at) * keep)
    a, b = first.value, limit.value
    return b - (b - a) * keep


def _fraction(stage: int, stages: int) -> float:
    return 1.0 if stages == 1 else stage / (stages - 1)


@dataclass(frozen=True)
class Constraints:
    """What each Level must hold besides its targets."""

    at_least: tuple[tuple[str, int], ...] = ()
    at_most: tuple[tuple[str, int], ...] = ()
    layouts: int = 0  # minimum number of distinct digit layouts among the Level's Stages

    def __and__(self, other: Constraints) -> Constraints:
        """Both sets of constraints at once (the stricter bound per tier)."""
        least = dict(self.at_least)
        for t, n in other.at_least:
            least[t] = max(n, least.get(t, 0))
        most = dict(self.at_most)
        for t, n in other.at_most:
            most[t] = min(n, most.get(t, n))
        return Constraints(
            tuple(least.items()), tuple(most.items()), max(self.layouts, other.layouts)
        )

    def problems(self, tiers: Sequence[str]) -> list[str]:
        """Why a Level with these slot tiers breaks the tier constraints (empty when it does not)."""
        counts = Counter(tiers)
        out = [
            f"{counts[t]} {t} stage(s), needs at least {n}"
            for t, n in self.at_least
            if counts[t] < n
        ]
        out += [
            f"{counts[t]} {t} stage(s), allows at most {n}"
            for t, n in self.at_most
            if counts[t] > n
        ]
        if self.layouts > len(tiers):
            out.append(f"{len(tiers)} stage(s), needs {self.layouts} distinct digit layouts")
        return out


@dataclass(frozen=True)
class LevelSpec:
    """An explicit Level: its Stage targets and its own constraints."""

    stages: tuple[Point, ...]
    constraints: Constraints = field(default_factory=Constraints)


@dataclass(frozen=True)
class Curve:
    """A named curve: explicit first Levels, then a shape for the rest, and constraints."""

    name: str
    levels: tuple[LevelSpec, ...] = ()
    shape: Shape | None = None
    constraints: Constraints = field(default_factory=Constraints)
    description: str = ""
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # serve any number of Stages per Level (the built-in curves): written Levels are resampled
    # (`stretched`) and a `layouts` minimum is capped at the Stages there are
    stretch: bool = False

    def level_constraints(self, level: int, stages: int | None = None) -> Constraints:
        """The constraints (0-based, game-wide) `level` must meet, in a Level of `stages`
        Stages (a stretching curve asks for no more layouts than there are Stages)."""
        found = self.constraints
        if level < len(self.levels):
            found = found & self.levels[level].constraints
        if self.stretch and stages is not None and found.layouts > stages:
            found = dataclasses.replace(found, layouts=stages)
        return found

    def targets(self, levels: int, stages: int, first_level: int = 1) -> list[list[Target]]:
        """Targets of `levels` Levels of `stages` Stages starting at game Level `first_level`;
        scores rounded to 2 decimals. Refuses a shape the curve cannot give or a Level whose
        targets break the curve's own tier constraints."""
        if levels < 1 or stages < 1:
            raise CurveError(f"a bundle needs at least 1 level of 1 stage, got {levels} x {stages}")
        if first_level < 1:
            raise CurveError(f"levels are numbered from 1, got first level {first_level}")
        boss = self.shape.boss if self.shape is not None else None
        if (
            boss is not None
            and not 1 <= (boss.stage if boss.stage > 0 else stages + 1 + boss.stage) <= stages
        ):
            raise CurveError(
                f"curve {self.name}: boss stage {boss.stage} does not exist in a Level of {stages} stages"
            )
        rows: list[list[Target]] = []
        for level in range(first_level - 1, first_level - 1 + levels):
            if level < len(self.levels):
                spec = self.levels[level]
                written = len(spec.stages)
                if written != stages and not self.stretch:
                    raise CurveError(
                        f"curve {self.name}: Level {level + 1} is written with {written} stage(s),"
                        f" but the bundle has {stages} stages per Level (a curve file's written"
                        f" Levels keep their shape: ask for {written} stages per Level, or write"
                        f" Level {level + 1} with {stages}; only the built-in curves stretch)"
                    )
                scores = stretched([p.value for p in spec.stages], stages)
            elif self.shape is not None:
                scores = [self.shape.score(level, s, stages) for s in range(stages)]
            else:
                raise CurveError(
                    f"curve {self.name} defines {len(self.levels)} Level(s) and no shape for later ones;"
                    f" Level {level + 1} was asked for"
                )
            row = [
                Target(level, s, round(min(100.0, max(0.0, v)), 2)) for s, v in enumerate(scores)
            ]
            broken = self.level_constraints(level, stages).problems([t.tier for t in row])
            if broken:
                raise CurveError(
                    f"curve {self.name}: Level {level + 1}'s targets give {'; '.join(broken)}"
                )
            rows.append(row)
        return rows


def stretched(scores: Sequence[float], stages: int) -> list[float]:
    """`scores` (a written Level's targets) resampled to `stages` Stages: Stage j sits at
    position j x (n-1)/(stages-1) along the n written targets and reads the line between its two
    neighbours when they are in one tier, else keeps the earlier one's score (so a tier change
    happens where it is written, and a tier written once, as the tutorial Level's last medium
    Stage, stays once). The first and last targets stay; one Stage takes the last, as a shape's
    Level of one Stage does. Unchanged when the counts agree."""
    n = len(scores)
    if n == stages:
        return list(scores)
    out = []
    for j in range(stages):
        position = _fraction(j, stages) * (n - 1)
        below = min(int(position), n - 1)
        above = min(below + 1, n - 1)
        share = position - below
        low, high = scores[below], scores[above]
        if share and tier_for(round(low, 2)) != tier_for(round(high, 2)):
            out.append(low)
        else:
            out.append(low + (high - low) * share)
    return out


# --- reading curve data -------------------------------------------------------------------


def _number(value: Any, parts: Parts, what: str, low: float = 0.0, high: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise _Problem(parts, f"{what} must be a number from {low:g} to {high:g}, got {value!r}")
    return float(value)


def _tier(value: Any, parts: Parts) -> str:
    if value not in TIER_NAMES:
        raise _Problem(parts, f"unknown tier {value!r}: expected one of {', '.join(TIER_NAMES)}")
    return str(value)


def _point(value: Any, parts: Parts) -> Point:
    if isinstance(value, str):
        return Point(tier=_tier(value, parts))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Point(score=_number(value, parts, "a score", 0, 100))
    if not isinstance(value, dict):
        raise _Problem(parts, f"a target is a score, a tier name or {{tier, at}}, got {value!r}")
    if "score" in value:
        if set(value) != {"score"}:
            raise _Problem(
                parts, "give a target either as `score` or as `tier` (with `at`), not both"
            )
        return Point(score=_number(value["score"], parts + ("score",), "score", 0, 100))
    if "tier" not in value:
        raise _Problem(parts, "a target mapping needs `tier` (with optional `at`) or `score`")
    return Point(
        tier=_tier(value["tier"], parts + ("tier",)),
        at=_number(value.get("at", DEFAULT_AT), parts + ("at",), "at"),
    )


def _counts(value: Any, parts: Parts) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, dict):
        raise _Problem(parts, "expected a mapping of tier -> count")
    out = []
    for tier, n in value.items():
        _tier(tier, parts + (tier,))
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise _Problem(parts + (tier,), f"a count must be a whole number >= 0, got {n!r}")
        out.append((tier, n))
    return tuple(out)


def _constraints(value: Any, parts: Parts) -> Constraints:
    if value is None:
        return Constraints()
    if not isinstance(value, dict):
        raise _Problem(parts, "constraints must be a mapping")
    layouts = value.get("layouts", 0)
    if isinstance(layouts, bool) or not isinstance(layouts, int) or layouts < 0:
        raise _Problem(
            parts + ("layouts",), f"layouts must be a whole number >= 0, got {layouts!r}"
        )
    least = _counts(value.get("at_least", {}), parts + ("at_least",))
    most = _counts(value.get("at_most", {}), parts + ("at_most",))
    for t, n in least:
        if dict(most).get(t, n) < n:
            raise _Problem(
                parts + ("at_most", t), f"at_most {t} {dict(most)[t]} is below at_least {t} {n}"
            )
    return Constraints(least, most, layouts)


def _rise(r: Any, rp: Parts, start: Point, finish: Point) -> Rise:
    if not isinstance(r, dict) or "step" not in r:
        raise _Problem(rp, "a rise needs `step` and at least one of `start`, `finish`")
    return Rise(
        start=_point(r["start"], rp + ("start",)) if "start" in r else start,
        finish=_point(r["finish"], rp + ("finish",)) if "finish" in r else finish,
        step=_number(r["step"], rp + ("step",), "step"),
    )


def _dip(d: Any, dp: Parts, before: Dip | None) -> Dip:
    if not isinstance(d, dict):
        raise _Problem(dp, "a dip is a mapping {at, peak, to}")
    dip = Dip(
        at=_number(d.get("at"), dp + ("at",), "at"),
        peak=_number(d.get("peak"), dp + ("peak",), "peak"),
        to=_number(d.get("to"), dp + ("to",), "to"),
    )
    if not 0 < dip.at < 1:
        raise _Problem(dp + ("at",), f"a dip sits inside the Level: 0 < at < 1, got {dip.at:g}")
    if before is not None and dip.at <= before.at:
        raise _Problem(dp + ("at",), "dips go in order: each `at` above the one before")
    if dip.to >= dip.peak:
        raise _Problem(
            dp + ("to",), f"a dip drops: `to` ({dip.to:g}) must be below `peak` ({dip.peak:g})"
        )
    return dip


def _shape(value: Any, parts: Parts, found: Found | None = None) -> Shape:
    """The shape at `parts`; with `found`, every problem of its parts is collected there."""
    if not isinstance(value, dict):
        raise _Problem(parts, "a shape must be a mapping")
    for key in ("start", "finish"):
        if key not in value:
            raise _Problem(parts, f"a shape needs `{key}`")
    start = _each(found, _point, value["start"], parts + ("start",))
    finish = _each(found, _point, value["finish"], parts + ("finish",))
    rise = None
    if value.get("rise") is not None:
        rise = _each(found, _rise, value["rise"], parts + ("rise",), start, finish)
    dips: list[Dip] = []
    for i, d in enumerate(value.get("dips") or ()):
        dip = _each(found, _dip, d, parts + ("dips", i), dips[-1] if dips else None)
        if dip is not None:
            dips.append(dip)
    boss = _each(found, _boss, value, parts)
    return Shape(start, finish, rise, tuple(dips), boss)


def _boss(value: dict[str, Any], parts: Parts) -> Boss | None:
    boss = None
    if value.get("boss") is not None:
        b, bp = value["boss"], parts + ("boss",)
        if not isinstance(b, dict) or "stage" not in b:
            raise _Problem(bp, "a boss needs `stage` (1-based; -1 is the last) and a target")
        stage = b["stage"]
        if isinstance(stage, bool) or not isinstance(stage, int) or stage == 0:
            raise _Problem(
                bp + ("stage",), f"stage is 1, 2, ... or -1, -2, ... from the end, got {stage!r}"
            )
        target = {k: v for k, v in b.items() if k in ("score", "tier", "at")}
        point = _point(target, bp)
        from_level = b.get("from_level", 1)
        if isinstance(from_level, bool) or not isinstance(from_level, int) or from_level < 1:
            raise _Problem(
                bp + ("from_level",), f"from_level is a Level number >= 1, got {from_level!r}"
            )
        boss = Boss(stage, point, from_level)
    return boss


def _level(lv: Any, lp: Parts, found: Found | None) -> LevelSpec:
    raw, cons = (lv.get("stages"), lv.get("constraints")) if isinstance(lv, dict) else (lv, None)
    sp = lp + ("stages",) if isinstance(lv, dict) else lp
    if not isinstance(raw, list) or not raw:
        raise _Problem(sp, "a Level lists its Stage targets (at least one)")
    return LevelSpec(
        tuple(_each(found, _point, v, sp + (k,)) for k, v in enumerate(raw)),
        _each(found, _constraints, cons, lp + ("constraints",)),
    )


def _curve(value: Any, parts: Parts, found: Found | None = None) -> Curve:
    """The curve at `parts`; with `found`, every problem of its parts is collected there (its
    Levels, each target, the shape's parts and the constraints are read apart)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise _Problem(parts, "a curve is a mapping with a `name`")
    levels = [
        _each(found, _level, lv, parts + ("levels", i), found)
        for i, lv in enumerate(value.get("levels") or ())
    ]
    shape = (
        _each(found, _shape, value["shape"], parts + ("shape",), found)
        if value.get("shape") is not None
        else None
    )
    if not levels and value.get("shape") is None:
        raise _Problem(parts, f"curve {value['name']} has neither `levels` nor a `shape`")
    return Curve(
        name=value["name"],
        levels=tuple(levels),
        shape=shape,
        constraints=_each(found, _constraints, value.get("constraints"), parts + ("constraints",)),
        description=str(value.get("description", "")),
        data=value,
    )


def problems(
    data: Any, skip: Callable[[Parts], bool] = lambda parts: False
) -> list[tuple[Parts, str]]:
    """Every problem of a schema-valid curve document, as (JSON path parts, message).

    `skip(parts)` says which parts failed the schema (the validator's layers): those curves and
    that job are not read, since what is checked here assumes their shape.
    """
    out: list[tuple[Parts, str]] = []
    names: dict[str, int] = {}
    skipped: set[int] = set()
    curves = data.get("curves") if isinstance(data, dict) else None
    for i, raw in enumerate(curves if isinstance(curves, list) else ()):
        if skip(("curves", i)):
            skipped.add(i)
        else:
            try:
                _curve(raw, ("curves", i), out)
            except _Problem as exc:
                out.append((exc.parts, exc.message))
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str):
            continue
        if name in names:
            out.append(
                (
                    ("curves", i, "name"),
                    f"curve {name!r} is defined twice (first as curves[{names[name]}])",
                )
            )
        names.setdefault(name, i)
    job = data.get("job") if isinstance(data, dict) and not skip(("job",)) else None
    if isinstance(job, dict) and isinstance(job.get("curve"), str):
        name = job["curve"]
        if name not in names and name not in builtin_curves() and ":" not in name:
            out.append(
                (
                    ("job", "curve"),
                    f"job curve {name!r} is neither in this file nor built in"
                    f" ({', '.join([*names, *builtin_curves()])})",
                )
            )
        elif name in names and not out and names[name] not in skipped:
            # the job's night must be one the curve can give
            curve = _curve(data["curves"][names[name]], ("curves", names[name]))
            levels, stages = job.get("levels", 10), job.get("stages", 6)
            try:
                if isinstance(levels, int) and isinstance(stages, int):
                    curve.targets(levels, stages)
            except CurveError as exc:
                out.append((("job",), f"the job's night cannot be made: {exc}"))
    return out


def parse_curves(data: Any, source: str = "curve data") -> dict[str, Curve]:
    """The curves of a curve document (already schema-checked); refuses the first problem."""
    if not isinstance(data, dict) or data.get("kind") != CURVE_KIND:
        raise CurveError(f"{source}: not a curve file (expected `kind: {CURVE_KIND}`)")
    found = problems(data)
    if found:
        parts, message = found[0]
        raise CurveError(f"{source}: {_json_path(parts)}: {message}")
    return {
        c.name: c
        for c in (_curve(raw, ("curves", i)) for i, raw in enumerate(data.get("curves") or ()))
    }


def _json_path(parts: Parts) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


@cache
def builtin_curves() -> dict[str, Curve]:
    """The curves shipped with the package (trusted: the test suite validates the file)."""
    import yaml  # start-up time: `--help` shows the curve choices without parsing YAML

    data = yaml.safe_load(BUILTIN_FILE.read_text(encoding="utf-8"))
    return {
        name: dataclasses.replace(curve, stretch=True)
        for name, curve in parse_curves(data, str(BUILTIN_FILE)).items()
    }


def curve_from_data(name: str, data: Mapping[str, Any]) -> Curve:
    """A curve recorded in a bundle's params (as its definition), for continuing it."""
    try:
        return _curve(dict(data), ())
    except _Problem as exc:
        raise CurveError(
            f"recorded curve {name!r}: {_json_path(exc.parts)}: {exc.message}"
        ) from exc


def curve_params(text: str, curve: Curve) -> dict[str, Any]:
    """How a bundle records its curve: the spec as given, and a designer's curve's definition
    (so a later night continues it as it was, even if the file moved or changed)."""
    if builtin_curves().get(text) == curve:
        return {"curve": text}
    return {"curve": text, "curve_definition": dict(curve.data)}


def builtin_names() -> tuple[str, ...]:
    """The built-in curves' names, in file order."""
    return tuple(builtin_curves())
