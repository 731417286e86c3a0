"""The solver's sound shortcuts, on plain cell bytes (a ruleset's flags say where each holds).

- `classes_even` (necessary, with no adds left): a pair removes two cells of one value class, so
  each class count keeps its parity; a board with an odd class can never be emptied without an add.
  (An add doubles every count, so after one every class is even: the test only prunes at 0 adds.)
- `stack_certificate` (sufficient): two active cells adjacent among the active cells in reading
  order are always connected (only gaps lie between them). Cancelling adjacent equal classes with a
  stack therefore describes legal reading-order moves, in the order the stack pops them; if the
  whole sequence cancels, those moves win. Row collapse does not change reading order, so the
  moves stay legal after any collapse; they are translated to the board's coordinates as played.
"""

from __future__ import annotations

from pipeline.engine.board import WIDTH
from pipeline.engine.moves import Move
from pipeline.engine.rules import CLASS_OF


def classes_even(cells: bytes, class_of: bytes = CLASS_OF) -> bool:
    """Whether every value class has an even number of active cells (`class_of`: a ruleset's)."""
    cc = cells.translate(class_of)
    if class_of == CLASS_OF:  # ruleset 1's five classes, unrolled for the hot path
        return not (
            cc.count(1) & 1
            or cc.count(2) & 1
            or cc.count(3) & 1
            or cc.count(4) & 1
            or cc.count(5) & 1
        )
    return not any(cc.count(k) & 1 for k in set(cc) if k)


def class_residue(seq: bytes) -> bytes:
    """What cancelling adjacent equal classes leaves of a class sequence (a stack does it; the
    result does not depend on the order of cancellations). Empty: reading-order pairs win."""
    stack = bytearray()
    for k in seq:
        if stack and stack[-1] == k:
            stack.pop()
        else:
            stack.append(k)
    return bytes(stack)


def stack_certificate(cells: bytes, class_of: bytes = CLASS_OF) -> list[Move] | None:
    """Reading-order moves that empty the board, or None if the class sequence does not cancel."""
    cc = cells.translate(class_of)
    if class_residue(cc.replace(b"\x00", b"")):
        return None
    # Cancel again with indices, then translate each pop to the coordinates of its moment.
    pops: list[tuple[int, int]] = []
    where: list[int] = []
    for i, k in enumerate(cc):
        if k:
            if where and cc[where[-1]] == k:
                pops.append((where.pop(), i))
            else:
                where.append(i)
    rows = (len(cells) + WIDTH - 1) // WIDTH
    left = [0] * rows
    for i, k in enumerate(cc):
        if k:
            left[i // WIDTH] += 1
    gone = [False] * rows
    moves = []
    for a, b in pops:
        ra, rb = a // WIDTH, b // WIDTH
        shift_a = sum(gone[:ra])
        shift_b = sum(gone[:rb])
        moves.append(Move(a - WIDTH * shift_a, b - WIDTH * shift_b))
        left[ra] -= 1
        left[rb] -= 1
        for r in (ra, rb):
            if not left[r]:
                gone[r] = True
    return moves
