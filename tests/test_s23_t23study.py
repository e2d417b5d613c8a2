"""Session 23 (t23study): an outside study cross-checked number by number.

Each test states the input, what failcodes gave before the fix, and the value computed by
hand beside the assertion.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _prf_rows(table: Path) -> list[str]:
    lines = table.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.startswith(("| sysA", "| sysB"))]


def test_a_study_output_deleted_since_the_run_is_said_first_and_written_again_by_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Files a finished step wrote, deleted between `run` and `report`: the report was built at
    # exit 0 without them and said nothing (an outside study with metrics/clinic.json deleted
    # lost clinic's P/R/F1 rows; attribution/ward/attribution.csv deleted made the attribution
    # summary's `all` row 42 disagreements for the study's 95); `run` left a deleted file beside
    # a step's output (attribute's per_passage.csv: Table 8) as it was, the step "finished".
    from tests.test_s20_t20s2a import STUDY, made_study

    root = made_study(tmp_path / "st")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    # q1s0, q2s0 errors. sysA: both refuted (TP 2), q1s1, q2s1 supported (TN 2): F1 1.0;
    # sysB: q1s0 refuted (TP 1), q2s0 supported (FN 1), TN 2: F1 2 / (2 + 0 + 1) = 66.7%
    prf = _prf_rows(root / "report/tables/prf_sentence.md")
    assert [row.split(" | ")[4] for row in prf] == ["100.0", "66.7"]
    (root / "metrics" / "d.json").unlink()
    (root / "attribution" / "d" / "per_passage.csv").unlink()  # beside attribution.csv
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r1")], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "these files `failcodes run` wrote are gone (deleted since?), so this report shows the "
        "study without them: metrics/d.json (step metrics d), attribution/d/per_passage.csv "
        f"(step attribute d); run `failcodes run {root}` to bring them up to date"
    )
    assert "are gone (deleted since?)" in (tmp_path / "r1/index.html").read_text(encoding="utf-8")
    # the way through: `run` writes both again (attribute too, whose attribution.csv is there)
    code, out, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert "metrics d: done" in out and "attribute d: done" in out
    assert (root / "attribution" / "d" / "per_passage.csv").is_file()
    rows = json.loads((root / "metrics" / "d.json").read_text(encoding="utf-8"))
    assert [(r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(2, 0, 0, 2), (1, 0, 1, 2)]
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r2")], capsys)
    assert code == 0 and "gone" not in err
    prf = _prf_rows(tmp_path / "r2/tables/prf_sentence.md")
    assert [row.split(" | ")[4] for row in prf] == ["100.0", "66.7"]

    # outputs of a step the study no longer plans may go unsaid: [judge] kinds narrowed to
    # retrieval, the report refuses judge/d/reasoning (no more this study's) and says to delete
    # it; deleted, it is no file the study lost
    study = root / "failcodes.toml"
    narrowed = STUDY.replace('kinds = ["retrieval", "reasoning"]', 'kinds = ["retrieval"]')
    study.write_text(narrowed, encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 2 and "judge/d/reasoning (not in [judge] kinds)" in err
    shutil.rmtree(root / "judge" / "d" / "reasoning")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", str(root), "-o", str(tmp_path / "r3")], capsys)
    assert code == 0 and "gone" not in err


def _claims(system: str, verdicts: dict[str, str], passages: bool) -> str:
    rows = []
    for sid, verdict in verdicts.items():
        row: dict[str, object] = {
            "question_id": sid[:2],
            "sentence_id": sid,
            "claim_id": f"{sid}c1",
            "claim": f"Drug {sid} lowers the risk",
            "verdict": verdict,
        }
        if passages:
            row["passages"] = [{"passage_id": f"{system}-{sid}", "rank": 1, "text": f"Drug {sid}."}]
        rows.append(row)
    return "".join(json.dumps(r) + "\n" for r in rows)


def test_a_study_part_says_no_undeclared_evidence_the_study_declares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One file per system, the study's [[datasets.pipelines]] declaring the closed-book one
    # (evidence = "none"): `failcodes run` said, from that system's part ingest, "evidence not
    # declared for closedbook: ... declare it: --evidence closedbook=retrieved" (the parts
    # took no declaration: the merge did), a false line on the run's output (an outside
    # study of 3 systems). The parts now take the study's declarations (checked at the merge).
    from failcodes.codebook import bundled, dump

    root = tmp_path / "st"
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    verdicts = {"q1s0": "refuted", "q1s1": "supported", "q2s0": "supported", "q2s1": "supported"}
    (root / "rag.jsonl").write_text(_claims("rag", verdicts, True), encoding="utf-8")
    (root / "closed.jsonl").write_text(_claims("closed", verdicts, False), encoding="utf-8")
    errors = {"q1s0": True, "q1s1": False, "q2s0": True, "q2s1": False}
    (root / "labels.jsonl").write_text(
        "".join(json.dumps({"sentence_id": s, "has_error": e}) + "\n" for s, e in errors.items()),
        encoding="utf-8",
    )
    study = """\
