"""The Level assembler: which validated Puzzle fills which Stage of which Level.

The assembler places Puzzles into L Levels of S Stages following a target curve
(`pipeline.formats.curves`). It solves the placement exactly, as an assignment problem:

    minimise   sum over slots s of |score(puzzle at s) - target(s)|     (in hundredths of a point)
    subject to every slot gets exactly one Puzzle and no Puzzle is used twice;
               a slot only takes a Puzzle of the slot's target tier (tiers are strict);
               two consecutive Stages never share a digit layout (variety), counting the
               last Stage of a Level and the first of the next as consecutive too;
               each Level shows at least the curve's minimum of distinct digit layouts.

The **digit layout** of a board is its notation with every digit replaced by its value class
(1/9 -> 1, 2/8 -> 2, 3/7 -> 3, 4/6 -> 4, 5 -> 5; gaps kept). Two boards with the same layout
have the same legal pairs now and after every move and every Add numbers (pairing depends only
on classes and positions), so they play as the same puzzle with relabelled digits.

Without variety this is a bipartite min-cost perfect matching of slots into Puzzles, solved
with networkx's network simplex (min-cost flow). Variety couples neighbouring slots, so it is
handled by exact branch and bound: solve the matching; if two consecutive slots share a layout
X, branch into "the first slot takes no layout-X Puzzle" and "the second takes no layout-X
Puzzle" (every valid placement satisfies one of them), and explore open branches cheapest
bound first. A Level with fewer distinct layouts than its curve asks for, holding the set D,
branches once per Stage of the Level into "this Stage takes no layout of D" (a valid placement
has more than |D| layouts there, so some Stage holds one outside D). The first matching popped
that breaks no rule is optimal. A node budget keeps it bounded; it is only exhausted on
pathological inputs (then the assembler refuses).

Everything is deterministic: Puzzles are sorted by id and the flow graph is built in a fixed
order, so the same Puzzles give the same bundle whatever order the files came in.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from pipeline.engine.canonical import class_layout
from pipeline.engine.rulesets import DEFAULT, Ruleset
from pipeline.errors import NumberMatchError, shorten
from pipeline.formats.curves import Curve, Target, shape_text
from pipeline.formats.puzzle import Puzzle
from pipeline.formats.slot import Slot
from pipeline.jobs.curve_specs import load_curve
from pipeline.rating.tiers import TIER_NAMES

DEFAULT_NODE_BUDGET = 2000


class AssemblyError(NumberMatchError):
    """The assembler cannot build the asked bundle from the given Puzzles."""


def digit_layout(board: str, ruleset: Ruleset | int = DEFAULT) -> str:
    """The board's value-class pattern under its ruleset (see the module docstring): equal layouts play alike."""
    return class_layout(board, ruleset)


def puzzle_score(puzzle: Puzzle) -> float:
    """The rating score a Puzzle carries; refuses a Puzzle without one."""
    score = puzzle.rated.score
    if score is None:
        raise AssemblyError(f"puzzle {puzzle.id} has no difficulty score (tier {puzzle.tier!r})")
    return score


def slot_cost(score: float, target: float) -> int:
    """Integer cost of placing a Puzzle with `score` at a slot aiming at `target` (hundredths)."""
    return round(abs(score - target) * 100)


@dataclass(frozen=True)
class Placement:
    """One Stage: the slot's target and the Puzzle chosen for it."""

    target: Target
    puzzle: Puzzle

    @property
    def cost(self) -> int:
        return slot_cost(puzzle_score(self.puzzle), self.target.score)


@dataclass
class Assembly:
    """The assembler's answer: Levels of Placements, the objective value and the search effort."""

    curve: str
    levels: list[list[Placement]]
    cost: int
    nodes: int
    unused: list[Puzzle] = field(default_factory=list)
    first_level: int = 1  # the game-wide number of the first Level

    @property
    def placements(self) -> list[Placement]:
        return [p for level in self.levels for p in level]


