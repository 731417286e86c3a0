"""`--deep`: a second opinion. Re-run the solver and the rating and report where they disagree
with the file. Slow (a rating plays hundreds of games), so only on request.

A puzzle file records the rating's seed in its provenance, so its rating reproduces exactly
and any difference in tier or score is reported. A bundle does not carry provenance: the rating
is re-run with the default seed, scores are not compared, and a tier disagreement is reported only when
the new score is more than DEEP_TIER_MARGIN points outside the stored tier's range (simulated
players' win rates vary with the seed).
"""

from __future__ import annotations

from typing import Any

from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.errors import NumberMatchError
from pipeline.rating import DEFAULT_PLAYOUTS, DEFAULT_SEED
from pipeline.rating.profile import profile_of, rated_under
from pipeline.rating.score import rate, stored_playouts
from pipeline.rating.tiers import TIERS_BY_VERSION, tier_range
from pipeline.rating.versions import stored_score, stored_tier
from pipeline.solver.search import UNSOLVABLE, solve
from pipeline.validator.context import DEEP_TIER_MARGIN, SCORE_TOLERANCE, Context, Parts


def deep_check(
    ctx: Context,
    board: str,
    adds: int,
    p: dict[str, Any],
    parts: Parts,
    won: bool,
    provenance: Any,
    ruleset: Ruleset = DEFAULT,
) -> None:
    """Solver and rating disagreements for one puzzle (whose certificate `won` or not)."""
    result = solve(board, adds, ruleset=ruleset)
    if result.status == UNSOLVABLE:
        if won:
            ctx.add(
                parts + ("solution",),
                "NM401",
                f"the solver proves the puzzle unsolvable with {adds} adds ({result.nodes} nodes), "
                "yet the certificate wins: the solver and the rules engine disagree",
            )
        else:
            ctx.add(
                parts + ("board",),
                "NM401",
                f"the solver proves the puzzle unsolvable with {adds} adds",
            )
    if not won:
        return

    stored = p["difficulty"]
    version = stored.get("version", 1)
    if isinstance(version, bool) or version not in TIERS_BY_VERSION:
        return  # an unknown rating version is reported by the semantic layer
    playouts = stored_playouts(stored, DEFAULT_PLAYOUTS)
    seed = provenance.get("rating_seed") if isinstance(provenance, dict) else None
    exact = isinstance(seed, int) and not isinstance(seed, bool)
    try:
        rating = rate(
            board,
            adds,
            playouts=playouts,
            seed=seed if isinstance(seed, int) and exact else DEFAULT_SEED,
            solution=p["solution"],
            ruleset=ruleset,
            version=version,
        )
        profile = profile_of(stored)  # a profile-scored block is re-rated under its own profile
        rating = rated_under(rating, profile)
    except NumberMatchError as exc:
        ctx.add(parts + ("difficulty",), "NM402", f"re-rating failed: {exc}")
        return
    dparts = parts + ("difficulty",)
    if rating.min_adds != stored["min_adds"]:
        ctx.add(
            dparts + ("min_adds",),
            "NM404",
            f"min_adds {stored['min_adds']} is stored, re-rating gives {rating.min_adds}",
        )
    tier, score = stored_tier(stored), stored_score(stored)
    if exact:
        if rating.tier != tier:
            ctx.add(
                dparts + ("tier",),
                "NM402",
                f"tier {tier!r} is stored, re-rating (seed {seed}) gives {rating.tier!r}",
            )
        if (
            rating.score is None
            or score is None
            or abs(rating.score - score) > SCORE_TOLERANCE + 1e-9
        ):
            ctx.add(
                dparts + ("score",),
                "NM403",
                f"score {score} is stored, re-rating (seed {seed}) gives {rating.score}",
            )
        return
    span = tier_range(tier, version) if profile is None else profile.tier_range(tier)
    if rating.tier != tier and span is not None and rating.score is not None:
        low, high = span
        if rating.score < low - DEEP_TIER_MARGIN or rating.score >= high + DEEP_TIER_MARGIN:
            ctx.add(
                dparts + ("tier",),
                "NM402",
                f"tier {tier!r} is stored, re-rating (seed {DEFAULT_SEED}) gives {rating.tier!r} with score {rating.score}",
            )
