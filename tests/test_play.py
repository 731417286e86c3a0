"""`numbermatch play`: piped and on a real terminal; undo, restart, add, hints, winnable; the same
grid as `show`; Ctrl-C exits 130; a huge line is bounded and its echo cut."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import yaml

from pipeline.cli.play_cmds import Game
from pipeline.engine.board import parse
from pipeline.engine.stage import replay
from pipeline.formats.source import resolve
from pipeline.solver.search import SOLVED, solve
from tests.helpers import numbermatch_argv, run, sigint_as_at_a_terminal


def test_play_piped_reaches_won_with_the_certificate(night: Path) -> None:
    first = yaml.safe_load((night / "bundle.yaml").read_text())["levels"][0]["stages"][0]["puzzle"]
    result = run(
        "play", f"{night / 'bundle.yaml'}:L1.S1", input="\n".join(first["solution"]) + "\n"
    )
    assert result.exit_code == 0
    assert f"won in {len(first['solution'])} moves!" in result.output
    assert result.output.rstrip().endswith(
        f"final: won, {len(first['solution'])} moves, adds left "
        f"{first['adds'] - first['solution'].count('+')}"
    )


def test_play_shows_the_engines_reason_and_goes_on() -> None:
    result = run("play", "1.......9/3.5", input="0,0-2,2\n0,0 0,1\nzz\n0,8 0,0\nq\n")
    assert result.exit_code == 0
    assert "move 1: illegal move 0,0-2,2: cell 2,2 is off the board" in result.output
    assert "cell 0,1 is a gap" in result.output
    assert "cannot read 'zz'" in result.output
    assert "move 1: 0,0-0,8" in result.output  # two cells in either order
    assert (
        "stuck: no pair and no add left" in result.output
        and "bye: stuck after 1 moves" in result.output
    )


def test_play_undo_restart_add_and_winnable() -> None:
    result = run("play", "1.......9/5", "--adds", "1", input="w\n+\nu\n0,0-0,8\nr\nm\nq\n")
    out = result.output
    assert result.exit_code == 0
    assert "winnable with 1 of the 1 add left" in out  # 1,9 pair then 5 alone: the add is needed
    assert "move 1: +" in out and "undid +" in out and "restarted" in out
    assert "legal pairs (1): 0,0-0,8" in out


def test_hints_keep_the_stage_winnable(night: Path) -> None:
    src = f"{night / 'bundle.yaml'}:L1.S2"
    start = resolve(src)
    assert start.adds is not None
    cells, adds = start.cells, start.adds
    played: list[str] = []
    for _ in range(4):  # follow four hints; after each the solver still wins
        result = run("play", src, input="\n".join(played + ["?", "q"]) + "\n")
        m = re.search(r"hint: (\d+,\d+-\d+,\d+) keeps the Stage winnable", result.output)
        if m is None:
            assert "hint: +" in result.output
            break
        played.append(m.group(1))
        after, left = replay(cells, played, adds)
        assert solve(after, left, budget_nodes=200_000).status == SOLVED


def test_play_refuses_a_bad_source_in_one_line() -> None:
    result = run("play", "nope.yaml")
    assert (
        result.exit_code == 1
        and result.output.strip() == "numbermatch: error: nope.yaml: no such file"
    )


def _read_until(fd: int, pattern: str, timeout: float = 30.0) -> str:
    seen = b""
    deadline = time.monotonic() + timeout
    while pattern.encode() not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(
                f"no {pattern!r} on the terminal; it showed:\n{seen.decode(errors='replace')}"
            )
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


def test_play_on_a_real_terminal() -> None:
    """Through a pseudo-terminal: the prompt, an illegal move's reason, a hint, then a win."""
    master, slave = pty.openpty()
    cmd = numbermatch_argv()
    proc = subprocess.Popen(
        cmd + ["play", "1.......9/3...7"], stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    try:
        assert "status: in play" in _read_until(master, "> ")
        os.write(master, b"0,0-1,0\n")
        assert "values 1 and 3 are neither equal nor sum to 10" in _read_until(master, "> ")
        os.write(master, b"?\n")
        shown = _read_until(master, "> ")
        hinted = re.search(r"hint: (\S+) keeps the Stage winnable", shown)
        assert hinted is not None and "[" in shown  # the hinted cells are marked on the board
        os.write(master, hinted.group(1).encode() + b"\n")
        _read_until(master, "> ")
        rest = b"0,0-0,4" if hinted.group(1) == "0,0-0,8" else b"0,0-0,8"  # the row that is left
        os.write(master, rest + b"\n")
        assert "won in 2 moves!" in _read_until(master, "> ")
        os.write(master, b"q\n")
        assert "final: won" in _read_until(master, "final: won")
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_won_stage_has_no_hint_and_takes_no_more_moves() -> None:
    out = run("play", "19", input="0,0-0,1\n?\n+\nq\n").output
    assert (
        "won in 1 moves!" in out
        and "nothing to hint" in out
        and "the Stage is won: u to undo" in out
    )


def test_play_and_show_draw_the_same_grid() -> None:
    board = "123456789/98.654321/135"
    shown = run(*["show", board]).stdout.splitlines()
    played = Game(parse(board), 0).picture().splitlines()
    assert played == shown[: len(played)]
    assert len(played) == 4 and played[2] == "  1   9  8  .  6  5  4  3  2  1"


def test_ctrl_c_in_play_exits_130() -> None:
    """Ctrl-C in `play` exited 0."""
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(
        numbermatch_argv() + ["play", "1.......9/3...7"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_as_at_a_terminal,
    )
    assert proc.stdout is not None
    while b"status: in play" not in proc.stdout.readline():
        pass
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert b"final: in play" in out and err.decode().strip() == "numbermatch: error: interrupted"


def test_play_bounds_a_huge_line_and_cuts_its_echo() -> None:
    """One 10 MB line used ~40x its size in memory and was echoed twice in full."""
    import subprocess

    line = b"1" * 10_000_000 + b"\n0,0-0,8\nq\n"
    proc = subprocess.run(
        numbermatch_argv() + ["play", "1.......9/3...7"],
        input=line,
        capture_output=True,
        timeout=120,
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0 and len(out) < 2_000, out[:300]
    assert (
        "(10,000,000 characters)" in out
        and "a line of 10,000,000 characters is no command (at most 200" in out
    )
    assert "move 1: 0,0-0,8" in out  # the next line is read as usual


def test_play_messages_cut_a_long_command() -> None:
    from pipeline.cli.play_cmds import Game
    from pipeline.engine.board import parse

    reply = Game(parse("1.......9/3...7"), 0).command("x" * 190)
    assert len(reply) < 200 and "(190 characters)" in reply


def test_an_illegal_move_gives_the_reason_without_the_boards_notation_and_long_lines_wrap(
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    import os as _os

    from pipeline.cli import play_cmds

    board = "1.......9/3.3.....5/9"
    reply = Game(parse(board), 0).command("0,0-2,0")
    assert reply == (
        "move 1: illegal move 0,0-2,0: no clear path: in reading order the 9 at 0,8 is between"
        " them; in their column the 3 at 1,0 is between them"
    )
    assert board not in reply
    monkeypatch.setattr("shutil.get_terminal_size", lambda *a, **k: _os.terminal_size((60, 24)))
    wrapped = play_cmds._wrapped(reply + "\n  0   1  .  9")
    lines = wrapped.splitlines()
    assert all(len(line) <= 59 for line in lines) and lines[-1] == "  0   1  .  9"
    assert " ".join(w for line in lines[:-1] for w in line.split()) == " ".join(reply.split())
