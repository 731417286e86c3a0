"""The nightly job: generate -> validate -> assemble -> write `<out>/<date>/`, unattended.

One night's output is a folder `<out>/<date>/` holding

- `bundle.yaml`: the bundle (see `pipeline.jobs.bundle`);
- `report.md`: a short human report: Puzzles per tier, acceptance rates, the work each phase
  did, and the difficulty curve of each Level;
- `report.html`: the same night for a browser: curves as charts, every Stage's board drawn, its
  metrics explained (`pipeline.jobs.report_html`);
- `pool/<id>.yaml` (without the stock): the validated Puzzles the bundle did not use, the first
  place `swap` looks; with the stock they go to `<out>/stock/` and the night keeps
  `.stock-taken.json`, the stock puzzles its bundle took (so a rerun draws as it did);
- `run.log`: the one summary line per phase that the job also logs, with its wall-clock time.

The curve is a built-in name or a designer's curve file (`FILE[:NAME]`); the night generates
every tier the curve asks for, expert included. A night can continue the game's Level sequence
(`continue_from`): its Levels are numbered on from the last night's and ask the curve for those
Levels, so Level 51 is harder than Level 50 although they were made on different nights.

`bundle.yaml`, `report.md`, `report.html` and `pool/` depend only on the date, seed, sizes, curve
and first Level (and, for a night from the stock, on the stock as it was before that date: a
rerun puts back what the night took and ignores what was stocked after it), so rerunning a night
gives byte-identical files (the seed defaults from the date). Wall-clock times would break that,
so they live only in `run.log`.

The job never leaves a partial bundle where a good one was: it builds the whole folder as
`<out>/.<date>.tmp-XXXX/`, validates the bundle there, and only then swaps it in (the old folder
is renamed aside, the new one renamed in, the old one deleted). Any failure raises NightlyError
and leaves the previous output untouched; a killed run leaves only a hidden temp folder, which
the next run sweeps away. A lock on the output folder keeps two runs from racing.
"""

from pipeline.jobs.nightly.build import Built, build_night
from pipeline.jobs.nightly.options import (
    DEFAULT_LEVELS,
    DEFAULT_OUT,
    DEFAULT_REFILL_SECONDS,
    DEFAULT_STAGES,
    NIGHT_CURVE,
    NightlyError,
    NightlyOptions,
    Previous,
    default_seed,
    next_night,
    plan_night,
    previous_night,
    read_job,
)
from pipeline.jobs.nightly.run import NightlyResult, run_nightly
from pipeline.jobs.nightly.streams import Progress, TierStats

__all__ = [
    "DEFAULT_LEVELS",
    "DEFAULT_OUT",
    "DEFAULT_REFILL_SECONDS",
    "DEFAULT_STAGES",
    "NIGHT_CURVE",
    "Built",
    "NightlyError",
    "NightlyOptions",
    "NightlyResult",
    "Previous",
    "Progress",
    "TierStats",
    "build_night",
    "default_seed",
    "next_night",
    "plan_night",
    "previous_night",
    "read_job",
    "run_nightly",
]
