"""Publishing a night: a lock on the output folder, sweeping what killed runs left, an atomic swap.

The job builds the whole folder as `<out>/.<date>.tmp-XXXXXXXX/` (`make_staging`, with a marker
file inside) and only then swaps it in (the old folder renamed aside to `.<date>.old-<pid>`,
announced by a marker file beside it, the new one renamed in, the old one deleted), so a reader
never sees a partial night.

The sweep touches only what this program made: a folder whose name matches one of those two
patterns exactly AND carries its marker. Anything else in `--out` (`.backup.tmp-2025`, someone's
`.photos.old-2020`, a symlink) is left alone.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.atomic import Snapshot, current_umask, snapshot, write_guarded
from pipeline.errors import NumberMatchError
from pipeline.formats.night import BUNDLE_FILE, NIGHT_NAME

STAGING_MARKER = ".numbermatch-staging"  # inside a staging folder
ASIDE_MARKER = ".numbermatch"  # suffix of the file beside a folder renamed aside: `.<date>.old-<pid>.numbermatch`
_STAGING = re.compile(rf"\.({NIGHT_NAME.pattern})\.tmp-[A-Za-z0-9_]{{8}}", re.ASCII)  # mkdtemp's 8
_ASIDE = re.compile(rf"\.({NIGHT_NAME.pattern})\.old-([0-9]+)", re.ASCII)


class PublishError(NumberMatchError):
    """The output folder is locked by another run."""


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on the output folder itself (no lock file to leave behind).

    The descriptor is close-on-exec; generator workers forked while it is held share it, which
    is why they are made to die with this process (`executors`)."""
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(out)
            who = f" (process {holder} holds the lock)" if holder else ""
            raise PublishError(f"another nightly run is writing to {out}{who}") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def lock_holder(out: Path) -> int | None:
    """The process id holding the flock on `out`, from /proc/locks (Linux); None if unknown."""
    try:
        info = os.stat(out)
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    want = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:123456 0 EOF" (a "->" marks a waiter)
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == want:
                return int(fields[4])
        except ValueError:
            continue
    return None


def make_staging(out: Path, date_text: str) -> Path:
    """A new hidden staging folder for the night `date_text`, marked as ours."""
    staging = Path(tempfile.mkdtemp(prefix=f".{date_text}.tmp-", dir=out))
    # a plain write, not the guarded one: the folder is new and ours, and a kill must find it
    # marked as soon as it exists (the guarded write's fsyncs would widen that window)
    (staging / STAGING_MARKER).write_text(
        "made by numbermatch nightly; removed when the night is published\n"
    )
    return staging


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)  # a symlink is never ours
    except OSError:
        return False


def _marker(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def sweep(out: Path) -> None:
    """Clean up after killed runs: drop our staging folders; put back a night we had renamed aside
    (or drop it when its place was already filled). Touches nothing it did not make."""
    for entry in sorted(out.iterdir()):
        name = entry.name
        if _STAGING.fullmatch(name):
            if _real_dir(entry) and _marker(entry / STAGING_MARKER):
                shutil.rmtree(entry, ignore_errors=True)
            continue
        aside = _ASIDE.fullmatch(name)
        if aside and _real_dir(entry):
            marker = out / (name + ASIDE_MARKER)
            if not _marker(marker):
                continue
            final = out / aside.group(1)
            if os.path.lexists(final):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                os.rename(entry, final)
            marker.unlink(missing_ok=True)
    for entry in sorted(out.iterdir()):  # markers whose folder is gone (killed between the two)
        name = entry.name
        if (
            name.endswith(ASIDE_MARKER)
            and _ASIDE.fullmatch(name[: -len(ASIDE_MARKER)])
            and not os.path.lexists(out / name[: -len(ASIDE_MARKER)])
            and _marker(entry)
        ):
            entry.unlink(missing_ok=True)


def publish(staging: Path, final: Path) -> None:
    """Swap the complete staging folder in at `final`, replacing an older one only now."""
    parent = final.parent
    os.chmod(
        staging, 0o777 & ~current_umask()
    )  # mkdtemp makes 0700; publish with a folder's usual mode
    if final.exists():
        aside = parent / f".{final.name}.old-{os.getpid()}"  # unique: we hold the lock, swept
        marker = parent / (aside.name + ASIDE_MARKER)
        write_guarded(  # our own marker's name (the pid's): a stale one is replaced
            marker,
            f"{final.name} renamed aside by numbermatch nightly while publishing\n",
            force=True,
        )
        os.rename(final, aside)
        os.rename(staging, final)
        shutil.rmtree(aside, ignore_errors=True)
        marker.unlink(missing_ok=True)
    else:
        os.rename(staging, final)
    (final / STAGING_MARKER).unlink(
        missing_ok=True
    )  # after the rename: a staging folder stays marked
    _fsync_dir(parent)


def publish_over(staging: Path, final: Path, bundle_base: Snapshot | None) -> list[str]:
    """`nightly --force` onto a night that exists: replace only the files this run made (the
    bundle first, guarded by `bundle_base`, the snapshot taken when the run started, so an edit
    made during the run is refused rather than lost), keep every other file in the folder (a
    designer's notes, playtests, puzzles a swap returned to pool/). Returns what it did, as
    lines for the log. Raises WriteRefused (nothing replaced when the bundle changed)."""
    if os.path.islink(final) or not final.is_dir():
        raise PublishError(f"{final} exists and is not a folder; nothing written")
    made = sorted(
        (
            p.relative_to(staging)
            for p in staging.rglob("*")
            if p.is_file() and p.name != STAGING_MARKER
        ),
        key=lambda rel: (
            rel.name != BUNDLE_FILE,
            str(rel),
        ),  # the bundle first: it is the one guarded
    )
    replaced: list[str] = []
    added: list[str] = []
    for rel in made:
        data = (staging / rel).read_bytes()
        target = final / rel
        existed = os.path.lexists(target)
        if rel == Path(BUNDLE_FILE):
            write_guarded(
                target, data, base=bundle_base if bundle_base is not None else snapshot(target)
            )
        else:
            write_guarded(target, data, force=True)
        (replaced if existed else added).append(str(rel))
    ours = {rel.parts[0] for rel in made}
    kept = sorted(
        [p.name + ("/" if p.is_dir() else "") for p in final.iterdir() if p.name not in ours]
        + [
            str(p.relative_to(final))
            for d in ours
            if (final / d).is_dir()
            for p in (final / d).iterdir()
            if p.relative_to(final) not in made
        ]
    )
    lines = [f"replaced {len(replaced)} file(s) the job makes: " + _listed(replaced)]
    if added:
        lines.append(f"added {len(added)}: " + _listed(added))
    if kept:
        lines.append(f"kept {len(kept)} not made by this run: " + _listed(kept))
    return lines


def _listed(names: list[str], most: int = 8) -> str:
    return (
        ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
        if names
        else "none"
    )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
