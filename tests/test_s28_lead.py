"""Session 28, lead: small refusals left by the session's helpers (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import ConfigError
from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli


def test_a_statistic_asked_twice_from_python_is_refused_as_agree_refuses_it() -> None:
    # t28red2's left item: agreement_table(table, ["cohen", "cohen"]) gave two equal rows,
    # where `failcodes agree --stat cohen,cohen` is refused ("--stat names 'cohen' twice").
    frame = pd.DataFrame({"r1": ["a", "a", "b", "b"], "r2": ["a", "b", "b", "b"]})
    table = fc.ratings_from_frame(frame)
    with pytest.raises(ConfigError, match="statistics names 'cohen' twice"):
        fc.agreement_table(table, ["cohen", "cohen"])
    # asked once, it is the one row: Cohen by hand, po = 3/4, pe = (2/4 * 1/4) + (2/4 * 3/4)
    # = 1/2, kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    (row,) = fc.agreement_table(table, ["cohen"])
    assert row.value == pytest.approx(0.5)


def test_categories_naming_one_no_rater_gave_are_said_and_a_case_twin_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t28red2's left item: --categories a,b,A on ratings of a and b counted A as a third
    # category, unsaid: Gwet's AC1 0.673 where the two written categories give 0.529.
    # By hand (Gwet 2008), 4 units, r1 = a a b a, r2 = a b b a: pa = 3/4; pi_a = 5/8,
    # pi_b = 3/8; q = 2: pe = (5/8 * 3/8 + 3/8 * 5/8) / 1 = 15/32, AC1 = (24/32 - 15/32) /
    # (17/32) = 9/17 = 0.529; q = 3 (c never given): pe = (5/8*3/8 + 3/8*5/8 + 0) / 2 = 15/64,
    # AC1 = (48/64 - 15/64) / (49/64) = 33/49 = 0.673.
    path = ratings_file(tmp_path, "unit,r1,r2\nu1,a,a\nu2,a,b\nu3,b,b\nu4,a,a\n")
    stat = ["--stat", "gwet_ac1", *AGREE_JSON]
    code, _, err = run_cli(["agree", str(path), "--categories", "a,b,A", *stat], capsys)
    assert code == 2
    assert "--categories names 'A', which no rater gave, beside 'a', which they did" in err
    code, out, _ = run_cli(["agree", str(path), "--categories", "a,b,c", *stat], capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(33 / 49)
    assert "category set: the 3 of --categories, 1 given by no rater (c): gwet_ac1" in out
    code, out, _ = run_cli(["agree", str(path), "--categories", "a,b", *stat], capsys)
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(9 / 17)
    assert "given by no rater" not in out


def test_a_label_column_judging_the_retrieval_is_refused_as_the_sentences_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t28red's left item: a column judging another stage than the verdict was read as the
    # clinicians' truth. Four claims, the verifier right on each (s1, s3 refuted and false;
    # s2, s4 supported and true: by hand -m refuted TP 2, TN 2), whose retrieval a rater
    # marked right on s1, s2 only: "retrieval_correct = no -> error" labelled s3, s4 errors
    # and s1, s2 none: TP 1 (s3), FP 1 (s1), FN 1 (s4), TN 1 (s2), exit 0.
    table = tmp_path / "rc.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,retrieval_correct\n"
        "q1,s1,Aspirin cures cancer,refuted,yes\n"
        "q1,s2,Ibuprofen is an NSAID,supported,yes\n"
        "q2,s3,Statins raise LDL,refuted,no\n"
        "q2,s4,Metformin lowers glucose,supported,no\n"
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            "ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels),
            "--system", "A", "--label-rule", "retrieval_correct = no -> error",
        ],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "'retrieval_correct' is named as a judgement of the pipeline's retrieval" in err
    assert len(err.strip().splitlines()) == 1
    assert not traces.exists() and not labels.exists()
    # mapped to has_error of a labels table (evidence judged relevant or not): refused too
    lab = tmp_path / "lab.csv"
    lab.write_text("sentence_id,evidence_relevant\ns1,1\ns2,1\ns3,0\ns4,0\n")
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(lab), "-o", str(labels),
         "--map", "evidence_relevant=has_error"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert "judges the pipeline's evidence" in err
    assert not labels.exists()


def test_metrics_say_how_many_resamples_an_interval_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # t28cmp's left item: an interval over the resamples where its metric is defined left the
    # others out, unsaid (agree says "coefficient undefined in N of M resamples"). Ten
    # questions of one sentence, one of them an error the system flags (TP 1, TN 9): F1 is
    # defined only in resamples that draw q0, so by hand (0.9)^10 = 34.9% of resamples leave
    # it undefined (~697 of 2000, sd ~21); specificity is defined in every resample.
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    rows = [
        {"system": "A", "question_id": f"q{k}", "sentence_id": f"s{k}", "claim_id": f"c{k}",
         "claim": f"claim {k}", "verdict": "refuted" if k == 0 else "supported"}
        for k in range(10)
    ]  # fmt: skip
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    gold = [
        {"question_id": f"q{k}", "sentence_id": f"s{k}", "has_error": k == 0} for k in range(10)
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in gold))
    code, out, _ = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--bootstrap", "2000", "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0
    (row,) = json.loads(out)
    left = 2000 - row["f1_ci_defined_resamples"]
    assert 600 < left < 800  # 697 expected
    assert f"undefined in {left} of 2000 resamples (left out" in row["f1_ci_warning"]
    assert row["specificity_ci_defined_resamples"] == 2000
    assert "resamples (left out" not in row["specificity_ci_warning"]
