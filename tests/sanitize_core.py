"""`make sanitize`: the compiled core built with AddressSanitizer and UndefinedBehaviorSanitizer,
run through the differential tests (tests/test_core.py) and a fuzz of every entry point with
hostile bytes and numbers.

    python -m tests.sanitize_core BUILT_CORE.so [--calls N] [--no-tests]

The sanitized module is loaded as `pipeline.engine._core` before anything imports the package,
so the tests and the fuzz run it. The fuzz passes when every call returns or raises ValueError
(anything else, or a sanitizer report, is a failure) and the memory Python's allocators hold
(`tracemalloc`, which sees the core's PyMem buffers and every object it makes) does not grow
after a warm-up: no leak.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

LEAK_SLACK = 256 * 1024  # bytes of growth allowed after the warm-up (caches, interned values)


def load(path: str) -> ModuleType:
    """Load the built core at `path` as `pipeline.engine._core`."""
    spec = importlib.util.spec_from_file_location("pipeline.engine._core", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a loadable extension module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["pipeline.engine._core"] = module
    spec.loader.exec_module(module)
    return module


def _cells(rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    n = rng.choice([0, 1, 2, 9, 17, 27, 36, 54, 80, rng.randrange(120)])
    if kind == 0:  # hostile: any byte
        return rng.randbytes(n)
    if kind == 1:  # digits and gaps
        return bytes(rng.choice(b"\x00\x00\x00\x01\x03\x05\x07\x09") for _ in range(n))
    return bytes(rng.randint(1, 9) for _ in range(n))


def _int(rng: random.Random, size: int) -> Any:
    return rng.choice(
        [-1, 0, 1, size - 1, size, size + 1, 2**31, -(2**63), 2**64, rng.randrange(max(1, size))]
    )


_SLOTS = (
    "_code",
    "_path",
    "_positions",
    "_start",
    "adds_used",
    "collapses",
    "moves",
    "openings",
    "pair_counts",
    "won",
)  # players.Playout's


class _Playout:
    __slots__ = _SLOTS


class _Short:
    __slots__ = _SLOTS[1:]


class _Props:
    __slots__ = _SLOTS[:-1]
    won = property(lambda self: 1)


# what `core.play` is handed as the playout class: a good one, and what it must refuse
_CLASSES: list[Any] = [_Playout, _Playout, None, _Short, _Props, int, tuple, type, 0, "x"]


def calls(core: ModuleType, rng: random.Random) -> list[Callable[[], object]]:
    """One round of hostile calls, one per entry point."""
    cells = _cells(rng)
    n = len(cells)
    mt = core.MT(random.Random(rng.random()).getstate()[1])
    out: list[Callable[[], object]] = [
        lambda: core.legal_pairs(cells),
        lambda: core.scan_pairs(cells),
        lambda: core.pairs_ordered(cells),
        lambda: core.has_legal_pair(cells),
        lambda: core.add_numbers(cells),
        lambda: core.pair_counts_after(cells),
        lambda: core.remove_pair(cells, _int(rng, n), _int(rng, n)),
        lambda: core.track(cells, _int(rng, n), _int(rng, n)),
        lambda: mt.randbelow(_int(rng, 1000)),
        lambda: core.play(
            rng.randrange(-1, 8),
            rng.randrange(-1, 6),
            cells,
            rng.randrange(-1, 4),
            rng.randrange(-1, 3),
            mt,
            rng.random() < 0.5,
            rng.choice([-1, 0, 5, 200]),
        ),
        lambda: core.play(
            rng.randrange(-1, 8),
            rng.randrange(-1, 6),
            cells,
            rng.randrange(-1, 4),
            rng.randrange(-1, 3),
            mt,
            rng.random() < 0.5,
            rng.choice([-1, 0, 5, 200]),
            rng.choice(_CLASSES),
        ),
        lambda: core.tally(
            rng.randrange(-1, 8),
            rng.randrange(-1, 6),
            cells,
            rng.randrange(-1, 4),
            rng.randrange(-1, 3),
            mt,
            rng.random() < 0.5,
            rng.choice([-1, 0, 5, 200]),
        ),
        lambda: mt.state(),
        lambda: core.seeded_mt(rng.randbytes(rng.choice([0, 3, 4, 8, 84, 4096, 4100]))),
    ]
    if rng.random() < 0.02:
        words = [rng.choice([0, 1, 2**32 - 1, 2**32, -1, rng.getrandbits(32)]) for _ in range(625)]
        words[-1] = rng.choice([0, 624, 625, -1, rng.randrange(625)])
        size = rng.choice([625, 625, 624, 0])
        out.append(lambda: core.MT(tuple(words[:size])))
    pairs = core.legal_pairs(cells) if all(v <= 9 for v in cells) else []
    if pairs:  # a legal pair too, so the removal's work is reached
        i, j = rng.choice(pairs)
        out.append(lambda: core.track(cells, i, j))
        out.append(lambda: core.remove_pair(cells, i, j))
    return out


def fuzz(core: ModuleType, total: int, seed: int = 0) -> int:
    """`total` hostile calls; returns the number of failures (printed)."""
    rng = random.Random(seed)
    failures = made = 0
    warm = max(1, total // 10)
    tracemalloc.start()
    base: int | None = None
    while made < total:
        for call in calls(core, rng):
            try:
                call()
            except ValueError:
                pass
            except Exception as exc:
                failures += 1
                if failures <= 10:
                    print(f"fuzz: call {made}: {type(exc).__name__}: {exc}")
            made += 1
            if base is None and made >= warm:
                base = tracemalloc.get_traced_memory()[0]
    grown = tracemalloc.get_traced_memory()[0] - (base or 0)
    tracemalloc.stop()
    leak = grown > LEAK_SLACK
    print(
        f"fuzz: {made:,} calls of {len(calls(core, random.Random(1)))} entry points, "
        f"{failures} failures, memory after the warm-up {grown:+,} bytes"
        f" ({'LEAK' if leak else 'no leak'})"
    )
    return failures + leak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("core", help="the sanitized build of pipeline/engine/_core.c")
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--no-tests", action="store_true", help="only the fuzz")
    args = parser.parse_args(argv)
    core = load(args.core)
    print(f"sanitize: {args.core}")
    status = 0
    if not args.no_tests:
        import pytest

        os.environ.setdefault("NM_CORE_EXAMPLES", "200")
        root = Path(__file__).resolve().parent
        status = pytest.main(["-q", "-x", "-p", "no:cacheprovider", str(root / "test_core.py")])
    return int(bool(status) or fuzz(core, args.calls) > 0)


if __name__ == "__main__":
    raise SystemExit(main())
