"""Option and argument values without pydantic, for start-up time.

Typer (0.2x) turns every parameter's text into its value through a pydantic TypeAdapter, built
the first time the parameter is used: importing pydantic and building the adapters costs about
as much as the rest of a command's start-up together. The values our commands take are plain
(text, ASCII whole numbers in a range, paths, a choice, lists of those), so `install()` makes
typer coerce them here first and hand everything else, and every value we cannot accept, to
typer's own pydantic coercion: a wrong value gets exactly typer's message, a right one the same
value (tests/test_cli_startup.py cross-checks both over every parameter of every command).
Guarded by `hasattr`: another typer version keeps its own coercion.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from typer import core

try:  # typer's own choice matching and path checks (typer 0.2x)
    from typer._param_types import coerce_cli_choice, coerce_cli_path
except ImportError:  # pragma: no cover - another typer: `install` leaves its coercion alone
    coerce_cli_choice = coerce_cli_path = None  # type: ignore[assignment]

_WHOLE = re.compile(r"[+-]?[0-9]{1,18}", re.ASCII)
_DECIMAL = re.compile(r"[+-]?[0-9]{1,18}(?:\.[0-9]{1,18})?", re.ASCII)
_installed = False


class _Refused(Exception):
    """This value is not one the plain coercion is sure about: typer's own decides."""


class PlainParam:
    """The runtime coercion typer asks each parameter for (`coerce(value, param=, ctx=)`)."""

    def __init__(self, descriptor: Any, fallback: Any) -> None:
        self.descriptor = descriptor
        self._fallback_builder = fallback
        self._fallback: Any = None

    def typer_param(self) -> Any:
        """Typer's own (pydantic) coercion of this parameter, built on first need."""
        if self._fallback is None:
            self._fallback = self._fallback_builder(self.descriptor)
        return self._fallback

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        try:
            return self._plain(value, multi, param, ctx)
        except _Refused:
            return self.typer_param().coerce(value, param=param, ctx=ctx)

    def _plain(self, value: Any, multi: bool, param: Any, ctx: Any) -> Any:
        desc = self.descriptor
        info = desc.parameter_info
        if (
            desc.file_annotation is not None
            or info.parser is not None
            or (multi and isinstance(value, str))
        ):
            raise _Refused
        annotation = desc.annotation
        if get_origin(annotation) is list:
            if not isinstance(value, (list, tuple)):
                value = [value]
            (item,) = get_args(annotation)
            return [self._leaf(item, v, param, ctx) for v in value]
        return self._leaf(annotation, value, param, ctx)

    def _leaf(self, annotation: Any, value: Any, param: Any, ctx: Any) -> Any:
        info = self.descriptor.parameter_info
        if (isinstance(annotation, type) and issubclass(annotation, Enum)) or get_origin(
            annotation
        ) is Literal:
            choices: list[Any] = (
                list(get_args(annotation)) if get_origin(annotation) is Literal else [*annotation]
            )
            try:
                return coerce_cli_choice(
                    value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx
                )
            except ValueError:
                raise _Refused from None
        if annotation is str:
            if isinstance(value, str):
                return value
            raise _Refused
        if annotation is bool:
            if isinstance(value, bool):
                return value
            raise _Refused
        if annotation is int or annotation is float:
            if info.clamp:
                raise _Refused
            if isinstance(value, str):
                if not (_WHOLE if annotation is int else _DECIMAL).fullmatch(value):
                    raise _Refused
                number: Any = annotation(value)
            elif type(value) is annotation:
                number = value
            else:
                raise _Refused
            if (info.min is not None and number < info.min) or (
                info.max is not None and number > info.max
            ):
                raise _Refused
            return number
        if isinstance(annotation, type) and issubclass(annotation, Path) and info.path_type is None:
            if isinstance(value, str) and "\x00" not in value:
                value = annotation(value)
            if not isinstance(value, annotation):
                raise _Refused
            return coerce_cli_path(value, info, path_type=annotation, param=param, ctx=ctx)
        raise _Refused


def install() -> None:
    """Make typer build `PlainParam`s (once); a typer without the hook keeps its own."""
    global _installed
    if _installed:
        return
    _installed = True

    original = getattr(core, "build_runtime_param", None)
    if (
        original is None
        or coerce_cli_choice is None
        or not hasattr(core._TyperParameter, "get_runtime_param")
    ):  # pragma: no cover
        return

    def build(descriptor: Any) -> PlainParam:
        return PlainParam(descriptor, original)

    core.build_runtime_param = build  # type: ignore[assignment,attr-defined]  # duck-typed: typer only calls .coerce()
