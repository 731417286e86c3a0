"""Committing a swap whose new puzzle comes from the stock: the one implementation the CLI's
`swap` and the studio's Save both call, so neither can lose a puzzle.

The order is what makes it safe against a kill at any point: the old puzzle goes into the stock
first, then the bundle is written guarded (a refusal takes that stock file back: it is ours, made
a moment ago), then the taken puzzle leaves the stock. A kill in between leaves a puzzle in a
bundle and in the stock (`validate` reports it as NM321, `stock prune` drops the stock copy),
never in neither. Callers hold the nights' folder lock (`pipeline.jobs.publish.locked`) around
choosing and committing, so a night or another swap never takes the same puzzle.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from pipeline.atomic import WriteRefused, snapshot, write_guarded
from pipeline.formats.index import LevelIndex
from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.swap import SwapError, SwapResult, commit_swap
from pipeline.stock.store import remove_keys, shipped_places, stock_day, stock_path, stock_text


def commit_from_stock(result: SwapResult, nights: Path) -> Path | None:
    """Write `result` (a swap chosen with write=False) taking its new puzzle from the stock of
    `nights`. The taken puzzle must still be in the stock and shipped nowhere else; the old one
    goes back into the stock unless it (or a relabelled copy) is stocked or shipped elsewhere.
    Returns the stock file written for the old puzzle (None when none was)."""
    with LevelIndex(nights) as index:
        index.refresh()
        stocked = index.stock_keys()
    if result.new.key not in stocked:
        raise SwapError(
            f"{result.new.id} is no longer in the stock (a night or a swap took it); nothing written"
        )
    elsewhere = shipped_places(nights, besides=result.path)
    if result.new.key in elsewhere:  # another bundle took it (or a copy) since the swap was chosen
        where = Path(elsewhere[result.new.key]).relative_to(nights).as_posix()
        raise SwapError(
            f"{result.new.id} (or a relabelled copy) is already shipped at {where}; nothing written"
        )
    old = Puzzle.from_dict(result.old_puzzle) if result.old_puzzle else None
    kept = None
    if old is not None and old.key not in stocked and old.key not in elsewhere:
        target = stock_path(nights, old)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            day = stock_day(
                nights, _dt.datetime.now(_dt.UTC).date()
            )  # a rerun of that night never draws it
            write_guarded(target, stock_text(old, day, nights), base=snapshot(target))
            kept = (
                target  # as the caller named the folder (write_guarded answers the resolved path)
            )
        except (WriteRefused, OSError) as exc:
            raise SwapError(
                f"cannot put {old.id} back in the stock ({exc}); nothing written"
            ) from exc
    try:
        commit_swap(result, None)
    except SwapError:
        if kept is not None:
            kept.unlink(
                missing_ok=True
            )  # ours, made a moment ago: the bundle still has that puzzle
        raise
    remove_keys(nights, [result.new.key])
    return kept
