"""The package's own engine behind the runner protocol: `python -m pipeline.conformance.reference
[auto|compiled|pure]` (or `numbermatch conformance serve [--backend ...]`) reads one JSON
request a line and answers one line each.

`numbermatch conformance check --engine "python -m pipeline.conformance.reference"` must report
no divergence; a client team can also diff its engine's answers against this one by hand. The
backend is the engine's hot path (`pipeline.engine.backend`): `compiled` is the C core (refused
when it is not built), `pure` the Python it stands in for, `auto` whichever the engine uses.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any, BinaryIO

from pipeline.conformance.protocol import answer_line, dumps
from pipeline.engine import backend, rules
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.errors import NumberMatchError
from pipeline.limits import MAX_PROTOCOL_REQUEST_BYTES

BACKENDS = ("auto", "compiled", "pure")


def backend_ruleset(name: str = "auto") -> Ruleset:
    """Ruleset 1 on the named backend; NumberMatchError for `compiled` when it is not built."""
    if name == "auto":
        return DEFAULT
    fns: Any
    if name == "pure":
        fns = rules.PURE
    elif name == "compiled":
        if backend.core is None:
            raise NumberMatchError(f"the compiled core is not in use here: {backend.why_pure}")
        fns = backend.core
    else:
        raise NumberMatchError(f"unknown backend {name!r}: expected one of {', '.join(BACKENDS)}")
    return replace(
        DEFAULT,
        legal_pairs=fns.legal_pairs,
        has_legal_pair=fns.has_legal_pair,
        remove_pair=fns.remove_pair,
        add_numbers=fns.add_numbers,
        pair_order=fns.pairs_ordered,
    )


def serve(stdin: BinaryIO, stdout: BinaryIO, ruleset: Ruleset = DEFAULT) -> int:
    """Answer every request line until the input ends; returns the number answered."""
    answered = 0
    while True:
        line = stdin.readline(MAX_PROTOCOL_REQUEST_BYTES + 1)
        if not line:
            return answered
        if len(line) > MAX_PROTOCOL_REQUEST_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the long line
                line = stdin.readline(MAX_PROTOCOL_REQUEST_BYTES)
            out = dumps({"error": "bad-request", "message": "the request line is too long"})
        elif not line.strip():
            continue
        else:
            out = answer_line(line, ruleset)
        stdout.write(out.encode("ascii") + b"\n")
        stdout.flush()
        answered += 1


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        ruleset = backend_ruleset(args[0] if args else "auto")
    except NumberMatchError as exc:
        sys.stderr.write(f"pipeline.conformance.reference: error: {exc}\n")
        return 2
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer, ruleset)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
