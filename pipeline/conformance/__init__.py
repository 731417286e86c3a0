"""The conformance kit: a versioned suite of cases any engine of the game can be checked against.

A game client's engine (C#, Kotlin, Swift, TypeScript) must play the rules the pipeline validated
puzzles under, or a certified Stage can be unwinnable in the game. The kit exports the suite as
plain JSON Lines files (`cases`, `export`), speaks a small line protocol with an engine under
test (`protocol`, `engine`), and checks it: the suite first, then a seeded differential search
over random boards, each divergence shrunk to a small board (`check`, `shrink`, `report`).
`reference` is the package's own engine behind the protocol. docs/conformance.md.
"""

from __future__ import annotations

SUITE_VERSION = "1.0"  # the suite's own version: major = protocol or expected answers change
SUITE_RULESET = 1  # the ruleset this suite is for (docs/rules.md); its folder is ruleset-1/
