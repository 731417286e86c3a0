"""`numbermatch calibrate`: fit a rating profile to the game's own players.

The model. A puzzle's stored difficulty block holds each simulated player's win rate (rating
version 3's seven players). An audience that plays like player p a share a_p of the time loses a
game with probability q = sum_p a_p (1 - w_p). With a puzzle's finished attempts n and losses k
from telemetry, the fit maximises the binomial log-likelihood sum_i k_i log q_i + (n_i - k_i)
log(1 - q_i) over weights a_p >= 0 summing to 1, so a puzzle counts by its attempts. Because q is
a mixture of known per-player probabilities, the maximum is found by expectation-maximisation
(`fit_weights`): each step keeps the weights on the simplex and never lowers the likelihood, and
the log-likelihood is concave in the weights, so it converges to the global optimum (win rates
are clipped to [0.001, 0.999] so a stored 0 or 1 cannot make a probability zero).

Evidence. k-fold cross-validation by puzzle (default 5 folds, puzzles assigned by a seeded hash):
each fold's puzzles are predicted by weights fitted on the other folds; the pooled held-out
predictions give MAE (loss-rate points) and Spearman against the observed loss rates, for the
fitted mix and for the default mix (version 3's `WEIGHTS_V3`) on the same puzzles.

Tier boundaries for the audience (docs/telemetry.md): a tier keeps the content it holds. Each
default boundary (41, 54, 84) maps to the profile score at the same quantile of the catalogue's
puzzles (the share of puzzles the default puts below the boundary); where fewer than
`QUANTILE_MIN_SIDE` puzzles lie on either side of it, the least-squares line from default to
profile score over the same puzzles is used instead. So a puzzle the default calls medium stays
medium for an audience that orders puzzles alike, and the tier words (which say how each kind of
player fares in a tier) stay true; the score itself moves to this audience's predicted loss rate.

Refusal. Fewer than `MIN_PUZZLES` puzzles with `MIN_ATTEMPTS` finished attempts each cannot
support a fit (nor the cross-validation): `calibrate` says so in one line and how many more it
needs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.rating.profile import PLAYER_NAMES, RatingProfile
from pipeline.rating.tiers import TIERS
from pipeline.rating.versions import WEIGHTS_V3
from pipeline.telemetry.catalogue import Catalogue
from pipeline.telemetry.records import Telemetry, counted
from pipeline.telemetry.stats import mae, spearman

MIN_PUZZLES = 20  # puzzles with enough attempts for a fit and 5 held-out folds of 4
MIN_ATTEMPTS = (
    30  # finished attempts a puzzle needs to count (its loss rate to within ~15 points at 90%)
)
FOLDS = 5
CLIP = 1e-3
MAX_ITERATIONS = 2_000
TOLERANCE = 1e-8
QUANTILE_MIN_SIDE = 5
WEIGHT_DIGITS = 4


class CalibrationError(NumberMatchError):
    """Telemetry that cannot support a fit (says how much more is needed)."""


@dataclass(frozen=True)
class Sample:
    """One puzzle's data for the fit: per player, the stored loss rate; finished games and losses."""

    puzzle: str
    loss: tuple[float, ...]  # in PLAYER_NAMES order
    finished: int
    losses: int

    @property
    def observed(self) -> float:
        return self.losses / self.finished


def samples(
    catalogue: Catalogue, telemetry: Telemetry, min_attempts: int = MIN_ATTEMPTS
) -> list[Sample]:
    """The puzzles usable for a fit: blocks of a rating version that plays the players a profile
    weighs (3 and 4) with `min_attempts` finished attempts."""
    out = []
    for pid in sorted(catalogue.puzzles):
        rated = catalogue.puzzles[pid].rated
        d = rated.data
        c = telemetry.counts.get(pid)
        if (
            c is None
            or c.finished < min_attempts
            or not RatingProfile.default().scores_version(rated.version)
            or rated.score is None
        ):
            continue
        out.append(
            Sample(
                pid,
                tuple(1.0 - float(d["players"][n]["win_rate"]) for n in PLAYER_NAMES),
                c.finished,
                c.losses,
            )
        )
    return out


def predict(weights: Sequence[float], sample: Sample) -> float:
    return sum(a * loss for a, loss in zip(weights, sample.loss))


