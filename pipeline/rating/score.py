"""Difficulty rating: how hard a Puzzle is for a player, from the rules engine and the solver.

Solvable is not enough: people get stuck on solvable boards because careless pairs are punished
and adds run out. The rating plays the Stage out with simulated players of different strength
(`pipeline.rating.players`), asks the solver which moves are fatal, and folds the results into one
score 0-100 and a tier from the one table in `pipeline.rating.tiers`.

Everything is deterministic for a seed: players draw from `random.Random` objects seeded by
(seed, player name) and every solver call has a node budget (never a timeout); budgets that
several calls share are pools of nodes spent in a fixed order.

Metrics (the `difficulty` mapping, `Rating.to_dict()`):
- `version`: the rating version that made the block (absent in version-1 blocks).
- `min_adds`: fewest adds with which the Stage can still be won (searched down from the
  certificate's count); null when the solver's budget ran out before it could prove one fewer
  impossible.
- `players`: per simulated player, its win rate, mean moves per game (adds included), playouts.
- `trap_density`: share of legal first pairs after which the Stage can no longer be won. A check
  the solver's budget cannot settle counts as no trap (`trap_unknown` in `metrics` counts them).
  Measured by versions 1 and 2 only (version 1's score weighs it); null from version 3 on.
- `trap_density_sampled`: the same share over the legal pairs of a few positions sampled from
  the random player's games (only positions that can still be won).
- `certificate_length`: moves in the certificate (pairs and adds): the given solution, else the
  solver's, else a simulated player's winning game.
- `mean_branching`: legal pairs per turn, averaged over the random player's games.
- `collapse_openings`: share of row collapses (in the random player's games) that open a pair
  that was not there before the rows moved up.

The score (`score_from_metrics`) is 100 times a weighted sum of hardness terms, each 0-1 and
higher when harder, with the weights of the block's rating version (`WEIGHTS_BY_VERSION`). The
weights, game counts, tier tables and stored keys of each version are one record each in
`pipeline.rating.versions`, with the formula:
- version 3 (`WEIGHTS_V3`): the share of games a player drawn from the stated mix of
  seven players loses (one minus each player's win rate, weighted). Each player plays the games
  `PLAYOUT_SHARE_BY_VERSION` gives it (cheap players more, costly ones fewer; counts stored).
- version 4 (current, `WEIGHTS_V3`): version 3's score and tiers on the game counts that bound its
  standard deviation across seeds (`RatingVersion.sd_bound`); the generator confirms a board it
  accepts by it on an independent draw (`pipeline.rating.CONFIRM_SEED`).
- version 2 (`WEIGHTS_V2`): the same form over six players (no `proximity`).
- version 1 (`WEIGHTS_V1`): three players' loss rates, the two trap densities and min_adds
  (MIN_ADDS_CAP or more counts fully; null counts fully).
It never falls when a win rate falls. It is computed from the rounded stored values, so a
file's score can be re-checked, and `rate(..., version=1)` still reproduces a version-1 block
(version 2's first three players play exactly version 1's games), and `rate(..., version=2)` a
version-2 block. A player's games are one sequence seeded by (seed, name), so versions that give it
different counts share their first games.

Tier: `unsolvable` (no score, no min_adds) when the solver proves the Stage cannot be won;
otherwise `tiers.tier_for(score, version)`. When the solver's budget runs out and no simulated player
wins either, solvability is unknown: the rating still gives a score (min_adds null, counted as
hardest) and its tier, with `certificate_length` null and `solver_status: unknown` in `metrics`;
such a board has no certificate, so the generator cannot accept it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any

from pipeline.engine.board import Board, cells_of
from pipeline.engine.moves import Move
from pipeline.engine.rulesets import DEFAULT, Ruleset, ruleset_for
from pipeline.engine.stage import replay
from pipeline.limits import MAX_RATE_CELLS, check_adds, check_cells, check_playouts
from pipeline.rating import DEFAULT_PLAYOUTS, DEFAULT_SEED
from pipeline.rating.players import PLAYERS, Games, Pair, Player, Playout, Tally
from pipeline.rating.tiers import RATING_VERSION, tier_for
from pipeline.rating.tiers import UNSOLVABLE as TIER_UNSOLVABLE
from pipeline.rating.versions import (
    PLAYOUT_SHARE_BY_VERSION,
    TRAPS_UNTIL,
    VERSIONS,
    WEIGHTS_BY_VERSION,
    rating_version,
    score_from_metrics,
)
from pipeline.solver.advice import fewest_adds
from pipeline.solver.budgets import (
    MIN_ADDS_BUDGET_NODES,
    SAMPLED_POOL_NODES,
    SOLVE_BUDGET_NODES,
    TRAP_BUDGET_NODES,
    TRAP_POOL_NODES,
)
from pipeline.solver.search import SOLVED, UNKNOWN, UNSOLVABLE, Status, solve

SAMPLED_POSITIONS = 4  # positions from the random player's games checked for traps

# One record per rating version (players, weights, game counts, tier table, stored keys):
# `pipeline.rating.versions`. These names are its views, for the code that plays the games.
_PLAYER_BY_NAME = {p.name: p for p in PLAYERS}
PLAYERS_BY_VERSION: dict[int, tuple[Player, ...]] = {
    n: tuple(_PLAYER_BY_NAME[name] for name in v.players) for n, v in VERSIONS.items()
}
WEIGHTS = WEIGHTS_BY_VERSION[RATING_VERSION]
PLAYOUT_SHARE = PLAYOUT_SHARE_BY_VERSION[RATING_VERSION]


def games_for(name: str, playouts: int, version: int = RATING_VERSION) -> int:
    """Games player `name` plays in a rating by `version` asked for `playouts` games per player."""
    return VERSIONS[version].games(name, playouts)


def playouts_for(name: str, playouts: int) -> int:
    """Games a player plays when the rating's players play `playouts` each (current version)."""
    return games_for(name, playouts)


