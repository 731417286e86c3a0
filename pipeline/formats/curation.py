"""A bundle's curation file: the pins and excludes a designer made in the studio, kept for the assembler.

The studio's draft lives in the page address, so without a file its pins and excludes would be
lost with the tab. A Save writes them beside the bundle (`bundle.yaml` -> `bundle.curation.txt`),
one per line, in the words of `assemble`'s own options, and `numbermatch assemble --curation
FILE` reads them back:

    # numbermatch curation: pins and excludes for bundle.yaml (assemble --curation FILE)
    pin L1.S3=nm1-3f2a9c0d1e7b
    exclude nm1-0a1b2c3d4e5f

A pin names the Stage and the Puzzle it keeps, so re-assembling puts that Puzzle back there; an
exclude is never placed. Plain text rather than YAML, so no tool mistakes it for a level file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import NumberMatchError
from pipeline.formats.slot import Slot, SlotError
from pipeline.limits import MAX_CURATION_BYTES

CURATION_SUFFIX = ".curation.txt"
PUZZLE_ID = r"[A-Za-z0-9_.-]{1,80}"  # what a pin, an exclude or a swap may name
_ID = re.compile(PUZZLE_ID + r"\Z")


class CurationError(NumberMatchError):
    """A curation file that cannot be read: names the file and the line."""


@dataclass(frozen=True)
class Curation:
    """Pins ((level, stage) -> puzzle id, both from 1) and excluded puzzle ids."""

    pins: tuple[tuple[tuple[int, int], str], ...] = ()
    excludes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, name: str = "curation") -> Curation:
        """A curation from its text form; raises CurationError naming the line."""
        pins: dict[tuple[int, int], str] = {}
        excludes: list[str] = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            pin = _pin(rest) if word == "pin" else None
            if pin is not None:
                pins[(pin[0].level, pin[0].stage)] = pin[1]
            elif word == "exclude" and _ID.match(rest):
                excludes.append(rest)
            else:
                raise CurationError(
                    f"{name}:{number}: {line[:60]!r} is not `pin L<level>.S<stage>=ID` or `exclude ID`"
                )
        return cls(tuple(sorted(pins.items())), tuple(dict.fromkeys(excludes)))

    def __str__(self) -> str:
        lines = [f"pin {Slot(level, stage)}={pid}" for (level, stage), pid in self.pins]
        return "\n".join(lines + [f"exclude {pid}" for pid in self.excludes])

    def text(self, bundle_name: str) -> str:
        """The file's content: a header line naming the bundle, then the pins and excludes."""
        return f"# numbermatch curation: pins and excludes for {bundle_name} (assemble --curation FILE)\n{self}\n"

    @property
    def empty(self) -> bool:
        return not (self.pins or self.excludes)


def _pin(text: str) -> tuple[Slot, str] | None:
    """`L3.S2=ID` -> (Slot, ID), or None. A file holds the one spelling (`L3.S2`, as written by
    `str(Slot)`), not the short forms a command line accepts."""
    at, sep, pid = text.partition("=")
    if not sep or not _ID.match(pid):
        return None
    try:
        slot = Slot.parse(at)
    except SlotError:
        return None
    return (slot, pid) if str(slot) == at else None


def read_curation(path: str | Path, name: str | None = None) -> Curation:
    """The curation in a file; raises CurationError in one line (missing, too large, malformed)
    naming it as `name` (default: the path)."""
    given = Path(path) if name is None else Path(name)
    path = Path(path)
    try:
        if path.stat().st_size > MAX_CURATION_BYTES:
            raise CurationError(
                f"{given}: larger than {MAX_CURATION_BYTES:,} bytes; not a curation file"
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CurationError(f"{given}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CurationError(
            f"{given}: cannot read it ({getattr(exc, 'strerror', None) or type(exc).__name__})"
        ) from exc
    return Curation.parse(text, str(given))


def curation_path(bundle: Path) -> Path:
    """Where a bundle's curation is kept: `<bundle stem>.curation.txt` beside it."""
    return bundle.with_name(bundle.stem + CURATION_SUFFIX)


def curation_beside(bundle: Path, name: str | None = None) -> Curation:
    """The curation kept beside a bundle (named as beside `name`, the bundle's name for the
    user), or an empty one when there is none."""
    path = curation_path(bundle)
    shown = None if name is None else curation_path(Path(name)).as_posix()
    return read_curation(path, shown) if path.is_file() else Curation()
