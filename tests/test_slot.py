"""`Slot.parse`: the one grammar for a stage name, and `L3.S2` in every message."""

from __future__ import annotations

import pytest

from pipeline.cli.assemble_cmds import parse_pin
from pipeline.formats.curation import Curation, CurationError
from pipeline.formats.slot import Slot, SlotError
from pipeline.formats.source import SourceError, resolve


@pytest.mark.parametrize("text", ["L3.S2", "l3.s2", "3.2", " L3.S2 ", "L3.2", "3.S2"])
def test_every_spelling_reads_the_same_stage(text: str) -> None:
    assert Slot.parse(text) == Slot(3, 2)
    assert str(Slot.parse(text)) == "L3.S2" and Slot.parse(text).short == "3.2"


@pytest.mark.parametrize("text", ["", "L1", "1.2.3", "L1-S2", "L12345.S1", "L１.S2", "x1.2"])
def test_anything_else_is_refused_naming_the_form(text: str) -> None:
    with pytest.raises(SlotError, match=r"write it as L<level>\.S<stage>, both from 1"):
        Slot.parse(text)


def test_a_pasteable_repr_and_play_order() -> None:
    assert eval(repr(Slot(3, 2))) == Slot(3, 2)
    assert sorted([Slot(2, 1), Slot(1, 3), Slot(1, 2)]) == [Slot(1, 2), Slot(1, 3), Slot(2, 1)]


def test_the_commands_share_the_grammar(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert parse_pin("l3.s2=nm1-abc") == parse_pin("3.2=nm1-abc") == ((3, 2), "nm1-abc")
    with pytest.raises(SlotError):
        parse_pin("L3.S0=nm1-abc")
    curation = Curation.parse("pin L1.S2=nm1-a\npin L2.S1=nm1-b\n")
    assert curation.pins == (((1, 2), "nm1-a"), ((2, 1), "nm1-b"))
    assert str(curation).splitlines() == ["pin L1.S2=nm1-a", "pin L2.S1=nm1-b"]
    for bad in ("pin L0.S1=nm1-a\n", "pin 1.2=nm1-a\n", "pin l1.s2=nm1-a\n"):
        # a file holds the one spelling
        with pytest.raises(CurationError):
            Curation.parse(bad)
    bundle = tmp_path / "b.yaml"
    bundle.write_text("kind: bundle\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"is not of the form L<level>\.S<stage>"):
        resolve(f"{bundle}:L1.X")


@pytest.mark.parametrize("text", ["L0.S1", "L1.S0", "0.1", "l0.s0"])
def test_a_stage_numbered_from_zero_is_told_that_numbering_starts_at_1(text: str) -> None:
    from pipeline.formats.slot import SlotFromZero

    with pytest.raises(SlotFromZero, match=r"numbered from 1 \(the first Stage is L1.S1\)"):
        Slot.parse(text)
    with pytest.raises(SourceError, match="numbered from 1") as got:
        resolve(f"my-levels.yaml:{text}")
    assert "is not of the form" not in str(got.value)