name = "parts"
codebook = "medical-fact-check.v1.yaml"
[[datasets]]
name = "d"
[[datasets.ingest]]
adapter = "generic"
paths = ["rag.jsonl"]
system = "rag"
[[datasets.ingest]]
adapter = "generic"
paths = ["closed.jsonl"]
system = "closedbook"
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["labels.jsonl"]
PIPELINES
[metrics]
bootstrap = 0
[judge]
kinds = ["retrieval"]
[review]
labelstudio = false
"""
    pipelines = '[[datasets.pipelines]]\nsystem = "closedbook"\nevidence = "none"\n'
    pipelines += '[[datasets.pipelines]]\nsystem = "rag"\nevidence = "retrieved"\n'
    (root / "failcodes.toml").write_text(study.replace("PIPELINES", pipelines), encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assert "evidence not declared" not in err
    # each system: q1s0 refuted, an error (TP); q2s0 supported, an error (FN); 2 TN: one
    # disagreement each; closedbook's FN goes to verification (declared none: no retrieval stage)
    stages = (root / "attribution/d/attribution.csv").read_text(encoding="utf-8").splitlines()
    closed = [line for line in stages[1:] if line.split(",")[1] == "closedbook"]
    assert len(closed) == 1 and ",FN,verification," in closed[0]
    # nothing declared: said, by the merge (its part says it too, as before)
    (root / "failcodes.toml").write_text(study.replace("PIPELINES", ""), encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    said = [line for line in err.splitlines() if "evidence not declared for closedbook" in line]
    assert any(line.startswith("wrote 8 traces -> ") for line in said)


def test_a_run_says_what_its_metrics_assumed_of_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sysB never answered q2: its labelled sentences count for sysB as no error flagged
    # (--question-scope all, the default when not every system answered), its error there a
    # miss: recall 1/2 where --question-scope answered reads 1/1. `failcodes metrics` says so
    # on its first line; `failcodes run` (and failcodes.run_study) said it in the step's log
    # alone, its output giving the outside study's run (2 data sets, 3 systems) no word.
    from failcodes.codebook import bundled, dump

    root = tmp_path / "st"
    root.mkdir()
    (root / "medical-fact-check.v1.yaml").write_text(dump(bundled()), encoding="utf-8")
    answered = {"sysA": ("q1", "q2"), "sysB": ("q1",)}
    rows = [
        {"system": system, "question_id": q, "sentence_id": f"{q}s{i}", "claim_id": f"{q}s{i}"}
        | {"claim": f"Drug {q}{i} works", "verdict": "refuted" if i == 0 else "supported"}
        for system, questions in answered.items()
        for q in questions
        for i in (0, 1)
    ]
    (root / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    labels = [
        {"sentence_id": f"{q}s{i}", "question_id": q, "has_error": i == 0}
        for q in ("q1", "q2")
        for i in (0, 1)
    ]
    (root / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    (root / "failcodes.toml").write_text(
        'name = "scope"\ncodebook = "medical-fact-check.v1.yaml"\n[[datasets]]\nname = "d"\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["t.jsonl"]\n'
        '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.jsonl"]\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        "[metrics]\nbootstrap = 0\n[review]\nlabelstudio = false\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    assumed = [line for line in err.splitlines() if line.startswith("Assumed: ")]
    assert len(assumed) == 1
    assert (
        "not every system answered every labelled question: a labelled sentence of a "
        in (assumed[0])
    )
    assert (
        "question a system never answered counts for it as well (--question-scope all)"
        in (assumed[0])
    )
    rows = json.loads((root / "metrics" / "d.json").read_text(encoding="utf-8"))
    # sysA: q1s0, q2s0 refuted errors (TP 2), q1s1, q2s1 (TN 2); sysB: q1s0 TP, q1s1 TN, q2s0
    # unanswered error (FN), q2s1 unanswered (TN): recall 1/2
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("sysA", 2, 0, 0, 2),
        ("sysB", 1, 0, 1, 2),
    ]
    assert rows[1]["recall"] == 0.5