def log_likelihood(weights: Sequence[float], data: Sequence[Sample]) -> float:
    total = 0.0
    for s in data:
        q = min(1 - CLIP, max(CLIP, predict(weights, s)))
        total += s.losses * math.log(q) + (s.finished - s.losses) * math.log(1 - q)
    return total


def fit_weights(data: Sequence[Sample]) -> tuple[float, ...]:
    """Maximum-likelihood mix weights (EM over the mixture of the players' known loss rates)."""
    m = len(PLAYER_NAMES)
    a = [1.0 / m] * m
    total = sum(s.finished for s in data)
    if total == 0:
        raise CalibrationError("no finished attempts to fit")
    clipped = [[min(1 - CLIP, max(CLIP, x)) for x in s.loss] for s in data]
    for _ in range(MAX_ITERATIONS):
        new = [0.0] * m
        for s, loss in zip(data, clipped):
            q = sum(ap * lp for ap, lp in zip(a, loss))
            wins = s.finished - s.losses
            for p in range(m):
                new[p] += s.losses * a[p] * loss[p] / q + wins * a[p] * (1 - loss[p]) / (1 - q)
        new = [x / total for x in new]
        change = max(abs(x - y) for x, y in zip(new, a))
        a = new
        if change < TOLERANCE:
            break
    return tuple(a)


def rounded_weights(weights: Sequence[float]) -> tuple[float, ...]:
    """Weights to WEIGHT_DIGITS decimals, still summing to 1 (the largest takes the rounding)."""
    out = [round(w, WEIGHT_DIGITS) for w in weights]
    top = max(range(len(out)), key=lambda i: out[i])
    out[top] = round(out[top] + 1.0 - sum(out), WEIGHT_DIGITS)
    return tuple(out)


def folds(data: Sequence[Sample], k: int, seed: int) -> list[list[Sample]]:
    """k folds of puzzles, assigned round-robin in the order of a seeded hash of their ids."""
    order = sorted(data, key=lambda s: hashlib.sha256(f"{seed}:{s.puzzle}".encode()).hexdigest())
    return [order[i::k] for i in range(k)]


def cross_validate(data: Sequence[Sample], k: int = FOLDS, seed: int = 0) -> dict[str, Any]:
    """Held-out MAE and Spearman of the fitted mix (fitted without each fold) and the default mix."""
    default = tuple(WEIGHTS_V3[n] for n in PLAYER_NAMES)
    observed: list[float] = []
    fitted: list[float] = []
    base: list[float] = []
    parts = folds(data, k, seed)
    for i, held in enumerate(parts):
        train = [s for j, part in enumerate(parts) if j != i for s in part]
        w = fit_weights(train)
        for s in held:
            observed.append(s.observed)
            fitted.append(predict(w, s))
            base.append(predict(default, s))

    def figures(pred: list[float]) -> dict[str, float | None]:
        sp = spearman(pred, observed)
        return {
            "mae": round(mae(pred, observed), 4),
            "spearman": None if sp is None else round(sp, 4),
        }

    return {
        "folds": k,
        "puzzles": len(observed),
        "fitted": figures(fitted),
        "default": figures(base),
    }


def audience_tiers(
    catalogue: Catalogue, profile_weights: Mapping[str, float]
) -> tuple[tuple[str, float, float], ...]:
    """The profile's tier table: each default boundary moved to the profile score at the same
    quantile of the catalogue's puzzles (of the versions a profile scores: 3 and 4), or along the least-squares line where the
    quantile has too few puzzles on a side (module docstring)."""
    pairs = []
    for p in catalogue.puzzles.values():
        rated = p.rated
        if RatingProfile.default().scores_version(rated.version) and rated.score is not None:
            players = rated.data["players"]
            prof = 100.0 * sum(
                w * (1.0 - float(players[n]["win_rate"])) for n, w in profile_weights.items()
            )
            pairs.append((rated.score, prof))
    defaults = sorted(x for x, _ in pairs)
    profiles = sorted(y for _, y in pairs)
    n = len(pairs)
    mx = sum(defaults) / n
    my = sum(profiles) / n
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sxx if sxx else 1.0
    bounds = []
    for _, _, high in TIERS[:-1]:
        below = sum(x < high for x in defaults)
        if below >= QUANTILE_MIN_SIDE and n - below >= QUANTILE_MIN_SIDE:
            # the profile score with `below` puzzles under it: halfway between its neighbours
            b = (profiles[below - 1] + profiles[below]) / 2
        else:
            b = my + slope * (high - mx)
        bounds.append(b)
    edges = [0.0]
    for i, b in enumerate(bounds):  # strictly increasing, inside (0, 100), 2 decimals
        room = (len(bounds) - i) * 0.01  # left for the boundaries still to come
        edges.append(round(min(100.0 - room, max(edges[-1] + 0.01, b)), 2))
    edges.append(100.0)
    return tuple((name, edges[i], edges[i + 1]) for i, (name, _, _) in enumerate(TIERS))


