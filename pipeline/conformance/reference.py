"""The package's own engine behind the runner protocol: `python -m pipeline.conformance.reference`
(or `numbermatch conformance serve`) reads one JSON request a line and answers one line each.

`numbermatch conformance check --engine "python -m pipeline.conformance.reference"` must report
no divergence; a client team can also diff its engine's answers against this one by hand.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from pipeline.conformance.protocol import answer_line, dumps
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.limits import MAX_PROTOCOL_REQUEST_BYTES


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


def main() -> None:
    try:
        serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
