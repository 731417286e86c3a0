"""Every path a request names is relative to the studio's folder and must stay inside it.

The studio reads and writes only under PATH: an absolute path, a `..` part, a NUL byte, or a
symbolic link that leads out of PATH is refused before any file is opened.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from pipeline.errors import NumberMatchError

MAX_PATH_CHARS = 1000


class PathRefused(NumberMatchError):
    """A requested path that is not a file or folder inside the studio's folder."""


def inside(root: Path, rel: str) -> Path:
    """The resolved path of `rel` (written with `/`) under `root`; raises PathRefused."""
    if not isinstance(rel, str) or not rel or len(rel) > MAX_PATH_CHARS or "\x00" in rel or "\\" in rel:
        raise PathRefused(f"path {rel[:80]!r} refused: name a file inside the studio folder")
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts:
        raise PathRefused(f"path {rel!r} refused: it leads outside the studio folder")
    base = root.resolve()
    full = (base / pure).resolve()
    if full != base and not full.is_relative_to(base):
        raise PathRefused(f"path {rel!r} refused: it leads outside the studio folder")
    return full


def relative(root: Path, path: Path) -> str:
    """The `/`-separated name of `path` under `root`, as the pages write it in links."""
    return path.resolve().relative_to(root.resolve()).as_posix()
