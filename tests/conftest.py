"""Shared fixtures: rulesets for tests (a variant of ruleset 1 and one with no diagonals), and a
small generated night with a studio server over a copy of it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.engine import rules
from pipeline.engine.board import CLASS
from pipeline.engine.rulesets import DEFAULT, Ruleset, register, unregister

NO_DIAGONALS = 99  # the test-only ruleset's number; never shipped


def no_diagonal_pairs(cells: bytes) -> list[tuple[int, int]]:
    """Legal pairs when only reading order and columns connect (no diagonals), i < j, sorted."""
    act = [i for i, v in enumerate(cells) if v]
    found = {(a, b) for a, b in itertools.pairwise(act) if CLASS[cells[a]] == CLASS[cells[b]]}
    for i in act:
        for j in range(i + 9, len(cells), 9):
            if cells[j]:
                if CLASS[cells[i]] == CLASS[cells[j]]:
                    found.add((i, j))
                break
    return sorted(found)


def no_diagonal_problem(cells: bytes, i: int, j: int) -> str | None:
    """Ruleset 1's reasons, plus: a pair that only a diagonal connects is not legal here."""
    problem = rules.pair_problem(cells, i, j)
    if problem is None and (min(i, j), max(i, j)) not in no_diagonal_pairs(cells):
        return "no clear path: diagonals do not connect in this ruleset"
    return problem


def make_no_diagonals() -> Ruleset:
    """Ruleset 1 without diagonal connections. Parity and the stack certificate stay sound (same
    classes; reading order still connects); the ruleset-1 geometry shortcuts are off."""
    return Ruleset(
        number=NO_DIAGONALS,
        name="no diagonal connections (tests only)",
        value_class=CLASS,
        legal_pairs=no_diagonal_pairs,
        pair_problem=no_diagonal_problem,
        remove_pair=rules.remove_pair,
        add_numbers=rules.add_numbers,
        parity=True,
        stack_certificate=True,
    )


@pytest.fixture(scope="session", autouse=True)
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The level-file indexes of the session live in a temp folder, not in ~/.cache (subprocesses
    inherit it)."""
    from pipeline.formats.index import CACHE_ENV

    folder = tmp_path_factory.mktemp("index-cache")
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = before


@pytest.fixture(scope="session")
def no_diagonals() -> Iterator[Ruleset]:
    """The test-only ruleset, registered for the session (never in `SHIPPED`)."""
    ruleset = register(make_no_diagonals())
    yield ruleset
    unregister(NO_DIAGONALS)


@pytest.fixture(scope="session")
def untracked() -> Ruleset:
    """Ruleset 1 with the players' incremental pair tracking off: the plain path to compare with."""
    return dataclasses.replace(DEFAULT, tracked_pairs=False)


@pytest.fixture(scope="session")
def unpruned() -> Ruleset:
    """Ruleset 1 with every solver shortcut off: the solver's plain search on the engine's rules."""
    return dataclasses.replace(
        DEFAULT, parity=False, stack_certificate=False, pairing_order=False, bitmask_stretches=False
    )


STUDIO_DATE = dt.date(2026, 1, 2)


@pytest.fixture(scope="session")
def studio_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-Level night of four Stages on the ramp curve (easy to hard), made by the nightly
    job: `<out>/2026-01-02/bundle.yaml` and its pool. Tests copy it before changing anything."""
    from pipeline.jobs.nightly import NightlyOptions, default_seed, run_nightly

    out = tmp_path_factory.mktemp("studio-night")
    run_nightly(
        NightlyOptions(
            date=STUDIO_DATE,
            seed=default_seed(STUDIO_DATE),
            levels=1,
            stages=4,
            curve="ramp",
            out=out,
            jobs=1,
        )
    )
    return out


@pytest.fixture
def night_copy(studio_night: Path, tmp_path: Path) -> Path:
    """A private copy of the night folder tree (the studio's PATH) for a test that may write."""
    root = tmp_path / "generated"
    shutil.copytree(studio_night, root)
    return root


@pytest.fixture
def night_to_edit(night_copy: Path) -> Path:
    """The night folder of a private copy (`bundle.yaml`, 1 Level of 4 Stages, and `pool/`): for
    a test that edits, swaps or writes beside a night."""
    return night_copy / STUDIO_DATE.isoformat()


@pytest.fixture
def studio(night_copy: Path) -> Iterator[Any]:
    """The studio serving a private copy of the night."""
    pytest.importorskip(
        "uvicorn", reason="the studio's web packages are not installed (pip install -e '.[test]')"
    )
    from pipeline.studio.server import Background

    with Background(night_copy) as served:
        yield served


STUDIO_ORIGIN = "http://127.0.0.1:8765"  # the origin a studio_client's requests come from


@pytest.fixture
def studio_client(night_copy: Path) -> Any:
    """A starlette TestClient on the studio over a private copy of the night (no server)."""
    pytest.importorskip(
        "starlette", reason="the studio's web packages are not installed (pip install -e '.[test]')"
    )
    from starlette.testclient import TestClient

    from pipeline.studio.app import create_app

    return TestClient(create_app(night_copy), base_url=STUDIO_ORIGIN, raise_server_exceptions=False)


def studio_post(client: Any, route: str, data: dict[str, str], *, follow: bool = False) -> Any:
    """A POST as the studio's own page sends it: its origin and its per-run token."""
    headers = {"Origin": STUDIO_ORIGIN}
    return client.post(
        route, data={"token": client.app.token, **data}, headers=headers, follow_redirects=follow
    )


@pytest.fixture
def cli() -> Callable[..., Any]:
    """Run a command in-process: `cli("validate", path, input=...)` (tests.helpers.run, which a
    module-level helper can call directly; a traceback fails the test)."""
    from tests.helpers import run

    return run


DESIGNERS_DATE = dt.date(2026, 2, 3)


@pytest.fixture(scope="session")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny published night: one Level of three medium Stages, and a pool of leftovers (the
    designers' commands' tests read it; a test that writes copies it first)."""
    from pipeline.jobs.nightly import NightlyOptions, default_seed, run_nightly

    out = tmp_path_factory.mktemp("designers-night")
    run_nightly(
        NightlyOptions(
            date=DESIGNERS_DATE,
            seed=default_seed(DESIGNERS_DATE),
            out=out,
            jobs=1,
            levels=1,
            stages=3,
            curve="flat",
        )
    )
    return out / DESIGNERS_DATE.isoformat()


# the fixtures that run the nightly job to make a test night: a test using one (directly or
# through another fixture) is a `nightly` test, left out of `make test-fast`
NIGHT_FIXTURES = frozenset({"studio_night", "night"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if NIGHT_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.nightly)
