"""Error types. Every error a user can cause subclasses ValueError and names its input."""

from __future__ import annotations


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
