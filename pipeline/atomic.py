"""The one guarded write every file the project writes goes through (`write_guarded`).

Atomic: a temp file in the same folder, fsync, then rename over the target. A reader (or a
crashed run) sees either the old file or the new one, never half of one. Every writer uses it:
swap, puzzle --out/--refresh, studio Save, report/render --out, assemble --out, the nightly's
files, the stock, `observed`/`calibrate`/`telemetry simulate --out`, the schemas
(tests/test_writers.py lists every write in the package and fails on one that bypasses it). It
keeps a designer's work when several writers meet one file:

- links: a symlink is written through to the file it names (the link stays a link, the shared
  file changes); a dangling link, a folder or a device is refused;
- lock: an advisory `flock` on the target file itself, held from the re-check to the rename. No
  lock file is left beside it (a lock file could never be deleted safely, and "only ever delete
  what we made" would leave it forever). A rename replaces the inode, so a writer that waited
  on the old inode sees that the path moved on and locks the new file instead. A file that does
  not exist yet is created with `link()`, which refuses when someone else created it meanwhile;
- hash re-check: an edit passes the `Snapshot` it read; under the lock the file's bytes are read
  again, and when they changed the write is refused ("X changed on disk since it was read;
  nothing written"), so a writer that reports success has its edit on disk;
- mode: the new file keeps the old one's permission bits (a 0600 file stays private); a new
  one gets 0666 less the umask; a file with no write bit at all, or one this user may not write
  (another user's, in a folder this user may write), is refused rather than replaced (rename
  would ignore the bits and take the file from its owner); a folder this user cannot write
  into is named in the refusal (`check_writable_folder`/`check_writable_tree` refuse one before
  a command's work);
- kind: an output (no snapshot) never replaces a file of another kind (a bundle, a designer's
  notes, a real telemetry export) unless `force=True`: only an empty file, one holding the same
  bytes, or one whose kind (`file_kind`) is in `kinds`;
- fsync of the file and of its folder before returning.

Every refusal is a WriteRefused (a NumberMatchError: the CLI prints one line) naming the path as
the user gave it.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import NumberMatchError, clip, os_message

LOCK_WAIT_SECONDS = (
    30.0  # how long a writer waits for another writer of the same file (docs/limits.md)
)
_KIND = re.compile(rb"^kind:[ \t]*['\"]?([A-Za-z_-]+)", re.MULTILINE)
# The project's outputs that carry no `kind:` line, known by how they start (`file_kind`).
_SIGNATURES: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("observed-report", re.compile(rb"\Atelemetry: [0-9,]+ records? \(")),  # observed (text)
    ("observed-report", re.compile(rb'\A\{\s*"profile": [^\n]*\n\s*"telemetry": \{')),  # (json)
    ("json-schema", re.compile(rb'\A\{\s*"\$schema":')),
    # `conformance export`: the case files (one JSON case a line) and the suite's manifest
    ("conformance-suite", re.compile(rb'\A\{"id":"[^"\n]*","kind":"[a-z]+","tests":')),
    ("conformance-suite", re.compile(rb'\A\{\s*"suite": ')),
    # `telemetry simulate`: JSON Lines and CSV whose first record is a simulated player's
    ("simulated-telemetry", re.compile(rb'\A\{"attempt":"[^\n]*"client":"simulated-')),
    (
        "simulated-telemetry",
        re.compile(rb"\Aattempt,puzzle,outcome,[a-z_,]*\r?\n(?:\Z|[^\n]*,simulated-[a-z]+,)"),
    ),
)
# What `telemetry simulate` writes into a Parquet file's key-value metadata (its footer).
PARQUET_MARK = b"numbermatch-simulated-telemetry"


class WriteRefused(NumberMatchError):
    """A guarded write that was refused; nothing was written."""


def current_umask() -> int:
    """The process umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def content_hash(data: bytes) -> str:
    """The SHA-256 of a file's bytes, as hex (what a Snapshot and the studio's `base` hold)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """A file as an edit read it: the name the user gave, the file writes go to, its bytes."""

    path: Path
    target: Path
    data: bytes | None  # None: there was no file

    @property
    def digest(self) -> str | None:
        return None if self.data is None else content_hash(self.data)

    @property
    def text(self) -> str:
        return (self.data or b"").decode("utf-8")


def _may_write_into(folder: str | os.PathLike[str]) -> bool:
    """This process may create and remove files in `folder` (its user's permission, not the mode
    bits: root may write anywhere but a read-only file system)."""
    effective = os.access in os.supports_effective_ids
    return os.access(folder, os.W_OK | os.X_OK, effective_ids=effective)


def check_writable_folder(
    folder: str | os.PathLike[str], what: str = "folder", nothing: str = "nothing written"
) -> None:
    """Refuse in one line (WriteRefused, nothing written) a folder this process cannot write
    into; for a folder not there yet, the nearest one above it (where it would be made)."""
    probe = Path(folder)
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise WriteRefused(f"{clip(str(probe))}: is not a folder; nothing written")
    if not _may_write_into(probe):
        raise WriteRefused(
            f"{clip(str(probe))}: the {what} is not writable by this user; {nothing}"
        )


def check_writable_tree(folder: str | os.PathLike[str], what: str = "folder") -> None:
    """`check_writable_folder` for `folder` and every folder under it (links followed; a stock's
    group folders are few): the commands that move files in and out of a whole tree refuse
    before any work rather than stop half-way."""
    root = Path(folder)
    check_writable_folder(root, what)
    if not root.is_dir():
        return
    for here, _, _ in os.walk(root, followlinks=True):
        if not _may_write_into(here):
            raise WriteRefused(
                f"{clip(here)}: the {what} is not writable by this user; nothing written"
            )


def check_replaceable(path: str | os.PathLike[str]) -> None:
    """Refuse in one line (WriteRefused) what `write_guarded` would refuse for want of
    permission: a file without a write bit, another user's file this user may not write, a
    folder this user cannot write into. For a command that writes several files, checked for
    all of them before the first is written."""
    shown = clip(str(path))
    target = resolve_target(path)
    check_writable_folder(target.parent)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222:
        raise WriteRefused(f"{shown}: is read-only (mode {mode:04o}); nothing written")
    if not os.access(target, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
        raise WriteRefused(
            f"{shown}: is not writable by this user (mode {mode:04o}, owner uid"
            f" {info.st_uid}); nothing written"
        )


def resolve_target(path: str | os.PathLike[str]) -> Path:
    """Where a write to `path` goes: through symlinks to the file they name. Refuses in one line a
    dangling link, a loop, a folder, or anything but a regular file."""
    given = Path(path)
    try:
        target = Path(os.path.realpath(given, strict=False))
        info = os.stat(target) if os.path.lexists(target) else None
    except OSError as exc:
        raise WriteRefused(f"{clip(str(given))}: {os_message(exc)}; nothing written") from exc
    if info is None and os.path.islink(given):
        raise WriteRefused(f"{clip(str(given))}: is a link to a missing file; nothing written")
    if info is not None and not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise WriteRefused(f"{clip(str(given))}: is {what}; nothing written")
    return target


def snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Read a file for an edit (the bytes whose hash `write_guarded` re-checks)."""
    target = resolve_target(path)
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise WriteRefused(f"{clip(str(path))}: {os_message(exc)}") from exc
    return Snapshot(Path(path), target, data)


