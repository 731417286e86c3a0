"""Generation: proposals of boards (random, constructive) and the generator that keeps those on target."""

# The environment variable naming a Dask scheduler for `generate` and `nightly` (here, not in
# `executors`: their --help shows it without loading multiprocessing, sockets and logging).
SCHEDULER_ENV = "NUMBERMATCH_SCHEDULER"

# A score target's half-width when none is given (`generate --score S`; here for --help too).
DEFAULT_WITHIN = 2.0

# The proposal strategies' names, for --help without loading them (a test checks they are
# `strategies.STRATEGIES`).
STRATEGY_NAMES: tuple[str, ...] = ("random", "constructive", "search", "climb")
