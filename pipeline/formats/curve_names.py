"""What the command line says about curves before any curve is read: the built-ins' names, the
default and the shape phrase. Apart from `curves` (whose value classes take a noticeable share of
a command's start-up to define) so that `--help` shows them without loading it."""

from __future__ import annotations

DEFAULT_CURVE = "ramp"  # assemble's and the nightly's curve unless told otherwise
CURVE_METAVAR = (
    "ramp|sawtooth|flat|campaign|FILE[:NAME]"  # the built-ins (a test checks they match)
)
CURVE_HELP = (
    "Target difficulty curve: a built-in curve (ramp, sawtooth, flat, campaign) or a curve file"
    " as FILE[:NAME]."
)


def shape_text(levels: int, stages: int) -> str:
    """`2 levels x 5 stages`, with the right plurals, for messages and reports."""
    return (
        f"{levels} level{'s' if levels != 1 else ''} x {stages} stage{'s' if stages != 1 else ''}"
    )
