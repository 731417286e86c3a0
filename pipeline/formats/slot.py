"""A Stage's place in a bundle, `L3.S2`: Level 3, Stage 2, both numbered from 1.

One grammar for every place a stage is named (a SOURCE such as `bundle.yaml:L3.S2`, `swap`'s
STAGE, `assemble --pin L3.S2=ID`, curation files, the studio's addresses, which write `3.2`) and
one spelling in every message: `str(slot)` is `L3.S2`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.errors import NumberMatchError

# `L3.S2` (any case) or the short `3.2`; at most 4 digits each (limits.MAX_LEVELS is 1,000)
PATTERN = r"[Ll]?([1-9][0-9]{0,3})\.[Ss]?([1-9][0-9]{0,3})"
_SLOT = re.compile(PATTERN + r"\Z", re.ASCII)
FORM = "L<level>.S<stage>"


_NUMBERED = re.compile(r"[Ll]?([0-9]{1,5})\.[Ss]?([0-9]{1,5})\Z", re.ASCII)


class SlotError(NumberMatchError):
    """Text that does not name a Stage; the message quotes it and says the form."""


class SlotFromZero(SlotError):
    """A Stage written in the form but numbered from 0 (`L0.S1`): numbering starts at 1."""


@dataclass(frozen=True, order=True)
class Slot:
    """Level and Stage numbers, both from 1."""

    level: int
    stage: int

    @classmethod
    def parse(cls, text: str) -> Slot:
        """`L3.S2`, `l3.s2` or `3.2` -> Slot(level=3, stage=2); SlotError otherwise."""
        m = _SLOT.match(text.strip())
        zero = _NUMBERED.match(text.strip()) if m is None else None
        if zero is not None and 0 in (int(zero.group(1)), int(zero.group(2))):
            raise SlotFromZero(
                f"stage {text[:40]!r}: Levels and Stages are numbered from 1 (the first Stage is"
                " L1.S1)"
            )
        if m is None:
            raise SlotError(f"stage {text[:40]!r}: write it as {FORM}, both from 1 (e.g. L3.S2)")
        return cls(int(m.group(1)), int(m.group(2)))

    @property
    def short(self) -> str:
        """`3.2`: the studio's address form."""
        return f"{self.level}.{self.stage}"

    def __str__(self) -> str:
        return f"L{self.level}.S{self.stage}"


__all__ = ["FORM", "PATTERN", "Slot", "SlotError", "SlotFromZero"]
