"""The layers: no two modules import each other, directly or in a circle.

import-linter (`lint-imports` in `make test`, contracts in pyproject.toml) checks that each layer
imports only the layers below it; this test checks cycles between single modules, counting every
import: at module level, inside functions and under `TYPE_CHECKING` alike (an import hidden in a
function is still a dependency, it only runs later).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "research")


def module_names(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the packages under `root`."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool, known: dict[str, Path]) -> list[str]:
    """The known modules an import statement names (a name imported from a package that is itself
    a module counts as that module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    return [
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    ]


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> nx.DiGraph:
    """Module -> module for every import anywhere in a module's code."""
    known = module_names(root, packages)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            for target in _imported(node, module, path.name == "__init__.py", known):
                while target and target not in known:  # `pipeline.x.name` -> `pipeline.x`
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph.add_edge(module, target)
    return graph


def test_no_module_imports_another_that_imports_it_back() -> None:
    graph = import_graph()
    cycles = [" -> ".join(c + c[:1]) for c in nx.simple_cycles(graph)]
    assert cycles == [], "import cycles:\n  " + "\n  ".join(cycles[:20])


def test_the_graph_sees_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    """The check above can fail: a cycle made only of deferred imports is found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g\n    return g\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import c\ndef g(): ...\n"
    )
    (pkg / "c.py").write_text("import pkg.a\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert sorted(graph.edges) == [("pkg.a", "pkg.b"), ("pkg.b", "pkg.c"), ("pkg.c", "pkg.a")]
    assert len(list(nx.simple_cycles(graph))) == 1


def test_the_real_graph_has_the_expected_edges() -> None:
    graph = import_graph()
    assert graph.has_edge("pipeline.jobs.nightly.build", "pipeline.jobs.assembler")
    assert graph.has_edge(
        "pipeline.validator.semantics", "pipeline.validator.deep"
    )  # inside a function
    assert not graph.has_edge("pipeline.validator.deep", "pipeline.validator.semantics")


def _contract_layers() -> list[list[str]]:
    """The layers contract's packages, top to bottom, optional ones unwrapped."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
    ]
    return [[name.strip("() ") for name in re.split(r"[|:]", line)] for line in layers]


def test_the_architecture_page_lists_the_contracts_layers_in_order() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| ") and "`pipeline." in line]
    import re

    listed = [re.findall(r"`(pipeline\.\w+)`", row.split("|")[2]) for row in rows]
    assert listed == _contract_layers()


def test_every_package_is_in_a_layer() -> None:
    """A new package or top-level module must be placed in the layers contract (and the page)."""
    placed = {name for layer in _contract_layers() for name in layer}
    present = {
        f"pipeline.{p.stem if p.suffix == '.py' else p.name}"
        for p in (ROOT / "pipeline").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert present - placed == set()
