"""The bundle document: Levels of Stages with their Puzzles inline, as one YAML file.

    # yaml-language-server: $schema=<relative path>/schemas/bundle.schema.json
    schema_version: 1
    kind: bundle
    id: nightly-2026-11-29
    ruleset: 1
    first_level: 51          # only when the bundle continues the game's Level sequence
    generator: {name: numbermatch, version: 0.1.0, seed: 20261129, params: {...}}
    levels:
    - level: 1
      stages:
      - stage: 1
        target_score: 10.0
        puzzle: {id, ruleset, board, adds, solution, difficulty}

`level` numbers are the game's: a bundle that continues at Level 51 numbers its Levels 51, 52,
... and records `first_level: 51`; without `first_level` a bundle starts at Level 1 (so bundles
from before it existed, and every first night, read the same).

Keys are always in this order and the text depends only on its inputs, so the same Puzzles,
curve and seed give a byte-identical file and diffs between nights stay readable.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline import __version__
from pipeline.atomic import write_guarded
from pipeline.engine.rulesets import DEFAULT
from pipeline.errors import shorten
from pipeline.formats.puzzle import BUNDLE_KIND, SCHEMA_VERSION, dump_yaml
from pipeline.formats.scale import BUNDLE_KEY, check_same, convert_target
from pipeline.jobs.assembler import Assembly
from pipeline.schemas import load_schema, python_regex, schema_hint


def bundle_id_problem(text: str) -> str | None:
    """Why `text` cannot be a bundle id (the schema's pattern), or None when it can."""
    spec = load_schema("bundle")["properties"]["id"]
    if python_regex(spec["pattern"]).search(text):
        return None
    return (
        f"{shorten(text)} is not a bundle id: 1-128 letters, digits, '.', '_' or '-', "
        "starting with a letter or digit (e.g. nightly-2026-11-29)"
    )


def default_bundle_id(assembly: Assembly) -> str:
    """A content-derived id for a bundle that was not given one: curve, shape and Puzzle ids."""
    ids = "|".join(p.puzzle.id for p in assembly.placements)
    shape = f"{assembly.curve}|{len(assembly.levels)}x{len(assembly.levels[0])}"
    return f"bundle-{hashlib.sha256(f'{shape}|{ids}'.encode()).hexdigest()[:12]}"


def bundle_document(
    assembly: Assembly,
    *,
    bundle_id: str,
    seed: int,
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """The bundle mapping, keys in their fixed order; `params` are recorded as given. Puzzles
    scored under a rating profile make a bundle on that scale (`score_profile`, the curve's
    targets moved to it); puzzles on two scales are refused (ScaleError, one line)."""
    placements = assembly.placements
    ruleset = placements[0].puzzle.ruleset if placements else DEFAULT.number
    first = assembly.first_level
    scale = check_same((p.puzzle.id, p.puzzle.difficulty) for p in placements)

    def target(placement: Any) -> float:
        version = int(placement.puzzle.difficulty.get("version", 1))
        return convert_target(float(placement.target.score), None, scale, version)

    return {
        "schema_version": SCHEMA_VERSION,
        "kind": BUNDLE_KIND,
        "id": bundle_id,
        "ruleset": ruleset,
        **({"first_level": first} if first != 1 else {}),
        "generator": {
            "name": "numbermatch",
            "version": __version__,
            "seed": int(seed),
            "params": _plain(params),
        },
        **({BUNDLE_KEY: scale.block()} if scale is not None else {}),
        "levels": [
            {
                "level": n,
                "stages": [
                    {
                        "stage": placement.target.stage + 1,
                        "target_score": target(placement),
                        "puzzle": placement.puzzle.core_dict(),
                    }
                    for placement in level
                ],
            }
            for n, level in enumerate(assembly.levels, first)
        ],
    }


def bundle_text(doc: Mapping[str, Any], *, hint_for: str | os.PathLike[str] | None = None) -> str:
    """The YAML text of a bundle; with `hint_for`, the schema modeline as seen from that path."""
    return dump_yaml(
        dict(doc), schema_hint("bundle", Path(hint_for).parent) if hint_for is not None else None
    )


def write_bundle(
    path: str | os.PathLike[str],
    doc: Mapping[str, Any],
    *,
    hint_for: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the bundle atomically; the modeline is computed for `hint_for` (default: `path`),
    which lets a bundle staged in a temp folder carry the hint of its final place."""
    return write_guarded(
        path, bundle_text(doc, hint_for=path if hint_for is None else hint_for), kinds=("bundle",)
    )


def _plain(value: Any) -> Any:
    """Params as plain YAML data (mappings keep their order, tuples become lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
