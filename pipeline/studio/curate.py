"""Curating a bundle: a draft of swaps, pins and excludes, and the save that applies it.

The draft travels in the page address (`s:1.2=nm1-...;p:1.3;x:nm1-...`) together with the
content hash of the bundle as it was when opened, so nothing is written until Save and a
reload never loses it. Meaning of each edit:

- swap `L.S=ID`: put the pool Puzzle ID in that Stage (the only edit that changes the file);
- pin `L.S`: keep that Stage as it is (no swap is offered or accepted for it);
- exclude `ID`: never offer that Puzzle; excluding the Puzzle of an unpinned Stage also swaps
  in the pool's best remaining Puzzle for it.

Save re-reads the bundle and refuses when its hash is not the draft's base (someone changed it
since it was opened: nothing is written, the draft stays in the address). Otherwise each swap is
made with `pipeline.jobs.swap` (which edits only that Stage's text and validates the whole
bundle), on a hidden work copy next to the bundle, and the result is validated once more and
written atomically over the bundle. Every other Stage stays byte-identical.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.errors import NumberMatchError
from pipeline.formats.puzzle import Puzzle
from pipeline.studio.library import content_hash

_AT = r"[1-9]\d{0,3}\.[1-9]\d{0,3}"
_ID = r"[A-Za-z0-9_.-]{1,80}"
_PART = re.compile(rf"(?:s:(?P<swap_at>{_AT})=(?P<swap_id>{_ID})|p:(?P<pin>{_AT})|x:(?P<exclude>{_ID}))\Z")
MAX_EDITS = 500
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
    def parse(cls, text: str) -> "Draft":
        """A draft from its address form; raises DraftError naming the bad part."""
        swaps: dict[str, str] = {}
        pins: list[str] = []
        excludes: list[str] = []
        parts = [p for p in (text or "").split(";") if p]
        if len(parts) > MAX_EDITS:
            raise DraftError(f"the draft has {len(parts)} edits; at most {MAX_EDITS}")
        for part in parts:
            m = _PART.match(part)
            if not m:
                raise DraftError(f"draft edit {part[:60]!r} is not s:L.S=ID, p:L.S or x:ID")
            if m["swap_at"]:
                swaps[m["swap_at"]] = m["swap_id"]
            elif m["pin"]:
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

    @property
    def changes_file(self) -> bool:
        return bool(self.swaps)

    def swap_for(self, at: str) -> str | None:
        return dict(self.swaps).get(at)

    def with_swap(self, at: str, pid: str) -> "Draft":
        if at in self.pins:
            raise DraftError(f"L{at.replace('.', '.S')} is pinned; unpin it to swap it")
        swaps = dict(self.swaps)
        swaps[at] = pid
        return replace(self, swaps=tuple(swaps.items()))

    def without_swap(self, at: str) -> "Draft":
        return replace(self, swaps=tuple((a, p) for a, p in self.swaps if a != at))

    def toggle_pin(self, at: str) -> "Draft":
        if at in self.pins:
            return replace(self, pins=tuple(a for a in self.pins if a != at))
        return replace(self.without_swap(at), pins=self.pins + (at,))

    def toggle_exclude(self, pid: str) -> "Draft":
        if pid in self.excludes:
            return replace(self, excludes=tuple(p for p in self.excludes if p != pid))
        return replace(self, excludes=self.excludes + (pid,))


def split_at(at: str) -> tuple[int, int]:
    """(level, stage) from `L.S`; raises DraftError."""
    if not re.fullmatch(_AT, at or ""):
        raise DraftError(f"stage {at[:20]!r} is not written L.S (e.g. 1.2)")
    level, stage = at.split(".")
    return int(level), int(stage)


def offer_pool(pool: Sequence[Puzzle], draft: Draft, used: set[str]) -> list[Puzzle]:
    """The pool minus excluded Puzzles and those already in the bundle or the draft."""
    taken = used | {pid for _, pid in draft.swaps} | set(draft.excludes)
    return [p for p in pool if p.id not in taken]


def nearest(bundle: Path, at: str, pool: Sequence[Puzzle]) -> tuple[Puzzle | None, str | None]:
    """The swap module's choice for Stage `at` from `pool` (nearest score in the target's tier),
    or None and its reason; nothing is written."""
    from pipeline.jobs.swap import SwapError, swap_stage

    level, stage = split_at(at)
    try:
        return swap_stage(bundle, level, stage, pool, write=False).new, None
    except SwapError as exc:
        return None, str(exc)


def apply(bundle: Path, base: str, draft: Draft, pool: Sequence[Puzzle]) -> tuple[str, list[str]]:
    """The bundle text with the draft's swaps made, and one line per swap; writes nothing
    outside a hidden work copy in the bundle's folder, which it removes. Raises DraftError."""
    from pipeline.jobs.swap import SwapError, swap_stage

    raw = bundle.read_bytes()
    if content_hash(raw) != base:
        raise StaleSave(
            f"{bundle.name} changed on disk since you opened it; nothing was written."
            " Reopen the bundle to see the new file, then make your changes again"
        )
    by_id = {p.id: p for p in pool}
    fd, work = tempfile.mkstemp(prefix=f".{bundle.name}.studio-", suffix=".tmp", dir=bundle.parent)
    lines = []
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        for at, pid in draft.swaps:
            if at in draft.pins:
                raise DraftError(f"L{at} is pinned and cannot be swapped")
            if pid not in by_id:
                raise DraftError(f"L{at}: puzzle {pid} is not in the pool")
            level, stage = split_at(at)
            try:
                result = swap_stage(work, level, stage, [by_id[pid]], with_id=pid, write=True)
            except SwapError as exc:
                raise DraftError(f"L{level}.S{stage}: {exc}") from None
            lines.append(f"L{level}.S{stage}: {result.old_id} -> {pid}")
        return Path(work).read_text(encoding="utf-8"), lines
    finally:
        try:
            os.unlink(work)
        except FileNotFoundError:
            pass


def save(bundle: Path, base: str, draft: Draft, pool: Sequence[Puzzle]) -> tuple[str, list[str]]:
    """Apply the draft, validate the whole bundle, and write it atomically; returns the new
    content hash and one line per swap. A stale base or an invalid result writes nothing."""
    from pipeline.atomic import write_atomic
    from pipeline.validator import validate_texts

    if not draft.changes_file:
        raise DraftError("nothing to save: the draft swaps no Stage")
    with _SAVE_LOCK:
        text, lines = apply(bundle, base, draft, pool)
        report = validate_texts([(bundle.name, text)])
        if not report.ok:
            p = report.problems[0]
            raise DraftError(f"the saved bundle would not validate ({p.path}: {p.message}); nothing was written")
        if content_hash(bundle.read_bytes()) != base:  # changed while we worked
            raise StaleSave(f"{bundle.name} changed on disk while saving; nothing was written")
        write_atomic(bundle, text)
    return content_hash(text.encode("utf-8")), lines
