"""`solve`, `rate`, `validate` and `render` without typer: what the commands do, called by the
typer commands (`solve_cmds`, `rate_cmds`, `validate_cmds`, `designer_cmds`) and by the start-up
fast path (`fast`) alike, so both run one code path.

Each function prints its output and returns the exit code. A refusal the command words itself
raises `Failed` (its line and exit code); any other NumberMatchError goes to the caller's
one-line handler (`one_line`), as in typer's group (`base`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pipeline.errors import NumberMatchError, clip, printable, shorten
from pipeline.limits import MAX_ADDS, check_adds

if TYPE_CHECKING:
    from pipeline.formats.source import Source
    from pipeline.rating.profile import RatingProfile
    from pipeline.rating.score import Rating
    from pipeline.validator import ValidationReport

_ADDS = re.compile(r"[0-9]{1,6}", re.ASCII)
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")  # what click's echo strips off a non-terminal


class Failed(Exception):
    """`numbermatch: error: MESSAGE` and exit `code`: a refusal the command words itself."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# How the command line phrases an error's `remedy` (what to change): its own option.
REMEDY_OPTIONS = {
    "with": "--with ID",
    "budget_nodes": "--budget-nodes N, 0 = no limit",
    "force": "--force replaces the files the job makes and keeps the others",
    "curve": "--curve FILE",
    "stock": "--no-stock builds the night without the stock",
}


def error_text(exc: NumberMatchError) -> str:
    """A library error as the command line says it: the message, then the option that helps."""
    option = REMEDY_OPTIONS.get(exc.remedy or "")
    return f"{exc} ({option})" if option else str(exc)


