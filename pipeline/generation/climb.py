"""The climb strategy: change the screen's most promising board, step by step, toward the target.

The screen (`screen`) keeps what random boards reach, and at the sizes the public games ship
(35 cells and 5 adds, 27 and 4) random boards are easy almost every time: no screen finds a hard
one there. The climb moves a board toward the target instead. An attempt, still a pure function of
the params and the attempt number k (its `random.Random`; no clock anywhere):

1. **Draws** `START_DRAWS` random boards from the digit distribution, exactly as the screen does, and
   plays each a probe of the screen's first stage (`screen.STAGES[0]`, 4+2 games) on games of the
   climb's own (`_Probe`: a seed drawn from the attempt, never the rating's). The most promising
   one, the nearest to the aim, that the solver can win and reading-order pairing does not clear
   is where the climb starts (its index in the draws is recorded). Over a window whose top the
   first stage does not test (`Stage.tests_top`: its few games' line reads the window's boards
   high there) a draw over the aim counts as in it (`distance`'s `tops`): the draw that line put
   nearest was one whose first games went well, and the held-out players lost the puzzles grown
   from it less often than random's (docs/generation.md, 36/1 medium).
2. **Steps.** Each step makes `BRANCH` neighbours of the board, one move each (`MOVES`: a digit
   changed, two cells swapped, a row's digits permuted; each drawn with its weight), probes each
   with the screen's second stage (32+16 games of the random and local players), and takes the
   nearest to the aim. That one is probed with the screen's third stage too (64+32 games and all
   the cheap players' games, 2-3 points of error) and kept when its estimate is nearer the aim
   than the board's (and the solver can still win it: a board it cannot win looks hard to every
   player, so a climb would run to them). The probes' games share one seed, so neighbours are
   compared on common random numbers.
3. **Offers** the board once its third-stage estimate is in the aim and it passes the screen
   itself (`screen.passes`: the rating's own first games, which the rating takes over), with its
   path of changes (`Proposal.path`, written to the puzzle's provenance). The generator solves it,
   rates it in full and checks the target exactly as for any board. A board that fails the screen
   is climbed on. The deeper climb (`offer_best`) offers a board in the aim without the screen
   (its lines read low beyond the adds they were fitted at, and refused boards that rated in the
   tier), straight to the full rating, from `OFFER_BELOW` under the window (before its aim) once
   its estimate held there over `OFFER_HELD` draws in a row; one that misses is climbed on from. After `STEPS` steps
   (`strategies.climb_depth`: more for expert beyond the screen's fitted adds) the attempt
   offers nothing, except that the deeper climb offers the board it stood on nearest the aim
   (unless rated already), unscreened: its full rating is what tells a run that the target is out of reach there (`generator._Judge`), where the
   estimates read low and a run cannot trust them to stop.

Where the climb aims: a score's aim is the screen's (the middle half of its window); a tier's
runs from a quarter of the way in (`aim`). A climb enters a window at its near edge, so aiming at
the whole tier would make its puzzles the tier's easiest when it climbs up. At the top a tier's
aim goes on past the tier's high end by the margin the screen keeps there (`screen.ABOVE` errors
of the climb's last stage): the full rating decides, as for the screen's boards. An aim ending at
the high end turned away the boards whose estimate landed just over it, the top of the tier,
where random boards crowd when the tier above is common, and the climb's puzzles sat lower in
the tier than the screen's (docs/generation.md). Both are what the held-out check compares
(`make bench`: the rating study's held-out players must lose the climb's puzzles of a tier at
least as often as the screen's and random's).

Why games of its own: the climb compares hundreds of boards, and comparing them on the rating's
own games would keep the boards whose rating games happened to go badly, not the hard boards.
Only the last check, the screen, plays the rating's games, once per offered board, as the screen
does for a random one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Generator
from dataclasses import dataclass

from pipeline.engine.board import WIDTH
from pipeline.engine.rulesets import Ruleset
from pipeline.generation.proposals import DigitDistribution, Proposal, reading_order_reduction
from pipeline.generation.screen import _PLAYERS, ABOVE, STAGES, Stage, Window, passes
from pipeline.rating.players import Games
from pipeline.solver.budgets import DEFAULT_SOLVE_NODES
from pipeline.solver.search import SOLVED, solve

START_DRAWS = 64  # random boards probed for a start
BRANCH = 8  # neighbours probed per step
STEPS = 150  # steps per attempt before it gives up
START, PROBE, CONFIRM = STAGES[0], STAGES[1], STAGES[3]  # the screen's stages the climb probes with
BATCH = 8  # games a bounded probe (`_Probe.within`) plays at once, between its bound's tests
SLACK = 1e-9  # a bounded probe stops only this far past its bound (the bound and `at` round alike)
# the deeper climb (`offer_best`) offers a board to the full rating from this far under a window's
# low end (its lines read low beyond the adds they were fitted at; the full rating decides:
# docs/generation.md has the measurements)
OFFER_BELOW = 2.0
# ... and only once its estimate was there on this many draws of games in a row (this step's and
# the one before it on the same board: the estimate it was kept on, or the last step's), so fewer
# boards that rose there on one lucky draw are rated
OFFER_HELD = 2
# the moves and their weights (docs/generation.md says which paid, measured)
MOVES: tuple[tuple[str, int], ...] = (("digit", 1), ("swap", 1), ("row", 1))


def aim(window: Window) -> tuple[float, float]:
    """Where the climb wants the estimate: a tier's range from a quarter of the way in (a climb
    up enters at the low edge: that would make its puzzles the tier's easiest) to the screen's
    margin over its high end (below 100), a score's the screen's aim (the middle half of its
    window)."""
    if window.score is not None:
        return window.aim()
    top = window.high + ABOVE * CONFIRM.error if window.high < 100.0 else window.high
    return window.low + (window.high - window.low) / 4, top


def distance(
    estimate: float, windows: tuple[Window, ...], tops: tuple[bool, ...] | None = None
) -> float:
    """How far an estimate is from the nearest aim (0 inside one). With `tops` (the start's
    ranking: `Stage.tests_top` of each window for the first stage), no distance counts over an
    aim whose window's top that stage does not test: its line reads the window's boards high
    there, so the draws it put nearest the aim were those whose first games went well, boards
    the held-out players lose less often for the same score."""
    over = (True,) * len(windows) if tops is None else tops
    return min(
        max(low - estimate, 0.0, estimate - high if top else 0.0)
        for (low, high), top in zip(map(aim, windows), over, strict=True)
    )


class _Probe:
    """One board's games on the climb's own seed, played on stage by stage (like the screen's)."""

    def __init__(self, cells: bytes, adds: int, ruleset: Ruleset, seed: int) -> None:
        self.cells, self.adds, self.ruleset, self.seed = cells, adds, ruleset, seed
        self.games: dict[str, Games] = {}
        self.lost: dict[str, int] = {}

    def _games(self, name: str) -> Games:
        """Player `name`'s games on this board, started on first use."""
        games = self.games.get(name)
        if games is None:
            games = self.games[name] = Games(
                _PLAYERS[name], self.cells, self.adds, self.seed, self.ruleset
            )
            self.lost[name] = 0
        return games

    def at(self, stage: Stage) -> float:
        """The stage's estimate, its games played (on from those already played)."""
        for name, n in stage.games:
            games = self._games(name)
            have = len(games.played)
            if have < n:  # one batch (one call to the compiled core): the same games as one by one
                self.lost[name] += sum(not g.won for g in games.first(n)[have:])
        return stage.estimate(self.lost, self.adds)

    def look(self, stage: Stage) -> float:
        """A first look: up to BATCH of each player's games of the stage, and the stage's line at
        their loss rates (a guess at `at`, to order boards by; never a result)."""
        line = stage.intercept + stage.per_add * self.adds
        for (name, n), slope in zip(stage.games, stage.slopes):
            games = self._games(name)
            have = len(games.played)
            if have < min(n, BATCH):
                self.lost[name] += sum(not g.won for g in games.first(min(n, BATCH))[have:])
            line += slope * self.lost[name] / max(1, len(games.played))
        return line

    def within(self, stage: Stage, windows: tuple[Window, ...], bound: float) -> float | None:
        """`at`'s estimate, or None as soon as the board's distance from the aim cannot come under
        `bound` whatever its games left give (the estimate is monotone in each loss count: every
        slope is positive, so the games left move it between all won and all lost). So the climb
        stops playing a neighbour that cannot beat the nearest one so far, or a board that cannot
        beat the one it stands on: the same choices as when every game is played, for fewer games.
        The games go BATCH at a time, the player whose games left could move the estimate most
        first."""
        if bound == math.inf:
            return self.at(stage)
        names = [name for name, _ in stage.games]
        for name in names:
            self._games(name)
        wanted = [n for _, n in stage.games]
        while True:
            lost = [self.lost[name] for name in names]
            left = [n - len(self.games[name].played) for name, n in zip(names, wanted)]
            if not any(left):
                return stage.estimate(self.lost, self.adds)
            least = stage.line(lost, self.adds)
            most = stage.line([k + m for k, m in zip(lost, left)], self.adds)
            if gap(least, most, windows) > bound + SLACK:
                return None
            widths = [s * m / n for s, m, n in zip(stage.slopes, left, wanted)]
            at = max(range(len(names)), key=lambda i: (widths[i], -i))
            games, have = self.games[names[at]], len(self.games[names[at]].played)
            batch = games.first(have + min(left[at], BATCH))[have:]
            self.lost[names[at]] += sum(not g.won for g in batch)


def gap(least: float, most: float, windows: tuple[Window, ...]) -> float:
    """The least distance from the nearest aim of an estimate anywhere from `least` to `most`."""
    return min(max(low - most, 0.0, least - high) for low, high in map(aim, windows))


def move(cells: bytes, rng: random.Random, digits: DigitDistribution) -> tuple[bytes, str]:
    """A neighbour of the board by one move drawn with MOVES' weights, and the move's text
    (`apply` replays it): `d<cell>=<digit>`, `s<cell>,<cell>`, `r<row>=<digits>`."""
    kind = rng.choices([m for m, _ in MOVES], weights=[w for _, w in MOVES])[0]
    out = bytearray(cells)
    if kind == "digit":
        i = rng.randrange(len(out))
        weights = [0.0 if d == out[i] else w for d, w in enumerate(digits.weights)]
        if not any(weights):  # a distribution of one digit: nothing to change it to
            weights = [0.0] + [1.0 if d != out[i] else 0.0 for d in range(1, 10)]
        out[i] = rng.choices(range(10), weights=weights)[0]
        text = f"d{i}={out[i]}"
    elif kind == "swap":
        i, j = sorted(rng.sample(range(len(out)), 2))
        out[i], out[j] = out[j], out[i]
        text = f"s{i},{j}"
    else:
        r = rng.randrange((len(out) + WIDTH - 1) // WIDTH)
        row = list(out[r * WIDTH : (r + 1) * WIDTH])
        rng.shuffle(row)
        out[r * WIDTH : r * WIDTH + len(row)] = bytes(row)
        text = f"r{r}=" + "".join(map(str, row))
    return bytes(out), text


def apply(cells: bytes, step: str) -> bytes:
    """The board after one recorded move (`move`'s text): how a path is replayed."""
    out = bytearray(cells)
    head, rest = step[0], step[1:]
    if head == "d":
        cell, digit = rest.split("=")
        out[int(cell)] = int(digit)
    elif head == "s":
        i, j = map(int, rest.split(","))
        out[i], out[j] = out[j], out[i]
    elif head == "r":
        row, row_digits = rest.split("=")
        start = int(row) * WIDTH
        out[start : start + len(row_digits)] = bytes(int(c) for c in row_digits)
    else:
        raise ValueError(f"not a climb step: {step!r}")
    return bytes(out)


def opening(cells: int, rng: random.Random, digits: DigitDistribution) -> tuple[int, list[bytes]]:
    """An attempt's first draws: the seed of the climb's own games (never the rating's), then the
    START_DRAWS random boards it may start from (a path's `draw N` names one)."""
    seed = rng.getrandbits(32)
    return seed, [bytes(digits.draw(rng, cells)) for _ in range(START_DRAWS)]


def _winnable(cells: bytes, adds: int, ruleset: Ruleset) -> bool:
    """Not trivial (where the stack certificate is sound) and won by the solver within its budget."""
    if ruleset.stack_certificate and not reading_order_reduction(cells, adds, ruleset.class_of):
        return False
    return solve(cells, adds, ruleset=ruleset, budget_nodes=DEFAULT_SOLVE_NODES).status == SOLVED


@dataclass
class _Climber:
    """Where one attempt's climb is: the board, its probe, the path that made it."""

    cells: bytes
    probe: _Probe
    path: list[str]


def climb(
    cells: int,
    adds: int,
    rng: random.Random,
    digits: DigitDistribution,
    ruleset: Ruleset,
    windows: tuple[Window, ...],
    depth: tuple[int, int] | None = None,
    offer_best: bool = False,
) -> Generator[Proposal, None, tuple[float, float] | None]:
    """Candidates for one attempt: the climbed board once the screen passes it (none: the first
    draw, as drawn); with `offer_best`, when the steps run out first, the board it stood on
    nearest the aim (the first of equals), for the full rating. Returns (as the generator's value,
    like the screen) the lowest and highest last-stage estimate of the boards it stood on, so a run
    can tell a target the climb does not come near (`generator`); None when it judged none."""
    if not windows:
        yield Proposal(bytes(digits.draw(rng, cells)))
        return None
    seed, draws = opening(cells, rng, digits)
    tops = tuple(START.tests_top(w, adds) for w in windows)
    ranked = sorted(
        range(START_DRAWS),
        key=lambda i: (
            distance(_Probe(draws[i], adds, ruleset, seed).at(START), windows, tops),
            i,
        ),
    )
    start = next((i for i in ranked if _winnable(draws[i], adds, ruleset)), None)
    if start is None:
        return None
    here, path = draws[start], [f"draw {start}"]
    steps, branch = depth or (STEPS, BRANCH)  # `strategies.climb_depth`: deeper for some targets
    deep = offer_best  # the deeper climb (beyond the screen's fitted adds): see OFFER_BELOW
    offers = tuple(
        (min(lo, w.low - OFFER_BELOW), hi) for w, (lo, hi) in zip(windows, map(aim, windows))
    )

    def in_offers(estimate: float) -> bool:
        return any(lo <= estimate <= hi for lo, hi in offers)

    tried: set[bytes] = set()
    seen: list[float] = []
    best: tuple[float, bytes, tuple[str, ...]] | None = None  # nearest the aim it stood on
    held = 0  # the board's estimates in a row in the offers
    for _ in range(steps):
        # the neighbours share the step's games (common random numbers) and the nearest is judged
        # against the board on games of another seed, both on the same ones: a fresh paired
        # comparison each step, so a board kept on lucky games does not stay ahead on them
        step_seed, judge_seed = rng.getrandbits(32), rng.getrandbits(32)
        score = _Probe(here, adds, ruleset, judge_seed).at(CONFIRM)
        seen.append(score)
        if best is None or distance(score, windows) < best[0]:
            best = (distance(score, windows), here, tuple(path))
        held = held + 1 if in_offers(score) else 0
        stuck = False  # the board was refused (screen, or rating): move on whatever comes next
        sideways = False  # the deeper climb: rated and missed in the aim
        if deep:
            if here not in tried and held >= OFFER_HELD:
                # beyond the screen's fitted adds: the screen's lines read low there and refused
                # boards that rate in the tier (the climb then ran on for thousands of steps), and
                # a full rating costs some 10-100 steps: it judges at once, from OFFER_BELOW under
                # the window. The generator resumes the climb only when the board missed.
                tried.add(here)
                yield Proposal(here, path=tuple(path))
            # rated and missed: it climbs on as before (a forced move off it lost the climb's
            # height); in the aim, where nothing is nearer, a neighbour in the aim too may be kept
            sideways = here in tried and distance(score, windows) == 0.0
        elif distance(score, windows) == 0.0 and here not in tried:
            tried.add(here)
            played = passes(here, adds, ruleset, windows)
            if played is not None:
                yield Proposal(here, played=played, path=tuple(path))
                return min(seen), max(seen)
            stuck = True
        # the nearest neighbour (the first of equals); none probed where none could be kept (in
        # the aim, not stuck). Each gets a first look (BATCH games a player), then they are played
        # out the most promising first, each stopped as soon as it cannot beat the nearest so far
        off_here = distance(score, windows)
        looks: list[tuple[float, int, str, bytes, _Probe]] = []
        for n in range(branch):
            board, step = move(here, rng, digits)  # drawn whatever: the attempt's stream
            if board != here and (stuck or sideways or off_here > 0.0):
                probe = _Probe(board, adds, ruleset, step_seed)
                looks.append((distance(probe.look(PROBE), windows), n, step, board, probe))
        nearest: tuple[float, int, str, bytes] | None = None
        for _, n, step, board, probe in sorted(looks, key=lambda look: look[:2]):
            bound = math.inf if nearest is None else nearest[0]
            est = probe.within(PROBE, windows, bound)
            if est is not None and (nearest is None or (distance(est, windows), n) < nearest[:2]):
                nearest = (distance(est, windows), n, step, board)
        if nearest is None:
            continue
        _, _, step, board = nearest
        # judged against the board on the same games: stopped once it cannot come nearer
        keep, judged = stuck, None
        if not stuck:
            judged = _Probe(board, adds, ruleset, judge_seed).within(CONFIRM, windows, off_here)
            keep = judged is not None and (
                distance(judged, windows) < off_here
                or (sideways and distance(judged, windows) == 0.0)
            )
        if keep and _winnable(board, adds, ruleset):
            here, path = board, [*path, step]
            # its first estimate in the offers is the one it was kept on
            held = int(judged is not None and in_offers(judged))
    if offer_best and best is not None and best[1] not in tried:  # a tried one was rated
        yield Proposal(best[1], path=best[2])
    return (min(seen), max(seen)) if seen else None


def settings(depth: tuple[int, int] | None = None, offer_best: bool = False) -> dict[str, object]:
    """The strategy's parameters (`depth`: steps and neighbours, if not the default; `offer_best`:
    whether a climb that runs out of steps offers its best board), recorded in each puzzle's
    provenance."""
    steps, branch = depth or (STEPS, BRANCH)
    return {
        "draws": START_DRAWS,
        "branch": branch,
        "steps": steps,
        "probes": [dict(s.games) for s in (START, PROBE, CONFIRM)],
        "moves": dict(MOVES),
        "aim": "a tier from a quarter in to the screen's margin over it; a score's middle half",
        **(
            {
                "offers_best": True,
                "screened": False,
                "offers_below": OFFER_BELOW,
                "offers_held": OFFER_HELD,
            }
            if offer_best
            else {}
        ),
    }
