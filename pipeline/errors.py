"""Error types. Every error a user can cause subclasses ValueError and names its input."""

from __future__ import annotations

import errno
import os
import re

ECHO_LIMIT = 80  # characters of user input an error message repeats


def shorten(text: object, limit: int = ECHO_LIMIT) -> str:
    """`repr(text)`, cut to a readable length for an error message (hostile input can be megabytes)."""
    if isinstance(text, str) and len(text) > limit:
        return f"{text[: limit - 20]!r}... ({len(text):,} characters)"
    shown = repr(text)
    return shown if len(shown) <= limit + 2 else shown[:limit] + f"... ({len(shown):,} characters)"


def clip(text: str, limit: int = 2 * ECHO_LIMIT) -> str:
    """`text` itself when short, else its start and how long it was (for echoing input in output)."""
    return text if len(text) <= limit else f"{text[: limit - 30]}... ({len(text):,} characters)"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with its control characters (a newline, a terminal escape in a file name) written
    as escapes: a message stays one line and cannot drive the user's terminal."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


NAME_TOO_LONG = "a name in the path is longer than the file system allows (255 bytes)"


def os_message(exc: OSError) -> str:
    """An OSError as a short phrase, without the errno prefix or the file name."""
    if exc.errno == errno.ENAMETOOLONG:
        return NAME_TOO_LONG
    return exc.strerror or str(exc) or type(exc).__name__


def os_error_line(exc: OSError) -> str:
    """An OSError no command turned into its own message, as one line naming the path (cut)."""
    name = exc.filename
    return f"{clip(os.fsdecode(name))}: {os_message(exc)}" if name is not None else os_message(exc)


class NumberMatchError(ValueError):
    """Base class of every input error the library raises.

    `remedy` names what the caller can change to get past it (e.g. `"with"`: name the puzzle to
    take); the message says it in plain words and names no command-line flag, and a front end
    phrases it as its own option (the CLI: `cli.common.error_text`)."""

    def __init__(self, *args: object, remedy: str | None = None) -> None:
        super().__init__(*args)
        self.remedy = remedy


class NotationError(NumberMatchError):
    """A board string that is not valid notation."""


class MoveSyntaxError(NumberMatchError):
    """A move string that is neither `R,C-R,C` nor `+`."""


class IllegalMoveError(NumberMatchError):
    """A well-formed move that the rules forbid on this board."""


class RulesetError(NumberMatchError):
    """A ruleset version this engine does not implement."""


class Terminated(BaseException):
    """A polite kill (SIGTERM) unwinding the stack like Ctrl-C, so clean-up code runs.

    Not a KeyboardInterrupt: CPython marks a KeyboardInterrupt that escapes code run by `exec`
    (dataclasses build their methods that way, so any import can be such code) as unhandled, and
    then kills the process with SIGINT at exit even after the program handled it.
    """
