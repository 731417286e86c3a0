"""The JSON Schemas (`pipeline.schemas`, schemas/) and the validator's schema layer: valid drafts
with a description for every field, generated parts in sync with the tier table, patterns that
match the whole text and say what they want, and a fast check that never passes what jsonschema
rejects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import schemas
from pipeline.rating.tiers import TIERS
from pipeline.validator import validate_texts
from tests.helpers import codes, edited

VALID = Path(__file__).parent / "fixtures" / "validator" / "valid"
PUZZLE = (VALID / "puzzle.yaml").read_text(encoding="utf-8")
BUNDLE = (VALID / "bundle.yaml").read_text(encoding="utf-8")


def test_schemas_are_valid_draft_2020_12_with_ids_and_descriptions() -> None:
    from jsonschema import Draft202012Validator

    for kind in schemas.KINDS:
        schema = schemas.load_schema(kind)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"https://numbermatch.dev/schemas/{kind}-1.schema.json"

        def walk(node: object, where: str, kind: str = kind) -> None:
            if isinstance(node, dict):
                for name, sub in node.get("properties", {}).items():
                    assert "description" in sub or "$ref" in sub, (
                        f"{kind}: {where}.{name} has no description"
                    )
                for name, sub in node.items():
                    walk(sub, f"{where}.{name}")
            elif isinstance(node, list):
                for sub in node:
                    walk(sub, where)

        walk(schema, "$")
        for name, sub in schema.get("$defs", {}).items():
            assert "description" in sub, f"{kind}: $defs.{name} has no description"


def test_bundle_schema_uses_the_puzzle_definitions() -> None:
    text = json.dumps(schemas.load_schema("bundle"))
    assert "puzzle.schema.json#/$defs/puzzleCore" in text and '"board"' not in text


# --- the fast schema check only ever stands in for jsonschema on documents that are valid -----

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 100)
    | st.floats(-1, 101, allow_nan=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, prefix + (i,))


def _replaced(node, path, value):
    if not path:
        return value
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[path[0]] = _replaced(node[path[0]], path[1:], value)
    return copy


def _inlined_by_referencing(kind: str) -> object:
    """The naive reference: every $ref looked up through the `referencing` registry."""

    def walk(node: object, resolver: object) -> object:
        if isinstance(node, list):
            return [walk(item, resolver) for item in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            resolved = resolver.lookup(node["$ref"])  # type: ignore[attr-defined]
            target = walk(resolved.contents, resolved.resolver)
            return {**target, **walk({k: v for k, v in node.items() if k != "$ref"}, resolver)}  # type: ignore[dict-item]
        return {
            k: (v if k in ("$defs", "const", "enum") else walk(v, resolver))
            for k, v in node.items()
            if k != "$defs"
        }

    return walk(
        schemas.load_schema(kind),
        schemas.registry().resolver(base_uri=schemas.load_schema(kind)["$id"]),
    )


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_inlined_schemas_resolve_every_ref_as_referencing_does(kind: str) -> None:
    """`schemas.inlined` resolves our two forms of $ref itself (start-up time: no `referencing`)."""
    assert schemas.inlined(kind) == _inlined_by_referencing(kind)
    assert "$ref" not in json.dumps(schemas.inlined(kind))
    with pytest.raises(schemas.SchemaNotFoundError, match="does not resolve"):
        schemas._lookup("https://example.com/other.json#/$defs/x", kind)


@pytest.mark.parametrize("kind", schemas.KINDS)
def test_the_fast_check_compiles_with_short_raises(kind: str) -> None:
    """Start-up time of `validate`: every raise fastjsonschema generates is one line, so the fast
    check replaces each message (a dump of the schema rule) by a constant before compiling."""
    import fastjsonschema

    generated = fastjsonschema._factory(
        {**schemas.inlined(kind), "$schema": "http://json-schema.org/draft-07/schema#"}, {}, {}
    )[1].func_code
    raises = [line for line in generated.splitlines() if "raise JsonSchemaValueException(" in line]
    assert raises and all(schemas._RAISE.fullmatch(line) for line in raises)
    short = schemas._RAISE.sub(r'\1raise JsonSchemaValueException("invalid")', generated)
    assert len(short) < len(generated) / 2
    compile(short, "<short>", "exec")


def test_the_checks_generated_ahead_are_what_make_schemas_writes_now() -> None:
    """`pipeline/schema_checks.py` (the checks `validate` uses without fastjsonschema) is current:
    a schema or fastjsonschema changed without `make schemas` fails here."""
    from pipeline import schema_checks

    assert schemas.checks_module_text() == Path(schema_checks.__file__).read_text(
        encoding="utf-8"
    ), "run `make schemas`"


@pytest.mark.parametrize("kind, name", [("puzzle", "puzzle.yaml"), ("bundle", "bundle.yaml")])
def test_a_schema_changed_since_make_schemas_gets_its_check_made_here(
    kind: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline import schema_checks

    doc = yaml.safe_load((VALID / name).read_text())
    bad = {**doc, "kind": 5}
    ahead = schemas.fast_check(kind)
    assert ahead is not None and ahead(doc) and not ahead(bad)
    stale = {k: ("0" * 64, fn) for k, (_, fn) in schema_checks.CHECKS.items()}
    monkeypatch.setattr(schema_checks, "CHECKS", stale)
    schemas.fast_check.cache_clear()
    try:
        made = schemas.fast_check(kind)
        assert made is not None and made is not ahead
        assert made(doc) and not made(bad)
        assert made.__closure__ is not None  # the code made here, not the one generated ahead
        assert schema_checks.JsonSchemaValueException not in {
            c.cell_contents for c in made.__closure__
        }
    finally:
        schemas.fast_check.cache_clear()


@pytest.mark.parametrize("kind, name", [("puzzle", "puzzle.yaml"), ("bundle", "bundle.yaml")])
def test_fast_schema_check_is_in_use(kind: str, name: str) -> None:
    fast = schemas.fast_check(kind)
    assert fast is not None
    assert fast(yaml.safe_load((VALID / name).read_text()))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fast_schema_check_never_passes_what_jsonschema_rejects(data) -> None:
    kind, name = data.draw(st.sampled_from([("puzzle", "puzzle.yaml"), ("bundle", "bundle.yaml")]))
    doc = yaml.safe_load((VALID / name).read_text())
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(_paths(doc))))
        doc = _replaced(doc, path, data.draw(json_values))
    if schemas.fast_check(kind)(doc):
        assert list(schemas.validator(kind).iter_errors(doc)) == []


def test_the_pattern_hint_is_the_whole_description() -> None:
    problems = validate_texts(
        [("b.yaml", edited(BUNDLE, "id: fixture-bundle-1", "id: '-bad'"))]
    ).problems
    assert any(p.code == "NM207" and "e.g. `nightly-2026-11-29`" in p.message for p in problems)


def test_the_schema_describes_the_tier_table() -> None:
    described = schemas.load_schema("puzzle")["$defs"]["tier"]["description"]
    assert described == schemas.tier_description(), "run `make schemas`"
    for name, low, high in TIERS:
        assert f"{name} below {high:g}" in described or f"{name} from {low:g}" in described
    assert schemas.synced_puzzle_schema() == schemas.schema_path("puzzle").read_text(
        encoding="utf-8"
    )


def test_patterns_match_the_whole_text() -> None:
    doc = yaml.safe_load(PUZZLE)
    doc["solution"][0] = "0,4-1,4\n"
    assert "NM207" in codes(yaml.safe_dump(doc, sort_keys=False)) or "NM305" in codes(
        yaml.safe_dump(doc, sort_keys=False)
    )
    bundle = yaml.safe_load(BUNDLE)
    bundle["id"] = "x\n"
    assert "NM207" in codes(yaml.safe_dump(bundle, sort_keys=False))
