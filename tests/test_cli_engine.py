"""`moves`, `apply`, `show` at the terminal: exact JSON, JSON Lines for stdin, clean errors, a quiet
exit into a closed pipe."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import numbermatch_argv, run


def test_moves_json_is_sorted_first_cell_first() -> None:
    result = run("moves", "123456789/987654321/135", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["board"] == "123456789/987654321/135"
    assert doc["pairs"][:2] == ["0,0-1,0", "0,1-1,1"]
    assert doc["pairs"][-3:] == ["1,0-2,0", "1,2-2,1", "1,8-2,0"]


def test_moves_text_lists_values() -> None:
    result = run("moves", "1.......9/3.5")
    assert result.exit_code == 0
    assert "1 legal pair" in result.stdout and "0,0-0,8" in result.stdout and "1+9" in result.stdout


def test_moves_stdin_is_json_lines_and_bad_lines_do_not_stop_the_run() -> None:
    result = run("moves", "-", input="1.......9/3.5\n12x\n\n5.......3/7\n")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0] == {"board": "1.......9/3.5", "pairs": ["0,0-0,8"]}
    assert lines[1]["board"] == "12x" and "'x' at column 2" in lines[1]["error"]
    assert lines[2] == {"board": "", "pairs": []}
    assert lines[3] == {"board": "5.......3/7", "pairs": ["0,8-1,0"]}


def test_moves_stdin_all_good_exits_zero() -> None:
    result = run("moves", "-", input="11\n")
    assert result.exit_code == 0 and json.loads(result.stdout) == {
        "board": "11",
        "pairs": ["0,0-0,1"],
    }


def test_moves_bad_board_is_one_line_without_traceback() -> None:
    result = run("moves", "1234567890")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "invalid board '1234567890'" in result.output


def test_apply_plays_moves_in_order() -> None:
    result = run("apply", "19......./5.......5/2", "0,0-0,1", "0,0-0,8", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"board": "2", "status": "stuck", "adds_left": 0}


def test_apply_with_adds() -> None:
    result = run("apply", "3.7", "+", "0,0-0,2", "0,3-0,4", "--adds", "1", "--json")
    assert json.loads(result.stdout) == {"board": "", "status": "won", "adds_left": 0}


def test_apply_illegal_move_exits_1_with_one_line() -> None:
    result = run("apply", "19......./5.......5/2", "0,0-0,1", "1,0-1,8")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert (
        "move 2: illegal move 1,0-1,8 on board '5.......5/2': cell 1,8 is off the board"
        in result.output
    )


def test_apply_add_without_allocation_fails() -> None:
    result = run("apply", "12", "+")
    assert result.exit_code == 1 and "no adds left" in result.output


def test_apply_malformed_move() -> None:
    result = run("apply", "12", "0,0_0,1")
    assert result.exit_code == 1 and "invalid move '0,0_0,1'" in result.output


def test_show_draws_the_grid_and_pairs() -> None:
    result = run("show", "123456789/98.654321/135")
    assert result.exit_code == 0
    assert "  1   9  8  .  6  5  4  3  2  1" in result.stdout
    assert "legal pairs (11):" in result.stdout


def test_version() -> None:
    result = run("--version")
    assert (
        result.exit_code == 0
        and result.stdout.startswith("numbermatch ")
        and "rulesets: 1" in result.stdout
    )


def test_a_refusal_no_command_catches_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    # `puzzle` passes the board to the solver, whose size limit raises; the CLI's top level turns it into one line
    board = "/".join(
        ["123456789"] * 112
    )  # 1,008 cells: over the solver's limit, within the parser's
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "puzzle",
            board,
            "--adds",
            "0",
            "--out",
            str(tmp_path / "p.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("numbermatch: error: ")
    assert not (tmp_path / "p.yaml").exists()


def test_show_into_a_closed_pipe_exits_quietly() -> None:
    """`numbermatch show BOARD | head -1` printed a BrokenPipeError traceback."""
    import subprocess

    board = "/".join(["123456789"] * 40)
    for _ in range(3):
        proc = subprocess.Popen(
            numbermatch_argv() + ["show", board], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.close()  # what `head -1` does after its line
        _, err = proc.communicate(timeout=60)
        assert err == b"" and proc.returncode in (0, 141), (proc.returncode, err)
