"""Reading a level file safely: bytes -> UTF-8 text -> YAML node tree -> plain data.

The node tree is composed once (by libyaml when PyYAML has it) and kept beside the data: its
marks give every value's line and column, so later layers report positions without a second
parse. Data is built from the nodes here rather than by a YAML constructor, which is what lets
us refuse duplicate keys, arbitrary tags and alias bombs instead of silently accepting them:
nothing but strings, numbers, booleans, nulls, lists and string-keyed mappings comes out.

This is the one YAML reader for level files: the validator and the assembler both read through
`load_file`, so a file one accepts never trips the other. Explicit tags (`!!int`, `!!timestamp`,
`!python/...`, even the plain `!`) are refused wherever they appear: a tag changes what a value
means, and level files mean only what they say. Only regular files are read (a FIFO named
`x.yaml` would block for ever), at most `limits.MAX_FILE_BYTES` of them.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pipeline.errors import shorten
from pipeline.limits import (
    MAX_CURVE_FILE_BYTES,
    MAX_CURVES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_NODES,
    MAX_NUMBER_CHARS,
)
from pipeline.problems import Problem, json_path

try:  # libyaml's parser when PyYAML was built with it
    from yaml import CSafeLoader as Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as Loader  # type: ignore[assignment]

MAX_BYTES = MAX_FILE_BYTES  # a 1,000-stage bundle is well under 2 MiB

# Whole numbers as YAML 1.1 (PyYAML) and YAML 1.2 (editors, other games' readers) both read
# them: `010` is 8 to one and 10 to the other; `0_1`, `1_`, `0b1`, `0x1`, `+1`, `1:30` are
# numbers to 1.1 only. Only plain decimal digits mean the same everywhere.
_CURVES_KIND = re.compile(
    rb"^kind:[ \t]*['\"]?curves\b", re.MULTILINE
)  # a curves file, before parsing it
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)
_T = "tag:yaml.org,2002:"
STR, SEQ, MAP = _T + "str", _T + "seq", _T + "map"
_CTOR = SafeConstructor()
_SCALARS: dict[str, Callable[[ScalarNode], Any]] = {
    _T + "int": lambda n: SafeConstructor.construct_yaml_int(_CTOR, n),
    _T + "float": lambda n: SafeConstructor.construct_yaml_float(_CTOR, n),
    _T + "bool": lambda n: SafeConstructor.construct_yaml_bool(_CTOR, n),
    _T + "null": lambda n: None,
    # JSON has no dates (nor does YAML 1.2's core schema, which editors use): keep the text.
    _T + "timestamp": lambda n: n.value,
}


@dataclass
class Document:
    """A parsed document: its data and the node tree that knows where each value is."""

    data: Any
    node: Node


@dataclass
class Loaded:
    """The result of reading one file: a document when it could be read, and the problems."""

    document: Document | None
    problems: list[Problem] = field(default_factory=list)


class _Refused(Exception):
    """Stops conversion of a document that cannot be trusted (too deep, too many nodes)."""

    def __init__(self, node: Node, code: str, message: str) -> None:
        super().__init__(message)
        self.node, self.code, self.message = node, code, message


def tag_name(tag: str) -> str:
    """`!!python/object` rather than `tag:yaml.org,2002:python/object`."""
    return "!!" + tag[len(_T) :] if tag.startswith(_T) else tag


def position(node: Node | None) -> tuple[int | None, int | None]:
    """1-based (line, column) of a node's start."""
    if node is None:
        return None, None
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


def find_node(root: Node, parts: Sequence[Any]) -> tuple[Node, Node | None, bool]:
    """Follow a path of keys/indices down the node tree.

    Returns (deepest node reached, the key node of the last mapping step taken or None,
    whether the whole path was found).
    """
    node: Node = root
    key_node: Node | None = None
    for part in parts:
        if isinstance(node, MappingNode) and isinstance(part, str):
            for k, v in node.value:
                if isinstance(k, ScalarNode) and k.value == part:
                    node, key_node = v, k
                    break
            else:
                return node, key_node, False
        elif (
            isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value)
        ):
            node, key_node = node.value[part], None
        else:
            return node, key_node, False
    return node, key_node, True


def path_to(root: Node, target: Node) -> list[Any]:
    """The keys/indices leading from root to target (by identity); used only when reporting."""
    stack: list[tuple[Node, list[Any]]] = [(root, [])]
    seen: set[int] = set()
    while stack:
        node, parts = stack.pop()
        if node is target:
            return parts
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for k, v in node.value:
                if k is target:
                    return parts
                stack.append((v, parts + [k.value if isinstance(k, ScalarNode) else "?"]))
        elif isinstance(node, SequenceNode):
            stack.extend((v, parts + [i]) for i, v in enumerate(node.value))
    return []


