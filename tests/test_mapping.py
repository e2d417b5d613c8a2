"""Error mappings and any-error aggregation on the hand-made fixture (metrics_fixtures.py)."""

from __future__ import annotations

import pytest

from failcodes.errors import ConfigError, InputError
from failcodes.mapping import (
    NAMED_MAPPINGS,
    SentenceKey,
    resolve_mapping,
    resolve_mappings,
    sentence_groups,
)
from failcodes.tracecols import TraceColumns
from failcodes.verdicts import Verdict
from tests.metrics_fixtures import NE, OOS, A, R, S, trace, traces_a


@pytest.mark.parametrize(
    ("name", "errors"),
    [
        # seed 001 Table 2 and seed 000's RtV names, as listed in issue 2.
        ("refuted", {R}),
        ("refuted+no_evidence", {R, NE}),
        ("non_supported", {R, NE, A, OOS}),
        ("conservative", {R, NE}),
        ("strict", {R, NE, OOS}),
    ],
)
def test_named_mappings(name: str, errors: set[Verdict]) -> None:
    m = resolve_mapping(name)
    assert m.name == name
    assert m.error_verdicts == frozenset(errors)


def test_user_defined_mapping_uses_aliases_and_is_named_canonically() -> None:
    m = resolve_mapping(" Ambiguous , contradicted ")
    assert m.error_verdicts == {A, R}
    assert m.name == "ambiguous,refuted"
    assert resolve_mapping("refuted,ambiguous") == m


def test_unknown_mapping_lists_valid_names() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_mapping("refuted,maybe")
    msg = str(info.value)
    assert "'maybe'" in msg
    for name in NAMED_MAPPINGS:
        assert name in msg


@pytest.mark.parametrize("spec", ["", " , ", "supported", "refuted,true"])
def test_empty_or_supported_mapping_rejected(spec: str) -> None:
    with pytest.raises(ConfigError):
        resolve_mapping(spec)


def test_resolve_mappings_dedupes_in_order() -> None:
    names = [m.name for m in resolve_mappings(["strict", "refuted", "strict", "refuted"])]
    assert names == ["strict", "refuted"]


# Any-error rule on the fixture (see metrics_fixtures.py for the claims):
#   s1 {S, R}  s2 {NE}  s3 {A, S}  s4 {OOS}  s5 {S}  s6 {S, NE}
#   refuted:             s1 only                 (R in s1)
#   refuted+no_evidence: s1, s2, s6              (R in s1, NE in s2 and s6)
#   non_supported:       s1, s2, s3, s4, s6      (all but s5, whose only claim is S)
#   conservative:        same as refuted+no_evidence
#   strict:              s1, s2, s4, s6          (adds OOS in s4)
#   refuted,ambiguous:   s1, s3
@pytest.mark.parametrize(
    ("spec", "flagged"),
    [
        ("refuted", {"s1"}),
        ("refuted+no_evidence", {"s1", "s2", "s6"}),
        ("non_supported", {"s1", "s2", "s3", "s4", "s6"}),
        ("conservative", {"s1", "s2", "s6"}),
        ("strict", {"s1", "s2", "s4", "s6"}),
        ("refuted,ambiguous", {"s1", "s3"}),
    ],
)
def test_any_error_aggregation(spec: str, flagged: set[str]) -> None:
    cols = TraceColumns.from_traces(traces_a())
    groups = sentence_groups(cols)
    assert [groups.sentences[s] for s in groups.sentence] == ["s1", "s2", "s3", "s4", "s5", "s6"]
    flags = groups.flags(cols.error_rows(resolve_mapping(spec).error_verdicts))
    assert {
        groups.sentences[s] for s, f in zip(groups.sentence, flags, strict=True) if f
    } == flagged
    assert groups.without_claims() == []


def test_sentence_without_claims_is_reported_per_system() -> None:
    # System B only judged s2 (one refuted claim); A's sentences s1, s3..s6 and the known
    # (labelled) s7 have no claim for B; s7 has no claim for A either.
    traces = [*traces_a(), trace("B", "q1", "s2", "c3", R)]
    cols = TraceColumns.from_traces(traces)
    groups = sentence_groups(cols, [SentenceKey(question_id="q3", sentence_id="s7")])
    missing = {(m.system, m.sentence_id) for m in groups.without_claims()}
    assert missing == {("A", "s7")} | {("B", s) for s in ("s1", "s3", "s4", "s5", "s6", "s7")}
    flags = groups.flags(cols.error_rows(resolve_mapping("refuted").error_verdicts))
    b = groups.system == groups.systems.index("B")
    assert [
        (groups.sentences[s], bool(f)) for s, f in zip(groups.sentence[b], flags[b], strict=True)
    ] == [("s2", True)]


def test_duplicate_claim_is_an_input_error() -> None:
    traces = [*traces_a(), trace("A", "q1", "s2", "c1", S)]
    with pytest.raises(InputError, match="duplicate claim 'c1'"):
        sentence_groups(TraceColumns.from_traces(traces))
