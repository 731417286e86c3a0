"""Layer 3: what a schema cannot say. The board is real notation, the ruleset is one we know,
the id is the content's id, ids are unique, the certificate wins, and the rating adds up.

Replaying the certificate is what makes validation cheap: solvability is proved by the file
itself, so no search is needed unless `--deep` asks for a second opinion.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.engine.board import format_board, parse
from pipeline.engine.canonical import canonical_key
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, SHIPPED, Ruleset, ruleset_for
from pipeline.engine.stage import apply_move
from pipeline.errors import IllegalMoveError, NumberMatchError
from pipeline.formats.loader import Document
from pipeline.formats.puzzle import puzzle_id
from pipeline.formats.scale import (
    BUNDLE_KEY,
    ScaleError,
    block_profile,
    bundle_profile,
    same_scale,
    scale_name,
)
from pipeline.formats.stock_layout import is_stock_path
from pipeline.limits import LimitError
from pipeline.problems import Problem, json_path
from pipeline.rating.profile import ProfileError, RatingProfile, profile_of
from pipeline.rating.tiers import TIERS_BY_VERSION, tier_for
from pipeline.rating.versions import score_from_metrics, stored_score, stored_tier
from pipeline.validator.context import SCORE_TOLERANCE, Context, Parts


@dataclass
class _Where:
    """First sighting of an id: for the message of the second."""

    file: str
    line: int | None
    path: str

    def describe(self, here: str) -> str:
        where = f"line {self.line}" if self.line else self.path
        return where if self.file == here else f"{self.file}:{self.line or ''}".rstrip(":")


@dataclass(frozen=True)
class Sighting:
    """A shipped (bundle Stage) or stock puzzle the run saw, under its canonical key."""

    key: str
    kind: str  # "bundle" or "stock"
    id: str
    file: str
    line: int | None
    column: int | None
    path: str
    place: str  # "L3.S2" for a bundle Stage, "" for a stock file

    @property
    def where(self) -> str:
        at = f"{self.file}:{self.line}" if self.line else self.file
        return f"{at} ({self.place})" if self.place else at


def repeat_message(
    here: Sighting | str,
    there: Sighting | str,
    here_id: str,
    there_id: str,
    here_kind: str,
    there_kind: str,
) -> str:
    """The NM321 message: what repeats what, where, and why it counts as the same puzzle."""
    same = (
        "the same board" if here_id == there_id else "a relabelled copy (same value-class layout)"
    )
    if here_kind == "bundle" and there_kind == "bundle":
        why = "shipped twice"
    elif here_kind == "stock" and there_kind == "stock":
        why = "in stock twice"
    else:
        why = "shipped and still in stock"
    other = there.where if isinstance(there, Sighting) else there
    return f"puzzle {here_id} is {same} as {there_id} at {other}: {why}"


@dataclass
class Semantics:
    """Runs layer 3 over documents one by one, remembering ids across all files of a run."""

    deep: bool = False
    rulesets: frozenset[int] = SHIPPED  # the ruleset numbers accepted (tests may add their own)
    puzzle_ids: dict[str, _Where] = field(default_factory=dict)
    bundle_ids: dict[str, _Where] = field(default_factory=dict)
    on_deep: Callable[[str], None] | None = (
        None  # told each file name after one puzzle's deep check
    )
    profile: RatingProfile | None = (
        None  # `validate --profile`: the profile profile-scored puzzles must name
    )
    sightings: list[Sighting] = field(
        default_factory=list
    )  # shipped and stock puzzles seen, in order
    first_by_key: dict[str, Sighting] = field(default_factory=dict)

    def check(self, doc: Document, kind: str, name: str, bad: set[Parts]) -> list[Problem]:
        """Problems of a schema-checked document; parts under a schema problem are skipped."""
        ctx = Context(doc, name, bad)
        data = doc.data
        if kind == "puzzle":
            self._unique(ctx, self.puzzle_ids, (), "id", "puzzle")
            if ctx.core_ok(()):
                self._puzzle(ctx, data, (), data.get("provenance"))
                if is_stock_path(Path(name).parts):
                    self._sighting(ctx, data, (), "stock", "")
        elif kind == "rating-profile":
            _profile_file(ctx, data)
        elif kind == "curves":
            # start-up time: only a curves file needs them
            from pipeline.validator.curve_checks import curve_problems

            for parts, code, message in curve_problems(data, ctx.is_bad):
                ctx.add(parts, code, message)
        else:
            self._bundle(ctx, data)
        return ctx.problems

    def _unique(
        self, ctx: Context, seen: dict[str, _Where], parts: Parts, key: str, what: str
    ) -> None:
        mapping = ctx.get(parts)
        value = mapping.get(key) if isinstance(mapping, dict) else None
        if not isinstance(value, str) or ctx.is_bad(parts + (key,)):
            return
        line, _col = ctx.pos(parts + (key,))
        first = seen.get(value)
        if first is None:
            seen[value] = _Where(ctx.name, line, json_path(parts + (key,)))
            return
        ctx.add(
            parts + (key,),
            "NM304",
            f"duplicate {what} id {value!r}: already used at {first.describe(ctx.name)}",
        )

    def _sighting(
        self, ctx: Context, p: dict[str, Any], parts: Parts, kind: str, place: str
    ) -> None:
        """Remember a shipped or stock puzzle by its canonical key; NM321 when it repeats one
        seen earlier in the run (shipped twice, shipped and in stock, or in stock twice)."""
        try:
            key = canonical_key(p["board"], p["adds"], ruleset_for(p["ruleset"], self.rulesets))
        except (NumberMatchError, ValueError):  # reported by _puzzle
            return
        line, col = ctx.pos(parts + ("board",))
        seen = Sighting(
            key, kind, str(p["id"]), ctx.name, line, col, json_path(parts + ("board",)), place
        )
        self.sightings.append(seen)
        first = self.first_by_key.get(key)
        if first is None:
            self.first_by_key[key] = seen
            return
        if seen.id == first.id and (seen.file == first.file or kind == first.kind == "stock"):
            return  # the same id twice where NM304 already reports it
        ctx.add(
            parts + ("board",),
            "NM321",
            repeat_message(seen, first, seen.id, first.id, kind, first.kind),
        )

    def _bundle(self, ctx: Context, data: dict[str, Any]) -> None:
        self._unique(ctx, self.bundle_ids, (), "id", "bundle")
        ruleset = data.get("ruleset")
        bundle_ruleset = None
        if not ctx.is_bad(("ruleset",)):
            try:
                bundle_ruleset = ruleset_for(ruleset, self.rulesets).number
            except NumberMatchError as exc:
                ctx.add(("ruleset",), "NM302", str(exc))
        levels = data.get("levels")
        if not isinstance(levels, list):
            return
        in_bundle: dict[str, _Where] = {}
        scored: list[tuple[Parts, dict[str, Any], str]] = []  # each Stage's scored block
        first = data.get("first_level")
        first = first if isinstance(first, int) and not ctx.is_bad(("first_level",)) else 1
        for li, level in enumerate(levels):
            lparts: Parts = ("levels", li)
            if not isinstance(level, dict):
                continue
            _numbered(ctx, level, lparts, "level", li, first)
            stages = level.get("stages")
            if not isinstance(stages, list):
                continue
            for si, stage in enumerate(stages):
                sparts: Parts = lparts + ("stages", si)
                if not isinstance(stage, dict):
                    continue
                _numbered(ctx, stage, sparts, "stage", si)
                puzzle = stage.get("puzzle")
                pparts = sparts + ("puzzle",)
                if not isinstance(puzzle, dict) or not ctx.core_ok(pparts):
                    continue
                self._unique(ctx, in_bundle, pparts, "id", "puzzle")
                if (
                    bundle_ruleset is not None
                    and puzzle.get("ruleset") in self.rulesets
                    and puzzle.get("ruleset") != bundle_ruleset
                ):
                    ctx.add(
                        pparts + ("ruleset",),
                        "NM313",
                        f"puzzle ruleset {puzzle.get('ruleset')!r} differs from the bundle's ruleset {bundle_ruleset}",
                    )
                self._puzzle(ctx, puzzle, pparts, None, f"{ctx.name}:L{first + li}.S{si + 1}")
                block = puzzle.get("difficulty")
                if isinstance(block, dict) and stored_score(block) is not None:
                    scored.append((pparts + ("difficulty",), block, f"L{first + li}.S{si + 1}"))
                if ctx.core_ok(pparts):
                    self._sighting(
                        ctx,
                        puzzle,
                        pparts,
                        "bundle",
                        f"L{level.get('level', li + first)}.S{stage.get('stage', si + 1)}",
                    )

        _one_scale(ctx, data, scored)

    def _puzzle(
        self,
        ctx: Context,
        p: dict[str, Any],
        parts: Parts,
        provenance: Any,
        stage: str | None = None,
    ) -> None:
        """Every check of one schema-valid puzzle mapping at `parts` (a bundle's `stage`, named
        as `puzzle --refresh` takes it, or a puzzle file)."""
        try:
            ruleset = ruleset_for(p["ruleset"], self.rulesets)
        except NumberMatchError as exc:
            ctx.add(parts + ("ruleset",), "NM302", str(exc))
            return
        board, adds = p["board"], p["adds"]
        try:
            cells = parse(board)
        except NumberMatchError as exc:
            ctx.add(parts + ("board",), "NM301", str(exc))
            return
        expected = puzzle_id(board, adds, ruleset.number)
        if p["id"] != expected:
            ctx.add(
                parts + ("id",),
                "NM303",
                f"id {p['id']!r} does not match the puzzle's content, which gives {expected!r}: "
                "the board, adds or ruleset changed after the id was made;"
                f" `numbermatch puzzle --refresh {stage or ctx.name}` re-derives id, certificate and rating",
            )
        won = _replay(ctx, cells, adds, p["solution"], parts + ("solution",), ruleset)
        _difficulty(ctx, p["difficulty"], adds, parts + ("difficulty",), self.profile)
        _derived(ctx, p["difficulty"], p["solution"], won, parts + ("difficulty",))
        if self.deep:
            # start-up time: the solver and rating load only for deep checks
            from pipeline.validator.deep import deep_check

            deep_check(ctx, board, adds, p, parts, won, provenance, ruleset)
            if self.on_deep is not None:
                self.on_deep(ctx.name)


def _numbered(
    ctx: Context, item: dict[str, Any], parts: Parts, key: str, index: int, first: int = 1
) -> None:
    number = item.get(key)
    if ctx.is_bad(parts + (key,)) or not isinstance(number, int) or number == index + first:
        return
    plural = "levels" if key == "level" else "stages"
    scope = "the bundle" if key == "level" else "its level"
    order = "1..n" if first == 1 else f"{first}, {first + 1}, ... (from first_level)"
    ctx.add(
        parts + (key,),
        "NM312",
        f"{key} {number} is at position {index + 1} in {scope}; {plural} are numbered {order} in order",
    )


def _replay(
    ctx: Context,
    cells: bytes,
    adds: int,
    solution: Sequence[str],
    parts: Parts,
    ruleset: Ruleset = DEFAULT,
) -> bool:
    """Replay the certificate; report the first bad move, or an unfinished board. True if won."""
    adds_left = adds
    for k, text in enumerate(solution):
        where = parts + (
            k,
        )  # the JSON path counts from 0; messages count moves from 1, as `apply` does
        n = k + 1
        if not cells:
            ctx.add(
                where,
                "NM306",
                f"move {n} {text!r} comes after the board is already empty (move {n - 1} won); "
                "the certificate must end there",
            )
            return False
        try:
            move = Move.parse(text)
        except NumberMatchError as exc:
            ctx.add(where, "NM305", f"move {n}: {exc}")
            return False
        if move.is_add and adds_left <= 0:
            ctx.add(
                where,
                "NM307",
                f"move {n} '+' would be add number {adds + 1}, but the puzzle allows {adds} add"
                f"{'' if adds == 1 else 's'}",
            )
            return False
        try:
            cells, adds_left = apply_move(cells, move, adds_left, ruleset)
        except IllegalMoveError as exc:
            ctx.add(where, "NM306", f"move {n}: {exc}")
            return False
        except LimitError as exc:
            ctx.add(where, "NM316", f"move {n}: {exc}")
            return False
    if cells:
        active = len(cells) - cells.count(0)
        ctx.add(
            parts,
            "NM308",
            f"the certificate ends with {active} number{'s' if active != 1 else ''} "
            f"left on board {format_board(cells)!r}: it does not win the Stage",
        )
        return False
    return True


def _profile_file(ctx: Context, data: dict[str, Any]) -> None:
    """A rating-profile file: weights summing to 1, tiers from 0 to 100 in order, and the digest
    of what it holds."""
    if ctx.bad:  # the schema already said what is wrong
        return
    try:
        profile = RatingProfile.from_block(data, "")
    except ProfileError as exc:
        ctx.add((), "NM317", str(exc))
        return
    if data["digest"] != profile.digest:
        ctx.add(
            ("digest",),
            "NM317",
            f"digest {data['digest']} does not match the profile's name, weights and tiers, "
            f"which give {profile.digest} (edited by hand? `calibrate` writes it)",
        )


def _one_scale(
    ctx: Context, data: dict[str, Any], scored: Sequence[tuple[Parts, dict[str, Any], str]]
) -> None:
    """NM322 for each Stage scored on another scale than its bundle's: the `score_profile` it
    records, or (a bundle without one) its first scored Stage's."""
    if BUNDLE_KEY in data:
        if ctx.is_bad((BUNDLE_KEY,)):
            return
        try:
            want = bundle_profile(data, "the bundle")
        except ScaleError as exc:
            ctx.add((BUNDLE_KEY,), "NM317", str(exc))
            return
        if want is not None and data[BUNDLE_KEY].get("digest") != want.digest:
            ctx.add(
                (BUNDLE_KEY, "digest"),
                "NM317",
                f"digest {data[BUNDLE_KEY].get('digest')} does not match the record's name,"
                f" weights and tiers, which give {want.digest}",
            )
        source = f"the bundle's {BUNDLE_KEY}"
    elif scored:
        want, source = block_profile(scored[0][1]), f"its first Stage {scored[0][2]}"
    else:
        return
    for parts, block, slot in scored:
        found = block_profile(block)
        if not same_scale(found, want):
            ctx.add(
                parts,
                "NM322",
                f"{slot} is scored on {scale_name(found)}, {source} on {scale_name(want)}:"
                " one bundle holds one scale (`numbermatch rescore --profile FILE` puts every"
                " Stage on one)",
            )


