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


def _literal(value: ast.expr | None) -> bool:
    """A literal: a constant (`5`, `-1`, `"x"`), a tuple of them, or a compiled pattern of one."""
    if isinstance(value, ast.UnaryOp):
        value = value.operand
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple):
        return bool(value.elts) and all(_literal(e) for e in value.elts)
    return _pattern(value) is not None


def _pattern(value: ast.expr | None) -> str | None:
    """The text of `re.compile("...")` (flags aside), else None."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "compile"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "re"
        and value.args
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    ):
        return value.args[0].value
    return None


def _bindings(source: str) -> list[tuple[list[ast.expr], ast.expr | None]]:
    found: list[tuple[list[ast.expr], ast.expr | None]] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            found.append((node.targets, node.value))
        elif isinstance(node, ast.AnnAssign):
            found.append(([node.target], node.value))
    return found


def literal_constants(source: str) -> list[str]:
    """Module-level UPPER_CASE names bound to a literal (`X = 5`, `X: int = 5`, `X = -1`,
    `X = ("a", "b")`, `X = re.compile("...")`)."""
    names = []
    for targets, value in _bindings(source):
        if _literal(value):
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    return names


def patterns(source: str) -> list[str]:
    """The text of every pattern a module compiles at its top level, whatever its name."""
    return [text for _, value in _bindings(source) if (text := _pattern(value)) is not None]


def test_no_constant_is_defined_twice() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(OWN_KNOBS):
            for name in literal_constants(path.read_text(encoding="utf-8")):
                where[name].append(rel)
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert twice == {}, f"defined in more than one module: {twice}"


def test_no_pattern_is_compiled_in_two_modules() -> None:
    """The same regular expression under two names (the night folder's date in five modules,
    once) is one rule written twice: it lives in one module and the others import it."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(OWN_KNOBS):
            for text in set(patterns(path.read_text(encoding="utf-8"))):
                where[text].append(rel)
    twice = {text: files for text, files in where.items() if len(files) > 1}
    assert twice == {}, f"compiled in more than one module: {twice}"


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
    source = (
        'G = ("a", "b")\n_H = re.compile(r"[0-9]+", re.ASCII)\nI = (f(1), 2)\nJ = x.compile("y")\n'
    )
    assert literal_constants(source) == ["G", "_H"]
    assert patterns(source + 'k = re.compile("z")\n') == ["[0-9]+", "z"]
