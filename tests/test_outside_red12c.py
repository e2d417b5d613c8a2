"""Outside red-team, session 12 (t12red3): t12red1's leftovers (REPORT-t12red1.md, "Left").

Each test holds the value computed by hand beside its assertion, or the exact line.
"""

from __future__ import annotations

from pathlib import Path

import pytest


# ---------------------------------------------------------------------------------------
# ingest: values a label rule does not name, given its implied opposite
# ---------------------------------------------------------------------------------------
def test_values_the_rule_does_not_name_are_said_with_their_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli_helpers import run_cli

    # gold = bad -> error: 'bad' is the rule's value, every other value gets no_error.
    # 'partially wrong' and 'unsure' are not "ok": read as no_error they are 2 more true
    # negatives, said before only as "2 error / 4 no-error".
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,gold\n"
        "q1,s1,a,supported,ok\nq1,s2,b,refuted,bad\nq2,s3,c,supported,partially wrong\n"
        "q2,s4,d,refuted,bad\nq3,s5,e,supported,Unsure\nq3,s6,f,supported,ok\n"
    )
    out = [str(tmp_path / "t.jsonl"), "--labels-out", str(tmp_path / "l.jsonl")]
    base = ["ingest", "generic", str(table), "-o", *out, "--system", "A"]
    code, _, err = run_cli([*base, "--label-rule", "gold = bad -> error"], capsys)
    assert code == 0
    # errors: s2, s4 = 2; no-error: s1, s3, s5, s6 = 4
    assert "2 error / 4 no-error sentence labels" in err
    # values other than 'bad', in the order first met: ok (s1, s6) = 2, partially wrong (s3)
    # = 1, Unsure (s5) = 1 (first spelling)
    assert (
        "label rule 'gold = bad -> error': 3 values it does not name got no_error, its implied "
        "opposite: 'ok' 2, 'partially wrong' 1, 'Unsure' 1 (give a value its own clause if it "
        "is not no_error)"
    ) in err
    # generic-labels: the same words (the same rule object)
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,gold\ns1,ok\ns2,bad\ns3,partially wrong\ns4,ok\n")
    code, _, err = run_cli(
        [
            *("ingest", "generic-labels", str(labels), "-o", str(tmp_path / "o.jsonl")),
            *("--label-rule", "gold = bad -> error"),
        ],
        capsys,
    )
    assert code == 0
    # ok (s1, s4) = 2, partially wrong (s3) = 1
    assert (
        "2 values it does not name got no_error, its implied opposite: 'ok' 2, 'partially wrong' 1"
    ) in err
    # exactly the rule's two values (bad, and one other for its opposite): nothing new
    table.write_text(
        "question_id,sentence_id,claim,verdict,gold\n"
        "q1,s1,a,supported,ok\nq1,s2,b,refuted,bad\nq2,s3,c,supported,ok\n"
    )
    code, _, err = run_cli([*base, "--label-rule", "gold = bad -> error"], capsys)
    assert code == 0
    assert "1 error / 2 no-error sentence labels" in err
    assert "does not name" not in err


# ---------------------------------------------------------------------------------------
# report from Python: a study input edited after its run
# ---------------------------------------------------------------------------------------
def test_failcodes_run_of_a_report_request_says_the_study_changed(tmp_path: Path) -> None:
    import failcodes
    from tests.test_outside_red12 import _wide_study

    study = _wide_study(tmp_path / "st", {"w": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(study)
    said: list[str] = []
    failcodes.run(failcodes.ReportRequest(run_dir=study), note=said.append)
    assert said == []  # up to date: nothing to say
    # a clinician corrects s1 (gold wrong): 4 errors in the labels, 3 in the run's metrics
    table = study / "w.csv"
    table.write_text(
        table.read_text().replace(
            "Aspirin lowers fever,Supported ,supported,1,correct",
            "Aspirin lowers fever,Supported ,supported,1,wrong",
        )
    )
    failcodes.run(failcodes.ReportRequest(run_dir=study), note=said.append)
    # the CLI's words (test_outside_red12), first
    assert said[0].startswith("the study changed since `failcodes run` ran these steps: ingest w")
    assert "this report shows the outputs of that run" in said[0]
    page = " ".join((study / "report" / "index.html").read_text().split())
    assert "the study changed since `failcodes run` ran these steps: ingest w" in page


# ---------------------------------------------------------------------------------------
# report: overlapping data sets summed in the run box and Figure 1
# ---------------------------------------------------------------------------------------
def test_the_run_box_and_figure_1_say_data_sets_share_disagreements(tmp_path: Path) -> None:
    import failcodes
    from tests.test_outside_red12 import _wide_study

    # 'pilot' (s1-s4) inside 'full' (s1-s6): under non_supported, full has gpt FN s6 and
    # claude FP s3, pilot claude FP s3 (test_outside_red12's count): 3 rows, 2 disagreements
    study = _wide_study(tmp_path / "st", {"full": "s1 s2 s3 s4 s5 s6", "pilot": "s1 s2 s3 s4"})
    failcodes.run_study(study)
    page = " ".join((study / "report" / "index.html").read_text().split())
    shared = (
        "1 disagreement(s) have the system, ids and text of one in another data set (overlapping "
        "data sets?): "
    )
    # closed-book: every disagreement is the verifier's, 1 + 1 + 1 = 3 summed
    assert (
        f"<td>Attribution</td><td>verification: 3; {shared}summed over data sets, counting "
        "each once per data set</td>"
    ) in page
    # Figure 1 (stages, then subcodes of the coded traces): its own words, not the table's
    assert (
        f"dominant subcodes; error mapping non_supported (sentence level); {shared}the figure "
        "counts each once per data set"
    ) in page
    # the table's caption keeps its words (test_outside_red12)
    assert f"{shared}the all row counts each once per data set" in page
    # one data set: nothing shared, nothing said
    alone = _wide_study(tmp_path / "one", {"full": "s1 s2 s3 s4 s5 s6"})
    failcodes.run_study(alone)
    page = " ".join((alone / "report" / "index.html").read_text().split())
    assert "<td>Attribution</td><td>verification: 2</td>" in page  # gpt FN s6, claude FP s3
    assert "overlapping" not in page
