"""The suite as files: `ruleset-N/` with one JSON Lines file per kind of case and `suite.json`.

`suite.json` names the suite's version, the ruleset, the protocol's ops and refusal codes, the
rules of docs/rules.md by id, and each case file with its number of cases and SHA-256, so a
client can tell a changed suite from its own bug. Every line of a case file is one case, valid
against `schemas/conformance-case.schema.json`. Exporting the same version twice writes the same
bytes; each file is written atomically. `read_suite` reads an exported suite back (checked
line by line: a broken file is one error naming the file, the line and what is wrong).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from pipeline.atomic import write_guarded
from pipeline.conformance import SUITE_RULESET, SUITE_VERSION
from pipeline.conformance.cases import KINDS, Case, build, by_kind
from pipeline.conformance.protocol import ERRORS, OPS, dumps
from pipeline.conformance.rule_ids import RULES
from pipeline.errors import NumberMatchError, clip
from pipeline.limits import MAX_SUITE_FILE_BYTES
from pipeline.schemas import schema_dir

SCHEMA_FILE = "conformance-case.schema.json"
SUITE_MANIFEST = "suite.json"


class SuiteError(NumberMatchError):
    """An exported suite that cannot be read back."""


def folder_name(ruleset: int = SUITE_RULESET) -> str:
    return f"ruleset-{ruleset}"


def manifest(files: dict[str, bytes]) -> dict[str, Any]:
    return {
        "suite": SUITE_VERSION,
        "ruleset": SUITE_RULESET,
        "schema": SCHEMA_FILE,
        "protocol": {"ops": list(OPS), "errors": ERRORS},
        "rules": RULES,
        "files": [
            {
                "file": name,
                "cases": data.count(b"\n"),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
            for name, data in files.items()
        ],
    }


def render(cases: list[Case] | None = None) -> dict[str, bytes]:
    """File name (under ruleset-N/) -> bytes, the manifest last."""
    groups = by_kind(build() if cases is None else cases)
    files = {
        f"{kind}.jsonl": "".join(dumps(c.to_json()) + "\n" for c in groups[kind]).encode("ascii")
        for kind in KINDS
    }
    files[SUITE_MANIFEST] = (
        json.dumps(manifest(files), indent=2, ensure_ascii=True) + "\n"
    ).encode()
    return files


def export(out: Path) -> list[Path]:
    """Write the suite under out/ruleset-N/; returns the files written."""
    folder = out / folder_name()
    return [
        write_guarded(folder / name, data, kinds=("conformance-suite",))
        for name, data in render().items()
    ]


@cache
def case_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schema_dir() / SCHEMA_FILE).read_text(encoding="utf-8"))
    return schema


def read_suite(folder: Path) -> tuple[str, int, list[Case]]:
    """(suite version, ruleset, cases) of an exported suite: `folder` is ruleset-N/ or holds it."""
    if (
        not (folder / SUITE_MANIFEST).is_file()
        and (folder / folder_name() / SUITE_MANIFEST).is_file()
    ):
        folder = folder / folder_name()
    path = folder / SUITE_MANIFEST
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
        version, ruleset, files = str(head["suite"]), int(head["ruleset"]), head["files"]
        names = [str(f["file"]) for f in files]
    except OSError as exc:
        raise SuiteError(f"{clip(str(path))}: {exc.strerror or exc}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise SuiteError(f"{clip(str(path))}: not a suite manifest ({clip(str(exc))})") from exc
    validator = Draft202012Validator(case_schema())
    cases: list[Case] = []
    for name in names:
        if "/" in name or name.startswith("."):
            raise SuiteError(f"{clip(str(path))}: file {clip(name)!r} is not a name in the folder")
        case_file = folder / name
        try:
            if case_file.stat().st_size > MAX_SUITE_FILE_BYTES:
                raise SuiteError(
                    f"{clip(str(case_file))}: larger than {MAX_SUITE_FILE_BYTES:,} bytes"
                )
            lines = case_file.read_bytes().decode("utf-8").splitlines()
        except OSError as exc:
            raise SuiteError(f"{clip(str(case_file))}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError:
            raise SuiteError(f"{clip(str(case_file))}: not UTF-8") from None
        for number, line in enumerate(lines, 1):
            where = f"{clip(str(case_file))}:{number}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SuiteError(f"{where}: not JSON ({exc.msg})") from exc
            except RecursionError as exc:
                raise SuiteError(f"{where}: nested too deep to be a case") from exc
            error = next(iter(validator.iter_errors(obj)), None)
            if error is not None:
                at = "".join(f"[{p!r}]" for p in error.absolute_path) or "(the case)"
                raise SuiteError(f"{where}: {at}: {clip(error.message)}")
            cases.append(Case.from_json(obj))
    return version, ruleset, cases
