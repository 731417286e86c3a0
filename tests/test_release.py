"""The release and installing it: the version in one place, the changelog, the recipes that name
the release tag, the supported Python versions (classifiers and nox sessions), `make install`'s
progress, and the package installed as the README says (from a git ref into a fresh venv)."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

from pipeline import __version__
from pipeline.engine.rulesets import SHIPPED
from pipeline.formats.puzzle import SCHEMA_VERSION
from pipeline.rating.tiers import RATING_VERSION
from pipeline.rating.versions import VERSIONS
from tests.helpers import run

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TAG = f"v{__version__}"
FIXTURE = ROOT / "tests" / "fixtures" / "validator" / "valid" / "puzzle.yaml"


def test_the_version_is_written_in_one_place() -> None:
    """pyproject reads `__version__` (no second copy to forget); `--version` prints it."""
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pipeline.__version__"}
    written = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "pipeline").rglob("*.py"))
        if re.search(r"(?m)^__version__ = ", p.read_text(encoding="utf-8"))
    ]
    assert written == ["pipeline/__init__.py"]
    assert run("--version").output.startswith(f"numbermatch {__version__} ")


def _changelog() -> str:
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _releases() -> list[tuple[str, str]]:
    """(version, section text) of each release in CHANGELOG.md, newest first."""
    text = _changelog()
    parts = re.split(r"(?m)^## ", text)[1:]
    out = []
    for part in parts:
        heading, _, body = part.partition("\n")
        found = re.fullmatch(r"(\d+\.\d+\.\d+) \(\d{4}-\d\d-\d\d\)", heading.strip())
        if found:
            out.append((found.group(1), body))
        else:
            assert heading.strip() == "Unreleased", f"CHANGELOG.md: a heading {heading!r}"
    return out


def test_the_changelog_says_this_release_and_the_formats_it_reads_and_writes() -> None:
    """The newest release is this version, and its section names the file-format version and
    the rating versions the code reads and writes, and the rulesets it plays."""
    releases = _releases()
    assert releases and releases[0][0] == __version__
    release = " ".join(releases[0][1].split())
    assert f"`schema_version: {SCHEMA_VERSION}`" in release
    # the rating versions the code reads and writes now: "Unreleased" says them when it is there
    unreleased = re.search(r"(?ms)^## Unreleased\n(.*?)(?=^## |\Z)", _changelog())
    pending = " ".join(unreleased.group(1).split()) if unreleased else ""
    body = pending if "rating version" in pending else release
    assert f"writes rating version {RATING_VERSION}" in body
    read = sorted(VERSIONS)
    assert f"reads and re-checks versions {', '.join(map(str, read[:-1]))} and {read[-1]}" in body
    assert all(f"ruleset {n}" in release for n in SHIPPED)


def test_the_recipes_install_this_release_by_its_tag() -> None:
    """The README's CI recipe and docs/validation.md's recipes (pip and pre-commit's `rev:`)
    name this release's tag, and the hook they name is the one .pre-commit-hooks.yaml defines,
    running the installed command."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    validation = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    for text in (readme, validation):
        refs = re.findall(r"numbermatch@([^\"\s]+)\"", text)
        assert refs and set(refs) == {TAG}, refs
    revs = re.findall(r"(?m)^\s*rev: (\S+)", validation)
    assert revs == [TAG]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    named = re.findall(r"(?m)^\s*- id: (\S+)", validation)
    assert named and set(named) <= {h["id"] for h in hooks}
    for hook in hooks:
        assert hook["language"] == "python"
        assert shlex.split(hook["entry"])[0] in PYPROJECT["project"]["scripts"]


def _noxfile() -> dict[str, object]:
    """The noxfile's PYTHONS and FAST, read without importing nox."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in ("PYTHONS", "FAST"):
            found[target.id] = ast.literal_eval(node.value)  # type: ignore[union-attr]
    return found


def test_the_supported_pythons_are_the_ones_nox_tests() -> None:
    """Each Python the classifiers name has a nox session, and no other; requires-python starts
    at the oldest; each session runs the fast lane; .ci/run runs the oldest and newest."""
    nox = _noxfile()
    classified = [
        c.rsplit(" :: ", 1)[1]
        for c in PYPROJECT["project"]["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert classified == nox["PYTHONS"]
    assert PYPROJECT["project"]["requires-python"] == f">={classified[0]}"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"FAST := {nox['FAST']}\n" in makefile  # each version runs `make test-fast`'s lane
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"tests-{classified[0]}" in ci and f"tests-{classified[-1]}" in ci


def test_make_install_shows_pips_progress() -> None:
    """The first `make install` takes about a minute: pip says what it does (no --quiet)."""
    dry = subprocess.run(
        ["make", "-n", "-B", "install"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in dry.splitlines() if "pip install" in line]
    assert len(installs) == 2
    assert not any(re.search(r"\s(--quiet|-q+)(\s|$)", line) for line in installs), installs
    assert "installing numbermatch" in dry


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=release", "-c", "user.email=release@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.slow
def test_the_package_installs_from_a_git_ref_as_the_readme_says(tmp_path: Path) -> None:
    """`pip install "numbermatch @ git+URL@vX.Y.Z"` into a fresh venv, from a clone of this
    repository with the release tag made there at its HEAD (moved, if the clone has the real tag
    from an earlier commit), then
    `numbermatch --version`, `validate` on a fixture and the pre-commit hook's entry, run by the
    installed package (not this checkout).

    Offline and quick: `--no-deps --no-build-isolation --no-index --ignore-installed`, the
    dependencies, pip and setuptools coming from this test venv's site-packages through a .pth
    file in the new venv (made `--without-pip`: a venv's own older setuptools would shadow them).
    `--system-site-packages` would give the base interpreter's packages, not this venv's."""
    clone = tmp_path / "numbermatch"
    _git(ROOT, "clone", "--quiet", "--no-local", str(ROOT), str(clone))
    _git(clone, "tag", "-a", "-f", TAG, "-m", f"numbermatch {__version__}")  # the clone's HEAD
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "test-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    spec = f"numbermatch @ git+file://{clone}@{TAG}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        + ["--no-deps", "--no-build-isolation", "--no-index", "--ignore-installed", spec],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    command = venv / "bin" / "numbermatch"
    where = subprocess.run(
        [python, "-c", "import pipeline; print(pipeline.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(venv), where  # the installed copy, not this checkout
    version = subprocess.run(
        [command, "--version"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith(f"numbermatch {__version__} ")
    game = tmp_path / "game"
    (game / "levels").mkdir(parents=True)
    shutil.copy(FIXTURE, game / "levels" / "puzzle.yaml")
    checked = subprocess.run(
        [command, "validate", "levels/"], cwd=game, env=env, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 file checked: all valid" in checked.stdout + checked.stderr
    # the pre-commit hook: its entry with the changed files appended, as pre-commit runs it
    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))[0]
    argv = shlex.split(hook["entry"])
    hooked = subprocess.run(
        [venv / "bin" / argv[0], *argv[1:], "levels/puzzle.yaml"],
        cwd=game,
        env=env,
        capture_output=True,
        text=True,
    )
    assert hooked.returncode == 0, hooked.stdout + hooked.stderr
    (game / "levels" / "bad.yaml").write_text("kind: puzzle\n")
    refused = subprocess.run(
        [venv / "bin" / argv[0], *argv[1:], "levels/bad.yaml"],
        cwd=game,
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and "levels/bad.yaml" in refused.stdout + refused.stderr