def refusal(data: Sequence[Sample], catalogue: Catalogue, telemetry: Telemetry) -> str | None:
    """Why these data cannot support a fit, and how much more is needed; None when they can."""
    if len(data) >= MIN_PUZZLES:
        return None
    need = MIN_PUZZLES - len(data)
    short = [
        c
        for pid, c in telemetry.counts.items()
        if pid in catalogue.puzzles and 0 < c.finished < MIN_ATTEMPTS
    ]
    closest = sorted(short, key=lambda c: (-c.finished, c.puzzle))[:need]
    parts = []
    if closest:
        more = sum(MIN_ATTEMPTS - c.finished for c in closest)
        parts.append(
            f"{counted(more, 'more finished attempt')} on the {counted(len(closest), 'puzzle')} closest to {MIN_ATTEMPTS}"
        )
    if need > len(closest):
        parts.append(
            f"{counted(need - len(closest), 'more puzzle')} with {MIN_ATTEMPTS} finished attempts each"
        )
    return (
        f"cannot fit a profile: {counted(len(data), 'puzzle')} {'has' if len(data) == 1 else 'have'} {MIN_ATTEMPTS} or more finished "
        f"attempts and a fit needs {MIN_PUZZLES}: it needs {' and '.join(parts)}"
    )


@dataclass(frozen=True)
class Calibration:
    """The fitted profile and what the profile file records about it."""

    profile: RatingProfile
    fitted_from: dict[str, Any]
    heldout: dict[str, Any]
    log_likelihood: float

    def text(self) -> str:
        h = self.heldout
        f = self.fitted_from

        def fig(d: Mapping[str, Any]) -> str:
            sp = d["spearman"]
            return (
                f"MAE {d['mae'] * 100:.1f} points, Spearman {'n/a' if sp is None else f'{sp:.3f}'}"
            )

        return "\n".join(
            [
                f"fitted profile {self.profile.name} from {counted(f['records'], 'record')} "
                f"({counted(f['attempts'], 'finished attempt')}, "
                f"{f['abandons']:,} abandoned; {f['bad_records']:,} bad skipped) on {counted(f['puzzles'], 'puzzle')}",
                f"  weights: {', '.join(f'{n} {w:.4f}' for n, w in self.profile.weights)}",
                f"  tiers:   {', '.join(f'{n} {lo:g}-{hi:g}' for n, lo, hi in self.profile.tiers)}",
                f"  held-out ({h['folds']}-fold by puzzle, {counted(h['puzzles'], 'puzzle')}): fitted {fig(h['fitted'])}; "
                f"default {fig(h['default'])}",
            ]
        )


def calibrate(
    catalogue: Catalogue,
    telemetry: Telemetry,
    *,
    name: str,
    date: str,
    folds_k: int = FOLDS,
    seed: int = 0,
    min_attempts: int = MIN_ATTEMPTS,
) -> Calibration:
    """Fit the profile (weights, tiers) and cross-validate it; CalibrationError when refused."""
    data = samples(catalogue, telemetry, min_attempts)
    why = refusal(data, catalogue, telemetry)
    if why is not None:
        raise CalibrationError(why)
    weights = fit_weights(data)
    mix = dict(zip(PLAYER_NAMES, rounded_weights(weights)))
    profile = RatingProfile(name, tuple(mix.items()), audience_tiers(catalogue, mix))
    heldout = cross_validate(data, min(folds_k, len(data)), seed)
    fitted_from = {
        "records": telemetry.records,
        "bad_records": telemetry.bad_total,
        "attempts": sum(s.finished for s in data),
        "abandons": sum(telemetry.counts[s.puzzle].abandons for s in data),
        "puzzles": len(data),
        "telemetry_digest": telemetry.digest,
        "date": date,
    }
    return Calibration(profile, fitted_from, heldout, log_likelihood(weights, data))
