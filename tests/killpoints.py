"""Kill a `numbermatch` command at a chosen point: the harness of the kill tests.

The command runs in a subprocess started through a small bootstrap (`BOOTSTRAP`, run with
`python -c`) that wraps, before the command line is imported, every call by which the process
changes the file system or its index: `os.open`/`open` for writing, `os.replace`, `os.rename`,
`os.link`, `os.symlink`, `os.unlink`, `os.remove`, `os.rmdir`, `os.mkdir`, `os.fsync`, and
SQLite statements that are not reads. Each such call is a *point*, numbered from 1 in the
order the process reaches them; an open for writing is two (before it, and after it returns,
before a byte is written, so a plain write's empty file is a state a kill can leave). With
`kill_at=N` the process sends itself SIGKILL on reaching point N (before the call): no
`finally`, no atexit, no flush, as a power cut or `kill -9` would leave it.

Nothing in the package knows about this: the points are counted from outside, so the same
command with the same state reaches the same points in the same order (`points` lists them
from a run that is not killed). Only the first process counts (a forked worker is left alone);
run commands with `--jobs 1`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

KILL_AT_ENV = "NM_KILL_AT"  # the point to die at (1-based); unset: run to the end
KILL_LOG_ENV = "NM_KILL_LOG"  # a file the bootstrap appends one line per point to

BOOTSTRAP = r"""
import builtins, io, os, signal, sqlite3, sys

_main = os.getpid()
_at = int(os.environ.get("NM_KILL_AT") or 0)
_log_path = os.environ.get("NM_KILL_LOG")
_log = os.open(_log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600) if _log_path else None
_n = 0
_real = {name: getattr(os, name) for name in (
    "open", "replace", "rename", "link", "symlink", "unlink", "remove", "rmdir", "mkdir", "fsync")}
_real_open = builtins.open
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _point(label):
    global _n
    if os.getpid() != _main:
        return
    _n += 1
    if _log is not None:
        os.write(_log, f"{_n} {label}\n".encode("utf-8", "replace"))
    if _n == _at:
        os.kill(_main, signal.SIGKILL)


def _name(path):
    try:
        return os.fsdecode(path)[-80:]
    except TypeError:
        return repr(path)


def _wrap(name):
    real = _real[name]

    def wrapped(*args, **kwargs):
        _point(f"{name} {_name(args[0]) if args else ''}")
        return real(*args, **kwargs)

    setattr(os, name, wrapped)


for _name_ in _real:
    if _name_ != "open":
        _wrap(_name_)


def _os_open(path, flags, *args, **kwargs):
    writing = flags & _WRITE
    if writing:
        _point(f"open {_name(path)}")
    fd = _real["open"](path, flags, *args, **kwargs)
    if writing:
        _point(f"opened {_name(path)}")
    return fd


def _open(file, mode="r", *args, **kwargs):
    writing = any(c in mode for c in "wax+")
    if writing:
        _point(f"open {_name(file)} {mode}")
    handle = _real_open(file, mode, *args, **kwargs)
    if writing:
        _point(f"opened {_name(file)} {mode}")
    return handle


os.open = _os_open
builtins.open = _open
io.open = _open


def _mutates(sql):
    return not sql.lstrip().upper().startswith(("SELECT", "PRAGMA", "EXPLAIN", "WITH"))


class _Counted(sqlite3.Connection):
    def execute(self, sql, *args):
        if _mutates(sql):
            _point("sql " + " ".join(sql.split()[:3]))
        return super().execute(sql, *args)

    def executemany(self, sql, *args):
        if _mutates(sql):
            _point("sql " + " ".join(sql.split()[:3]))
        return super().executemany(sql, *args)

    def executescript(self, script):
        _point("sql script")
        return super().executescript(script)


_connect = sqlite3.connect


def _counted_connect(*args, **kwargs):
    kwargs.setdefault("factory", _Counted)
    return _connect(*args, **kwargs)


sqlite3.connect = _counted_connect

sys.argv = ["numbermatch", *sys.argv[1:]]
from pipeline.cli import main

