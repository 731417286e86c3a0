"""Every path a request names is relative to the studio's folder and must stay inside it.

The studio reads and writes only under PATH: an absolute path, a `..` part, a NUL byte, a name
longer than the file system allows, or a symbolic link that leads out of PATH or loops is
refused before any file is opened.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_NAME_BYTES, MAX_PATH_CHARS


class PathRefused(NumberMatchError):
    """A requested path that is not a file or folder inside the studio's folder."""


def inside(root: Path, rel: str) -> Path:
    """The resolved path of `rel` (written with `/`) under `root`; raises PathRefused."""
    if (
        not isinstance(rel, str)
        or not rel
        or len(rel) > MAX_PATH_CHARS
        or "\x00" in rel
        or "\\" in rel
    ):
        raise PathRefused(f"path {rel[:80]!r} refused: name a file inside the studio folder")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts:
        raise PathRefused(f"path {rel!r} refused: it leads outside the studio folder")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in pure.parts):
        raise PathRefused(
            f"path {rel[:80]!r}... refused: a name in it is longer than {MAX_NAME_BYTES} bytes"
        )
    base = root.resolve()
    try:
        full = (base / pure).resolve()
    except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13)
        raise PathRefused(
            f"path {rel!r} refused: it is a link that loops or cannot be followed"
        ) from None
    if full != base and not full.is_relative_to(base):
        raise PathRefused(f"path {rel!r} refused: it leads outside the studio folder")
    return full


def relative(root: Path, path: Path) -> str:
    """The `/`-separated name of `path` under `root`, as the pages write it in links."""
    return path.resolve().relative_to(root.resolve()).as_posix()