def _block_profile(
    ctx: Context, d: dict[str, Any], parts: Parts, given: RatingProfile | None
) -> RatingProfile | None:
    """The profile a difficulty block was scored under (checked: well formed, digest, and the
    one `--profile` gave), or None."""
    if "profile" not in d:
        if given is not None and parts[:1] == ("levels",) and stored_score(d) is not None:
            # a bundle's Stage on the rating's own scale (a puzzle file may be on either)
            ctx.add(
                parts,
                "NM318",
                f"scored on the rating's own scale, not under the given profile {given.name!r}"
                f" ({given.digest[:19]}): `numbermatch rescore --profile` re-scores it",
            )
        return None
    if ctx.is_bad(parts + ("profile",)):
        return None
    try:
        profile = profile_of(d)
    except ProfileError as exc:
        ctx.add(parts + ("profile",), "NM317", str(exc))
        return None
    if profile is None:
        return None
    if d["profile"]["digest"] != profile.digest:
        ctx.add(
            parts + ("profile", "digest"),
            "NM317",
            f"digest {d['profile']['digest']} does not match the embedded profile's name, weights and tiers, which give {profile.digest}",
        )
    if not profile.scores_version(d.get("version", 1)):
        ctx.add(
            parts + ("profile",),
            "NM317",
            f"a rating profile weighs rating version {profile.version}'s players; this block is version {d.get('version', 1)}",
        )
        return None
    if given is not None and profile.digest != given.digest:
        ctx.add(
            parts + ("profile",),
            "NM318",
            f"rated under profile {profile.name!r} ({profile.digest[:19]}), not the given {given.name!r} ({given.digest[:19]}): "
            f"`numbermatch rescore --profile` re-scores it",
        )
    return profile