main()
"""


@dataclass(frozen=True)
class Killed:
    """How a command run under the harness ended: its exit status (negative: the signal), output,
    and the points it reached, in order (the last one is where it died when `killed`)."""

    returncode: int
    stdout: str
    stderr: str
    points: list[str]

    @property
    def killed(self) -> bool:
        return self.returncode == -signal.SIGKILL


def run_to(
    args: Sequence[str | os.PathLike[str]],
    kill_at: int | None,
    *,
    log: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> Killed:
    """Run `numbermatch ARGS` in a subprocess, killed by SIGKILL at point `kill_at` (None: run
    to the end). `log` is a scratch file for the points (replaced on each run)."""
    log.unlink(missing_ok=True)
    full = {**os.environ, **(env or {}), KILL_LOG_ENV: str(log)}
    full.pop(KILL_AT_ENV, None)
    if kill_at is not None:
        full[KILL_AT_ENV] = str(kill_at)
    proc = subprocess.run(
        [sys.executable, "-c", BOOTSTRAP, *(os.fspath(a) for a in args)],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = log.read_text().splitlines() if log.exists() else []
    return Killed(proc.returncode, proc.stdout, proc.stderr, [ln.split(" ", 1)[1] for ln in lines])


def points(
    args: Sequence[str | os.PathLike[str]],
    *,
    log: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Killed:
    """Run `numbermatch ARGS` to the end under the harness: the points a kill can choose from."""
    return run_to(args, None, log=log, cwd=cwd, env=env)


def spread(total: int, most: int) -> list[int]:
    """Up to `most` points of 1..total, spread evenly, the first and the last included."""
    if total <= most:
        return list(range(1, total + 1))
    step = (total - 1) / (most - 1)
    return sorted({1 + round(k * step) for k in range(most)})


# --- what a stock must be after a kill ------------------------------------------------------


def visible_files(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` no hidden folder or name is part of (relative path ->
    bytes): what a reader sees; a killed write's hidden temp file is not among them."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            found[rel.as_posix()] = path.read_bytes()
    return found


def stock_files(out: Path) -> dict[str, bytes]:
    """The stock's puzzle files under `out` (relative path -> bytes)."""
    return {
        rel: data
        for rel, data in visible_files(out).items()
        if rel.startswith("stock/") and rel.endswith((".yaml", ".yml"))
    }


def stock_problems(out: Path, ignore: Collection[str] = ()) -> list[str]:
    """What is wrong with the stock under `out` as the next command sees it (empty: nothing):
    `validate` of the whole folder not clean (a stock file that does not validate, a puzzle
    shipped twice or shipped and still in stock: NM321), `numbermatch stock` failing or
    counting other than the files, a puzzle id or canonical key in two stock files. Problems
    naming a file of `ignore` (relative paths: files planted to be dropped) are left out."""
    from pipeline.formats.index import STOCK_DIR, LevelIndex
    from pipeline.validator import validate_paths
    from tests.helpers import run

    problems = [
        f"validate: {p}"
        for p in validate_paths([out]).problems
        if not any(rel in f"{p.file} {p.message}" for rel in ignore)
    ]
    listed = run("stock", "--out", str(out))
    files = stock_files(out)
    first = listed.output.splitlines()[0] if listed.output else ""
    shown = re.search(r": ([0-9]+) puzzles? in ", first)
    least = len(set(files) - set(ignore))  # a file planted to be dropped may count or not
    if listed.exit_code != 0 or not shown or not least <= int(shown[1]) <= len(files):
        problems.append(f"stock (exit {listed.exit_code}): {first!r}, {len(files)} files")
    with LevelIndex(out) as index:
        index.refresh()
        stocked = index.entries(STOCK_DIR)
        shipped = index.shipped_keys()
    stocked = [e for e in stocked if e.path not in ignore]
    for what, values in (("id", [e.id for e in stocked]), ("key", [e.key for e in stocked])):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            problems.append(f"stock: {what} in two files: {twice}")
    offered = sorted(e.id for e in stocked if e.key in shipped)
    if offered:
        problems.append(f"stock: shipped puzzles offered again: {offered}")
    if len(stocked) != len(files) - len(set(files) & set(ignore)):
        problems.append(f"index: {len(stocked)} stock entries for {len(files)} files")
    return problems