def stored_playouts(difficulty: Mapping[str, Any], default: int = DEFAULT_PLAYOUTS) -> int:
    """The `playouts` a stored block was rated with (read back from the random player's games)."""
    version = rating_version(difficulty)
    random_player = difficulty.get("players", {}).get("random", {})
    games = random_player.get("playouts") if isinstance(random_player, Mapping) else None
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        return default
    share = PLAYOUT_SHARE_BY_VERSION[version].get("random", 1.0)
    guess = max(1, round(games / share))
    return next(
        (
            n
            for n in range(max(1, guess - 2), guess + 3)
            if games_for("random", n, version) == games
        ),
        guess,
    )


@dataclass(frozen=True)
class Rating:
    """A rating: tier, score (None when the Stage cannot be won), min_adds and the metrics.

    `metrics` holds every metric by name (those of `to_dict()` plus diagnostics such as
    `trap_unknown`, `solver_status` and `solver_nodes`).
    """

    tier: str
    score: float | None
    min_adds: int | None
    metrics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The `difficulty` mapping of a puzzle file, keys in the agreed order."""
        m = self.metrics
        head = {"version": m["version"]} if "version" in m else {}
        return {
            **head,
            "tier": self.tier,
            "score": self.score,
            "min_adds": self.min_adds,
            "players": {name: dict(stats) for name, stats in m["players"].items()},
            "trap_density": m["trap_density"],
            "trap_density_sampled": m["trap_density_sampled"],
            "certificate_length": m["certificate_length"],
            "mean_branching": m["mean_branching"],
            "collapse_openings": m["collapse_openings"],
            # scored under a rating profile (`pipeline.rating.profile.rated_under`): which one
            **({"profile": m["profile"]} if "profile" in m else {}),
        }

    def to_json(self) -> dict[str, Any]:
        """`to_dict()` followed by the diagnostic metrics (what `numbermatch rate --json` prints)."""
        out = self.to_dict()
        out.update({k: v for k, v in self.metrics.items() if k not in out})
        return out


def _moves(solution: Sequence[Move | str]) -> tuple[Move, ...]:
    return tuple(Move.parse(m) if isinstance(m, str) else m for m in solution)


class _Pool:
    """A node budget shared by many solver calls, so the total work is bounded and deterministic."""

    def __init__(self, nodes: int, ruleset: Ruleset) -> None:
        self.left = nodes
        self.ruleset = ruleset

    def solve(self, cells: bytes, adds: int, per_call: int) -> str:
        if self.left <= 0:
            return UNKNOWN
        result = solve(cells, adds, ruleset=self.ruleset, budget_nodes=min(per_call, self.left))
        self.left -= result.nodes
        return result.status


def _trap_share(
    pool: _Pool, cells: bytes, adds: int, pairs: Sequence[tuple[int, int]], per_call: int
) -> tuple[int, int, int]:
    """(traps, checked, unknown) over the pairs playable on a winnable position."""
    traps = unknown = 0
    for i, j in pairs:
        after = pool.ruleset.remove_pair(cells, i, j)
        status = pool.solve(after, adds, per_call)
        if status == UNSOLVABLE:
            traps += 1
        elif status == UNKNOWN:
            unknown += 1
    return traps, len(pairs), unknown


def _sample_positions(
    games: Sequence[Playout], count: int, rng: Random
) -> list[tuple[bytes, int, list[Pair], bool]]:
    """`count` distinct positions (cells, adds left, pairs, known winnable) after the first move."""
    pool = []
    seen: set[tuple[bytes, int]] = set()
    for game in games:
        for cells, adds_left, pairs in game.positions[1:]:
            if (cells, adds_left) not in seen:
                seen.add((cells, adds_left))
                pool.append((cells, adds_left, pairs, game.won))
    if len(pool) <= count:
        return pool
    return rng.sample(pool, count)


def _play_players(
    cells: bytes,
    adds: int,
    playouts: int,
    seed: int,
    rs: Ruleset,
    version: int,
    played: Mapping[str, Games],
) -> tuple[dict[str, Any], list[Playout], Tally]:
    """Step 1 of `rate`: the simulated players' stats, the random player's games (kept only for a
    version that samples positions from them, `TRAPS_UNTIL`) and their sums; `played`: games
    already played, by player name. The other games are only summed (`Games.totals`: in the
    compiled core, no Playout is made of them)."""
    stats = {}
    games_random: list[Playout] = []
    tally_random = Tally()
    for player in PLAYERS_BY_VERSION[version]:
        record = player.name == "random"
        games = _games(player, cells, adds, seed, rs, record, played)
        n = games_for(player.name, playouts, version)
        if record and version <= TRAPS_UNTIL:
            games_random = games.first(n)
            tally = Tally.of(games_random)
        else:
            tally = games.totals(n)
        stats[player.name] = tally.stats().to_dict()
        if record:
            tally_random = tally
    return stats, games_random, tally_random


def _games(
    player: Player,
    cells: bytes,
    adds: int,
    seed: int,
    rs: Ruleset,
    record: bool,
    played: Mapping[str, Games],
) -> Games:
    """The player's games of this rating: those `played` hands over when they are these games
    (as `play_many` takes them), else a new sequence."""
    given = played.get(player.name)
    if (
        given is None
        or given.player.name != player.name
        or not given.serves(cells, adds, seed, rs, record)
    ):
        given = Games(player, cells, adds, seed, rs, record)
    return given


def _first_won(
    cells: bytes, adds: int, playouts: int, seed: int, rs: Ruleset, version: int
) -> Playout | None:
    """The first won game of the rating's players (in their order), each over its games: played
    again (the same games: one sequence per player and seed), only for a board the solver could
    not settle."""
    for player in PLAYERS_BY_VERSION[version]:
        n = games_for(player.name, playouts, version)
        games, done = Games(player, cells, adds, seed, rs), 0
        while done < n:  # a few games at a time: most boards a player wins, it wins early
            batch = games.first(min(n, 2 * done + 16))[done:]
            won = next((g for g in batch if g.won), None)
            if won is not None:
                return won
            done += len(batch)
    return None


def _certificate(
    cells: bytes,
    adds: int,
    solution: Sequence[Move | str] | None,
    won_game: Callable[[], Playout | None],
    rs: Ruleset,
) -> tuple[tuple[Move, ...] | None, Status, int]:
    """Step 2 of `rate`: can it be won at all? A certificate from the caller, the solver, or a
    winning game (`won_game` finds one); with the solver's status and nodes."""
    certificate: tuple[Move, ...] | None = None
    solver_status = SOLVED
    solver_nodes = 0
    if solution is not None:
        certificate = _moves(solution)
        final, _ = replay(cells, certificate, adds, rs)
        if final:
            raise ValueError(f"solution does not win board {Board(cells)!s} within {adds} adds")
    else:
        result = solve(cells, adds, ruleset=rs, budget_nodes=SOLVE_BUDGET_NODES)
        solver_status, solver_nodes = result.status, result.nodes
        if result.moves is not None:
            certificate = result.moves
        elif (won := won_game()) is not None:  # the solver ran out of budget, but a player won
            certificate = tuple(won.path)
    return certificate, solver_status, solver_nodes


