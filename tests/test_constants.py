"""Each constant is defined in one place: budgets in `pipeline.solver.budgets`, caps in
`pipeline.limits`, the night folder's names in `pipeline.formats.night`, the rating seed in
`pipeline.rating`."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each benchmark's own knobs (its sample size, rounds, seed) are its own business.
OWN_KNOBS = "pipeline/bench/"


def literal_constants(source: str) -> list[str]:
    """Module-level UPPER_CASE names bound to a literal (`X = 5`, `X: int = 5`, `X = -1`)."""
    names = []
    for node in ast.parse(source).body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        if isinstance(value, ast.UnaryOp):
            value = value.operand
        if isinstance(value, ast.Constant):
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return names


def test_no_constant_is_defined_twice() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(OWN_KNOBS):
            for name in literal_constants(path.read_text(encoding="utf-8")):
                where[name].append(rel)
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert twice == {}, f"defined in more than one module: {twice}"


def test_a_node_budget_option_defaults_to_a_named_budget() -> None:
    """`--budget-nodes`, `--hint-nodes`, `--solve-nodes`: the default is a name from budgets.py."""
    found = 0
    for path in sorted((ROOT / "pipeline" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "Option"
                and any(
                    isinstance(a, ast.Constant) and str(a.value).endswith("-nodes")
                    for a in node.args
                )
            ):
                found += 1
                assert not isinstance(node.args[0], ast.Constant), (
                    f"{path.name}:{node.lineno}: a literal budget"
                )
    assert found >= 3


def test_the_scan_sees_literals() -> None:
    assert literal_constants("A = 1\nB: int = -2\nC = f(1)\nd = 3\nE, F = 1, 2\n") == ["A", "B"]
