"""Run the benchmarks: `python -m pipeline.bench [NAME...]` (names: engine solver rating generator validator dask startup studio nightly telemetry stock)."""

from __future__ import annotations

import importlib
import sys
import time

ORDER = (
    "engine",
    "solver",
    "rating",
    "generator",
    "validator",
    "dask",
    "startup",
    "studio",
    "nightly",
    "telemetry",
    "stock",
)


def main(argv: list[str]) -> int:
    names = argv or list(ORDER)
    for name in names:
        if name not in ORDER:
            print(f"unknown benchmark {name!r}; choose from {', '.join(ORDER)}", file=sys.stderr)
            return 2
        try:
            module = importlib.import_module(f"pipeline.bench.bench_{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"pipeline.bench.bench_{name}":
                raise
            print(f"== {name}: no benchmark module yet")
            continue
        print(f"== {name}")
        start = time.perf_counter()
        module.main()
        print(f"   ({name} benchmark took {time.perf_counter() - start:.1f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
