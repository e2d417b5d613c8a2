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


def test_a_verdict_with_a_no_break_space_names_the_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'No\\u00a0Evidence' (pasted from a web page) was refused as 'No\\xa0Evidence'.

    A reader takes that for the very words asked for (no_evidence); the line names U+00A0.
    """
    from tests.cli_helpers import run_cli

    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\nA,q1,s1,c1,x,No\u00a0Evidence\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert err == (
        f"failcodes: error: {table}:2, field 'verdict': unknown verdict 'No\\xa0Evidence'; it "
        "holds U+00A0 NO-BREAK SPACE, which shows as a space (pasted from a web page or a word "
        "processor?): retype the value (canonical verdicts: ambiguous, no_evidence, "
        "out_of_scope, refuted, supported; map it with `failcodes ingest --alias "
        "RAW=CANONICAL`)\n"
    )
    assert not (tmp_path / "o.jsonl").exists()


def test_a_label_and_a_mapping_with_invisible_characters_name_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """has_error 'tr\\u2009ue' (a thin space) and ``-m refuted\\u200b`` were refused unnamed."""
    import json

    from tests.cli_helpers import run_cli

    traces = tmp_path / "t.jsonl"
    row = {"system": "A", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1"}
    traces.write_text(json.dumps({**row, "claim": "x", "verdict": "supported"}) + "\n")
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        json.dumps({"question_id": "q1", "sentence_id": "s1", "has_error": "tr\u2009ue"}) + "\n"
    )
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2
    assert "got 'tr\\u2009ue'; it holds U+2009 THIN SPACE, which shows as a space" in err
    good = tmp_path / "g.jsonl"
    good.write_text(json.dumps({"question_id": "q1", "sentence_id": "s1", "has_error": True}))
    args = ["metrics", "--traces", str(traces), "--labels", str(good), "-m", "refuted\u200b"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "; it holds U+200B ZERO WIDTH SPACE, which shows as nothing" in err


def test_a_review_choice_with_a_byte_order_mark_inside_names_it() -> None:
    """A hand-edited export's choice 'irre\\ufefflevant' was 'unknown choice' with no word why."""
    from failcodes.labelstudio.results import annotations_from_export
    from failcodes.units import UnitKind
    from tests.test_labelstudio_tasks import exported, toy_codebook

    data = exported()
    data[1]["annotations"][1]["result"][0]["value"]["choices"] = ["irre\ufefflevant"]
    res = annotations_from_export(data, toy_codebook(), UnitKind.RETRIEVAL, users={}, project=7)
    [said] = [p.message for p in res.problems if p.value == "irre\ufefflevant"]
    assert said == (
        "unknown choice 'irre\\ufefflevant' in dimension 'entity' (valid: exact_entity, "
        "partial_entity, irrelevant); it holds U+FEFF ZERO WIDTH NO-BREAK SPACE, which shows as "
        "nothing (pasted from a web page or a word processor?): retype the value; not kept"
    )


def test_a_grouped_batch_run_on_a_warm_cache_sends_no_group_the_cache_answers(
    fake_server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A second grouped batch run (a new run folder, the same response cache) sent every group.

    3 claims x 3 passages in one chunk: the first run sends 3 group items (3 units each) and
    caches each group's answer; the second, with nothing in its journal, found no unit's own
    answer in the cache (a group's answer is cached under the group's key alone), sent the 3
    groups again (3 items, the fake server's batches.create called once more) and its dry run
    counted 3 calls. By hand: every group's answer is cached, so 0 items and 0 calls, the 9
    units coded from the cache with the first run's codes.
    """
    import asyncio

    from failcodes.judge import Batch, Grouped, JudgeJob, estimate_run, run_judge_async
    from failcodes.judge.run import read_annotations
    from failcodes.units import UnitKind, retrieval_units
    from tests.judge_helpers import FAKE_PRICES, fake_coder, fresh_fake, make_codebook, make_traces

    fake = fresh_fake(fake_server, monkeypatch, "sk-t27left-batch")
    units = retrieval_units(make_traces(3))
    assert len(units) == 9 and len({u.claim for u in units}) == 3
    mode = Batch(size=50, poll=0.01, group=Grouped(size=10))
    cache = tmp_path / "cache.sqlite"

    def job(run: str) -> JudgeJob:
        return JudgeJob(
            make_codebook(),
            UnitKind.RETRIEVAL,
            tmp_path / run,
            mode=mode,
            cache_path=cache,
            prices=FAKE_PRICES,
        )

    first = asyncio.run(run_judge_async(units, fake_coder(fake, "openai"), job("one")))
    assert (first.groups, first.grouped_units, first.judged_alone) == (3, 9, 0)
    created = fake.stats()["batch_calls"]["batches.create"]
    estimate = estimate_run(units, fake_coder(fake, "openai"), job("two"))
    again = asyncio.run(run_judge_async(units, fake_coder(fake, "openai"), job("two")))
    assert fake.stats()["batch_calls"]["batches.create"] == created  # no batch sent
    assert (again.groups, again.judged_alone, again.cache_hits, again.judged) == (0, 0, 9, 9)
    assert estimate.calls == 0 and estimate.cache_hits == 9
    codes = {a.unit_id: a.codes for a in read_annotations(tmp_path / "one")}
    assert {a.unit_id: a.codes for a in read_annotations(tmp_path / "two")} == codes
