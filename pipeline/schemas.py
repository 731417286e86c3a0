"""Where the JSON Schemas live and how code loads them: `schemas/` at the top of the repository.

The schemas are the published contract for level files (editors read them too), so they stay
plain JSON files beside the package rather than Python data. They reference each other by
`$id` through a local `referencing` registry: nothing is ever fetched from the network.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from pipeline.errors import NumberMatchError

PUZZLE_SCHEMA_ID = "https://numbermatch.dev/schemas/puzzle-1.schema.json"
BUNDLE_SCHEMA_ID = "https://numbermatch.dev/schemas/bundle-1.schema.json"
_BASE = "https://numbermatch.dev/schemas/"

# kind -> schema file name; each file is also reachable by its file name relative to the
# other's $id, which is how the bundle schema refers to the puzzle definitions (editors that
# resolve `$ref`s against the file path find the sibling file the same way).
FILES = {"puzzle": "puzzle.schema.json", "bundle": "bundle.schema.json", "curves": "curve.schema.json"}
KINDS = tuple(FILES)


class SchemaNotFoundError(NumberMatchError):
    """The schema files are missing from this installation."""


def schema_dir() -> Path:
    """The folder holding the schema files (top-level `schemas/` of the repository)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "schemas", here / "schema_files"):
        if (candidate / FILES["puzzle"]).is_file():
            return candidate
    raise SchemaNotFoundError(
        f"schema files not found next to the package (looked in {here.parent / 'schemas'}); "
        "reinstall numbermatch from its repository"
    )


def schema_path(kind: str) -> Path:
    """Path of the schema file for `kind` (`puzzle`, `bundle` or `curves`)."""
    return schema_dir() / FILES[kind]


@lru_cache(maxsize=None)
def load_schema(kind: str) -> dict[str, Any]:
    """The parsed schema for `kind`; read once per process."""
    try:
        return json.loads(schema_path(kind).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SchemaNotFoundError(f"cannot read the {kind} schema: {exc}") from None


@lru_cache(maxsize=None)
def registry() -> Registry:
    """All schemas, under their `$id`s and their file names; no retrieval from the network."""
    resources = []
    for kind, name in FILES.items():
        resource = Resource.from_contents(load_schema(kind), default_specification=DRAFT202012)
        resources.append((resource.id() or _BASE + name, resource))
        resources.append((_BASE + name, resource))
    return Registry().with_resources(resources).crawl()


def inlined(kind: str) -> dict[str, Any]:
    """The schema for `kind` with every `$ref` replaced by what it points to.

    Same meaning (the schemas are not recursive), but validation no longer resolves a reference
    at each use, which is most of jsonschema's time on a large bundle.
    """
    resolver = registry().resolver(base_uri=load_schema(kind)["$id"])

    def walk(node: Any, resolver: Any, depth: int) -> Any:
        if depth > 50:
            raise SchemaNotFoundError(f"the {kind} schema refers to itself; it cannot be inlined")
        if isinstance(node, list):
            return [walk(item, resolver, depth) for item in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            resolved = resolver.lookup(node["$ref"])
            target = walk(resolved.contents, resolved.resolver, depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **walk(siblings, resolver, depth)}
        return {k: (v if k in ("$defs", "const", "enum") else walk(v, resolver, depth))
                for k, v in node.items() if k != "$defs"}

    return walk(load_schema(kind), resolver, 0)


@lru_cache(maxsize=None)
def validator(kind: str) -> Draft202012Validator:
    """The compiled validator for `kind`, built once per process (no format checker)."""
    Draft202012Validator.check_schema(load_schema(kind))
    return Draft202012Validator(inlined(kind), registry=registry())


# Keywords whose meaning is the same in draft-07 (what fastjsonschema compiles) and 2020-12.
_FAST_KEYWORDS = frozenset({
    "$id", "$schema", "additionalProperties", "const", "description", "enum", "items", "maximum",
    "minItems", "minimum", "pattern", "properties", "required", "title", "type",
})


def _keywords(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            for child in (value.values() if key == "properties" and isinstance(value, dict) else (value,)):
                _keywords(child, found)
    elif isinstance(node, list):
        for item in node:
            _keywords(item, found)
    return found


@lru_cache(maxsize=None)
def fast_check(kind: str) -> Callable[[Any], bool] | None:
    """A compiled yes/no check of a document against the `kind` schema, ~20x faster than
    jsonschema; None when it cannot stand in exactly (fastjsonschema missing, or the schema uses
    a keyword whose meaning differs between drafts).

    It is only trusted to say "valid": anything it rejects goes to jsonschema, which finds and
    describes every violation (and is the judge where the two drafts could differ, e.g. 1.0 as
    an integer).
    """
    try:
        import fastjsonschema
    except ImportError:  # pragma: no cover - it is a dependency; degrade to jsonschema alone
        return None
    schema = inlined(kind)
    if not _keywords(schema, set()) <= _FAST_KEYWORDS:
        return None
    compiled = fastjsonschema.compile({**schema, "$schema": "http://json-schema.org/draft-07/schema#"})

    def check(data: Any) -> bool:
        try:
            compiled(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return check
