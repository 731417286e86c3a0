"""Imports sit at the top of a module; one inside a function is there for start-up time only.

A module's imports at its top say what it depends on, and an import cycle shows up when the
module is first imported instead of in the middle of a run. An import inside a function is
allowed only where the command line's start-up needs it (`numbermatch --help`, `COMMAND --help`
and the light commands must not load YAML, the validator, the search or the players:
tests/test_cli_startup.py, `python -m pipeline.bench startup`), in the modules of
`LAZY_ALLOWED`, and each says so: `# start-up time` (best followed by `: why`) on its own line,
on the first import of its block (consecutive import statements) or on a comment line just above
that block. Anything else fails with file:line. The library below cli/ is imported only by the
commands that use it, so a lazy import there only hides a cycle (tests/test_layers.py finds
those anyway) or a habit.

`research/` and `tests/` are outside the rule: neither is part of the installed command's
start-up, and a study or a test may import what only it needs where it needs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REASON = "# start-up time"

# module or package (ending in "/") -> why its start-up needs lazy imports
LAZY_ALLOWED = {
    "pipeline/cli/": "--help and the light commands load only what the asked command runs",
    "pipeline/solver/__init__.py": "the search's names re-exported lazily: a budget for --help loads no search",
    "pipeline/generation/generator.py": "generate --attempt rebuilds one attempt without loading the executors",
    "pipeline/schemas.py": "jsonschema loads only when a document fails the fast check",
    "pipeline/formats/curves.py": "--help lists the curve names without parsing YAML",
    "pipeline/formats/source.py": "a board in notation (solve, play, render) is read without YAML",
    "pipeline/atomic.py": "tempfile loads to write; validate and the light commands only read",
    "pipeline/validator/__init__.py": "validate FILE opens no index (sqlite3); a check against a folder does",
    "pipeline/validator/semantics.py": "validate loads the solver and the rating only for deep checks",
    "pipeline/generation/strategies.py": "generate --help reads the strategy names; the search loads to generate",
    "pipeline/generation/executors.py": "a process pool and Dask load only for --jobs N and --scheduler",
}


def _runs(body: list[ast.stmt]) -> list[list[ast.Import | ast.ImportFrom]]:
    """The blocks of consecutive import statements in one statement list."""
    runs: list[list[ast.Import | ast.ImportFrom]] = []
    previous_was_import = False
    for statement in body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            if not previous_was_import:
                runs.append([])
            runs[-1].append(statement)
            previous_was_import = True
        else:
            previous_was_import = False
    return runs


def lazy_imports(source: str) -> list[tuple[int, bool]]:
    """(line, has a reason) of every import statement inside a function of a module's source."""
    lines = source.splitlines()
    found: dict[int, bool] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(node, field, None)
                if not isinstance(body, list):
                    continue
                for run in _runs(body):
                    first = run[0].lineno
                    above = lines[first - 2].strip() if first > 1 else ""
                    block = REASON in lines[first - 1] or (
                        above.startswith("#") and REASON in above
                    )
                    for statement in run:
                        found[statement.lineno] = block or REASON in lines[statement.lineno - 1]
    return sorted(found.items())


def offences(
    root: Path = ROOT, package: str = "pipeline", allowed: dict[str, str] = LAZY_ALLOWED
) -> list[str]:
    """`file:line: why` for every import inside a function that the rule does not allow."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        name = path.relative_to(root).as_posix()
        here = any(name == key or (key.endswith("/") and name.startswith(key)) for key in allowed)
        for line, reason in lazy_imports(path.read_text(encoding="utf-8")):
            if not here:
                found.append(
                    f"{name}:{line}: an import inside a function: move it to the top of the module"
                )
            elif not reason:
                found.append(f"{name}:{line}: an import inside a function without '{REASON}: why'")
    return found


def test_imports_inside_functions_are_only_for_start_up_and_say_so() -> None:
    found = offences()
    assert found == [], "\n".join(found)


def test_every_allowed_module_exists_and_still_imports_lazily() -> None:
    """The allow-list stays short: an entry whose module no longer needs it goes."""
    for key in LAZY_ALLOWED:
        paths = sorted((ROOT / key).rglob("*.py")) if key.endswith("/") else [ROOT / key]
        assert paths and all(p.is_file() for p in paths), key
        assert any(lazy_imports(p.read_text(encoding="utf-8")) for p in paths), (
            f"{key} imports nothing lazily"
        )


def test_the_rule_finds_what_it_forbids(tmp_path: Path) -> None:
    """The check can fail: a lazy import outside the allow-list, and one without the reason."""
    pkg = tmp_path / "pkg"
    (pkg / "front").mkdir(parents=True)
    (pkg / "lib.py").write_text(
        "import os\n\ndef f():\n    import json  # start-up time: why\n    return json\n"
    )
    (pkg / "front" / "cmd.py").write_text(
        "def ok():\n"
        "    # start-up time: the block below\n"
        "    import json\n"
        "    import csv\n"
        "    return json, csv\n"
        "\n"
        "def ok_too():\n"
        "    try:\n"
        "        import yaml  # start-up time: a YAML file only\n"
        "        from yaml import nodes\n"
        "    except ImportError:\n"
        "        return None\n"
        "    return yaml, nodes\n"
        "\n"
        "def bad():\n"
        "    x = 1\n"
        "    import json\n"
        "    def inner():\n"
        "        import csv\n"
        "        return csv\n"
        "    return json, x, inner\n"
    )
    found = offences(tmp_path, "pkg", {"pkg/front/": "a front end"})
    assert [f.split(": ")[0] for f in found] == [
        "pkg/front/cmd.py:17",
        "pkg/front/cmd.py:19",
        "pkg/lib.py:4",
    ]
    assert "move it to the top" in found[2] and "without '# start-up time: why'" in found[0]
