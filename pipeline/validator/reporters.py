"""How a report is printed: `text` for people, `json` for tools, `github` for workflow annotations."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pipeline.problems import Problem, ValidationReport

FORMATS = ("text", "json", "github")


def text_line(p: Problem) -> str:
    """`file:line:col: code: message [path]` (position parts omitted when unknown)."""
    return str(p)


def summary(report: ValidationReport) -> str:
    """One line: what was checked and what was found."""
    files = f"{report.files} file{'s' if report.files != 1 else ''}"
    if report.ok:
        return f"{files} checked: all valid"
    n = len(report.problems)
    bad = report.invalid_files
    return f"{files} checked: {n} problem{'s' if n != 1 else ''} in {bad} file{'s' if bad != 1 else ''}"


def render_text(report: ValidationReport) -> str:
    return "".join(text_line(p) + "\n" for p in report.problems)


def render_json(report: ValidationReport) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str, base: str | None = None) -> str:
    """The file as GitHub attaches annotations to it: relative to the repository root
    ($GITHUB_WORKSPACE when set, else the current folder); a file outside it as given."""
    root = Path(base or os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    try:
        return Path(file).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return file


def github_line(p: Problem, base: str | None = None) -> str:
    """A workflow command: `::error file=F,line=L,col=C,title=CODE::message`, F relative to
    the workspace (`workspace_path`)."""
    props = [f"file={_escape_property(workspace_path(p.file, base))}"]
    if p.line is not None:
        props.append(f"line={p.line}")
        if p.column is not None:
            props.append(f"col={p.column}")
    props.append(f"title={_escape_property(p.code)}")
    suffix = f" [{p.path}]" if p.path and p.path != "$" and p.path not in p.message else ""
    return f"::error {','.join(props)}::{_escape_data(p.code + ': ' + p.message + suffix)}"


def render_github(report: ValidationReport) -> str:
    return "".join(github_line(p) + "\n" for p in report.problems)


def render(report: ValidationReport, fmt: str) -> str:
    return {"text": render_text, "json": render_json, "github": render_github}[fmt](report)
