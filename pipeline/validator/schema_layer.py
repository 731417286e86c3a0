"""Layer 2: which schema a document claims, and every way it violates that schema.

jsonschema's errors carry a path into the data; the node tree turns that path into a line and
column. Messages are rewritten to say what is wrong in the terms of the file (missing field,
unexpected field, expected an integer) rather than in the terms of JSON Schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pipeline import schemas
from pipeline.engine.board import parse
from pipeline.engine.moves import Move
from pipeline.errors import NumberMatchError, shorten
from pipeline.formats.loader import Document, find_node, position
from pipeline.formats.puzzle import SCHEMA_VERSION
from pipeline.problems import Problem, json_path

if TYPE_CHECKING:  # jsonschema loads only when a document fails the fast check (start-up time)
    from jsonschema.exceptions import ValidationError

_RANGE = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
}
_REQUIRED = re.compile(r"^'(.*)' is a required property$")
_TYPE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "list",
    dict: "mapping",
}
MAX_MESSAGE = 240
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.\s")  # not after "e.g." / "i.e."


def _short(value: Any) -> str:
    return shorten(value, 60)


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


_KINDS_TEXT = [f"`kind: {k}`" for k in schemas.KINDS]
_KIND_CHOICES = ", ".join(_KINDS_TEXT[:-1]) + " or " + _KINDS_TEXT[-1]


def classify(doc: Document, name: str) -> tuple[str | None, list[Problem]]:
    """The document's kind (`puzzle`, `bundle` or `curves`), or None and the problem saying why not.

    `kind` decides; without it the shape does (`levels`: bundle; `board`: puzzle; `curves`), so
    that a file missing only `kind` still gets every other check, and the schema then reports
    the missing field.
    """
    data = doc.data
    line, col = position(doc.node)
    if not isinstance(data, dict):
        return None, [
            Problem(
                name,
                line,
                col,
                "NM201",
                f"the document is a {_type_name(data)}, not a mapping: expected a puzzle, a bundle or a curve file"
                f" (a mapping with {_KIND_CHOICES})",
                "$",
            )
        ]
    kind = data.get("kind")
    if kind is None and "kind" not in data:
        if "levels" in data:
            kind = "bundle"
        elif "board" in data:
            kind = "puzzle"
        elif "curves" in data:
            kind = "curves"
        else:
            return None, [
                Problem(
                    name,
                    line,
                    col,
                    "NM201",
                    "not a numbermatch document: no `kind` field, and neither a `board` (puzzle), `levels` (bundle)"
                    " nor `curves` (curve file)",
                    "$",
                )
            ]
    if kind not in schemas.KINDS:
        node, _, _ = find_node(doc.node, ["kind"])
        kline, kcol = position(node)
        return None, [
            Problem(
                name,
                kline,
                kcol,
                "NM201",
                f"unknown kind {_short(kind)}: expected {' or '.join(map(repr, schemas.KINDS))}",
                "$.kind",
            )
        ]
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version != SCHEMA_VERSION:
        node, _, _ = find_node(doc.node, ["schema_version"])
        vline, vcol = position(node)
        return None, [
            Problem(
                name,
                vline,
                vcol,
                "NM202",
                f"schema_version {version} is not supported: this validator reads version {SCHEMA_VERSION}",
                "$.schema_version",
            )
        ]
    return kind, []


def check(doc: Document, kind: str, name: str) -> tuple[list[Problem], set[tuple[Any, ...]]]:
    """Every schema violation of a document of the given kind, and the data paths they are at
    (layer 3 skips whatever lies there)."""
    problems: list[Problem] = []
    bad: set[tuple[Any, ...]] = set()
    fast = schemas.fast_check(kind)
    if fast is not None and fast(doc.data):
        return problems, bad
    for error in schemas.validator(kind).iter_errors(doc.data):
        for problem, parts in _describe(error, doc, name):
            problems.append(problem)
            bad.add(parts)
    return problems, bad


def _describe(
    error: ValidationError, doc: Document, name: str
) -> Iterator[tuple[Problem, tuple[Any, ...]]]:
    parts = list(error.absolute_path)
    node, _key_node, _ = find_node(doc.node, parts)
    line, col = position(node)
    path = json_path(parts)
    keyword = error.validator
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance = error.instance

    if keyword == "required":
        match = _REQUIRED.match(error.message)
        field = match.group(1) if match else "?"
        where = f" in {path}" if parts else ""
        yield (
            Problem(
                name,
                line,
                col,
                "NM203",
                f"missing required field {field!r}{where}",
                json_path(parts + [field]),
            ),
            (*parts, field),
        )
        return
    alternatives = error.validator_value if keyword == "anyOf" else None
    if isinstance(alternatives, list) and all(
        isinstance(a, dict) and list(a) == ["required"] and len(a["required"]) == 1
        for a in alternatives
    ):  # one of some fields (a curve file's `curves:` or `job:`)
        fields = [a["required"][0] for a in alternatives]
        where = f" in {path}" if parts else ""
        yield (
            Problem(
                name,
                line,
                col,
                "NM203",
                f"missing required field: one of {', '.join(map(repr, fields))}{where}",
                json_path(parts + [fields[0]]),
            ),
            (*parts, fields[0]),
        )
        return
    if (
        keyword == "additionalProperties"
        and error.validator_value is False
        and isinstance(instance, dict)
    ):
        allowed = list(schema.get("properties", {}))
        for extra in instance:
            if extra in allowed:
                continue
            _, extra_key, _ = find_node(doc.node, parts + [extra])
            eline, ecol = position(extra_key)
            yield (
                Problem(
                    name,
                    eline,
                    ecol,
                    "NM204",
                    f"unexpected field {extra!r}; allowed here: {', '.join(allowed)}",
                    json_path(parts + [extra]),
                ),
                (*parts, extra),
            )
        return
    if keyword == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        yield (
            Problem(
                name,
                line,
                col,
                "NM205",
                f"{path}: expected {expected}, got {_type_name(instance)} {_short(instance)}",
                path,
            ),
            tuple(parts),
        )
        return
    if keyword in ("const", "enum"):
        options = [error.validator_value] if keyword == "const" else error.validator_value
        yield (
            Problem(
                name,
                line,
                col,
                "NM206",
                f"{path}: {_short(instance)} is not allowed; expected {' or '.join(map(repr, options))}",
                path,
            ),
            tuple(parts),
        )
        return
    if keyword == "pattern":
        yield _pattern_problem(name, line, col, path, schema, instance), tuple(parts)
        return
    code = "NM208" if keyword in _RANGE else "NM209"
    message = (
        error.message
        if len(error.message) <= MAX_MESSAGE
        else error.message[: MAX_MESSAGE - 3] + "..."
    )
    yield Problem(name, line, col, code, f"{path}: {message}", path), tuple(parts)


def _pattern_problem(
    name: str, line: int | None, col: int | None, path: str, schema: dict[str, Any], value: Any
) -> Problem:
    """A pattern mismatch, explained by the engine's parser where there is one."""
    defs = schemas.load_schema("puzzle")["$defs"]
    if schema.get("pattern") == defs["board"]["pattern"]:
        try:
            parse(value)
        except NumberMatchError as exc:
            return Problem(name, line, col, "NM301", str(exc), path)
        if value == "":
            return Problem(
                name,
                line,
                col,
                "NM301",
                "the board is empty: a puzzle starts with at least one number",
                path,
            )
    if schema.get("pattern") == defs["move"]["pattern"]:
        try:
            Move.parse(value)
        except NumberMatchError as exc:
            return Problem(name, line, col, "NM305", str(exc), path)
    what = _SENTENCE_END.split(str(schema.get("description", "")))[0].rstrip(".")
    hint = f" ({what})" if what else ""
    return Problem(
        name,
        line,
        col,
        "NM207",
        f"{path}: {_short(value)} does not have the required form{hint}",
        path,
    )
