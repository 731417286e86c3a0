"""Curating a night's bundle: the one home of a designer's edits, for every front end.

The CLI's `swap` and `assemble --curation`, and the studio's offers and Save, only call this
module, so the rules that keep a designer's work safe live once:

- where candidates come from (`open_source`): the pools named, else the bundle's `pool/`, else
  the stock of the nights' folder (a night drawn from the stock has no pool);
- which candidates may be offered (`offerable`): never a puzzle (or a relabelled copy) a bundle
  under the nights' folder already ships;
- the lock (`held`): taking from the stock holds the nights' folder lock the nightly and the
  stock commands hold, from the choice to the commit, so nothing else takes the same puzzle;
- the safe order (`commit`): the puzzle swapped out goes back to the pool, or into the stock,
  before the bundle is written (guarded: refused if it changed since it was read), and a puzzle
  taken from the stock leaves it last; a kill at any point leaves every puzzle somewhere;
- the reports (`refresh_reports`): report.html re-rendered, report.md marked stale with the
  Stages that differ from the night as generated, and unmarked when a swap back undoes them;
- pins and excludes (`keep_curation`, `constraints`): kept in the bundle's curation file
  (`pipeline.formats.curation`), which the assembler reads back.

Undo is a swap back: the puzzle swapped out is in the pool or the stock again, so swapping it
in (`--with ID`, or the studio's offer) restores the bundle byte for byte, and its reports too.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.atomic import WriteRefused, snapshot, write_guarded
from pipeline.errors import NumberMatchError
from pipeline.formats.curation import Curation, curation_path
from pipeline.formats.index import LevelIndex
from pipeline.formats.loader import load_text
from pipeline.formats.night import POOL_DIR
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.stock_layout import STOCK_DIR
from pipeline.jobs import report_html
from pipeline.jobs.inputs import load_puzzles
from pipeline.jobs.publish import PublishError, locked
from pipeline.jobs.swap import SwapError, SwapResult, commit_swap, swap_stage
from pipeline.rating.profile import RatingProfile
from pipeline.stock.store import (
    nights_folder,
    remove_keys,
    shipped_places,
    stock_day,
    stock_path,
    stock_text,
)

POOL, STOCK = "pool", "stock"  # where a bundle's swap candidates come from


class CurateError(NumberMatchError):
    """A curating edit that cannot be made as asked; nothing was written."""


class StockBusy(CurateError):
    """The nights' folder is locked by a nightly run, a stock command or another swap."""


@dataclass(frozen=True)
class Source:
    """Where a bundle's swap candidates come from: `kind` POOL (puzzle files, folders or
    bundles: `places`; `keep`, the bundle's own pool/ that takes back the puzzle swapped out,
    or None for pools named by the user), STOCK (the stock of the nights' folder `nights`), or
    "" (nothing to offer). `nights`: the folder of nights the bundle belongs to."""

    kind: str
    nights: Path
    places: tuple[Path, ...] = ()
    keep: Path | None = None

    @property
    def where(self) -> str:
        """The word messages use for where candidates come from."""
        return self.kind or POOL


def open_source(bundle: Path, pools: Sequence[Path] = ()) -> Source:
    """The candidates' source for `bundle`: the `pools` named, else its night's `pool/`, else
    the stock of its nights' folder, else none."""
    nights = nights_folder(
        bundle
    )  # the nights' output folder: its stock, and every bundle it ships
    if pools:
        return Source(POOL, nights, tuple(pools))
    own = bundle.parent / POOL_DIR
    if own.is_dir():
        return Source(POOL, nights, (own,), own)
    if (nights / STOCK_DIR).is_dir():
        return Source(STOCK, nights, (nights / STOCK_DIR,))
    return Source("", nights)


@contextlib.contextmanager
def held(source: Source, *, writing: bool = True) -> Iterator[None]:
    """Hold the nights' folder lock while taking from its stock (and writing); nothing to hold
    for a pool. Raises StockBusy when another run holds it."""
    with contextlib.ExitStack() as stack:
        if source.kind == STOCK and writing:
            try:
                stack.enter_context(locked(source.nights))
            except PublishError as exc:
                raise StockBusy(f"{source.nights}: the stock is in use") from exc
        yield


def offerable(
    source: Source, bundle: Path, puzzles: Sequence[Puzzle], with_id: str | None = None
) -> list[Puzzle]:
    """The candidates a swap on `bundle` may take: never a puzzle (or a relabelled copy) that a
    bundle under the nights' folder ships. The puzzle named `with_id` stays when this bundle is
    what ships it (the swap then names it: the same id, or a repeat its validation finds);
    CurateError when another bundle ships it."""
    shipped = shipped_places(source.nights)
    elsewhere = shipped_places(source.nights, besides=bundle)
    named = next((p for p in puzzles if p.id == with_id), None) if with_id is not None else None
    if named is None and with_id is not None:
        _refuse_shipped(with_id, source, bundle)
    if named is not None and named.key in elsewhere:
        raise CurateError(
            f"puzzle {with_id}: the puzzle or a relabelled copy is already shipped at {elsewhere[named.key]}"
        )
    return [p for p in puzzles if p.key not in shipped or p is named]


