"""The writers as an unprivileged user (the tests run as root, which may write anywhere): each
command runs in a real process as `nobody` (`setpriv`), with the project's Python. Files keep
their mode when rewritten, new ones follow the umask; a folder the user cannot write (output,
stock, a night's pool) or a file of another user is refused in one line naming it, before any
work and with nothing written; an unwritable cache folder is only a cache: the command works
from the files. (The same refusals by mode bits, as root: test_writers.py, test_atomic.py.)"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test runs commands in processes of their own

SETPRIV = shutil.which("setpriv")
NOBODY = ("nobody", "nogroup")


def _uid_gid() -> tuple[int, int]:
    import grp
    import pwd

    return pwd.getpwnam(NOBODY[0]).pw_uid, grp.getgrnam(NOBODY[1]).gr_gid


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return f"needs root to drop to {NOBODY[0]} (this run is uid {os.geteuid()})"
    if SETPRIV is None:
        return "setpriv (util-linux) is not installed"
    try:
        _uid_gid()
    except KeyError:
        return f"no user {NOBODY[0]} / group {NOBODY[1]} on this machine"
    probe = subprocess.run(
        [SETPRIV, *_DROP, sys.executable, "-c", "import pipeline.cli"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    if probe.returncode != 0:
        return f"the project's Python cannot run as {NOBODY[0]}: {probe.stderr.strip()[-200:]}"
    return None


_DROP = [f"--reuid={NOBODY[0]}", f"--regid={NOBODY[1]}", "--clear-groups"]
_REASON = _why_not()
if _REASON is not None:
    pytest.skip(_REASON, allow_module_level=True)


def give(path: Path) -> Path:
    """Make `path` (and everything under it) nobody's."""
    uid, gid = _uid_gid()
    for here, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(here, name), uid, gid, follow_symlinks=False)
    os.chown(path, uid, gid)
    return path


def take(path: Path) -> Path:
    """Make `path` (and everything under it) root's again, modes unchanged: nobody may read it,
    not write it."""
    for here, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(here, name), 0, 0, follow_symlinks=False)
    os.chown(path, 0, 0)
    return path


@pytest.fixture
def home() -> Iterator[Path]:
    """A folder nobody owns (pytest's tmp_path lies under a folder only root may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="nm-nobody-"))
    give(folder)
    (folder / "home").mkdir()
    give(folder / "home")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def nobody(
    home: Path, *args: str | os.PathLike[str], umask: int = 0o022, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`numbermatch ARGS` as nobody, HOME in `home`, the index cache in `cache` (default: the
    user's ~/.cache)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home / "home"),
        "LANG": "C.UTF-8",
    }
    if cache is not None:
        env["NUMBERMATCH_CACHE"] = str(cache)
    result = subprocess.run(
        [SETPRIV, *_DROP, sys.executable, "-m", "pipeline.cli", *map(str, args)],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        umask=umask,
        timeout=300,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def refused(result: subprocess.CompletedProcess[str], *texts: str) -> str:
    """The command failed in one `numbermatch: error:` line holding every text."""
    errors = [x for x in result.stderr.splitlines() if x.startswith("numbermatch: error:")]
    assert result.returncode == 1 and len(errors) == 1, result.stderr
    for text in texts:
        assert text in errors[0], errors[0]
    return errors[0]


NIGHT = ["--date", "2026-01-02", "--levels", "1", "--stages", "4", "--curve", "ramp", "-j", "1"]
LATER = ["--date", "2026-01-03", "--levels", "1", "--stages", "4", "--curve", "ramp", "-j", "1"]


def night(home: Path, out: Path, umask: int = 0o022) -> Path:
    result = nobody(home, "nightly", *NIGHT, "--out", out, umask=umask)
    assert result.returncode == 0, result.stderr
    return out / "2026-01-02"


def modes(folder: Path) -> dict[str, int]:
    return {
        p.relative_to(folder).as_posix(): stat.S_IMODE(p.lstat().st_mode)
        for p in sorted(folder.rglob("*"))
    }


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --- modes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "umask, file_mode, folder_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)]
)
def test_new_files_follow_the_umask(
    home: Path, umask: int, file_mode: int, folder_mode: int
) -> None:
    """A night, its stock and the index cache as nobody, under the user's umask."""
    cache = home / "cache"
    result = nobody(home, "nightly", *NIGHT, "--out", home / "gen", umask=umask, cache=cache)
    assert result.returncode == 0, result.stderr
    made = {**modes(home / "gen"), **{f"cache/{k}": v for k, v in modes(cache).items()}}
    assert any(k.startswith("stock/") and k.endswith(".yaml") for k in made), sorted(made)
    assert any(k.startswith("cache/index/") for k in made), sorted(made)  # the index was written
    for name, mode in made.items():
        want = (
            folder_mode if (home / "gen" / name).is_dir() or (home / name).is_dir() else file_mode
        )
        if name.startswith("cache/") and not (home / name).is_dir():
            want = file_mode  # SQLite creates its file with the umask too
        assert mode == want, f"{name}: {mode:04o}, expected {want:04o}"
    owner = _uid_gid()[0]
    assert all(p.lstat().st_uid == owner for p in (home / "gen").rglob("*"))


