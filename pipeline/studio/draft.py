"""Curating a bundle: a draft of swaps, pins and excludes, and the save that applies it.

The draft travels in the page address (`s:1.2=nm1-...;p:1.3;x:nm1-...`) together with the
content hash of the bundle as it was when opened, so nothing is written until Save and a
reload never loses it. Meaning of each edit:

- swap `L.S=ID`: put the candidate Puzzle ID in that Stage (the only edit that changes the file);
  candidates come from the night's pool, or for a night drawn from the stock (no pool/ folder)
  from the stock of the nights' folder (`library.Library.offers`);
- pin `L.S`: keep that Stage as it is (no swap is offered or accepted for it);
- exclude `ID`: never offer that Puzzle; excluding the Puzzle of an unpinned Stage also swaps
  in the pool's best remaining Puzzle for it.

Save re-reads the bundle and refuses when its hash is not the draft's base (someone changed it
since it was opened: nothing is written, the draft stays in the address). Otherwise each swap is
made exactly as `numbermatch swap BUNDLE L.S --with ID` makes it (`pipeline.jobs.swap`: only
that Stage's text changes, the whole bundle is validated first, the old puzzle goes back to the
night's pool, or to the stock it came from, before the bundle is written, so the swap can be
undone and a failure leaves it in one place; a puzzle taken from the stock then leaves it, all
under the nights' folder lock the nightly holds), the night's report.html is re-rendered and report.md
marked stale. Pins and excludes are kept in the bundle's curation file (`pipeline.formats.curation`),
which the bundle page opens with and `assemble --curation` reads. A refused Save keeps the draft.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pipeline.errors import NumberMatchError
from pipeline.formats.bundle import Bundle
from pipeline.formats.curation import PUZZLE_ID, Curation, curation_path
from pipeline.formats.night import REPORT_FILE, REPORT_HTML
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.slot import Slot, SlotError
from pipeline.jobs import curate
from pipeline.jobs.swap import SwapError, choose_replacement
from pipeline.limits import MAX_DRAFT_EDITS
from pipeline.stock.store import nights_folder
from pipeline.studio.library import (
    SUFFIXES,
    LibraryError,
    Offers,
    bundle_value,
    content_hash,
    read_document,
)

_ID = PUZZLE_ID
# a Stage in the address form `1.2`, read by `split_at` (Slot.parse, the one grammar)
_PART = re.compile(
    rf"(?:s:(?P<swap_at>[^=;]{{1,20}})=(?P<swap_id>{_ID})|p:(?P<pin>[^;]{{1,20}})|x:(?P<exclude>{_ID}))\Z"
)
_SAVE_LOCK = threading.Lock()  # one save at a time per studio process


class DraftError(NumberMatchError):
    """A draft that cannot be read or applied."""


class StaleSave(DraftError):
    """The bundle changed on disk since the draft was based on it."""


@dataclass(frozen=True)
class Draft:
    swaps: tuple[tuple[str, str], ...] = ()  # (L.S, puzzle id), at most one per Stage
    pins: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Draft:
        """A draft from its address form; raises DraftError naming the bad part."""
        swaps: dict[str, str] = {}
        pins: list[str] = []
        excludes: list[str] = []
        parts = [p for p in (text or "").split(";") if p]
        if len(parts) > MAX_DRAFT_EDITS:
            raise DraftError(f"the draft has {len(parts)} edits; at most {MAX_DRAFT_EDITS}")
        for part in parts:
            m = _PART.match(part)
            if not m:
                raise DraftError(f"draft edit {part[:60]!r} is not s:L.S=ID, p:L.S or x:ID")
            if m["swap_at"]:
                split_at(m["swap_at"])
                swaps[m["swap_at"]] = m["swap_id"]
            elif m["pin"]:
                split_at(m["pin"])
                pins.append(m["pin"])
            else:
                excludes.append(m["exclude"])
        return cls(tuple(swaps.items()), tuple(dict.fromkeys(pins)), tuple(dict.fromkeys(excludes)))

    def __str__(self) -> str:
        parts = [f"s:{at}={pid}" for at, pid in self.swaps]
        parts += [f"p:{at}" for at in self.pins] + [f"x:{pid}" for pid in self.excludes]
        return ";".join(parts)

    @property
    def empty(self) -> bool:
        return not (self.swaps or self.pins or self.excludes)

    def swap_for(self, at: str) -> str | None:
        return dict(self.swaps).get(at)

    def with_swap(self, at: str, pid: str) -> Draft:
        if at in self.pins:
            raise DraftError(f"{stage_name(at)} is pinned; unpin it to swap it")
        swaps = dict(self.swaps)
        swaps[at] = pid
        return replace(self, swaps=tuple(swaps.items()))

    def without_swap(self, at: str) -> Draft:
        return replace(self, swaps=tuple((a, p) for a, p in self.swaps if a != at))

    def toggle_pin(self, at: str) -> Draft:
        if at in self.pins:
            return replace(self, pins=tuple(a for a in self.pins if a != at))
        return replace(self.without_swap(at), pins=self.pins + (at,))

    def toggle_exclude(self, pid: str) -> Draft:
        if pid in self.excludes:
            return replace(self, excludes=tuple(p for p in self.excludes if p != pid))
        return replace(self, excludes=self.excludes + (pid,))


def split_at(at: str) -> tuple[int, int]:
    """(level, stage) from a page address's `L.S` (e.g. `1.2` for L1.S2): `Slot.parse`, in its
    short spelling only (the address is a draft's key); raises DraftError."""
    try:
        slot: Slot | None = Slot.parse(at or "")
    except SlotError:
        slot = None
    if slot is None or slot.short != at:
        raise DraftError(
            f"stage {(at or '')[:20]!r} names no Stage (the address writes L1.S2 as at=1.2)"
        )
    return slot.level, slot.stage


def offer_pool(pool: Sequence[Puzzle], draft: Draft, used: set[str]) -> list[Puzzle]:
    """The pool minus excluded Puzzles and those already in the bundle or the draft."""
    taken = used | {pid for _, pid in draft.swaps} | set(draft.excludes)
    return [p for p in pool if p.id not in taken]


def nearest(
    stages: Sequence[Mapping[str, Any]],
    flat: int,
    at: str,
    pool: Sequence[Puzzle],
    where: str = "pool",
) -> tuple[Puzzle | None, str | None]:
    """`swap`'s own choice (`choose_replacement`) for Stage `at`, number `flat` of `stages` (the
    bundle's Stage mappings with the draft's swaps made) among candidates from the `where` (pool
    or stock), or None and its reason. Reads nothing."""
    try:
        return choose_replacement(stages, flat, pool, stage_name(at), where=where), None
    except SwapError as exc:
        return None, str(
            exc
        )  # a library message: it names no CLI option (the CLI adds `--with ID`)


def stage_name(at: str) -> str:
    """`L1.S2` for the address form `1.2`: the one spelling in every message."""
    return str(Slot(*split_at(at)))


@dataclass(frozen=True)
class Saved:
    """What a Save did: the bundle's new content hash, one line per change, and the draft left
    (the swaps not made when it stopped at a refusal; pins and excludes are then on disk)."""

    base: str
    lines: tuple[str, ...]
    left: Draft


class SaveStopped(DraftError):
    """A Save that made some swaps and then met a refusal: the rest of the draft is kept."""

    def __init__(self, message: str, saved: Saved) -> None:
        super().__init__(message)
        self.saved = saved


def save(
    bundle: Path, rel: str, base: str, draft: Draft, offers: Offers, saved: Curation, root: Path
) -> Saved:
    """Make the draft's swaps one by one through the curating module (`pipeline.jobs.curate`,
    as `swap` makes them: the old puzzle back to the pool or the stock first, the whole bundle
    validated before each write, a stock puzzle taken leaving the stock, under the nights'
    lock), from the candidates `offers`, then keep its pins and excludes in the bundle's
    curation file and refresh the night's reports. Refuses (StaleSave, nothing written) when the
    bundle is not the one the draft was based on; a refusal after some swaps raises SaveStopped
    with what was saved and the draft left. Messages name the bundle as `rel` only. Nothing is
    written outside the studio's folder `root`: a pool, curation file or report that links out
    is left alone."""
    ids = bundle_ids(
        bundle, rel
    )  # first: a Save naming report.md or a puzzle file says so, not "changed"
    if not draft.swaps and curation_of(draft, ids) == saved:
        raise DraftError("nothing to save: the draft changes nothing")
    source = _source(bundle, offers, root)
    by_id = {p.id: p for p in offers.puzzles}
    lines: list[str] = []
    try:
        held = curate.held(source, writing=bool(draft.swaps))
        with _SAVE_LOCK, held:
            original = bundle.read_bytes()
            current = content_hash(original)
            if current != base:
                raise StaleSave(
                    f"{rel} changed on disk since you opened it; nothing was written."
                    " Reopen the bundle to see the new file, then make your changes again"
                )
            done: list[str] = []
            try:
                for at, pid in draft.swaps:
                    name = stage_name(at)
                    if at in draft.pins:
                        raise DraftError(f"{name} is pinned and cannot be swapped")
                    if pid not in by_id:
                        raise DraftError(
                            f"{name}: puzzle {pid} is not in the {source.where} (or the validator refuses its file)"
                        )
                    level, stage = split_at(at)
                    try:
                        result, kept = curate.swap_in(
                            source, bundle, level, stage, by_id[pid], expected=current
                        )
                    except SwapError as exc:
                        raise DraftError(f"{name}: {_plain(str(exc), bundle, rel)}") from exc
                    current = content_hash(result.text.encode("utf-8"))
                    done.append(at)
                    back = f"; {result.old_id} back in the {source.where}" if kept else ""
                    lines.append(f"{name}: {result.old_id} -> {pid}{back}")
                wanted = curation_of(draft, bundle_ids(bundle, rel))
                if wanted != saved:
                    if not within(root, curation_path(bundle)):
                        raise DraftError(
                            f"pins and excludes not kept: {curation_path(Path(rel)).as_posix()} links outside the studio folder"
                        )
                    try:
                        curate.keep_curation(bundle, wanted)
                    except (
                        NumberMatchError
                    ) as exc:  # WriteRefused: a read-only folder or file, a link
                        raise DraftError(
                            f"pins and excludes not kept: {_plain(str(exc), bundle, rel)}"
                        ) from exc
                    lines.append(
                        f"pins and excludes kept in {Path(rel).with_name(curation_path(bundle).name).as_posix()}"
                    )
            except DraftError as exc:
                if not done:
                    raise
                lines += _reports(bundle, original, root)
                left = Draft(
                    tuple((a, p) for a, p in draft.swaps if a not in done),
                    draft.pins,
                    draft.excludes,
                )
                raise SaveStopped(
                    f"{exc} (saved before it: {'; '.join(lines)})",
                    Saved(current, tuple(lines), left),
                ) from exc
            if done:
                lines += _reports(bundle, original, root)
    except curate.StockBusy as exc:
        raise DraftError(
            "the stock is in use (a nightly run or a stock command holds the nights' folder); nothing was"
            " written. Save again when it has finished"
        ) from exc
    return Saved(current, tuple(lines), Draft((), draft.pins, draft.excludes))


def within(root: Path, path: Path) -> bool:
    """Whether `path` (links followed) is inside `root`; False for a loop or an error."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _source(bundle: Path, offers: Offers, root: Path) -> curate.Source:
    """Where the offers came from, as the curating module names it: the pool (which takes back
    the puzzle swapped out, unless it links out of the studio's folder) or the stock of the
    nights' folder."""
    folder = offers.folder if offers.folder is not None and within(root, offers.folder) else None
    nights = nights_folder(bundle)
    if offers.source == curate.STOCK and folder is not None:
        return curate.Source(curate.STOCK, folder, (folder,))
    if offers.source == curate.POOL:
        return curate.Source(curate.POOL, nights, (), folder)
    return curate.Source("", nights)  # nothing offered, or a stock outside the studio's folder


def _reports(bundle: Path, original: bytes, root: Path) -> list[str]:
    """Bring the night's reports up to date after the swaps (from the bundle as it was,
    `original`); a report that cannot be written is said, not a refusal."""
    outside = [n for n in (REPORT_HTML, REPORT_FILE) if not within(root, bundle.with_name(n))]
    if outside:
        return [f"{' and '.join(outside)} not touched: it links outside the studio folder"]
    try:  # the swaps are on disk already
        text = bundle.read_text(encoding="utf-8")
        return curate.refresh_reports(bundle, text, original.decode("utf-8"))
    except (NumberMatchError, OSError, UnicodeDecodeError) as exc:
        reason = (
            exc.strerror
            if isinstance(exc, OSError) and exc.strerror
            else str(exc).replace(str(bundle.parent) + "/", "")
        )
        return [f"the night's reports not refreshed: {reason}"]


def _plain(message: str, bundle: Path, rel: str) -> str:
    """A message with the bundle's (and its folder's) absolute path replaced by the names the
    user knows."""
    folder = Path(rel).parent.as_posix()
    return message.replace(str(bundle), rel).replace(
        str(bundle.parent) + "/", "" if folder == "." else folder + "/"
    )


def bundle_ids(bundle: Path, rel: str) -> dict[str, str]:
    """Stage (`L.S`) -> puzzle id, as the bundle on disk has them; raises LibraryError naming
    `rel` for a file that is not a bundle."""
    if not bundle.name.endswith(SUFFIXES):
        raise LibraryError(f"{rel}: is not a bundle (a Save changes a bundle file, *.yaml)")
    data, _ = read_document(bundle, rel)
    return stage_ids(bundle_value(data, rel))


def stage_ids(bundle: Bundle) -> dict[str, str]:
    """Stage address (`L.S`, as the bundle numbers its Levels) -> its puzzle's id, in play order."""
    return {s.slot.short: s.puzzle.id for s in bundle.stages}


def curation_of(draft: Draft, ids: Mapping[str, str]) -> Curation:
    """The curation file a draft's pins and excludes make (a pin keeps the Stage's puzzle)."""
    pins = tuple(sorted((split_at(at), ids[at]) for at in draft.pins if at in ids))
    return Curation(pins, tuple(draft.excludes))


def draft_from(curation: Curation) -> Draft:
    """The draft a bundle opens with: the pins and excludes kept in its curation file."""
    return Draft((), tuple(f"{lv}.{st}" for (lv, st), _ in curation.pins), curation.excludes)
