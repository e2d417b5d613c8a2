"""Session 33 (h33study2): whole studies checked by hand (data sets that reuse ids; asserting)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, small_study


def test_data_sets_reusing_ids_for_other_sentences_share_no_disagreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three data sets, each naming its system A and numbering its questions q1..; every
    # verdict "supported" (refuted mapping: nothing flagged), so each labelled error is an FN.
    #   d1: q1 s1 "Drug one lowers pressure." (error) FN, q2 s3 "Three." (error) FN, s4 TN
    #   d2: q1 s1 "Pill one raises pressure." (error) FN (d1's ids, another sentence), s4 TN
    #   d3: q2 s3 "Three." (error) FN, s4 TN: d1's q2, the same text (a pilot inside d1)
    # Attribution all = 2 + 1 + 1 = 4 rows; one disagreement is in two data sets (q2 s3 of
    # d1 and d3). main said 2: d1's and d2's q1 s1 FN have the same system, ids and kind.
    sets = "".join(
        f'[[datasets]]\nname = "{d}"\n[[datasets.ingest]]\nadapter = "generic"\n'
        f'paths = ["{d}.csv"]\nlabels = true\nlabel_rule = "gold = incorrect -> error"\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        for d in ("d1", "d2", "d3")
    )
    small_study(tmp_path, capsys, "reused", sets)
    head = "question_id,sentence_id,claim,verdict,system,reasoning,gold\n"
    s1 = {"d1": "Drug one lowers pressure.", "d2": "Pill one raises pressure."}
    s3 = "q2,s3,Three.,supported,A,Because three.,incorrect\n"
    s4 = "q2,s4,Four.,supported,A,Because four.,correct\n"
    rows = {
        "d1": f"q1,s1,{s1['d1']},supported,A,Because one.,incorrect\n{s3}{s4}",
        "d2": f"q1,s1,{s1['d2']},supported,A,Because one.,incorrect\n{s4}",
        "d3": f"{s3}{s4}",
    }
    for d, body in rows.items():
        (tmp_path / f"{d}.csv").write_text(head + body, encoding="utf-8")
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    summary = (tmp_path / "report" / "tables" / "attribution.md").read_text(encoding="utf-8")
    assert "| all | 4 | 4 |" in summary, summary
    assert re.findall(r"(\d+) disagreement\(s\) have the system", summary) == ["1"], summary
    assert (
        "1 disagreement(s) have the system, ids and text of one in another data set "
        "(overlapping data sets?): the all row counts each once per data set"
    ) in summary


def test_an_asserting_pipeline_is_named_from_jsonl_traces_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # h33study's study: A a verifier (TP 1, FP 1, FN 1, TN 3), G asserting every claim
    # (ingest verdict = "supported": TP 0, FP 0, FN 2, TN 4). Its traces as the tool's JSONL
    # (data/d.traces.jsonl, a data set ingested before the Parquet; the same records) gave G
    # the note on systems a mapping never flagged ("a support classifier never says refuted
    # ... measured with the non_supported mapping", which gives it recall 0 too).
    import shutil

    from failcodes.traceio import read_traces, write_traces
    from tests.test_s33_h33study import test_an_asserting_pipeline_is_not_said_to_have_a_verifier

    test_an_asserting_pipeline_is_not_said_to_have_a_verifier(tmp_path)  # the Parquet's page
    root = tmp_path / "st"
    parquet = root / "data" / "d.traces.parquet"
    write_traces(root / "data" / "d.traces.jsonl", read_traces(parquet))
    parquet.unlink()
    shutil.rmtree(root / "report")
    code, _, err = run_cli(["report", str(root)], capsys)
    assert code == 0, err
    page = (root / "report" / "index.html").read_text()
    assert "The mapping flagged no labelled sentence of: G" not in page
    assert (
        "G asserts every claim (no verifier: the verdict given at ingest, &#39;asserted by the "
        "system&#39;), so no mapping flags an error of it: recall 0 by construction, each "
        "labelled error it is scored on a miss."
    ) in page