def _refuse_shipped(pid: str, source: Source, bundle: Path) -> None:
    """`--with ID` of a puzzle that is no candidate because a bundle ships it (this one or
    another night's): CurateError saying where, instead of only that the pool or stock lacks it."""
    if not source.nights.is_dir():
        return
    with LevelIndex(source.nights) as index:
        index.refresh()
        hits = [e for e in index.entries("bundle") if e.id == pid]
    mine = bundle.resolve()
    for e in hits:
        if (source.nights / e.path).resolve() == mine:
            raise CurateError(
                f"puzzle {pid}: already in this bundle at {e.place}; a bundle uses each puzzle once"
            )
    if hits:
        raise CurateError(
            f"puzzle {pid}: not in the {source.where}: it is shipped at {source.nights / hits[0].where}"
            " (a puzzle ships once; name another, or let the swap choose)"
        )


def shipped_repeats(
    root: Path, named: Sequence[tuple[str, Puzzle]]
) -> tuple[list[tuple[str, Puzzle]], list[str]]:
    """`named` (file name, puzzle) split into those no bundle under `root` ships and one
    NM321 line for each of the others (the studio lists what it may not offer)."""
    shipped = shipped_places(root)
    repeats = [
        f"{name}: NM321: {p.id} (or a relabelled copy) is already shipped at"
        f" {Path(shipped[p.key]).relative_to(root).as_posix()}"
        for name, p in named
        if p.key in shipped
    ]
    return [(name, p) for name, p in named if p.key not in shipped], repeats


def swap(
    source: Source,
    bundle: Path,
    level: int,
    stage: int,
    *,
    with_id: str | None = None,
    dry_run: bool = False,
    profile: RatingProfile | None = None,
) -> tuple[SwapResult, Path | None]:
    """Swap Stage `stage` of Level `level` of `bundle` for the candidate named `with_id`, or
    `swap`'s own choice, from its source's puzzles (rated under `profile` when given), under
    the lock the source needs from the choice to the commit, in the safe order; `dry_run`
    writes nothing. Returns the swap and where the puzzle swapped out was kept (None: nowhere
    new). Raises StockBusy, or a NumberMatchError saying why nothing was written."""
    with held(source, writing=not dry_run):
        candidates = [p.under(profile) for p in load_puzzles(source.places)]
        result = swap_stage(
            bundle,
            level,
            stage,
            offerable(source, bundle, candidates, with_id),
            with_id=with_id,
            write=False,
            where=source.where,
        )
        return result, (None if dry_run else commit(source, result))


def swap_in(
    source: Source,
    bundle: Path,
    level: int,
    stage: int,
    puzzle: Puzzle,
    *,
    expected: str | None = None,
) -> tuple[SwapResult, Path | None]:
    """One swap of a studio Save: `puzzle` (offered already) into the Stage, committed in its
    source's safe order, only if the bundle is still `expected`; the caller holds `held`."""
    result = swap_stage(
        bundle, level, stage, [puzzle], with_id=puzzle.id, write=False, where=source.where
    )
    return result, commit(source, result, expected)


def refresh_reports(bundle: Path, text: str, before: str) -> list[str]:
    """The night's reports after an edit of its bundle from the text `before` to `text`
    (`report_html.refresh_reports`: report.html re-rendered, report.md's stale note naming the
    Stages that differ from the night as generated, or gone when none does)."""
    now, was = load_text(text, str(bundle)).document, load_text(before, str(bundle)).document
    return report_html.refresh_reports(
        bundle, now.data if now else {}, was.data if was is not None else None
    )


def commit(source: Source, result: SwapResult, expected: str | None = None) -> Path | None:
    """Write a swap chosen with write=False in the safe order of its source (the caller holds
    `held`), only if it read the bundle `expected` (a content digest) when one is given."""
    if expected is not None and (result.base is None or result.base.digest != expected):
        raise SwapError("the bundle changed on disk while saving; nothing more was written")
    if source.kind == STOCK:
        return commit_from_stock(result, source.nights)
    return commit_swap(result, source.keep)


def commit_from_stock(result: SwapResult, nights: Path) -> Path | None:
    """Write `result` taking its new puzzle from the stock of `nights`. The taken puzzle must
    still be in the stock and shipped nowhere else; the old one goes back into the stock unless
    it (or a relabelled copy) is stocked or shipped elsewhere. The order survives a kill: the
    old puzzle into the stock first, then the bundle written guarded (a refusal takes that
    stock file back: ours, made a moment ago), then the taken puzzle leaves the stock; in
    between a puzzle is in a bundle and in the stock (`validate` says NM321, `stock prune`
    drops the copy), never in neither. Returns the stock file written for the old puzzle."""
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
            # dated as the latest night: a rerun of that night never draws it
            day = stock_day(nights, _dt.datetime.now(_dt.UTC).date())
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


def keep_curation(bundle: Path, curation: Curation) -> Path:
    """Write the pins and excludes beside the bundle (guarded: a link or a read-only file is
    refused); returns the curation file."""
    path = curation_path(bundle)
    write_guarded(path, curation.text(bundle.name), base=snapshot(path))
    return path


def constraints(
    pins: Mapping[tuple[int, int], str], excludes: Sequence[str], kept: Curation | None
) -> tuple[dict[tuple[int, int], str], list[str]]:
    """The assembler's pins and excludes: those given, with a curation file's added (a pin
    given wins over the file's for the same Stage)."""
    if kept is None:
        return dict(pins), list(excludes)
    merged = {**dict(kept.pins), **pins}
    excluded = list(excludes)
    return merged, excluded + [pid for pid in kept.excludes if pid not in excluded]
