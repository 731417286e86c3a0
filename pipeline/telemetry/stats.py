"""The few statistics telemetry needs, in plain Python (exact, no dependency): the Wilson
interval of a binomial share, ranks and Spearman's correlation, mean absolute error."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z90 = 1.6448536269514722  # two-sided 90%: the normal quantile at 0.95


def wilson(losses: int, n: int, z: float = Z90) -> tuple[float, float]:
    """Wilson score interval of `losses` in `n` (90% by default); (0, 1) when n is 0.

    Chosen over the plain normal interval because it stays inside 0-1 and keeps its coverage at
    shares near 0 or 1 and at small n, which is where a stage's first days of telemetry are.
    """
    if n <= 0:
        return 0.0, 1.0
    p = losses / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson on ranks); None when fewer than 3 or either is constant."""
    if len(xs) != len(ys):
        raise ValueError("spearman: sequences of different lengths")
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def mae(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Mean absolute difference; 0 for empty sequences."""
    return sum(abs(a - b) for a, b in zip(xs, ys)) / len(xs) if xs else 0.0
