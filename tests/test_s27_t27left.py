"""Session 27, helper t27left: things said wrong or left unsaid (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_misspelt_required_field_is_named_not_reported_missing() -> None:
    """``MetricsRequest(trace=[...])`` (``traces`` misspelt) said ``--traces: Field required``.

    The field given was not named, so the line read as if no traces had been given at all;
    the unknown field is said first, with the one it is close to and every field there is
    (MetricsRequest's fields, in their order in commands/measure.py).
    """
    import failcodes

    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.MetricsRequest(trace=[Path("t.jsonl")], labels=Path("l.jsonl"))  # type: ignore[call-arg]
    assert str(caught.value) == (
        "trace: unknown field of MetricsRequest (did you mean 'traces'?); its fields: traces, "
        "labels, mapping, level, bootstrap, seed, confidence, without_claims, question_scope, "
        "verdicts, out, out_format"
    )
    with pytest.raises(failcodes.FailcodesError) as caught:
        failcodes.JudgeRequest(kind="retrieval", sorce=Path("d.jsonl"))  # type: ignore[call-arg]
    said = str(caught.value)
    assert said.startswith("sorce: unknown field of JudgeRequest (did you mean 'source'?); ")
    assert "\n" not in said
