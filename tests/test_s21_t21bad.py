"""Session 21 (t21bad): the bad-input standard on session 20-21's refusals.

One clear line names the file, the line, the field and the way through; exit 2; nothing
written (tests/test_bad_inputs.py holds each refusal as a row).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: One system, three sentences; s1 in two claims (tests/test_s21_t21red1.py's _SPLIT).
_SPLIT = (
    "system,question_id,sentence_id,claim_id,claim,verdict\n"
    "gpt,q1,s1,s1c1,x,supported\ngpt,q1,s1,s1c2,y,refuted\n"
    "gpt,q1,s2,s2c1,z,supported\ngpt,q2,s3,s3c1,w,supported\n"
)
_REMEDY = (
    'compare claims with --level claim (in a study: [metrics] level = "claim"), or give '
    "sentence labels"
)


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_a_sentence_labelled_through_its_claims_names_the_labels_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # The refusal of a sentence labelled through its claims alone (5afe0f3) and of a claim
    # labelled an error in a sentence labelled no error named the labels file and field but
    # no line ('l.csv, field 'claim_id': ...'), though every other label refusal names the
    # row. Now the line of the claim label: s2c1 is the CSV's line 3 (header line 1, s1 line
    # 2), s1c2 in bad.csv line 5 (after s1, s2, s3).
    traces = tmp_path / "t.csv"
    traces.write_text(_SPLIT, encoding="utf-8")
    cases = {
        "l.csv": (
            "sentence_id,claim_id,has_error\ns1,,false\n,s2c1,true\ns3,,false\n",
            "l.csv:3, field 'claim_id': sentence 's2' is labelled through its claims only "
            "('s2c1'...), and a sentence-level comparison reads sentence labels: it would "
            f"count unlabelled; {_REMEDY}",
        ),
        "bad.csv": (
            "sentence_id,claim_id,has_error\ns1,,false\ns2,,true\ns3,,false\n,s1c2,true\n",
            "bad.csv:5, field 'has_error': sentence 's1' is labelled no error but its claim "
            "'s1c2' an error, and a sentence-level comparison reads the sentence's label "
            f"alone (label the sentence an error); {_REMEDY}",
        ),
    }
    out = tmp_path / "d.jsonl"
    for name, (text, line) in cases.items():
        labels = tmp_path / name
        labels.write_text(text, encoding="utf-8")
        args = [command, "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
        args += ["--bootstrap", "0"] if command == "metrics" else ["-o", str(out)]
        code, stdout, err = run_cli(args, capsys)
        assert (code, stdout) == (2, "")
        assert err.splitlines() == [f"failcodes: error: {tmp_path}/{line}"]
        assert not out.exists()


def test_compare_names_the_claim_labels_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # compare read its labels as a list without lines, so the same refusal named no line
    # ('l.csv, field 'claim_id': ...'); now line 3, the claim label s2c1 (header line 1, s1
    # line 2), as metrics and disagreements say it
    traces = tmp_path / "t.csv"
    traces.write_text(_SPLIT + _SPLIT.split("\n", 1)[1].replace("gpt,", "claude,"))
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,claim_id,has_error\ns1,,false\ns2,s2c1,true\ns3,,false\n")
    code, stdout, err = run_cli(
        ["compare", "--traces", str(traces), "--labels", str(labels)], capsys
    )
    assert (code, stdout) == (2, "")
    assert err.splitlines() == [
        f"failcodes: error: {labels}:3, field 'claim_id': sentence 's2' is labelled through its "
        "claims only ('s2c1'...), and a sentence-level comparison reads sentence labels: it "
        "would count unlabelled; compare pairs sentences: give sentence labels (ingest generic "
        "--label-rule ... --option label_level=sentence makes them)"
    ]
