"""Labeling config XML from a codebook part, parsed back with an XML parser."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from failcodes import codebook as codebooks
from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.errors import ConfigError
from failcodes.labelstudio.config import labeling_config
from failcodes.units import UnitKind
from tests.labelstudio_helpers import sub, toy_codebook


def parse(xml: str) -> ET.Element:
    return ET.fromstring(xml)


def test_retrieval_config_lists_every_subcode_once_per_dimension() -> None:
    cb = toy_codebook()
    root = parse(labeling_config(cb, UnitKind.RETRIEVAL))
    assert root.tag == "View"
    texts = [(t.get("name"), t.get("value")) for t in root.iter("Text")]
    assert texts == [("claim", "$claim"), ("passage", "$passage"), ("proposal", "$proposal")]
    groups = list(root.iter("Choices"))
    assert [g.get("name") for g in groups] == ["entity", "scope"]
    for g in groups:
        assert g.get("choice") == "single"
        assert g.get("toName") == "claim"
    values = {g.get("name"): [c.get("value") for c in g.iter("Choice")] for g in groups}
    # toy codebook: entity has 3 subcodes, scope 2 (tests/labelstudio_helpers.py)
    assert values == {
        "entity": ["exact_entity", "partial_entity", "irrelevant"],
        "scope": ["exact_scope", "broader_scope"],
    }
    areas = [a.get("name") for a in root.iter("TextArea")]
    assert areas == ["other_code", "comment"]
    names = [e.get("name") for e in root.iter() if e.get("name")]
    assert len(names) == len(set(names)) == 7
    # only the high-quality subcode's hint is marked
    hints = [c.get("hint") for c in root.iter("Choice")]
    assert sum(h.startswith("[high quality]") for h in hints) == 2


def test_verification_config_shows_passages_verdict_reasoning() -> None:
    root = parse(labeling_config(toy_codebook(), UnitKind.VERIFICATION))
    texts = [t.get("name") for t in root.iter("Text")]
    assert texts == ["claim", "passages", "verdict", "reasoning", "proposal"]
    assert [g.get("name") for g in root.iter("Choices")] == ["inference"]


def test_bundled_codebook_config_matches_its_codes() -> None:
    cb = codebooks.bundled()
    for kind in UnitKind:
        root = parse(labeling_config(cb, kind))
        part = cb.part(kind)
        got = {
            g.get("name"): [c.get("value") for c in g.iter("Choice")] for g in root.iter("Choices")
        }
        assert got == {d.id: d.code_ids() for d in part.dimensions}


def test_special_characters_in_definitions_are_escaped() -> None:
    cb = toy_codebook()
    dims = (
        Dimension(
            id="entity",
            label='Entity "match" <b>',
            definition="d",
            subcodes=(
                Subcode(id="ok", label="A & B", definition='x < 5 & "y" > 2', high_quality=True),
                sub("bad"),
            ),
        ),
    )
    cb = cb.model_copy(update={"parts": (Part(id=UnitKind.RETRIEVAL, label="R", dimensions=dims),)})
    root = parse(labeling_config(cb, UnitKind.RETRIEVAL))
    hint = next(root.iter("Choice")).get("hint")
    assert hint == '[high quality] A & B: x < 5 & "y" > 2'


def _with_code(code: str, dim_id: str = "entity") -> Codebook:
    # model_construct: the codebook model itself would refuse some of these ids
    bad = Subcode.model_construct(id=code, label="Bad", definition="d", high_quality=False)
    good = sub("exact_entity", True)
    dim = Dimension.model_construct(id=dim_id, label="Entity", definition="d", subcodes=(good, bad))
    part = Part.model_construct(id=UnitKind.RETRIEVAL, label="R", definition="", dimensions=(dim,))
    return Codebook.model_construct(
        name="toy", version=1, parent_version=None, changelog="", parts=(part,), migration=()
    )


@pytest.mark.parametrize(
    "code", ["a,b", "a|b", "$x", "10", "1.10", "true", "False", "é", "a b", ""]
)
def test_code_ids_label_studio_misreads_are_one_clear_error(code: str) -> None:
    with pytest.raises(ConfigError) as info:
        labeling_config(_with_code(code), UnitKind.RETRIEVAL)
    msg = info.value.one_line()
    assert f"code id {code!r} (dimension 'entity')" in msg
    assert "start with a letter" in msg


@pytest.mark.parametrize("code", ["x1", "a.b-c", "Exact_Scope", "trueish"])
def test_safe_code_ids_pass(code: str) -> None:
    root = parse(labeling_config(_with_code(code), UnitKind.RETRIEVAL))
    assert code in [c.get("value") for c in root.iter("Choice")]


def test_dimension_id_clashing_with_reserved_name() -> None:
    with pytest.raises(ConfigError, match="dimension id 'claim' clashes"):
        labeling_config(_with_code("ok", dim_id="claim"), UnitKind.RETRIEVAL)
    with pytest.raises(ConfigError, match="dimension id 'd,x' cannot be a Label Studio tag name"):
        labeling_config(_with_code("ok", dim_id="d,x"), UnitKind.RETRIEVAL)


def test_missing_part_is_config_error() -> None:
    cb = toy_codebook()
    cb = cb.model_copy(update={"parts": cb.parts[:1]})
    with pytest.raises(ConfigError, match="has no 'verification' part"):
        labeling_config(cb, UnitKind.VERIFICATION)