def test_rewrites_keep_the_mode(home: Path) -> None:
    """swap, the stale mark on report.md, observed and telemetry simulate over their own
    earlier output: a 0600 file stays 0600, a 0640 one 0640."""
    folder = night(home, home / "gen")
    bundle = folder / "bundle.yaml"
    os.chmod(bundle, 0o600)
    os.chmod(folder / "report.md", 0o640)
    result = nobody(home, "swap", bundle, "L1.S2")
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "report.md").stat().st_mode) == 0o640
    assert "Stale" in (folder / "report.md").read_text()
    sim = home / "t.jsonl"
    args = ["telemetry", "simulate", bundle, "--audience", "random:1", "--attempts", "40"]
    assert nobody(home, *args, "--out", sim).returncode == 0
    assert stat.S_IMODE(sim.stat().st_mode) == 0o644
    os.chmod(sim, 0o600)
    before = sim.read_bytes()
    result = nobody(home, *args, "--seed", "1", "--out", sim)
    assert result.returncode == 0, result.stderr
    assert sim.read_bytes() != before and stat.S_IMODE(sim.stat().st_mode) == 0o600
    report = home / "observed.txt"
    assert nobody(home, "observed", sim, "--levels", bundle, "--out", report).returncode == 0
    os.chmod(report, 0o600)
    report.write_text(report.read_text() + "\n")  # so the rewrite is not "the same bytes"
    result = nobody(home, "observed", sim, "--levels", bundle, "--out", report)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(report.stat().st_mode) == 0o600


def test_a_file_of_another_user_is_refused_not_taken_over(home: Path) -> None:
    """A bundle root owns (0644) in a folder nobody owns: rename would replace it (the folder
    allows it) and make nobody its owner; it is refused in one line, untouched."""
    folder = night(home, home / "gen")
    bundle = folder / "bundle.yaml"
    os.chown(bundle, 0, 0)
    before = bundle.read_bytes()
    refused(nobody(home, "swap", bundle, "L1.S2"), str(bundle), "is not writable by this user")
    assert bundle.read_bytes() == before and bundle.stat().st_uid == 0
    sim = home / "t.jsonl"
    args = ["telemetry", "simulate", bundle, "--audience", "random:1", "--attempts", "5"]
    assert nobody(home, *args, "--out", sim).returncode == 0
    os.chown(sim, 0, 0)
    kept = sim.read_bytes()
    refused(nobody(home, *args, "--seed", "2", "--out", sim), "is not writable by this user")
    assert sim.read_bytes() == kept and sim.stat().st_uid == 0


# --- unwritable folders -----------------------------------------------------------------------


