"""Which backend runs the hot path: the compiled core (`_core.c`, built by `pip install` when a
C compiler is there) or the pure Python it stands in for, which stays the reference.

As msgpack and MarkupSafe do: the extension is optional. When it is missing (no compiler at
install, a failed build) or `NUMBERMATCH_PUREPYTHON=1` is set, `core` is None and every caller
uses its Python code; the results are the same either way (the differential tests check it).
The choice is made once, when this module is first imported.
"""

from __future__ import annotations

import os
from types import ModuleType

try:
    from pipeline.engine import _core as _built
except ImportError:  # not built: no compiler at install, or a failed build
    _built = None  # type: ignore[assignment]

PURE_ENV = "NUMBERMATCH_PUREPYTHON"


def _load() -> tuple[ModuleType | None, str]:
    """(the compiled core or None, why it is not used)."""
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        return None, f"{PURE_ENV} is set"
    if _built is None:
        return None, "the compiled core is not built"
    return _built, ""


core, why_pure = _load()
COMPILED = core is not None


def describe() -> str:
    """What `numbermatch --version` says about the backend."""
    if core is not None:
        return "backend: compiled (C core)"
    return f"backend: pure Python ({why_pure})"


__all__ = ["COMPILED", "PURE_ENV", "core", "describe", "why_pure"]