def check_supply(
    curve: str, levels: int, stages: int, slots: Sequence[Target], puzzles: Sequence[Puzzle]
) -> None:
    """Refuse up front, naming what is missing, when a tier has fewer Puzzles than slots: the
    tiers, and the Levels and Stages (in play order) left without a Puzzle."""
    need = Counter(t.tier for t in slots)
    have = Counter(p.tier for p in puzzles)
    short = [name for name in TIER_NAMES if have[name] < need[name]]
    if not short:
        return
    plural = "s" if sum(need[name] for name in short) != 1 else ""
    needs = ", ".join(f"{need[name]} {name}" for name in short)
    haves = (
        ", ".join(f"{have[name]} {name}" for name in short)
        if len(short) > 1
        else str(have[short[0]])
    )
    by_tier = ", ".join(f"{name}: {have[name]}" for name in TIER_NAMES)
    unfilled = []
    for name in short:
        left = [t for t in slots if t.tier == name][have[name] :]
        unfilled.append(f"{slot_text(left)} ({name})")
    raise AssemblyError(
        f"curve {curve} needs {needs} puzzle{plural} for {shape_text(levels, stages)};"
        f" have {haves} (puzzles by tier: {by_tier}); short: {'; '.join(unfilled)}"
    )


def slot_text(slots: Sequence[Target]) -> str:
    """`Level 3 stages 5-6, Level 4 stage 6`: slots grouped by Level, game-wide Level numbers."""
    by_level: dict[int, list[int]] = {}
    for t in slots:
        by_level.setdefault(t.level, []).append(t.stage + 1)
    parts = []
    for level, numbers in by_level.items():
        runs: list[list[int]] = []
        for n in numbers:
            if runs and n == runs[-1][-1] + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
        text = ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)
        parts.append(f"Level {level + 1} stage{'s' if len(numbers) > 1 else ''} {text}")
    return ", ".join(parts)


def check_layouts(
    slots: Sequence[Target],
    puzzles: Sequence[Puzzle],
    min_layouts: Mapping[int, int],
    pinned: Iterable[str] = (),
) -> None:
    """Refuse a Level whose minimum of distinct layouts its tiers' (and pinned) Puzzles cannot reach."""
    pinned = set(pinned)
    for level, least in sorted(min_layouts.items()):
        tiers = {t.tier for t in slots if t.level == level}
        found = {
            digit_layout(p.board, p.ruleset) for p in puzzles if p.tier in tiers or p.id in pinned
        }
        if len(found) < least:
            raise AssemblyError(
                f"Level {level + 1} needs {least} distinct digit layouts, but its tiers"
                f" ({', '.join(sorted(tiers, key=TIER_NAMES.index))}) have puzzles of only {len(found)}"
            )


def _solve_matching(
    slots: Sequence[Target],
    puzzles: Sequence[Puzzle],
    scores: Sequence[float],
    layouts: Sequence[str],
    forbidden: frozenset[tuple[int, str]],
    pinned: Mapping[int, int] | None = None,
) -> tuple[int, list[int]] | None:
    """Min-cost matching of every slot to a distinct same-tier Puzzle avoiding `forbidden`
    (slot, layout) pairs; (cost, puzzle index per slot), or None when none exists.
    A `pinned` slot (slot -> puzzle index) takes its Puzzle whatever its tier; no other slot can."""
    pinned = pinned or {}
    taken = set(pinned.values())
    by_tier: dict[str, list[int]] = {}
    for k, p in enumerate(puzzles):
        if k not in taken:
            by_tier.setdefault(p.tier, []).append(k)
    tier_slots = Counter(t.tier for s, t in enumerate(slots) if s not in pinned)
    g = nx.DiGraph()
    g.add_node("source", demand=-len(slots))
    g.add_node("sink", demand=len(slots))
    for s in range(len(slots)):
        g.add_edge("source", ("slot", s), capacity=1, weight=0)
    for s, target in enumerate(slots):
        if s in pinned:
            allowed = [k for k in (pinned[s],) if (s, layouts[k]) not in forbidden]
        else:
            allowed = [k for k in by_tier.get(target.tier, ()) if (s, layouts[k]) not in forbidden]
        # Only a slot's n cheapest Puzzles can matter when n slots share its tier: of those,
        # at most n-1 are taken by the others, so a cheaper free one is always at hand.
        allowed.sort(key=lambda k: (slot_cost(scores[k], target.score), puzzles[k].id))
        for k in allowed if s in pinned else allowed[: tier_slots[target.tier]]:
            g.add_edge(
                ("slot", s), ("puzzle", k), capacity=1, weight=slot_cost(scores[k], target.score)
            )
    reachable = sorted({v[1] for _, v in g.edges() if v[0] == "puzzle"})
    for k in reachable:
        g.add_edge(("puzzle", k), "sink", capacity=1, weight=0)
    try:
        cost, flow = nx.network_simplex(g)
    except (nx.NetworkXUnfeasible, nx.NetworkXError):
        return None
    chosen = []
    for s in range(len(slots)):
        out = flow.get(("slot", s), {})
        ks = [v[1] for v, f in out.items() if f]
        if len(ks) != 1:  # pragma: no cover - a feasible flow saturates every slot
            return None
        chosen.append(ks[0])
    return int(cost), chosen