def test_an_unwritable_output_folder_is_one_line_before_any_work(home: Path) -> None:
    """Every --out into a folder root owns: one line naming the folder, exit 1, nothing there
    (the nightly job used to say "[Errno 13] Permission denied: '.../.2026-01-02.tmp-x'")."""
    folder = night(home, home / "gen")
    bundle = folder / "bundle.yaml"
    sim = home / "t.jsonl"
    simulate = ["telemetry", "simulate", bundle, "--audience", "random:1", "--attempts", "5"]
    assert nobody(home, *simulate, "--out", sim).returncode == 0
    closed = take(Path(tempfile.mkdtemp(prefix="closed-", dir=home)))
    os.chmod(closed, 0o755)
    stock = home / "gen" / "stock"
    commands = {
        "nightly": ["nightly", *NIGHT, "--out", closed],
        "nightly-below": ["nightly", *NIGHT, "--out", closed / "nights"],
        "assemble": [
            "assemble",
            stock,
            bundle,
            "--levels",
            "1",
            "--stages",
            "2",
            "--curve",
            "ramp",
            "--out",
            closed / "b.yaml",
        ],
        "simulate": [*simulate, "--out", closed / "t.jsonl"],
        "simulate-parquet": [*simulate, "--out", closed / "t.parquet"],
        "observed": ["observed", sim, "--levels", bundle, "--out", closed / "o.txt"],
        "calibrate": ["calibrate", sim, "--levels", bundle, "--out", closed / "p.yaml"],
        "puzzle": ["puzzle", "123456789/987654321", "--adds", "1", "--out", closed / "p.yaml"],
        "report": ["report", bundle, "--out", closed / "r.html"],
        "refill": [
            "stock",
            "refill",
            "--tier",
            "easy",
            "--cells",
            "27",
            "--adds",
            "3",
            "--count",
            "1",
            "-j",
            "1",
            "--out",
            closed,
        ],
    }
    for name, args in commands.items():
        line = refused(nobody(home, *args), str(closed))
        assert "not writable" in line, (name, line)
        assert not list(closed.iterdir()), (name, list(closed.iterdir()))


def test_an_unwritable_stock_is_refused_before_the_night(home: Path) -> None:
    """A stock root owns: the night is refused before any work, naming the stock (it used to
    publish, then fail moving the stock files; every later night failed the same way and the
    shipped puzzles stayed in stock); --no-stock builds it; refill is refused before any
    attempt; prune drops nothing; reading the stock works."""
    night(home, home / "gen")
    stock = take(home / "gen" / "stock")
    before = tree(stock)
    line = refused(nobody(home, "nightly", *LATER, "--out", home / "gen"), str(stock), "--no-stock")
    assert "not writable" in line
    assert not (home / "gen" / "2026-01-03").exists()
    assert sorted(p.name for p in (home / "gen").iterdir()) == ["2026-01-02", "stock"]
    refill = ["stock", "refill", "--tier", "easy", "--cells", "27", "--adds", "3", "--count", "1"]
    refused(nobody(home, *refill, "-j", "1", "--out", home / "gen"), str(stock), "not writable")
    shown = nobody(home, "stock", "--out", home / "gen")
    assert shown.returncode == 0 and "puzzles in" in shown.stdout, shown.stdout + shown.stderr
    bad = sorted(stock.rglob("*.yaml"))[0]
    os.chmod(bad.parent, 0o755)
    bad.write_text(bad.read_text().replace("adds: ", "adds: 9", 1))  # invalid: prune drops it
    broken = tree(stock)
    dry = nobody(home, "stock", "prune", "--out", home / "gen", "--dry-run")
    assert dry.returncode == 0 and str(bad) in dry.stdout, dry.stdout + dry.stderr
    refused(
        nobody(home, "stock", "prune", "--out", home / "gen", "--force"),
        str(bad.parent),
        "nothing dropped",
    )
    assert tree(stock) == broken and len(broken) == len(before)
    plain = nobody(home, "nightly", *LATER, "--out", home / "gen", "--no-stock")
    assert plain.returncode == 0, plain.stderr
    assert tree(stock) == broken


