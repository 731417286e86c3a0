# Types of the compiled core (pipeline/engine/_core.c), for mypy.
from typing import TypeVar, overload

_T = TypeVar("_T")

MAX_INPUT_CELLS: int
SOURCE_SHA256: str
RANDOM: int
SCANNER: int
LOOKAHEAD: int
OPENER: int
LOCAL: int
PLANNER: int
PROXIMITY: int

class MT:
    def __init__(self, state: tuple[int, ...], /) -> None: ...
    def state(self) -> tuple[int, ...]: ...
    def randbelow(self, n: int, /) -> int: ...

def seeded_mt(key: bytes, /) -> MT: ...
def legal_pairs(cells: bytes, /) -> list[tuple[int, int]]: ...
def scan_pairs(cells: bytes, /) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]: ...
def pairs_ordered(cells: bytes, /) -> list[tuple[int, int]]: ...
def has_legal_pair(cells: bytes, /) -> bool: ...
def remove_pair(cells: bytes, i: int, j: int, /) -> bytes: ...
def add_numbers(cells: bytes, /) -> bytes: ...
def pair_counts_after(cells: bytes, /) -> list[int]: ...
def track(cells: bytes, i: int, j: int, /) -> tuple[bytes, list[tuple[int, int]], bool, bool]: ...
@overload
def play(
    kind: int,
    param: int,
    cells: bytes,
    adds: int,
    games: int,
    mt: MT,
    record: bool,
    max_moves: int,
    /,
) -> list[tuple[bool, int, int, int, int, bytes, list[int] | None]]: ...
@overload
def play(
    kind: int,
    param: int,
    cells: bytes,
    adds: int,
    games: int,
    mt: MT,
    record: bool,
    max_moves: int,
    cls: type[_T],
    /,
) -> list[_T]: ...

PLAYOUTS_NONE: int
PLAYOUTS_WON: int
PLAYOUTS_STACK: int
PLAYOUTS_OUT: int

def playouts(
    cells: bytes,
    adds: int,
    count: int,
    mt: MT,
    stack: bool,
    nodes_left: int,
    max_cells: int,
    /,
) -> tuple[int, bytes, int, bytes]: ...
