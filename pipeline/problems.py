"""What the validator reports: a Problem per finding, a ValidationReport per run, and the codes.

Codes are stable: CI logs, editor integrations and tests match on them, so a code is never
reused for a different meaning. NM1xx: the file could not be read as YAML; NM2xx: the document
does not fit its schema; NM3xx: it fits but breaks the rules (notation, ruleset, ids,
certificate, rating); NM4xx: `--deep` re-ran the solver or the rating and they disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

CODES: dict[str, str] = {
    "NM100": "the validator failed on this file (an internal error: please report it)",
    # parse
    "NM101": "the file cannot be read",
    "NM102": "the file is not UTF-8 text",
    "NM103": "the file is empty: no YAML document",
    "NM104": "the file is too large",
    "NM105": "YAML syntax error",
    "NM106": "duplicate key in a mapping",
    "NM107": "nested too deeply, or too many nodes once aliases are expanded",
    "NM108": "more than one YAML document in the file",
    "NM109": "YAML construct not allowed in a level file (tags, merge keys, complex keys)",
    "NM110": "mapping key is not a string",
    "NM111": "number is not finite (.inf or .nan)",
    "NM112": "number written with more than 100 characters",
    # schema
    "NM201": "not a puzzle, bundle or curve document",
    "NM202": "unsupported schema_version",
    "NM203": "required field missing",
    "NM204": "unexpected field",
    "NM205": "wrong type",
    "NM206": "value not allowed (not one of the permitted values)",
    "NM207": "value does not match the required pattern",
    "NM208": "value out of range (too small, too large, too short, too long)",
    "NM209": "other schema violation",
    # semantics and solvability
    "NM301": "board notation is invalid",
    "NM302": "unknown ruleset",
    "NM303": "id does not match the puzzle's content",
    "NM304": "duplicate id",
    "NM305": "malformed move in the certificate",
    "NM306": "illegal move in the certificate",
    "NM307": "certificate uses more adds than the puzzle allows",
    "NM308": "certificate is incomplete: the board is not empty at its end",
    "NM309": "tier does not match the score",
    "NM310": "score does not match the stored metrics",
    "NM311": "min_adds is larger than adds, or than the adds the solution uses",
    "NM312": "levels or stages are not numbered 1..n in order",
    "NM313": "puzzle ruleset differs from the bundle's ruleset",
    "NM314": "certificate_length differs from the solution's length",
    "NM315": "a player's win_rate or mean_moves is not a whole count over its playouts",
    "NM316": "the certificate grows the board past the size limit",
    "NM317": "a rating profile (a profile file, or one a difficulty block embeds) does not hold together: weights, tiers or digest",
    "NM318": "the puzzle was rated under another rating profile than the one given with --profile",
    "NM320": "curve file does not hold together (tier name, dips, targets, curve names, job)",
    "NM321": "the puzzle or a relabelled copy of it is shipped twice, or shipped and still in stock",
    "NM322": "a bundle's Stage is scored on another scale than the bundle's (one rating profile, or none, per bundle)",
    # --deep
    "NM401": "the solver proves the puzzle unsolvable",
    "NM402": "re-rating gives a different tier",
    "NM403": "re-rating gives a different score",
    "NM404": "re-rating gives a different min_adds",
}


@dataclass(frozen=True)
class Problem:
    """One finding. `line` and `column` are 1-based (None when the file has no position for it);
    `path` is a JSON path into the document, e.g. `$.levels[0].stages[2].puzzle.board`."""

    file: str
    line: int | None
    column: int | None
    code: str
    message: str
    path: str = "$"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        """`file:line:col: code: message [path]` (position parts omitted when unknown): how
        `numbermatch validate` prints it, and how every tool quotes it."""
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        suffix = (
            f" [{self.path}]"
            if self.path and self.path != "$" and self.path not in self.message
            else ""
        )
        return f"{where}: {self.code}: {self.message}{suffix}"

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (self.line or 0, self.column or 0, self.code)


@dataclass
class ValidationReport:
    """Everything one run found: problems in file order, and how much was read."""

    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    documents: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def invalid_files(self) -> int:
        return len({p.file for p in self.problems})

    def first_problem(self) -> str:
        """The run's first problem in one line (see `first_problem`)."""
        return first_problem(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "files": self.files,
            "documents": self.documents,
            "invalid_files": self.invalid_files,
            "problems": [p.to_dict() for p in self.problems],
        }


def first_problem(problems: Sequence[Problem]) -> str:
    """How a tool states a failed validation in one line: the first problem as `validate` prints
    it, and how many more there are (`numbermatch validate FILE` lists them all)."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


def internal_error(file: str, exc: BaseException) -> Problem:
    """The problem record for a file the validator itself failed on (the run goes on)."""
    text = str(exc)
    text = text if len(text) <= 200 else text[:180] + "..."
    return Problem(
        file,
        None,
        None,
        "NM100",
        f"the validator failed on this file ({type(exc).__name__}: {text}); please report it",
        "$",
    )


def json_path(parts: Any) -> str:
    """`$.levels[0].stages[2]` from path parts (keys and indices)."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif isinstance(part, str) and part.isidentifier():
            out.append(f".{part}")
        else:
            out.append(f"[{str(part)!r}]")
    return "".join(out)