class _Builder:
    """Turns one document's node tree into plain data, collecting problems as it goes."""

    def __init__(self, name: str, root: Node) -> None:
        self.name = name
        self.root = root
        self.nodes = 0
        self.collections: set[int] = set()  # ids of the lists and mappings built so far
        self.aliased = False
        self.problems: list[Problem] = []

    def problem(self, node: Node, code: str, message: str) -> None:
        line, col = position(node)
        self.problems.append(
            Problem(self.name, line, col, code, message, json_path(path_to(self.root, node)))
        )

    def build(self, node: Node, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            why = "once aliases are expanded" if self.aliased else "(split the file)"
            raise _Refused(node, "NM107", f"more than {MAX_NODES:,} values {why}")
        if depth > MAX_DEPTH:
            raise _Refused(node, "NM107", f"values nested more than {MAX_DEPTH} levels deep")
        tag = node.tag
        if tag == STR:
            return node.value
        if isinstance(node, ScalarNode):
            make = _SCALARS.get(tag)
            if make is None:
                self.problem(
                    node,
                    "NM109",
                    f"tag {tag_name(tag)} is not allowed: use plain strings, numbers, lists and mappings",
                )
                return None
            if tag != _T + "null" and len(node.value) > MAX_NUMBER_CHARS:
                self.problem(
                    node,
                    "NM112",
                    f"number {shorten(node.value, 40)} is too long: level files allow "
                    f"at most {MAX_NUMBER_CHARS} characters per number",
                )
                return None
            if tag == _T + "int" and not _PLAIN_INT.fullmatch(node.value):
                self.problem(
                    node,
                    "NM205",
                    f"{shorten(node.value, 40)} is not a plain whole number: write it with the"
                    " digits 0-9 only, no leading zero, sign, underscore or base prefix"
                    " (YAML 1.1 and 1.2 readers read it differently)",
                )
                return None
            if tag == _T + "float" and ("_" in node.value or ":" in node.value):
                self.problem(
                    node,
                    "NM205",
                    f"{shorten(node.value, 40)} is not a plain number: write it without"
                    " underscores or colons (YAML 1.1 and 1.2 readers read it differently)",
                )
                return None
            try:
                value = make(node)
            except (ValueError, TypeError, ArithmeticError, yaml.YAMLError):
                self.problem(
                    node, "NM109", f"{shorten(node.value, 40)} cannot be read as {tag_name(tag)}"
                )
                return None
            if isinstance(value, float) and not math.isfinite(value):
                self.problem(node, "NM111", f"{node.value!r} is not a finite number")
            return value
        if id(node) in self.collections:  # a collection met twice: an alias
            self.aliased = True
        else:
            self.collections.add(id(node))
        if isinstance(node, SequenceNode):
            if tag != SEQ:
                self.problem(node, "NM109", f"tag {tag_name(tag)} is not allowed on a list")
            return [self.build(item, depth + 1) for item in node.value]
        if tag != MAP:
            self.problem(
                node,
                "NM109",
                f"tag {tag_name(tag)} is not allowed on a mapping (sets, ordered maps and pairs are not JSON)",
            )
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                self.problem(
                    key_node, "NM109", "a mapping key must be a plain string, not a list or mapping"
                )
                continue
            if key_node.tag == _T + "merge":
                self.problem(
                    key_node, "NM109", "merge keys (<<) are not allowed: write the fields out"
                )
                continue
            key = self.build(key_node, depth + 1)
            if not isinstance(key, str):
                self.problem(
                    key_node,
                    "NM110",
                    f"mapping key {key_node.value!r} is read as {type(key).__name__}; quote it to make it a string",
                )
                continue
            if key in out:
                first = next(
                    k
                    for k, _ in node.value
                    if isinstance(k, ScalarNode) and k.value == key_node.value
                )
                line, col = position(first)
                self.problem(
                    key_node,
                    "NM106",
                    f"duplicate key {key!r} (first defined at line {line}, column {col})",
                )
            out[key] = self.build(value_node, depth + 1)
        return out


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _yaml_error(name: str, text: str, exc: yaml.YAMLError) -> Problem:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        parts = [p for p in (exc.context, exc.problem) if p]
        message = "YAML syntax error: " + ", ".join(parts) if parts else "YAML syntax error"
        if exc.context_mark is not None and exc.problem_mark is not None and exc.context:
            message += f" (started at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        if not name.lower().endswith((".yaml", ".yml", ">")):  # `validate README.md`
            message = f"not a YAML level file (level files are .yaml or .yml): {message}"
        return Problem(name, line, col, "NM105", message, "$")
    if isinstance(exc, yaml.reader.ReaderError):
        line, col = _line_col(text, exc.position) if isinstance(exc.position, int) else (None, None)
        char = exc.character
        what = (
            f"#x{ord(char):04x}"
            if isinstance(char, str)
            else f"#x{char:02x}"
            if isinstance(char, int)
            else "?"
        )
        return Problem(
            name, line, col, "NM105", f"unacceptable character {what}: {exc.reason}", "$"
        )
    return Problem(name, None, None, "NM105", f"YAML error: {exc}", "$")


def load_text(text: str, name: str) -> Loaded:
    """Parse YAML text holding one document; problems name the file as `name`."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        nodes = list(yaml.compose_all(text, Loader=Loader))
    except yaml.YAMLError as exc:
        return Loaded(None, [_yaml_error(name, text, exc)])
    except RecursionError:  # the pure-Python composer on absurd nesting
        return Loaded(
            None, [Problem(name, None, None, "NM107", "values nested too deeply to read", "$")]
        )
    if not nodes:
        return Loaded(
            None,
            [Problem(name, 1, 1, "NM103", "the file is empty: it holds no YAML document", "$")],
        )
    if len(nodes) > 1:
        line, col = position(nodes[1])
        return Loaded(
            None,
            [
                Problem(
                    name,
                    line,
                    col,
                    "NM108",
                    f"the file holds {len(nodes)} YAML documents; a level file holds exactly one (split it into one file per document)",
                    "$",
                )
            ],
        )
    if "!" in text:  # a tag needs one; only then is the event pass worth it
        tagged = _tags(text, name)
        if tagged:
            return Loaded(None, tagged)
    root = nodes[0]
    builder = _Builder(name, root)
    try:
        data = builder.build(root)
    except _Refused as exc:
        line, col = position(exc.node)
        return Loaded(
            None, builder.problems + [Problem(name, line, col, exc.code, exc.message, "$")]
        )
    if builder.problems:
        return Loaded(None, builder.problems)
    return Loaded(Document(data, root))


def _tags(text: str, name: str) -> list[Problem]:
    """NM109 for every explicit tag in the text (the node tree cannot tell `!!int 5` from `5`)."""
    out: list[Problem] = []
    for event in yaml.parse(text, Loader=Loader):
        tag = getattr(event, "tag", None)
        if tag is not None:
            mark = event.start_mark
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
            out.append(
                Problem(
                    name,
                    line,
                    col,
                    "NM109",
                    f"tag {tag_name(tag)} is not allowed: level files hold plain strings, numbers, "
                    "booleans, lists and mappings (docs/validation.md: tags are refused)",
                    "$",
                )
            )
    return out


def load_bytes(raw: bytes, name: str) -> Loaded:
    """Decode (strict UTF-8) and parse."""
    if len(raw) > MAX_BYTES:
        return Loaded(None, [_too_large(name, len(raw))])
    if not raw.strip():
        return Loaded(
            None,
            [Problem(name, 1, 1, "NM103", "the file is empty: it holds no YAML document", "$")],
        )
    if len(raw) > MAX_CURVE_FILE_BYTES and _CURVES_KIND.search(raw, 0, 65536):
        return Loaded(
            None,
            [
                Problem(
                    name,
                    None,
                    None,
                    "NM104",
                    f"the curves file is {len(raw):,} bytes; curves files are limited to {MAX_CURVE_FILE_BYTES:,} bytes"
                    f" and {MAX_CURVES} curves (split it)",
                    "$",
                )
            ],
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return Loaded(
            None,
            [
                Problem(
                    name,
                    line,
                    col,
                    "NM102",
                    f"the file is not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} ({exc.reason})",
                    "$",
                )
            ],
        )
    return load_text(text, name)


def _too_large(name: str, size: int) -> Problem:
    return Problem(
        name,
        None,
        None,
        "NM104",
        f"the file is {size:,} bytes; level files are limited to {MAX_BYTES:,} bytes (split it)",
        "$",
    )


def load_file(path: Path, name: str | None = None) -> Loaded:
    """Read and parse one regular file; every failure is a Problem, never an exception."""
    name = str(path) if name is None else name
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return Loaded(
                    None,
                    [
                        Problem(
                            name,
                            None,
                            None,
                            "NM101",
                            "cannot read the file: not a regular file",
                            "$",
                        )
                    ],
                )
            if info.st_size > MAX_BYTES:
                return Loaded(None, [_too_large(name, info.st_size)])
            with os.fdopen(os.dup(fd), "rb") as handle:
                # at most one byte past the limit (files may grow)
                raw = handle.read(MAX_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return Loaded(
            None,
            [
                Problem(
                    name, None, None, "NM101", f"cannot read the file: {exc.strerror or exc}", "$"
                )
            ],
        )
    return load_bytes(raw, name)
