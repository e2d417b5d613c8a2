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