def _traps(
    cells: bytes,
    adds: int,
    seed: int,
    games_random: list[Playout],
    sampled_positions: int,
    solver_status: Status,
    rs: Ruleset,
) -> tuple[float, float, int, int, int]:
    """Step 4 of `rate`: traps among the first moves, then at positions sampled along the random
    player's games. Returns both densities, both unknown counts and the nodes spent."""
    first_pairs = rs.legal_pairs(cells)
    pool, sampled_pool = _Pool(TRAP_POOL_NODES, rs), _Pool(SAMPLED_POOL_NODES, rs)
    if solver_status == UNSOLVABLE:
        trap_density = trap_sampled = 1.0 if first_pairs else 0.0
        trap_unknown = sampled_unknown = 0
    else:
        traps, checked, trap_unknown = _trap_share(
            pool, cells, adds, first_pairs, TRAP_BUDGET_NODES
        )
        trap_density = traps / checked if checked else 0.0
        s_traps = s_checked = sampled_unknown = 0
        rng = Random(f"{seed}:sample")
        for pos_cells, pos_adds, pos_pairs, known in _sample_positions(
            games_random, sampled_positions, rng
        ):
            if not known and sampled_pool.solve(pos_cells, pos_adds, TRAP_BUDGET_NODES) != SOLVED:
                continue  # only positions that can still be won
            t, c, u = _trap_share(sampled_pool, pos_cells, pos_adds, pos_pairs, TRAP_BUDGET_NODES)
            s_traps, s_checked, sampled_unknown = s_traps + t, s_checked + c, sampled_unknown + u
        trap_sampled = s_traps / s_checked if s_checked else 0.0
    nodes = TRAP_POOL_NODES - pool.left + SAMPLED_POOL_NODES - sampled_pool.left
    return trap_density, trap_sampled, trap_unknown, sampled_unknown, nodes