def _first_conflict(chosen: Sequence[int], layouts: Sequence[str]) -> int | None:
    for s in range(len(chosen) - 1):
        if layouts[chosen[s]] == layouts[chosen[s + 1]]:
            return s
    return None


def _first_short_level(
    slots: Sequence[Target],
    chosen: Sequence[int],
    layouts: Sequence[str],
    min_layouts: Mapping[int, int],
) -> tuple[list[int], frozenset[str]] | None:
    """The slots of the first Level with too few distinct layouts, and the layouts it has."""
    for level, least in sorted(min_layouts.items()):
        members = [s for s, t in enumerate(slots) if t.level == level]
        held = frozenset(layouts[chosen[s]] for s in members)
        if len(held) < least:
            return members, held
    return None


def assign(
    slots: Sequence[Target],
    puzzles: Iterable[Puzzle],
    *,
    node_budget: int = DEFAULT_NODE_BUDGET,
    pins: Mapping[int, str] | None = None,
    min_layouts: Mapping[int, int] | None = None,
) -> tuple[int, list[Puzzle], int]:
    """The optimal placement (see the module docstring) of distinct Puzzles into `slots`, in
    slot order: (total cost, Puzzle per slot, branch-and-bound nodes solved). `pins` fixes
    slot index -> Puzzle id (the Puzzle must be among `puzzles`). `min_layouts` maps a Level
    (as in `Target.level`) to its minimum of distinct digit layouts."""
    least = {level: n for level, n in (min_layouts or {}).items() if n > 1}
    pool = sorted(puzzles, key=lambda p: p.id)
    index = {p.id: k for k, p in enumerate(pool)}
    pinned = {s: index[pid] for s, pid in (pins or {}).items()}
    scores = [puzzle_score(p) for p in pool]
    layouts = [digit_layout(p.board, p.ruleset) for p in pool]
    counter = itertools.count()
    nodes = 1
    root = _solve_matching(slots, pool, scores, layouts, frozenset(), pinned)
    if root is None:
        raise AssemblyError(_no_matching_message(slots, pool))
    heap: list[tuple[int, int, list[int], frozenset[tuple[int, str]]]] = [
        (root[0], next(counter), root[1], frozenset())
    ]
    while heap:
        cost, _, chosen, forbidden = heapq.heappop(heap)
        s = _first_conflict(chosen, layouts)
        if s is not None:
            layout = layouts[chosen[s]]
            branches = [frozenset({(slot, layout)}) for slot in (s, s + 1)]
        else:
            short = _first_short_level(slots, chosen, layouts, least)
            if short is None:
                return cost, [pool[k] for k in chosen], nodes
            members, held = short
            branches = [frozenset((slot, x) for x in held) for slot in members]
        for branch in branches:
            if nodes >= node_budget:
                raise AssemblyError(
                    f"the variety rules (no digit layout twice in a row, distinct layouts per Level)"
                    f" could not be settled within {node_budget} search nodes; supply Puzzles with"
                    f" more varied layouts"
                )
            child = forbidden | branch
            nodes += 1
            solved = _solve_matching(slots, pool, scores, layouts, child, pinned)
            if solved is not None:
                heapq.heappush(heap, (solved[0], next(counter), solved[1], child))
    raise AssemblyError(
        "no placement avoids the same digit layout in two consecutive stages"
        + (" while giving each Level its distinct layouts" if least else "")
        + ": too many of the puzzles share a layout; supply more varied puzzles"
    )


def _no_matching_message(slots: Sequence[Target], pool: Sequence[Puzzle]) -> str:
    need = Counter(t.tier for t in slots)
    have = Counter(p.tier for p in pool)
    return "no placement exists: " + ", ".join(
        f"{name} needs {need[name]}, has {have[name]}" for name in TIER_NAMES if need[name]
    )