def _difficulty(
    ctx: Context, d: dict[str, Any], adds: int, parts: Parts, given: RatingProfile | None = None
) -> None:
    score, tier = stored_score(d), stored_tier(d)
    version = d.get("version", 1)  # the rating version that made the block: its own tier table
    known = (
        isinstance(version, int) and not isinstance(version, bool) and version in TIERS_BY_VERSION
    )
    profile = _block_profile(ctx, d, parts, given)
    if "profile" in d and profile is None:
        return  # reported: its score and tier cannot be checked without a profile that holds together
    if known and score is not None and math.isfinite(score) and 0 <= score <= 100:
        expected = tier_for(score, version) if profile is None else profile.tier_for(score)
        if tier != expected:
            table = TIERS_BY_VERSION[version] if profile is None else profile.tiers
            ranges = ", ".join(f"{name} {low:g}-{high:g}" for name, low, high in table)
            # name whose table it is: a block of an older rating version has that version's tiers
            table_of = (
                f"rating version {version}'s tiers"
                if profile is None
                else f"the tiers of profile {profile.name!r}"
            )
            ctx.add(
                parts + ("tier",),
                "NM309",
                f"tier {tier!r} does not match score {score}, which is {expected!r} by {table_of}"
                f" ({ranges})",
            )
    if score is not None and math.isfinite(score) and 0 <= score <= 100:
        try:
            again = score_from_metrics(d)
        except (ValueError, KeyError, TypeError) as exc:
            ctx.add(
                parts + ("score",),
                "NM310",
                f"cannot recompute the score from the stored metrics: {exc!r}",
            )
        else:
            if abs(again - score) > SCORE_TOLERANCE + 1e-9:
                ctx.add(
                    parts + ("score",),
                    "NM310",
                    f"score {score} does not match the stored metrics, which give {again}",
                )
    min_adds = d["min_adds"]
    if isinstance(min_adds, int) and min_adds > adds:
        ctx.add(
            parts + ("min_adds",),
            "NM311",
            f"min_adds {min_adds} is larger than the puzzle's adds {adds}",
        )


