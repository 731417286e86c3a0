"""Which backend runs the hot path: the compiled core (`_core.c`, built by `pip install` when a
C compiler is there) or the pure Python it stands in for, which stays the reference.

As msgpack and MarkupSafe do: the extension is optional. When it is missing (no compiler at
install, a failed build) or `NUMBERMATCH_PUREPYTHON=1` is set, `core` is None and every caller
uses its Python code; the results are the same either way (the differential tests check it).
The choice is made once, when this module is first imported.

A stale core is refused too: an editable install keeps the built core beside `_core.c`, so after
an edit of the C source (or a checkout of another commit) the old build would still load. The
build names its source (`_core.SOURCE_SHA256`, from setup.py); when `_core.c` is here and its
hash differs, the core is not used, with a one-line warning on stderr, and `--version` says so.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from types import ModuleType

try:
    from pipeline.engine import _core as _built
except ImportError:  # not built: no compiler at install, or a failed build
    _built = None  # type: ignore[assignment]

PURE_ENV = "NUMBERMATCH_PUREPYTHON"
SOURCE = Path(__file__).with_name("_core.c")  # present in a source tree (an editable install)
STALE = "the compiled core was built from another _core.c: rebuild it, pip install -e ."


def stale(built: ModuleType, source: Path = SOURCE) -> bool:
    """Whether `built` was built from another C source than `source` (when that file is here)."""
    try:
        text = source.read_bytes()
    except OSError:  # an installed package ships no C source: nothing to compare
        return False
    return getattr(built, "SOURCE_SHA256", "") != hashlib.sha256(text).hexdigest()


def _load() -> tuple[ModuleType | None, str]:
    """(the compiled core or None, why it is not used)."""
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        return None, f"{PURE_ENV} is set"
    if _built is None:
        return None, "the compiled core is not built"
    if stale(_built):
        print(f"numbermatch: warning: {STALE}; running in pure Python", file=sys.stderr)
        return None, STALE
    return _built, ""


core, why_pure = _load()
COMPILED = core is not None


def describe() -> str:
    """What `numbermatch --version` says about the backend."""
    if core is not None:
        return "backend: compiled (C core)"
    return f"backend: pure Python ({why_pure})"


__all__ = ["COMPILED", "PURE_ENV", "core", "describe", "stale", "why_pure"]
