"""Where the JSON Schemas live and how code loads them: `schemas/` at the top of the repository.

The schemas are the published contract for level files (editors read them too), so they stay
plain JSON files beside the package rather than Python data. They reference each other by
`$id` through a local `referencing` registry: nothing is ever fetched from the network.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.atomic import write_guarded
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_ADDS
from pipeline.rating.tiers import TIERS

if TYPE_CHECKING:  # jsonschema and referencing load only when a document fails the fast check
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

PUZZLE_SCHEMA_ID = "https://numbermatch.dev/schemas/puzzle-1.schema.json"
BUNDLE_SCHEMA_ID = "https://numbermatch.dev/schemas/bundle-1.schema.json"
_BASE = "https://numbermatch.dev/schemas/"

# kind -> schema file name; each file is also reachable by its file name relative to the
# other's $id, which is how the bundle schema refers to the puzzle definitions (editors that
# resolve `$ref`s against the file path find the sibling file the same way).
FILES = {
    "puzzle": "puzzle.schema.json",
    "bundle": "bundle.schema.json",
    "curves": "curve.schema.json",
    "rating-profile": "rating-profile.schema.json",
}
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


def schema_hint(kind: str, folder: str | os.PathLike[str]) -> str | None:
    """The `kind` schema's path relative to `folder` when the folder is inside the repository
    that holds the schemas (so editors find it from a file written there), else None."""
    try:
        schema = schema_path(kind).resolve()
    except NumberMatchError:
        return None
    root = schema.parent.parent
    target = Path(folder).resolve()
    if target != root and root not in target.parents:
        return None
    return Path(os.path.relpath(schema, target)).as_posix()


@cache
def load_schema(kind: str) -> dict[str, Any]:
    """The parsed schema for `kind`; read once per process."""
    try:
        schema: dict[str, Any] = json.loads(schema_path(kind).read_text(encoding="utf-8"))
        return schema
    except (OSError, ValueError) as exc:
        raise SchemaNotFoundError(f"cannot read the {kind} schema: {exc}") from exc


@cache
def registry() -> Registry:
    """All schemas, under their `$id`s and their file names; no retrieval from the network."""
    from referencing import (  # start-up time: only jsonschema's slow path needs it
        Registry,
        Resource,
    )
    from referencing.jsonschema import DRAFT202012

    resources = []
    for kind, name in FILES.items():
        resource = Resource.from_contents(load_schema(kind), default_specification=DRAFT202012)
        resources.append((resource.id() or _BASE + name, resource))
        resources.append((_BASE + name, resource))
    return Registry().with_resources(resources).crawl()


_KIND_OF_FILE = {name: kind for kind, name in FILES.items()}


def _lookup(ref: str, kind: str) -> tuple[Any, str]:
    """What `$ref` points to from the `kind` schema, and the kind of the file it is in. Our
    schemas refer only to `#/$defs/NAME` and `FILE.schema.json#/$defs/NAME` (a sibling file), so
    this is resolved here rather than by `referencing` (whose import was most of `validate`'s
    start-up); anything else is refused, so a new kind of reference cannot be misread."""
    file, _, pointer = ref.partition("#")
    target = _KIND_OF_FILE.get(file) if file else kind
    parts = pointer.split("/")
    if target is None or len(parts) != 3 or parts[:2] != ["", "$defs"]:
        raise SchemaNotFoundError(
            f"the {kind} schema has a $ref this loader does not resolve: {ref!r}"
        )
    try:
        return load_schema(target)["$defs"][parts[2]], target
    except KeyError:
        raise SchemaNotFoundError(
            f"the {kind} schema refers to {ref!r}, which does not exist"
        ) from None


def inlined(kind: str) -> dict[str, Any]:
    """The schema for `kind` with every `$ref` replaced by what it points to.

    Same meaning (the schemas are not recursive), but validation no longer resolves a reference
    at each use, which is most of jsonschema's time on a large bundle.
    """

    def walk(node: Any, where: str, depth: int) -> Any:
        if depth > 50:
            raise SchemaNotFoundError(f"the {kind} schema refers to itself; it cannot be inlined")
        if isinstance(node, list):
            return [walk(item, where, depth) for item in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            contents, there = _lookup(node["$ref"], where)
            target = walk(contents, there, depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **walk(siblings, where, depth)}
        return {
            k: (v if k in ("$defs", "const", "enum") else walk(v, where, depth))
            for k, v in node.items()
            if k != "$defs"
        }

    schema: dict[str, Any] = walk(load_schema(kind), kind, 0)
    return schema


def _strict_integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _full_pattern(
    validator: Any, pattern: str, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError  # start-up time (loaded with the validator)

    if isinstance(instance, str) and not python_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def python_regex(pattern: str) -> re.Pattern[str]:
    """An ECMA-262 pattern as Python reads it: `$` ends the text (Python's also matches before a
    final newline, which let a move `1,3-2,4` with a newline after it through), `\\d` is ASCII."""
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern), re.ASCII)


@cache
def _strict() -> Any:
    """Level files mean what they say: an integer field takes integers only (JSON Schema would
    take 2.0), and a pattern must match the whole text (see `python_regex`)."""
    from jsonschema import (  # start-up time: valid files never need it
        Draft202012Validator,
        validators,
    )

    return validators.extend(
        Draft202012Validator,
        validators={"pattern": _full_pattern},
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer),
    )


@cache
def validator(kind: str) -> Draft202012Validator:
    """The compiled validator for `kind`, built once per process (no format checker)."""
    strict = _strict()
    strict.check_schema(load_schema(kind))
    return strict(inlined(kind), registry=registry())


# Keywords whose meaning is the same in draft-07 (what fastjsonschema compiles) and 2020-12.
_FAST_KEYWORDS = frozenset(
    {
        "$id",
        "$schema",
        "additionalProperties",
        "anyOf",
        "const",
        "description",
        "enum",
        "items",
        "maximum",
        "minItems",
        "minimum",
        "pattern",
        "properties",
        "required",
        "title",
        "type",
    }
)


def _keywords(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            for child in (
                value.values() if key == "properties" and isinstance(value, dict) else (value,)
            ):
                _keywords(child, found)
    elif isinstance(node, list):
        for item in node:
            _keywords(item, found)
    return found


_LENIENT = re.compile(r" and not \(isinstance\((\w+), float\) and \1\.is_integer\(\)\)")
# One generated `raise` line: its message and its dump of the schema rule are most of the code.
_RAISE = re.compile(r"^(\s*)raise JsonSchemaValueException\(.*\)$", re.MULTILINE)


def schema_digest(schema: Any) -> str:
    """What a generated check was made from (`schema_checks.CHECKS`): the inlined schema's hash."""
    import hashlib  # start-up time: with the check only

    text = json.dumps(schema, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_code(kind: str) -> tuple[str, str, dict[str, Any]] | None:
    """(function name, source, global state) of the yes/no check fastjsonschema generates for the
    `kind` schema; None when it cannot stand in exactly (a keyword whose meaning differs between
    drafts). Each raise in the source is cut to a constant message (see `fast_check`)."""
    import fastjsonschema  # start-up time: a file is written (generate, nightly) without this check

    schema = inlined(kind)
    if not _keywords(schema, set()) <= _FAST_KEYWORDS:
        return None
    # draft-07 takes a whole-number float as an integer; level files do not (see `_Strict`), so
    # the generated code's exception for such floats is cut out before it is compiled
    try:
        resolver, generator = fastjsonschema._factory(
            {**schema, "$schema": "http://json-schema.org/draft-07/schema#"}, {}, {}
        )
        code, changed = _LENIENT.subn("", generator.func_code)
        state = generator.global_state
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - another fastjsonschema
        return None
    if '"integer"' in json.dumps(schema) and not changed:  # pragma: no cover - code we do not know
        return None
    # Only "valid or not" is read from the check, so each raise is cut to a constant message:
    # the same control flow, a quarter of the code, several times cheaper to compile (start-up
    # time of `validate`). Should a raise ever span lines, the code is kept as generated.
    short = _RAISE.sub(r'\1raise JsonSchemaValueException("invalid")', code)
    try:
        compile(short, f"<fastjsonschema {kind}>", "exec")
    except SyntaxError:  # pragma: no cover - code we do not know
        short = code
    return resolver.get_scope_name(), short, state


@cache
def fast_check(kind: str) -> Callable[[Any], bool] | None:
    """A compiled yes/no check of a document against the `kind` schema, much faster than
    jsonschema (`make bench validator`); None when it cannot stand in exactly (the schema uses a
    keyword whose meaning differs between drafts).

    It is only trusted to say "valid": anything it rejects goes to jsonschema, which finds and
    describes every violation (and is the judge where the two drafts could differ, e.g. 1.0 as
    an integer).

    The check is the code `make schemas` generated ahead into `pipeline.schema_checks` while the
    schema is the one it was generated from (the digest); else (a schema edited, not yet
    regenerated) it is generated and compiled here.
    """
    from pipeline import schema_checks  # start-up time: generated ahead, no fastjsonschema

    ahead = schema_checks.CHECKS.get(kind)
    if ahead is not None and ahead[0] == schema_digest(inlined(kind)):
        if ahead[1] is None:
            return None
        compiled = getattr(schema_checks, ahead[1])
        errors: Any = schema_checks.JsonSchemaValueException
    else:
        import fastjsonschema  # start-up time: only for a schema changed since `make schemas`

        made = check_code(kind)
        if made is None:
            return None
        name, code, state = made
        exec(compile(code, f"<fastjsonschema {kind}>", "exec"), state)
        compiled = state[name]
        errors = fastjsonschema.JsonSchemaException

    def check(data: Any) -> bool:
        try:
            compiled(data)
        except errors:
            return False
        return True

    return check


_NONE_TYPE = "NoneType = type(None)\n"
# what the generated code finds around it (what the module text defines)
_STATE = {"Decimal", "re", "REGEX_PATTERNS", "custom_formats"} | {
    "JsonSchemaValueException",
    "JsonSchemaValuesException",
}


def checks_module_text() -> str:
    """The text of `pipeline/schema_checks.py`: every kind's check (`check_code`), written by
    `make schemas`."""
    patterns: dict[str, str] = {}
    digests: dict[str, tuple[str, str | None]] = {}
    bodies: list[str] = []
    for kind in KINDS:
        made = check_code(kind)
        digest = schema_digest(inlined(kind))
        if made is None:
            digests[kind] = (digest, None)
            continue
        name, code, state = made
        if set(state) - _STATE:  # pragma: no cover - code we do not know
            raise SchemaNotFoundError(f"the {kind} check needs {sorted(state)}")
        for key, regex in state["REGEX_PATTERNS"].items():
            if regex.flags != re.UNICODE or patterns.get(key, regex.pattern) != regex.pattern:
                raise SchemaNotFoundError(f"the {kind} check's pattern {key!r} is not plain")
            patterns[key] = regex.pattern
        if any(name == other for other, _ in digests.values()):  # pragma: no cover
            raise SchemaNotFoundError(f"two checks named {name}")
        digests[kind] = (digest, name)
        bodies.append(f"# --- {kind}\n\n" + code.removeprefix(_NONE_TYPE).strip("\n") + "\n")
    lines = [
        "# mypy: ignore-errors",
        '"""The schemas\' yes/no checks (`pipeline.schemas.fast_check`): the code fastjsonschema',
        "generates for each kind, generated by `make schemas` (`python -m pipeline.schemas`), not edited",
        "by hand. `validate` neither imports fastjsonschema nor generates and compiles the code at",
        "start-up; a check is used only while its schema's digest is the one in CHECKS.",
        '"""',
        "",
        "import re",
        "from decimal import Decimal  # noqa: F401 (the generated code may use it)",
        "",
        "",
        "class JsonSchemaValueException(ValueError):",
        "    def __init__(self, message, value=None, name=None, definition=None, rule=None):",
        "        super().__init__(message)",
        "",
        "",
        "JsonSchemaValuesException = JsonSchemaValueException",
        "custom_formats = {}",
        "NoneType = type(None)",
        "REGEX_PATTERNS = {",
        *(f"    {key!r}: re.compile({value!r})," for key, value in patterns.items()),
        "}",
        "# kind -> (digest of the inlined schema, the check's function; None: no fast check)",
        "CHECKS = {",
        *(f"    {kind!r}: {entry!r}," for kind, entry in digests.items()),
        "}",
        "",
    ]
    return "\n".join(lines) + "\n\n" + "\n\n".join(bodies)


# --- text generated from code ------------------------------------------------------------


def tier_description() -> str:
    """The puzzle schema's description of `tier`, from the one tier table (`rating.tiers.TIERS`)."""
    bounds = [f"{name} below {high:g}" for name, _, high in TIERS[:-1]]
    last, low, _ = TIERS[-1]
    return (
        "Difficulty tier, a pure function of the score by the table in pipeline/rating/tiers.py ("
        + ", ".join(bounds + [f"{last} from {low:g}"])
        + "), or by the rating profile's own table when the block has a `profile`."
    )


def synced_puzzle_schema() -> str:
    """The puzzle schema file's text with every part generated from code brought up to date: the
    tier boundaries (`rating.tiers`) and the adds limit (`limits`)."""
    schema = json.loads(schema_path("puzzle").read_text(encoding="utf-8"))
    schema["$defs"]["tier"]["description"] = tier_description()

    schema["$defs"]["adds"]["maximum"] = MAX_ADDS  # each add can double the board (docs/limits.md)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


CHECKS_PATH = Path(__file__).with_name("schema_checks.py")


def main() -> None:
    """`python -m pipeline.schemas` (`make schemas`): rewrite the generated parts of the schemas,
    then the checks generated from them (`pipeline/schema_checks.py`)."""
    path = schema_path("puzzle")
    text = synced_puzzle_schema()
    if path.read_text(encoding="utf-8") != text:
        write_guarded(path, text, kinds=("json-schema",))
        print(f"updated {path}")
    checks = checks_module_text()
    if CHECKS_PATH.read_text(encoding="utf-8") != checks:
        write_guarded(CHECKS_PATH, checks, force=True)
        print(f"updated {CHECKS_PATH}")


if __name__ == "__main__":
    main()
