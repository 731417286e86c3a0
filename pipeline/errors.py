"""Error types. Every error a user can cause subclasses ValueError and names its input."""

from __future__ import annotations


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


class NumberMatchError(ValueError):
    """Base class of every input error the library raises."""


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
