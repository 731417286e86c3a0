"""The layout of a folder of nights (`<out>/`) and of each night in it (`<out>/<date>/`), as the
nightly job writes them and the designers' tools (swap, the studio, the stock) read them: every
entry's name (the stock beside the nights has its own module, `stock_layout`), and the one rule
for which folder names are nights. Only the standard library's `re` and `datetime`: the command
line reads it at start-up."""

from __future__ import annotations

import datetime as _dt
import re

NIGHTS_FOLDER = "generated"  # where the nightly job writes by default, and where a puzzle id is looked up by default

# <out>/<date>/: what the nightly job makes in a night's folder
BUNDLE_FILE = "bundle.yaml"  # the bundle
REPORT_FILE = "report.md"  # the short human report (marked stale when the bundle is edited)
REPORT_HTML = "report.html"  # the night for a browser
LOG_FILE = "run.log"  # one line per phase, with wall-clock times (the only file with them)
POOL_DIR = "pool"  # pool/<id>.yaml: the validated Puzzles the bundle did not use (no stock)
STOCK_TAKEN = ".stock-taken.json"  # the stock puzzles the bundle took (for a rerun to take back)
# in flight between a night's staging folder and the stock (pipeline.stock.night)
STOCK_MOVE = ".stock-move.json"  # the manifest: stock files to take, additions to move in
STOCK_ADD = ".stock-add"  # the puzzles made and not used, as stock files, until moved in

# A night's folder is named by its date, YYYY-MM-DD in ASCII digits and a real day: nothing else
# (not 20261128, not 2026-W48-6, which `date.fromisoformat` also reads) is a night.
NIGHT_NAME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


def night_date(name: str) -> _dt.date | None:
    """The date of the night whose folder is called `name`; None when `name` names no night."""
    if not NIGHT_NAME.fullmatch(name):
        return None
    try:
        return _dt.date.fromisoformat(name)
    except ValueError:  # 2026-02-30
        return None
