"""`play` without typer: a Stage at the terminal, one command per line (typed, or piped for
scripts and tests); called by the typer command (`play_cmds`) and the start-up fast path (`fast`).

The game is a small state machine (`Game.command(text) -> reply`) over the engine's `Stage`,
so what the terminal shows and what a pipe gets are the same lines.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pipeline.cli.engine_run import render_grid
from pipeline.cli.runs import Failed, echo, load_source
from pipeline.engine.board import WIDTH, format_board
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import DEFAULT
from pipeline.engine.stage import IN_PLAY, WON, Stage
from pipeline.errors import NumberMatchError, shorten
from pipeline.limits import MAX_PLAY_LINE
from pipeline.solver.budgets import HINT_NODES

_CELL = re.compile(r"(\d+)\s*,\s*(\d+)")
MAX_COMMAND = MAX_PLAY_LINE  # characters of one play command line ("12,3-13,4" is 9); longer lines are refused unread

HELP = """commands:
  R,C-R,C or R,C R,C   remove a pair (two cells, in any order)
  +                    add numbers
  u                    undo the last move
  r                    restart the Stage
  ?                    hint: a pair after which the Stage can still be won
  w                    is the position still winnable, and with how many adds?
  m                    list the legal pairs
  h                    this help
  q                    quit"""


class Game:
    """One Stage being played, with undo history, hints and the last pair for the drawing."""

    def __init__(
        self,
        cells: bytes,
        adds: int,
        *,
        hint_nodes: int = HINT_NODES,
        ruleset: int = DEFAULT.number,
    ) -> None:
        self.start = cells
        self.adds = adds
        self.hint_nodes = hint_nodes
        self.stage = Stage(cells, adds=adds, ruleset=ruleset)
        self.undo: list[tuple[bytes, int, Move]] = []
        self.last: tuple[int, int] | None = None
        self.hint: tuple[int, int] | None = None
        self.done = False

    @property
    def moves_played(self) -> int:
        return len(self.undo)

    def picture(self) -> str:
        """The board with row and column numbers; `*` marks the cells of the last pair (now
        gaps, if their row is still there), `[d]` the hinted pair."""
        cells = self.stage.cells
        if not cells:
            return "(empty board)"
        return render_grid(cells, hint=self.hint or (), last=self.last or ())

    def status_line(self) -> str:
        status = self.stage.status
        left = self.stage.adds_left
        return (
            f"moves played: {self.moves_played}, adds left: {left} of {self.adds}, status: {status}"
        )

    def screen(self) -> str:
        return f"{self.picture()}\n{self.status_line()}"

    def command(self, text: str) -> str:
        """Play one command line; returns what to show (never raises on bad input)."""
        text = text.strip()
        if not text:
            return ""
        word = text.lower()
        if word in ("q", "quit", "exit"):
            self.done = True
            return f"bye: {self.stage.status} after {self.moves_played} moves"
        if word in ("h", "help"):
            return HELP
        if word in ("u", "undo"):
            if not self.undo:
                return "nothing to undo"
            cells, left, move = self.undo.pop()
            self.stage.cells, self.stage.adds_left = cells, left
            self.last, self.hint = None, None
            return f"undid {move}\n{self.screen()}"
        if word in ("r", "restart"):
            self.stage = Stage(self.start, adds=self.adds, ruleset=self.stage.ruleset)
            self.undo.clear()
            self.last, self.hint = None, None
            return f"restarted\n{self.screen()}"
        if word == "?":
            return self._hint()
        if word in ("w", "winnable"):
            return self._winnable()
        if word in ("m", "moves"):
            pairs = [str(m) for m in self.stage.legal_moves() if not m.is_add]
            return f"legal pairs ({len(pairs)}): " + ("  ".join(pairs) if pairs else "none")
        try:
            move = self._parse(text)
        except NumberMatchError as exc:
            return f"{exc} (h for help)"
        if self.stage.status == WON:
            return "the Stage is won: u to undo, r to restart, q to quit"
        before = (self.stage.cells, self.stage.adds_left)
        try:
            self.stage.play(move)
        except NumberMatchError as exc:
            # the board is on the screen: the reason alone, not the board's notation again
            return f"move {self.moves_played + 1}: {_BOARD_TEXT.sub('', str(exc))}"
        self.undo.append((before[0], before[1], move))
        self.last = None if move.is_add else (move.first, move.second)  # type: ignore[assignment]
        self.hint = None
        reply = f"move {self.moves_played}: {move}\n{self.screen()}"
        if self.stage.status == WON:
            reply += f"\nwon in {self.moves_played} moves!"
        elif self.stage.status != IN_PLAY:
            reply += "\nstuck: no pair and no add left (u to undo, r to restart)"
        return reply

    @staticmethod
    def _parse(text: str) -> Move:
        if text.strip() == "+":
            return ADD
        cells = _CELL.findall(text)
        rest = _CELL.sub("", text).replace("-", " ").strip()
        if len(cells) != 2 or rest:
            raise NumberMatchError(
                f"cannot read {shorten(text)}: type a pair as R,C-R,C (or two cells R,C R,C), or + to add"
            )
        (r1, c1), (r2, c2) = ((int(r), int(c)) for r, c in cells)
        for c in (c1, c2):
            if c >= WIDTH:
                raise NumberMatchError(
                    f"cannot read {shorten(text)}: column {c} is off the board (columns 0-{WIDTH - 1})"
                )
        return Move.pair(r1 * WIDTH + c1, r2 * WIDTH + c2)

    def _hint(self) -> str:
        from pipeline.solver.advice import hint  # start-up time: the search loads on the first hint
        from pipeline.solver.search import SOLVED

        cells, left = self.stage.cells, self.stage.adds_left
        if not cells:
            return "the Stage is won: nothing to hint"
        found = hint(cells, left, ruleset=self.stage.ruleset, budget=self.hint_nodes)
        move = found.move
        if (
            found.status == SOLVED
            and move is not None
            and move.first is not None
            and move.second is not None
        ):
            self.hint = (move.first, move.second)
            return f"hint: {move} keeps the Stage winnable\n{self.picture()}"
        if found.status == SOLVED:
            return "hint: + (add numbers): no pair found that keeps the Stage winnable without adding first"
        return f"no hint: {self._verdict(found.status)}"

    def _verdict(self, status: str) -> str:
        from pipeline.solver.search import UNSOLVABLE  # start-up time (see `_hint`)

        if status == UNSOLVABLE:
            return "the position cannot be won any more (u to undo, r to restart)"
        return f"the solver could not decide within {self.hint_nodes} nodes (raise --hint-nodes)"

    def _winnable(self) -> str:
        from pipeline.solver.advice import fewest_adds  # start-up time (see `_hint`)
        from pipeline.solver.search import SOLVED, UNKNOWN

        cells, left = self.stage.cells, self.stage.adds_left
        if not cells:
            return "won"
        found = fewest_adds(cells, left, ruleset=self.stage.ruleset, budget=self.hint_nodes)
        if found.status != SOLVED:
            return (
                f"not winnable: {self._verdict(found.status)}"
                if found.status != UNKNOWN
                else f"unknown: {self._verdict(found.status)}"
            )
        text = f"winnable with {found.fewest} of the {left} add{'s' if left != 1 else ''} left"
        if not found.exact:
            text += f"; with fewer the solver could not decide within {self.hint_nodes} nodes"
        return text


def run(
    source: str,
    adds: int | None = None,
    search: Sequence[Path] | None = None,
    hint_nodes: int = HINT_NODES,
) -> int:
    """Play a Stage (`numbermatch play`); the exit code."""
    src = load_source(source, search)
    if not src.cells:
        raise Failed(f"{src.label}: the board is empty; there is nothing to play")
    game = Game(src.cells, src.adds_or(adds), hint_nodes=hint_nodes, ruleset=src.ruleset)
    tty = sys.stdin.isatty()
    if tty:
        try:
            import readline  # noqa: F401  # start-up time: line editing and history for input(), only at a terminal
        except ImportError:  # pragma: no cover - platform without readline
            pass
    board = format_board(src.cells)
    title = board if src.label == board else f"{src.label}: {board}"
    echo(
        f"{title} with {game.adds} add{'s' if game.adds != 1 else ''} (h for help)\n{game.screen()}"
    )
    interrupted = False
    while not game.done:
        try:
            line, length = (input("> "), 0) if tty else read_command()
        except EOFError:
            echo("")
            break
        except KeyboardInterrupt:  # Ctrl-C: the final line, then 130 as every command
            echo("")
            interrupted = True
            break
        length = length or len(line)
        if not tty:
            if line == "":
                break
            echo(
                f"> {line.rstrip()}"
                if length <= MAX_COMMAND
                else f"> {line[:60]}... ({length:,} characters)"
            )
        if length > MAX_COMMAND:
            echo(
                f"a line of {length:,} characters is no command (at most {MAX_COMMAND}; h for help)"
            )
            continue
        reply = game.command(line)
        if reply:
            echo(_wrapped(reply) if tty else reply)
    echo(f"final: {game.stage.status}, {game.moves_played} moves, adds left {game.stage.adds_left}")
    if interrupted:
        raise Failed("interrupted", 130)
    return 0


_BOARD_TEXT = re.compile(r" on (?:board '[^']*'|the empty board)")


def _wrapped(reply: str) -> str:
    """A reply's long lines broken between words to the terminal's width (the boards' lines are
    short and kept as they are), so a terminal never cuts a word in two."""
    import shutil  # start-up time: only at a terminal
    import textwrap

    width = max(40, shutil.get_terminal_size().columns - 1)
    return "\n".join(
        textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False)
        if len(line) > width
        else line
        for line in reply.split("\n")
    )


def read_command() -> tuple[str, int]:
    """One stdin line cut to MAX_COMMAND + 1 characters, and its full length (the rest of a
    longer line is read in pieces and dropped, so memory stays bounded whatever comes in);
    ("", 0) at the end of input."""
    line = sys.stdin.readline(MAX_COMMAND + 1)
    length = len(line.rstrip("\r\n"))
    rest = line
    while rest and not rest.endswith("\n") and len(rest) > MAX_COMMAND:
        rest = sys.stdin.readline(1 << 16)
        length += len(rest.rstrip("\r\n"))
    return line, length