def writable_folder(folder: Path, option: str) -> None:
    """Refuse (`Failed`), before any work, an output folder that cannot be created or written
    (the nearest existing ancestor must be a writable folder)."""
    probe = folder
    while not probe.exists():
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    if not probe.is_dir():
        raise Failed(f"{option} {folder}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise Failed(f"{option} {folder}: {probe} is not writable")


def failure_line(message: str) -> str:
    """What `common.fail` prints: one line, its control characters written as escapes."""
    return f"numbermatch: error: {printable(message)}"


def one_line(exc: NumberMatchError) -> str:
    """A refusal no command turned into its own line, as one line (cut when absurdly long)."""
    message = str(exc).replace("\n", " ")
    message = message if len(message) <= 300 else message[:280] + "... (cut)"
    return f"numbermatch: error: {message}"


def echo(text: str, err: bool = False) -> None:
    """What `typer.echo(text, err=err)` writes: the line, ANSI codes stripped off a
    non-terminal, flushed."""
    stream: TextIO = sys.stderr if err else sys.stdout
    out = text + "\n"
    if not stream.isatty():
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def emit_json(obj: Any) -> None:
    """One compact JSON document on its own line."""
    sys.stdout.write(json.dumps(obj, separators=(", ", ": ")) + "\n")


def load_source(text: str, search: Sequence[Path] | None = None) -> Source:
    """Resolve a SOURCE argument (`pipeline.formats.source`); a bad one is `Failed`."""
    from pipeline.formats.source import resolve  # start-up time: not for --help

    try:
        return resolve(text, search or ())
    except NumberMatchError as exc:
        raise Failed(str(exc)) from exc


def read_profile_option(path: Path | None) -> RatingProfile | None:
    """The rating profile `--profile FILE` names (read and checked like a level file), or None;
    `Failed` when it cannot be used."""
    if path is None:
        return None
    from pipeline.validator.profiles import read_profile  # start-up time: only with --profile

    try:
        return read_profile(path)
    except NumberMatchError as exc:
        raise Failed(str(exc)) from exc


def split_board_adds(line: str, default_adds: int | None = None) -> tuple[str, int]:
    """`BOARD ADDS` (ADDS optional when a default is given) from one stdin line."""
    parts = line.split()
    if not parts:
        if default_adds is None:
            raise ValueError("empty line: expected 'BOARD ADDS'")
        return "", default_adds
    if len(parts) == 1:
        if default_adds is None:
            raise ValueError(f"line {shorten(line)} has no adds count: expected 'BOARD ADDS'")
        return parts[0], default_adds
    if len(parts) > 2:
        raise ValueError(f"line {shorten(line)} has {len(parts)} fields: expected 'BOARD ADDS'")
    if not _ADDS.fullmatch(parts[1]):  # int() would take '٣', '1_0' and 4,000 digits
        raise ValueError(
            f"adds {shorten(parts[1])} is not a whole number 0-{MAX_ADDS} in ASCII digits"
        )
    adds = int(parts[1])
    check_adds(adds)
    return parts[0], adds


def board_adds_stream(handle: Callable[[str, bytes, int], dict[str, Any]]) -> int:
    """JSON Lines over `BOARD ADDS` stdin lines: `handle(text, cells, adds)` gives each line's
    object; a bad line gets `{"board", "line", "error"}` and the run goes on; exit code 1 at the
    end if any line was bad. Blank lines are skipped."""
    # start-up time: only for stdin
    from pipeline.cli.engine_run import stdin_lines
    from pipeline.engine.board import parse

    errors = 0
    for number, line in stdin_lines():
        if not line.strip():
            continue
        try:
            text, adds = split_board_adds(line)
            cells = parse(text)
            out = handle(text, cells, adds)
        except ValueError as exc:  # NumberMatchError is a ValueError
            errors += 1
            emit_json({"board": clip(line), "line": number, "error": str(exc)})
            continue
        emit_json({"board": text, "adds": adds, **out})
        sys.stdout.flush()
    return 1 if errors else 0


def _budget(nodes: int | None) -> int | None:
    """0 means no node limit."""
    return None if nodes == 0 else nodes


def solve(
    board: str,
    adds: int | None,
    budget_nodes: int | None,
    timeout: float | None,
    json_out: bool = False,
    search: Sequence[Path] | None = None,
) -> int:
    # start-up time: the solver loads to solve, not for validate
    from pipeline.engine.board import Board
    from pipeline.solver.search import SOLVED
    from pipeline.solver.search import solve as search_solve

    if board == "-":
        budget = _budget(budget_nodes)
        return board_adds_stream(
            lambda _t, cells, a: search_solve(
                cells, a, budget_nodes=budget, timeout=timeout
            ).to_json()
        )
    source = load_source(board, search)
    b = Board(source.cells)
    adds = source.adds_or(adds)
    try:
        result = search_solve(
            b, adds, ruleset=source.ruleset, budget_nodes=_budget(budget_nodes), timeout=timeout
        )
    except NumberMatchError as exc:
        raise Failed(str(exc)) from exc
    if json_out:
        emit_json(result.to_json())
        return 0
    echo(f"{b or '(empty board)'} with {adds} add{'s' if adds != 1 else ''}: {result.status}")
    echo(f"nodes: {result.nodes}, time: {result.seconds:.3f} s")
    if result.status == SOLVED:
        assert result.moves is not None
        echo(f"moves ({len(result.moves)}): " + (" ".join(map(str, result.moves)) or "(none)"))
    return 0


def rating_text(board: str, adds: int, r: Rating) -> str:
    m = r.metrics
    score = "no score" if r.score is None else f"score {r.score:.2f}"
    if r.min_adds is not None:
        min_adds = str(r.min_adds)
    elif r.score is None:
        min_adds = f"more than {adds} (cannot be won with {adds})"
    else:
        min_adds = "unknown (solver budget ran out)"
    lines = [
        f"{board or '(empty board)'} with {adds} add{'s' if adds != 1 else ''}: {r.tier} ({score})",
        f"  min adds            {min_adds}",
    ]
    for name, st in m["players"].items():
        lines.append(
            f"  {name:<19} wins {st['win_rate'] * 100:5.1f}% of {st['playouts']} games, {st['mean_moves']:.1f} moves on average"
        )
    if m["trap_density"] is not None:  # rating versions 1 and 2 measure traps
        lines += [
            f"  trap density        {m['trap_density']:.3f} of first pairs ({m['trap_unknown']} unknown)",
            f"  trap density, play  {m['trap_density_sampled']:.3f} of pairs along the way ({m['trap_unknown_sampled']} unknown)",
        ]
    lines += [
        f"  certificate length  {m['certificate_length'] if m['certificate_length'] is not None else 'none found'}",
        f"  mean branching      {m['mean_branching']:.2f} legal pairs per turn",
        f"  collapse openings   {m['collapse_openings']:.3f} of row collapses open a new pair",
    ]
    return "\n".join(lines)


def rate(
    board: str,
    adds: int | None,
    playouts: int,
    seed: int | None,
    json_out: bool = False,
    explain_out: bool = False,
    search: Sequence[Path] | None = None,
    profile_file: Path | None = None,
) -> int:
    # start-up time: the players and the solver load to rate, not for validate
    from pipeline.engine.board import Board
    from pipeline.rating import DEFAULT_SEED
    from pipeline.rating.explain import explain
    from pipeline.rating.profile import rated_under
    from pipeline.rating.score import rate as score_rate
    from pipeline.rating.tiers import RATING_VERSION
    from pipeline.rating.versions import stored_rating_seed

    profile = read_profile_option(profile_file)

    def rated(cells: object, a: int, seed: int = DEFAULT_SEED, **kw: object) -> Rating:
        return rated_under(score_rate(cells, a, playouts=playouts, seed=seed, **kw), profile)  # type: ignore[arg-type]

    def as_json(r: Rating) -> dict[str, Any]:
        out = r.to_json()
        if explain_out:
            out["explain"] = explain(r.to_dict()).to_dict()
        return out

    if board == "-":
        return board_adds_stream(
            lambda _t, cells, a: as_json(rated(cells, a, DEFAULT_SEED if seed is None else seed))
        )
    source = load_source(board, search)
    b = Board(source.cells)
    adds = source.adds_or(adds)
    if seed is None:  # a stored rating is reproduced: the seed it was played with
        seed = stored_rating_seed(source.puzzle, RATING_VERSION)
    try:
        rating = rated(b, adds, seed, solution=source.certificate(adds), ruleset=source.ruleset)
    except NumberMatchError as exc:
        raise Failed(str(exc)) from exc
    if json_out:
        emit_json({"board": str(b), "adds": adds, **as_json(rating)})
    else:
        echo(rating_text(str(b), adds, rating))
        if explain_out:
            echo(str(explain(rating.to_dict())))
    return 0


def validate(
    paths: Sequence[str],
    fmt: str = "text",
    deep: bool = False,
    profile_file: Path | None = None,
    against: Path | None = None,
) -> int:
    """Exit 0: all valid; 1: a file is invalid; 2: usage error."""
    from pipeline.validator import PathError, validate_paths  # start-up time: not for --help
    from pipeline.validator.profiles import read_profile
    from pipeline.validator.reporters import render, summary

    try:
        profile = None if profile_file is None else read_profile(profile_file)
    except NumberMatchError as exc:
        raise Failed(f"--profile: {exc}", 2) from exc
    try:
        if deep and sys.stderr.isatty():
            report = _deep_with_progress(paths, profile, against)
        else:
            report = validate_paths(paths, deep=deep, profile=profile, against=against)
    except PathError as exc:
        raise Failed(str(exc), 2) from exc
    sys.stdout.write(render(report, fmt))
    if fmt != "json":
        echo(summary(report), err=True)
    sys.stdout.flush()
    return 0 if report.ok else 1


def _deep_with_progress(
    paths: Sequence[str], profile: RatingProfile | None = None, against: Path | None = None
) -> ValidationReport:
    """`validate_paths(paths, deep=True)`, showing on the terminal how far the deep checks are."""
    from pipeline.validator import Validator, collect_files  # start-up time

    files = collect_files(paths)
    count = [0]

    def tick(name: str) -> None:
        count[0] += 1
        sys.stderr.write(
            f"\rdeep check: {count[0]} puzzle{'s' if count[0] != 1 else ''} re-solved and re-rated ({name})\x1b[K"
        )
        sys.stderr.flush()

    run = Validator(deep=True, on_deep=tick, profile=profile)
    for k, path in enumerate(files, 1):
        sys.stderr.write(f"\rdeep check: file {k} of {len(files)}: {path}\x1b[K")
        sys.stderr.flush()
        run.add_file(path)
    sys.stderr.write("\r\x1b[K")
    if against is not None:
        run.check_against(against)
    return run.report


def render(
    source: str,
    out: Path,
    next_move: bool = False,
    labels: bool = True,
    no_numbers: bool = False,
    adds: int | None = None,
    search: Sequence[Path] | None = None,
) -> int:
    """Draw a board as the game shows it, as an SVG (or PNG) picture (`numbermatch render`)."""
    from pipeline.atomic import write_guarded  # start-up time: not for --help
    from pipeline.jobs.picture import board_svg

    to_stdout = str(out) == "-"
    kind = out.suffix.lower().lstrip(".")
    if not to_stdout and kind not in ("svg", "png"):
        raise Failed(f"--out {out}: name an .svg or .png file (or - for standard output)")
    if no_numbers:
        echo("numbermatch: warning: --no-numbers is deprecated: use --no-labels", err=True)
        labels = False
    if not to_stdout:
        writable_folder(out.parent, "--out")
    src = load_source(source, search)
    highlight: tuple[int, ...] = ()
    note = ""
    if next_move and src.cells:
        highlight, note = _next_pair(src, src.adds_or(adds))
    if kind == "png" and not to_stdout:
        from pipeline.jobs.board_png import board_png  # start-up time: only for a PNG

        picture: str | bytes = board_png(src.cells, highlight=highlight, numbers=labels)
    else:
        picture = board_svg(src.cells, highlight=highlight, numbers=labels, title=src.label)
    if to_stdout:
        sys.stdout.write(str(picture))
        if note:  # stdout carries the picture alone
            echo(f"{src.label}{note}", err=True)
        return 0
    try:
        write_guarded(out, picture, kinds=(kind,))
    except NumberMatchError as exc:
        raise Failed(error_text(exc)) from exc
    echo(f"{out}: {src.label}" + note)
    return 0


def _next_pair(src: Source, adds: int) -> tuple[tuple[int, ...], str]:
    # start-up time: the search loads only with --next
    from pipeline.engine.moves import Move
    from pipeline.solver.search import SOLVED, solve

    moves = src.certificate(adds)
    if moves is None:
        result = solve(src.cells, adds, ruleset=src.ruleset)
        if result.status != SOLVED or not result.moves:
            return (), f" (no certificate: the solver says {result.status})"
        moves = tuple(str(m) for m in result.moves)
    first = Move.parse(moves[0])
    if first.is_add:
        return (), ", next move: + (add numbers)"
    assert first.first is not None and first.second is not None
    return (first.first, first.second), f", next move {first} highlighted"