def test_swap_into_a_pool_of_another_user_writes_nothing(home: Path) -> None:
    folder = night(home, home / "gen")
    bundle = folder / "bundle.yaml"
    (folder / "pool").mkdir(exist_ok=True)
    give(folder / "pool")
    stock = home / "gen" / "stock"
    for p in sorted(stock.rglob("*.yaml"))[:3]:
        shutil.copy(p, folder / "pool" / p.name)
    take(folder / "pool")
    before = bundle.read_bytes()
    pool = tree(folder / "pool")
    refused(nobody(home, "swap", bundle, "L1.S2"), "pool", "not a writable folder")
    assert bundle.read_bytes() == before and tree(folder / "pool") == pool


# --- the index cache --------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["NUMBERMATCH_CACHE", "~/.cache", "read-only index"])
def test_an_unwritable_cache_is_only_a_cache(home: Path, where: str) -> None:
    """The level index is a cache of the files: a cache folder nobody cannot write (or an
    index file it may only read) changes no answer and no exit code, and is left as it was."""
    made = night(home, home / "gen")
    cache: Path | None = None
    if where == "NUMBERMATCH_CACHE":
        cache = take(Path(tempfile.mkdtemp(prefix="cache-", dir=home)))
        os.chmod(cache, 0o755)
        watched = cache
    elif where == "~/.cache":
        watched = home / "home" / ".cache"
        shutil.rmtree(watched, ignore_errors=True)
        watched.mkdir()
        os.chmod(watched, 0o755)
    else:  # the index nobody wrote earlier, now root's and read-only, in a folder of root's
        watched = home / "home" / ".cache"
        assert list(watched.rglob("*.sqlite3")), list(watched.rglob("*"))
        take(watched)
    before = tree(watched)
    shown = nobody(home, "stock", "--out", home / "gen", cache=cache)
    assert shown.returncode == 0 and "puzzles in" in shown.stdout, shown.stderr
    checked = nobody(home, "validate", home / "gen", "--against", home / "gen", cache=cache)
    assert checked.returncode == 0 and "all valid" in checked.stderr, (
        checked.stdout + checked.stderr
    )
    later = nobody(home, "nightly", *LATER, "--out", home / "gen", cache=cache)
    assert later.returncode == 0, later.stderr
    assert not later.stderr.count("error"), later.stderr
    assert (home / "gen" / "2026-01-03" / "bundle.yaml").exists() and made.exists()
    assert tree(watched) == before


def test_rescore_keeps_modes_and_writes_all_files_or_none(home: Path) -> None:
    """`rescore` of a folder: a 0600 bundle stays 0600; when one of the files is in a folder
    nobody cannot write (or is another user's), no file is rescored (it used to rewrite the
    files before it and stop at that one)."""
    from pipeline.formats.profile_file import profile_document, write_profile
    from tests.test_telemetry import strong

    folder = night(home, home / "gen")
    profile = home / "strong.yaml"
    write_profile(profile, profile_document(strong()))
    mine = home / "mine"
    mine.mkdir()
    shutil.copy(folder / "bundle.yaml", mine / "a.yaml")
    (mine / "z").mkdir()
    shutil.copy(folder / "bundle.yaml", mine / "z" / "b.yaml")
    give(mine)
    take(mine / "z")
    os.chmod(mine / "a.yaml", 0o600)
    before = tree(mine)
    refused(
        nobody(home, "rescore", "--profile", profile, mine),
        str(mine / "z"),
        "not writable by this user",
    )
    assert tree(mine) == before
    give(mine / "z")
    os.chown(mine / "z" / "b.yaml", 0, 0)
    refused(nobody(home, "rescore", "--profile", profile, mine), "b.yaml: is not writable")
    assert tree(mine) == before
    os.chown(mine / "z" / "b.yaml", *_uid_gid())
    result = nobody(home, "rescore", "--profile", profile, mine)
    assert result.returncode == 0, result.stderr
    assert tree(mine) != before and stat.S_IMODE((mine / "a.yaml").stat().st_mode) == 0o600