def _derived(
    ctx: Context, d: dict[str, Any], solution: Sequence[str], won: bool, parts: Parts
) -> None:
    """The metrics that the file itself can check: the (winning) certificate's length and adds,
    and each player's counts (a share of `playouts` games, rounded as stored)."""
    length = d["certificate_length"]
    if won and length != len(solution):  # a broken certificate is reported already
        ctx.add(
            parts + ("certificate_length",),
            "NM314",
            f"certificate_length {length} differs from the solution, which has {len(solution)} moves",
        )
    used = sum(1 for m in solution if isinstance(m, str) and m.strip() == "+")
    min_adds = d["min_adds"]
    if won and isinstance(min_adds, int) and min_adds > used:
        ctx.add(
            parts + ("min_adds",),
            "NM311",
            f"min_adds {min_adds} is larger than the {used} add{'' if used == 1 else 's'} the solution uses, "
            "which already wins",
        )
    for name, stats in d["players"].items():
        where = parts + ("players", name)
        if ctx.is_bad(where) or not isinstance(stats, dict):
            continue
        games, rate, mean = stats["playouts"], stats["win_rate"], stats["mean_moves"]
        if games == 0:
            if rate != 0 or mean != 0:
                ctx.add(
                    where + ("playouts",),
                    "NM315",
                    f"player {name!r} played 0 games but has win_rate {rate} and mean_moves {mean} (both must be 0)",
                )
            continue
        for key, value, digits in (("win_rate", rate, 4), ("mean_moves", mean, 2)):
            # value = round(count / games, digits) for a whole count: the count is within
            # games * half a unit of the last digit of value * games
            slack = games * 0.5 * 10.0**-digits + 1e-9
            total = value * games
            if slack < 0.5 and abs(total - round(total)) > slack:
                what = "games won" if key == "win_rate" else "moves in all"
                ctx.add(
                    where + (key,),
                    "NM315",
                    f"player {name!r}: {key} {value} over {games} games is not a whole number of {what}",
                )
