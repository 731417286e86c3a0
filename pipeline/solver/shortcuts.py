"""The solver's hot-path rules and its sound shortcuts, on plain cell bytes.

- `pairs_ordered`: the legal pairs of `rules.legal_pairs` (same set, tested), vertical and
  diagonal pairs first: a reading-order connection stays open until one of its cells goes (gaps
  only accumulate between them), while a vertical or diagonal one can be closed by a row collapse.
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

from pipeline.engine.board import CLASS, WIDTH, rays
from pipeline.engine.moves import Move

CLASS_OF = bytes(CLASS) + bytes(256 - len(CLASS))  # translate table: value -> class, gap -> 0


def classes_even(cells: bytes) -> bool:
    """Whether every value class has an even number of active cells."""
    cc = cells.translate(CLASS_OF)
    return not (cc.count(1) & 1 or cc.count(2) & 1 or cc.count(3) & 1 or cc.count(4) & 1 or cc.count(5) & 1)


def pairs_ordered(cells: bytes) -> list[tuple[int, int]]:
    """All legal pairs (i < j): vertical/diagonal-only ones first, then reading-order ones."""
    cc = cells.translate(CLASS_OF)
    table = rays(len(cc))
    act = [i for i, k in enumerate(cc) if k]
    act.append(-1)
    geo: list[tuple[int, int]] = []
    read: list[tuple[int, int]] = []
    for n, i in enumerate(act[:-1]):
        k = cc[i]
        nxt = act[n + 1]
        if nxt >= 0 and cc[nxt] == k:
            read.append((i, nxt))
        for ray in table[i]:
            for j in ray:
                w = cc[j]
                if w:
                    if w == k and j != nxt:
                        geo.append((i, j))
                    break
    if geo:
        geo.extend(read)
        return geo
    return read


def stack_certificate(cells: bytes) -> list[Move] | None:
    """Reading-order moves that empty the board, or None if the class sequence does not cancel."""
    cc = cells.translate(CLASS_OF)
    stack: list[int] = []
    for k in cc.replace(b"\x00", b""):
        if stack and stack[-1] == k:
            stack.pop()
        else:
            stack.append(k)
    if stack:
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
