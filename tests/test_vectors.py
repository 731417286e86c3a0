"""Conformance vectors from an independent implementation (copied from shared/vectors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.engine.board import format_board, parse
from pipeline.engine.moves import Move, pair_text
from pipeline.engine.rules import add_numbers, legal_pairs, remove_pair

VECTORS = [
    json.loads(line) for line in (Path(__file__).parent / "moves.jsonl").read_text().splitlines()
]


def test_vector_file_is_complete() -> None:
    assert len(VECTORS) == 400


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["board"])
def test_vector(vector: dict) -> None:
    cells = parse(vector["board"])
    assert format_board(cells) == vector["board"]
    assert [pair_text(i, j) for i, j in legal_pairs(cells)] == vector["pairs"]
    for text, expected in vector.get("after", {}).items():
        move = Move.parse(text)
        assert format_board(remove_pair(cells, move.first, move.second)) == expected
    assert format_board(add_numbers(cells)) == vector["after_add"]
