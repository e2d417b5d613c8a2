import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from failcodes.errors import InputError
from failcodes.hashing import content_hash
from failcodes.labels import Label
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind, unit_id
from failcodes.verdicts import Verdict, normalize_verdict


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("True", Verdict.SUPPORTED),
        ("FALSE", Verdict.REFUTED),
        ("No Evidence", Verdict.NO_EVIDENCE),
        ("not found", Verdict.NO_EVIDENCE),
        ("contradicted", Verdict.REFUTED),
        ("out of scope", Verdict.OUT_OF_SCOPE),
        (" Ambiguous ", Verdict.AMBIGUOUS),
        # researchers' spellings (bad-input sweep, session 5)
        ("Supported", Verdict.SUPPORTED),
        ("SUPPORTED", Verdict.SUPPORTED),
        ("supports", Verdict.SUPPORTED),
        ("NEI", Verdict.NO_EVIDENCE),
        ("not enough info", Verdict.NO_EVIDENCE),
        ("NOT_ENOUGH_INFO", Verdict.NO_EVIDENCE),
        (True, Verdict.SUPPORTED),
    ],
)
def test_seed_aliases_map_to_canonical(raw: object, expected: Verdict) -> None:
    assert normalize_verdict(raw) is expected


def test_unknown_verdict_names_value_file_and_line() -> None:
    with pytest.raises(InputError) as info:
        normalize_verdict("Probably", path="runs.jsonl", line=7)
    msg = str(info.value)
    assert msg.startswith("runs.jsonl:7, field 'verdict': unknown verdict 'Probably'")


def test_custom_alias_overrides() -> None:
    assert normalize_verdict("MAYBE", {"maybe": Verdict.AMBIGUOUS}) is Verdict.AMBIGUOUS


def test_numeric_class_codes_map_through_aliases() -> None:
    """HealthFC-style 0/1/2 verdict codes: an alias on the decimal text maps them."""
    codes = {"0": Verdict.SUPPORTED, "1": Verdict.NO_EVIDENCE, "2": Verdict.REFUTED}
    assert [normalize_verdict(v, codes) for v in (0, 1, 2.0)] == [
        Verdict.SUPPORTED,
        Verdict.NO_EVIDENCE,
        Verdict.REFUTED,
    ]
    with pytest.raises(InputError, match=r"x\.csv:3, field 'verdict': unknown verdict 0 "):
        normalize_verdict(0, path="x.csv", line=3)  # no alias: never defaulted
    with pytest.raises(InputError, match=r"expected a verdict string, got float 0\.5"):
        normalize_verdict(0.5)


def test_trace_rejects_unknown_fields_and_bad_rank() -> None:
    with pytest.raises(ValidationError):
        Passage(passage_id="p", rank=0, text="x")
    with pytest.raises(ValidationError):
        Trace.model_validate(
            {
                "system": "s",
                "question_id": "q",
                "sentence_id": "s1",
                "claim_id": "c1",
                "claim": "x",
                "verdict": "supported",
                "colour": "red",
            }
        )


def test_label_needs_target() -> None:
    with pytest.raises(ValidationError):
        Label(has_error=True)


@settings(max_examples=300, deadline=None)
@given(
    claim=st.text(),
    texts=st.lists(st.text(), max_size=3),
    reasoning=st.none() | st.text(),
    verdict=st.none() | st.sampled_from(list(Verdict)),
    kind=st.sampled_from(list(UnitKind)),
)
def test_unit_id_is_the_content_hash_of_the_unit(claim, texts, reasoning, verdict, kind) -> None:
    # unit ids key journals and caches: the hash of the canonical JSON of exactly these
    # fields (hashing.content_hash), whatever the text (st.text: every code point but lone
    # surrogates, control characters included)
    want = content_hash(
        {
            "kind": kind.value,
            "claim": claim,
            "passages": texts,
            "reasoning": reasoning,
            "verdict": None if verdict is None else verdict.value,
        }
    )
    assert unit_id(kind, claim, tuple(texts), reasoning, verdict) == want


def test_unit_id_of_every_ascii_character_and_a_lone_surrogate() -> None:
    every = "".join(map(chr, range(128))) + "\u00e9\u2028\U0001f600"
    want = content_hash(
        {"kind": "verification", "claim": every, "passages": [every, ""], "reasoning": every,
         "verdict": "refuted"}
    )  # fmt: skip
    assert unit_id(UnitKind.VERIFICATION, every, (every, ""), every, Verdict.REFUTED) == want
    with pytest.raises(UnicodeEncodeError):  # as content_hash: no id for a lone surrogate
        unit_id(UnitKind.RETRIEVAL, "claim", ("\ud800",))


def test_unit_id_depends_on_content_only() -> None:
    a = unit_id(UnitKind.RETRIEVAL, "claim", ("passage",))
    assert a == unit_id(UnitKind.RETRIEVAL, "claim", ("passage",))
    assert a != unit_id(UnitKind.RETRIEVAL, "claim", ("passage!",))
    assert a != unit_id(UnitKind.VERIFICATION, "claim", ("passage",))


def test_network_is_blocked() -> None:
    s = socket.socket()
    try:
        with pytest.raises(RuntimeError, match="network"):
            s.connect(("192.0.2.1", 80))
    finally:
        s.close()