def file_kind(data: bytes, name: str) -> str:
    """What an existing file is, for refusing to overwrite it: a level file's `kind` (bundle,
    puzzle, curves, rating-profile), the project's other outputs by how they start (an observed
    report, simulated telemetry, a JSON schema), `html`/`svg`/`png` by content, `parquet` (a Parquet
    file not marked as simulated), else `other`."""
    head = data[:65536]
    if head.startswith(b"PAR1"):
        return "simulated-telemetry" if PARQUET_MARK in data[-65536:] else "parquet"
    for kind, signature in _SIGNATURES:
        if signature.match(head):
            return kind
    found = _KIND.search(head)
    if found:
        return found.group(1).decode("ascii")
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "html"
    if lowered.startswith((b"<svg", b"<?xml")) and b"<svg" in lowered:
        return "svg"
    return "empty" if not head.strip() else "other"


def write_guarded(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    base: Snapshot | None = None,
    kinds: tuple[str, ...] = (),
    force: bool = False,
    wait: float = LOCK_WAIT_SECONDS,
) -> Path:
    """Write `data` to `path` as the module docstring says; returns the file written (links
    resolved). `base`: the snapshot an edit started from (refused if the file changed since);
    without it the write is an output, which may replace only a file whose kind is in `kinds`
    (and an empty file, or one holding the same bytes) unless `force`. Raises WriteRefused; nothing is written then."""
    given = Path(path)
    shown = clip(str(given))  # messages name the path as given, cut when absurdly long
    raw = data.encode("utf-8") if isinstance(data, str) else data
    target = resolve_target(given)
    if base is not None and base.target != target:
        raise WriteRefused(
            f"{shown}: now names another file than when it was read; nothing written"
        )
    try:
        fd = _lock(shown, target, wait)
    except OSError as exc:
        raise WriteRefused(f"{shown}: {os_message(exc)}; nothing written") from exc
    try:
        current = _read_locked(fd)
        if base is not None and (None if current is None else content_hash(current)) != base.digest:
            raise WriteRefused(f"{shown} changed on disk since it was read; nothing written")
        if base is None and current == raw:  # the same bytes again (a rerun): nothing to replace
            return target
        if base is None and current is not None and not force:
            kind = file_kind(current, target.name)
            if kind not in kinds and kind != "empty":
                described = {
                    "other": "a file of another kind",
                    "html": "an HTML file",
                    "svg": "an SVG file",
                    "png": "a PNG file",
                    "parquet": "a Parquet file",
                    "observed-report": "an observed report",
                    "simulated-telemetry": "simulated telemetry",
                }.get(kind, f"a {kind} file")
                raise WriteRefused(
                    f"{shown}: exists and is {described}; nothing written (--force replaces it)"
                )
        mode = 0o666 & ~current_umask()
        if fd is not None:
            mode = stat.S_IMODE(os.fstat(fd).st_mode)
            if not mode & 0o222:
                raise WriteRefused(f"{shown}: is read-only (mode {mode:04o}); nothing written")
            if not os.access(target, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
                # replacing it would work when its folder is ours, and take the file from its owner
                raise WriteRefused(
                    f"{shown}: is not writable by this user (mode {mode:04o}, owner uid"
                    f" {os.fstat(fd).st_uid}); nothing written"
                )
        try:
            _replace(target, raw, mode, create=fd is None)
        except FileExistsError:
            raise WriteRefused(
                f"{shown}: was created by someone else meanwhile; nothing written"
            ) from None
        except PermissionError as exc:
            folder = target.parent
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent  # the folder the write could not create a file in
            raise WriteRefused(
                f"cannot write {shown}: its folder {clip(str(folder))} is not writable by this user"
                f" ({os_message(exc).lower()}); nothing written"
            ) from exc
        except OSError as exc:
            raise WriteRefused(f"cannot write {shown}: {os_message(exc)}; nothing written") from exc
    finally:
        if fd is not None:
            os.close(fd)  # closing releases the lock
    return target


def _lock(shown: str, target: Path, wait: float) -> int | None:
    """An open descriptor of `target` holding an exclusive flock, re-opened until the path still
    names the locked inode; None when there is no file (the write then creates it exclusively)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(
                target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
            )
        except FileNotFoundError:
            return None
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise WriteRefused(
                            f"{shown}: another writer holds it (waited {wait:.0f} s); nothing written"
                        ) from None
                    time.sleep(0.02)
            try:
                same = os.stat(target).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)  # replaced (or removed) while we waited: lock what is there now


def _read_locked(fd: int | None) -> bytes | None:
    if fd is None:
        return None
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _replace(target: Path, raw: bytes, mode: int, *, create: bool) -> None:
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    import tempfile  # start-up time: validate reads files and writes none

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if create:
            try:
                os.link(
                    tmp, target
                )  # refuses (FileExistsError) when another writer created it meanwhile
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: check, then rename
                if os.path.lexists(target):
                    raise FileExistsError(errno.EEXIST, "exists", str(target)) from None
                os.replace(tmp, target)
            else:
                os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a folder we just wrote into
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)
