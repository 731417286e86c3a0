"""`conformance export`, `check`, `serve`: the suite a game client's engine is checked against.

The kit (pipeline/conformance) is imported inside each command: `--help` loads none of it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from pipeline.cli.base import app
from pipeline.cli.common import fail, writable_folder
from pipeline.cli.help_text import EXAMPLES
from pipeline.errors import NumberMatchError
from pipeline.limits import ENGINE_MEMORY_MB, ENGINE_TIMEOUT_S

conformance_app = typer.Typer(
    name="conformance",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="The conformance suite for game clients' engines: export it, check an engine, serve the reference.",
    epilog=f"Example: {EXAMPLES['conformance']}",
)
app.add_typer(conformance_app, name="conformance")

ENGINE_BROKEN = 3  # exit status when the engine under test broke the protocol


@conformance_app.callback()
def conformance_group() -> None:
    """The conformance suite for game clients' engines (docs/conformance.md): `export` writes it as
    JSON Lines, `check` runs an engine command against it, `serve` is the reference engine."""


@conformance_app.command(
    "export", epilog="Example: numbermatch conformance export --out conformance"
)
def export_cmd(
    out: Path = typer.Option(
        ..., "--out", help="Folder to write ruleset-1/ into (case files and suite.json)."
    ),
) -> None:
    """Write the suite: one JSON Lines file per kind of case under OUT/ruleset-1/, and suite.json
    (version, rules, files with their SHA-256). The same version writes the same bytes."""
    from pipeline.atomic import WriteRefused  # start-up time: the kit loads to export
    from pipeline.conformance import SUITE_VERSION
    from pipeline.conformance.export import SUITE_MANIFEST, export, folder_name

    writable_folder(out, "--out")
    try:
        written = export(out)
    except WriteRefused as exc:
        fail(str(exc))
    cases = sum(1 for p in written if p.name != SUITE_MANIFEST for _ in p.read_bytes().splitlines())
    typer.echo(
        f"{out / folder_name()}: suite {SUITE_VERSION}, {cases} cases in {len(written) - 1} files"
        f" and {SUITE_MANIFEST}"
    )


@conformance_app.command(
    "check",
    epilog='Example: numbermatch conformance check --engine "node examples/conformance-js/engine.mjs" --junit conformance.xml',
)
def check_cmd(
    engine: str = typer.Option(
        ...,
        "--engine",
        metavar="CMD",
        help="The engine under test: a command (split like a shell would, not run by one) that answers the protocol on stdin/stdout.",
    ),
    suite: Path | None = typer.Option(
        None,
        "--suite",
        help="An exported suite folder (ruleset-1/ or the folder holding it); default: the suite of this version, built in.",
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the random search."),
    boards: int = typer.Option(
        200,
        "--search-boards",
        min=0,
        max=100_000,
        help="Random positions the search plays after the suite (0: no search).",
    ),
    requests: int = typer.Option(
        20_000,
        "--search-requests",
        min=1,
        max=10_000_000,
        help="Requests the search may send before it stops.",
    ),
    seconds: float | None = typer.Option(
        None,
        "--search-seconds",
        min=0.0,
        help="Also stop the search after this many seconds (makes the report machine-dependent).",
    ),
    timeout: float = typer.Option(
        ENGINE_TIMEOUT_S,
        "--timeout",
        min=0.001,
        help="Seconds the engine may take to answer one request.",
    ),
    memory_mb: int = typer.Option(
        ENGINE_MEMORY_MB,
        "--memory-mb",
        min=0,
        help="The engine's address-space limit in MiB (0: none).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the report as one JSON document."),
    junit: Path | None = typer.Option(
        None, "--junit", metavar="FILE", help="Also write the report as JUnit XML to FILE."
    ),
) -> None:
    """Run the suite against an engine, report pass/fail per rule and the first divergence of each
    kind, then search random positions for more; each divergence is shrunk to a small board.
    Exit 0: conforms; 1: divergences; 3: the engine broke the protocol (crash, hang, garbage)."""
    from pipeline.atomic import write_guarded  # start-up time: the kit loads to check
    from pipeline.conformance import SUITE_RULESET, SUITE_VERSION, report
    from pipeline.conformance.cases import build
    from pipeline.conformance.check import check
    from pipeline.conformance.engine import CommandEngine, EngineError
    from pipeline.conformance.export import read_suite

    version, ruleset = SUITE_VERSION, SUITE_RULESET
    try:
        if suite is not None:
            version, ruleset, cases = read_suite(suite)
        else:
            cases = build()
    except NumberMatchError as exc:
        fail(str(exc))
    progress = None
    if sys.stderr.isatty():

        def progress(done: int, total: int) -> None:
            sys.stderr.write(f"\r\x1b[Kconformance check: {done}/{total} cases")
            sys.stderr.flush()

    try:
        with CommandEngine(engine, timeout=timeout, memory_mb=memory_mb) as under_test:
            result = check(
                under_test,
                cases,
                suite=version,
                ruleset=ruleset,
                seed=seed,
                boards=boards,
                max_requests=requests,
                seconds=seconds,
                progress=progress,
            )
    except EngineError as exc:
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
        if junit is not None:
            try:
                write_guarded(
                    junit, report.junit_error(version, engine, str(exc)), kinds=("other",)
                )
            except NumberMatchError as refused:
                fail(f"{exc}; and {refused}", ENGINE_BROKEN)
        fail(str(exc), ENGINE_BROKEN)
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
    if junit is not None:
        try:
            write_guarded(junit, report.junit(result), kinds=("other",))
        except NumberMatchError as exc:
            fail(str(exc))
    sys.stdout.write(report.json_text(result) if json_out else report.text(result))
    if not result.ok:
        raise typer.Exit(1)


@conformance_app.command(
    "serve",
    epilog='Example: echo \'{"op": "pairs", "board": "19"}\' | numbermatch conformance serve',
)
def serve_cmd(
    backend: str = typer.Option(
        "auto",
        "--backend",
        metavar="auto|compiled|pure",
        help="The engine's hot path: the compiled core, the pure Python, or whichever is in use.",
    ),
) -> None:
    """The reference engine behind the protocol: one JSON request a line on stdin, one answer a
    line on stdout, until stdin ends (also: python -m pipeline.conformance.reference)."""
    from pipeline.conformance.reference import (  # start-up time: the kit loads to serve
        backend_ruleset,
        serve,
    )

    try:
        ruleset = backend_ruleset(backend)
    except NumberMatchError as exc:
        fail(str(exc))
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer, ruleset)
    except BrokenPipeError:
        raise typer.Exit(141) from None