def rate(
    board: Board | str | bytes,
    adds: int,
    *,
    playouts: int = DEFAULT_PLAYOUTS,
    seed: int = DEFAULT_SEED,
    solution: Sequence[Move | str] | None = None,
    sampled_positions: int = SAMPLED_POSITIONS,
    ruleset: Ruleset | int = DEFAULT,
    version: int = RATING_VERSION,
    played: Sequence[Games] = (),
) -> Rating:
    """Rate a Stage (board plus adds allocation) under `ruleset`. Deterministic for a seed.

    `solution`, when given, is a certificate (checked by replay) that spares the first solve.
    `version` rates as that rating version did (to re-check a stored rating). `played`: games a
    player has already played from this board with this seed (the search's screen), taken over
    rather than played again (games of another board or seed are ignored).
    """
    rs = ruleset_for(ruleset)
    if version not in WEIGHTS_BY_VERSION:
        raise ValueError(
            f"rating version {version!r} is not known (known: {', '.join(map(str, WEIGHTS_BY_VERSION))})"
        )
    if adds < 0:
        raise ValueError(f"adds allocation must be 0 or more, got {adds}")
    if playouts < 1:
        raise ValueError(f"playouts must be 1 or more, got {playouts}")
    check_adds(adds)
    check_playouts(playouts)
    cells = cells_of(board)
    check_cells(len(cells), MAX_RATE_CELLS, "the board to rate")

    stats, games_random, tally_random = _play_players(
        cells, adds, playouts, seed, rs, version, {g.player.name: g for g in played}
    )
    certificate, solver_status, solver_nodes = _certificate(
        cells,
        adds,
        solution,
        lambda: _first_won(cells, adds, playouts, seed, rs, version),
        rs,
    )
    solvable = certificate is not None
    min_adds: int | None = None
    if certificate is not None:
        min_adds = fewest_adds(
            cells, adds, ruleset=rs, budget=MIN_ADDS_BUDGET_NODES, certificate=certificate
        ).proved
    trap_density: float | None = None
    trap_sampled: float | None = None
    trap_unknown = sampled_unknown = trap_nodes = 0
    if version <= TRAPS_UNTIL:
        traps = _traps(cells, adds, seed, games_random, sampled_positions, solver_status, rs)
        trap_density, trap_sampled, trap_unknown, sampled_unknown, trap_nodes = traps

    # 5. shape of the work (from the random player's games)
    steps, pairs_offered = tally_random.steps, tally_random.pairs
    collapses, openings = tally_random.collapses, tally_random.openings

    metrics: dict[str, Any] = {
        "players": stats,
        "trap_density": None if trap_density is None else round(trap_density, 4),
        "trap_density_sampled": None if trap_sampled is None else round(trap_sampled, 4),
        "certificate_length": len(certificate) if certificate is not None else None,
        "mean_branching": round(pairs_offered / steps, 2) if steps else 0.0,
        "collapse_openings": round(openings / collapses, 4) if collapses else 0.0,
        "trap_unknown": trap_unknown,
        "trap_unknown_sampled": sampled_unknown,
        "solver_status": str(SOLVED if solvable else solver_status),  # plain text for YAML
        "solver_nodes": solver_nodes,
        "trap_nodes": trap_nodes,
    }
    if version != 1:
        metrics["version"] = version
    if not solvable and solver_status == UNSOLVABLE:
        return Rating(TIER_UNSOLVABLE, None, None, metrics)
    draft = {
        "players": stats,
        "min_adds": min_adds,
        "version": version,
        **{k: metrics[k] for k in ("trap_density", "trap_density_sampled")},
    }
    score = score_from_metrics(draft)
    return Rating(tier_for(score, version), score, min_adds, metrics)
