"""Default solver node budgets, each named once here.

A node is one expanded state of `pipeline.solver.search.solve`. A budget bounds one solve (or a
pool of solves); when it runs out the answer is UNKNOWN rather than a proof. What a budget costs
in time is measured by `make bench solver`, not written here.
"""

# `solve` itself, `numbermatch solve --budget-nodes` and authoring: large enough for every
# unsolvable random 32/36-cell even board seen by bench_solver.py (see its output).
DEFAULT_BUDGET_NODES = 5_000_000
# The generator, per candidate board (`--solve-nodes`): over budget means rejected, not wrong.
DEFAULT_SOLVE_NODES = 50_000

# The rating (pipeline.rating.score).
SOLVE_BUDGET_NODES = 10_000  # the solve at the Stage's adds (skipped when a certificate is given)
MIN_ADDS_BUDGET_NODES = 5_000  # each step of the min_adds search (one add fewer: still winnable?)
TRAP_BUDGET_NODES = 1_000  # each "can it still be won after this move?" solve
TRAP_POOL_NODES = 6_000  # all first-move trap solves of one rating together
SAMPLED_POOL_NODES = 6_000  # all solves for the sampled positions together

# Interactive play: one check behind `?` and `w` in `numbermatch play`.
HINT_NODES = 20_000
# The studio: one question (a hint, or one step of the fewest-adds search); enough for every
# generated 27-36-cell board seen so far.
HINT_BUDGET_NODES = 200_000
