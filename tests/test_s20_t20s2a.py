"""Session 20 (t20s2a): a comparison saved in a study is checked against its data's digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.codebook import bundled, dump
from tests.cli_helpers import run_cli

STUDY = """\
name = "stale-comparison"
codebook = "medical-fact-check.v1.yaml"
[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["traces.jsonl"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
[metrics]
bootstrap = 0
[judge]
kinds = ["retrieval", "reasoning"]
[review]
labelstudio = false
"""

VERDICTS = {
    "sysA": {"q1s0": "refuted", "q1s1": "supported", "q2s0": "refuted", "q2s1": "supported"},
    "sysB": {"q1s0": "refuted", "q1s1": "supported", "q2s0": "supported", "q2s1": "supported"},
}


def _traces() -> str:
    rows = [
        {
            "system": system,
            "question_id": sid[:2],
            "sentence_id": sid,
            "sentence": f"Drug {sid} lowers the risk.",
            "verdict": verdict,
            "reasoning": f"The trial of drug {sid} says {verdict}.",
            "passages": [{"passage_id": f"p-{sid}", "rank": 1, "text": f"Trial of drug {sid}."}],
        }
        for system, by_sentence in VERDICTS.items()
        for sid, verdict in by_sentence.items()
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _labels(q2s0_error: bool) -> str:
    errors = {"q1s0": True, "q1s1": False, "q2s0": q2s0_error, "q2s1": False}
    return "".join(
        json.dumps({"sentence_id": sid, "question_id": sid[:2], "has_error": e}) + "\n"
        for sid, e in errors.items()
    )


def _f1_row(table: Path) -> str:
    [row] = [line for line in table.read_text().splitlines() if "permutation_f1" in line]
    return row


def made_study(root: Path) -> Path:
    """The study above at ``root``: q1s0 and q2s0 labelled errors."""
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    (root / "traces.jsonl").write_text(_traces(), encoding="utf-8")
    (root / "labels.jsonl").write_text(_labels(True), encoding="utf-8")
    (root / "failcodes.toml").write_text(STUDY, encoding="utf-8")
    return root


def test_a_report_refuses_a_comparison_of_labels_corrected_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = made_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    data = root / "data"
    saved = root / "comparisons" / "d.json"
    saved.parent.mkdir()
    compare = ["compare", "--traces", str(data / "d.traces.parquet"), "--labels"]
    compare += [str(data / "d.labels.jsonl"), "--resamples", "20", "--format", "json"]
    code, out, err = run_cli(compare, capsys)
    assert code == 0, err
    saved.write_text(out, encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    # q1s0, q2s0 errors: sysA TP 2 -> F1 1; sysB TP 1, FN 1 -> F1 2/(2+1) = 0.667; A - B = 0.333
    assert "| f1_difference=0.333 |" in _f1_row(tmp_path / "r1/tables/comparisons.md")
    # q2s0 corrected to no error: sysA TP 1, FP 1 -> 2/3; sysB TP 1 -> 1; A - B = -0.333. The
    # report showed +0.333 beside these metrics, exit 0 (comparisons/ is no step of the run)
    (root / "labels.jsonl").write_text(_labels(False), encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2
    rows = json.loads((root / "metrics/d.json").read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(1, 1, 0, 2), (1, 0, 0, 3)]
    assert (
        f"{saved}: was computed from other data than data/d.labels.jsonl holds now (a label "
        "corrected?): the report would show its tests beside the metrics of the data as it is; "
        f"compute it again (failcodes compare --traces {data / 'd.traces.parquet'} --labels "
        f"{data / 'd.labels.jsonl'} --format json > {saved}), or delete it" in err
    )
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r2")], capsys)
    assert code == 2 and not (tmp_path / "r2").exists()
    code, out, err = run_cli(compare, capsys)  # computed again: shown, with the new sign
    saved.write_text(out, encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r3")], capsys)
    assert code == 0, err
    assert "| f1_difference=-0.333 |" in _f1_row(tmp_path / "r3/tables/comparisons.md")
    # a comparison that records no digests (an older failcodes', or the demo's before) cannot
    # be checked: refused as well, naming both files
    saved.write_text(json.dumps({"tests": json.loads(out)["tests"]}), encoding="utf-8")
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r4")], capsys)
    assert code == 2
    assert "records no digest of the traces and labels it was computed from" in err
    assert "checked against data/d.traces.parquet, data/d.labels.jsonl:" in err