def assemble(
    puzzles: Iterable[Puzzle],
    *,
    levels: int,
    stages: int,
    curve: str | Curve = "ramp",
    first_level: int = 1,
    node_budget: int = DEFAULT_NODE_BUDGET,
    pins: Mapping[tuple[int, int], str] | None = None,
    exclude: Iterable[str] = (),
    curve_name: str | None = None,
) -> Assembly:
    """Place Puzzles into `levels` Levels of `stages` Stages along `curve` (a built-in name,
    FILE[:NAME] or a Curve), starting at game Level `first_level`, optimally.

    A job passes the Curve it resolved once for the run, with `curve_name`, the spec it was
    given (for messages and the default bundle id; default: the spec, else the curve's name).

    `pins` fixes (level, stage) -> Puzzle id (both numbered from 1, as in the bundle); a pinned
    Puzzle may be of another tier than its slot's target. `exclude` drops Puzzles by id.
    Refuses (AssemblyError) duplicate Puzzles, Puzzles of another ruleset than the others,
    Puzzles without a score, a pin outside the shape or naming an unknown or excluded Puzzle,
    a tier short of Puzzles for the curve (naming the Levels and Stages left short), and a
    variety rule that cannot be met; CurveError for a curve that cannot give this shape.
    """
    spec = load_curve(curve)
    name = curve_name or (curve if isinstance(curve, str) else spec.name)
    rows = spec.targets(levels, stages, first_level)
    slots = [t for row in rows for t in row]
    pool: dict[str, Puzzle] = {}
    for p in puzzles:
        if p.id in pool:
            raise AssemblyError(
                f"puzzle {p.id} is given twice; a bundle uses each puzzle at most once"
            )
        puzzle_score(p)
        pool[p.id] = p
    excluded = set(exclude)
    unknown = sorted(excluded - pool.keys())
    if unknown:
        raise AssemblyError(
            f"excluded puzzle {shorten(unknown[0])}: no such puzzle among the {len(pool)} given"
        )
    slot_pins = _slot_pins(pins or {}, levels, stages, pool, excluded, first_level)
    pool = {pid: p for pid, p in pool.items() if pid not in excluded}
    rulesets = sorted({p.ruleset for p in pool.values()})
    if len(rulesets) > 1:
        raise AssemblyError(f"puzzles mix rulesets {rulesets}; a bundle has one ruleset")
    free_slots = [t for s, t in enumerate(slots) if s not in slot_pins]
    pinned_ids = set(slot_pins.values())
    free_pool = [p for p in pool.values() if p.id not in pinned_ids]
    check_supply(name, levels, stages, free_slots, free_pool)
    min_layouts = {
        row[0].level: spec.level_constraints(row[0].level, stages).layouts for row in rows
    }
    check_layouts(slots, list(pool.values()), min_layouts, pinned_ids)
    cost, chosen, nodes = assign(
        slots, pool.values(), node_budget=node_budget, pins=slot_pins, min_layouts=min_layouts
    )
    placed = [Placement(t, p) for t, p in zip(slots, chosen)]
    used = {p.id for p in chosen}
    return Assembly(
        curve=name,
        levels=[placed[i * stages : (i + 1) * stages] for i in range(levels)],
        cost=cost,
        nodes=nodes,
        unused=[p for _, p in sorted(pool.items()) if p.id not in used],
        first_level=first_level,
    )


def _slot_pins(
    pins: Mapping[tuple[int, int], str],
    levels: int,
    stages: int,
    pool: Mapping[str, Puzzle],
    excluded: set[str],
    first_level: int = 1,
) -> dict[int, str]:
    """(level, stage) pins, numbered as in the bundle (Levels from `first_level`, Stages from 1),
    as slot index -> Puzzle id; refuses bad ones."""
    out: dict[int, str] = {}
    last = first_level + levels - 1
    for (level, stage), pid in sorted(pins.items()):
        where = f"pin {Slot(level, stage)}={shorten(pid)}"
        if not (first_level <= level <= last and 1 <= stage <= stages):
            raise AssemblyError(
                f"{where}: the bundle has Levels {first_level}-{last} of Stages 1-{stages}"
            )
        if pid not in pool:
            raise AssemblyError(f"{where}: no such puzzle among the {len(pool)} given")
        if pid in excluded:
            raise AssemblyError(f"{where}: the puzzle is also excluded")
        if pid in out.values():
            raise AssemblyError(
                f"{where}: the puzzle is pinned twice; a bundle uses each puzzle at most once"
            )
        out[(level - first_level) * stages + (stage - 1)] = pid
    return out
