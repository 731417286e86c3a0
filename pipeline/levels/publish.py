"""Publishing a night: a lock on the output folder, sweeping what killed runs left, an atomic swap.

The job builds the whole folder as `<out>/.<date>.tmp-XXXX/` and only then swaps it in (the old
folder renamed aside, the new one renamed in, the old one deleted), so a reader never sees a
partial night.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.atomic import current_umask
from pipeline.errors import NumberMatchError


class PublishError(NumberMatchError):
    """The output folder is locked by another run."""


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on the output folder itself (no lock file to leave behind)."""
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PublishError(f"another nightly run is writing to {out}") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def sweep(out: Path) -> None:
    """Clean up after killed runs: drop temp folders; put back an old folder left renamed aside."""
    for entry in sorted(out.iterdir()):
        name = entry.name
        if not (name.startswith(".") and entry.is_dir()):
            continue
        if ".tmp-" in name:
            shutil.rmtree(entry, ignore_errors=True)
        elif ".old-" in name:
            final = out / name[1:].split(".old-")[0]
            if final.exists():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                os.rename(entry, final)


def publish(staging: Path, final: Path) -> None:
    """Swap the complete staging folder in at `final`, replacing an older one only now."""
    parent = final.parent
    os.chmod(staging, 0o777 & ~current_umask())  # mkdtemp makes 0700; publish with a folder's usual mode
    if final.exists():
        aside = parent / f".{final.name}.old-{os.getpid()}"  # unique: we hold the lock, swept
        os.rename(final, aside)
        os.rename(staging, final)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.rename(staging, final)
    _fsync_dir(parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
