"""Session 29, t29tab: the report's Tables 2-9 checked by hand on small odd studies."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, small_study

#: One data set: A (retriever r1) and F (retriever r3), two sentences, q1s1 an error both
#: miss (supported), q1s2 no error. F's row of q1s1 retrieved nothing ('N/A', a missing mark:
#: no passage) and gave no reasoning ('N/A').
ONE_SET = """
[[datasets]]
name = "d1"
[[datasets.ingest]]
adapter = "generic"
paths = ["d1.csv"]
labels = true
passage_column = ["passage=wiki"]
label_rule = "gold = incorrect -> error"
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
"""
D1 = (
    "question_id,sentence_id,claim,verdict,system,retriever,reasoning,passage,gold\n"
    "q1,q1s1,claim one,supported,A,r1,because a1,Passage one text.,incorrect\n"
    "q1,q1s2,claim two,supported,A,r1,because a2,Passage two text.,correct\n"
    "q1,q1s1,claim one,supported,F,r3,N/A,N/A,incorrect\n"
    "q1,q1s2,claim two,supported,F,r3,because f2,Passage two text.,correct\n"
)


def _page(root: Path) -> str:
    text = (root / "report" / "index.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


def test_a_system_whose_disagreements_retrieved_nothing_is_said_under_its_missing_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """F's one disagreement (q1s1, FN) has no passage and no reasoning: Tables 8-9 left it out.

    By hand: under 'refuted', A and F each miss q1s1 (FN 1, TN 1); the attribution summary
    has A 1, F 1, all 2, both 'retrieval' (F: "no passage retrieved"). Table 8 has r1 (n=1:
    A's q1s1 passage) and no r3 column (F's claim retrieved no passage: 0 units); Table 9 has
    A (n=1) and no F column (no reasoning to code). The columns were dropped without a word,
    as if r3 and F had not been studied; now the attribution section says each.
    """
    small_study(tmp_path, capsys, "tab", ONE_SET, judge='kinds = ["retrieval", "reasoning"]')
    (tmp_path / "d1.csv").write_text(D1, encoding="utf-8")
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    quality = (tables / "retrieval_quality.md").read_text(encoding="utf-8")
    steps = (tables / "reasoning_steps.md").read_text(encoding="utf-8")
    assert "| dimension | code | r1 (n=1) |\n" in quality  # no r3 column: 0 units
    assert "| dimension | code | A (n=1) |\n" in steps  # no F column: no reasoning
    summary = (tables / "attribution.md").read_text(encoding="utf-8")
    assert "| A | 1 | 1 |\n| F | 1 | 1 |\n| all | 2 | 2 |" in summary
    page = _page(tmp_path)
    assert (
        "d1: no disagreement of F has a passage coded (its claims retrieved none, or the judge "
        "coded none): Table 8 counts no unit of it, and a retriever no other system uses has "
        "no column there"
    ) in page
    assert (
        "d1: no disagreement of F has a reasoning coded (its claims gave none, or the judge "
        "coded none): Table 9 counts no unit of it, and a verifier no other system uses has "
        "no column there"
    ) in page


#: Traces of 4 sentences (A: refuted, supported, refuted, refuted) and labels of the first 2.
PART_SET = """
[[datasets]]
name = "d1"
[[datasets.ingest]]
adapter = "generic"
paths = ["d1.csv"]
passage_column = ["passage=wiki"]
[[datasets.ingest]]
adapter = "generic-labels"
paths = ["l.jsonl"]
[[datasets.pipelines]]
system = "*"
evidence = "retrieved"
"""


def test_table_5_says_it_counts_the_unlabelled_claims_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Labels cover 2 of A's 4 sentences: Table 5 is over all 4 claims, P/R/F1 over 2.

    By hand: Table 5 A: 4 claims, supported 1 (25.0%), refuted 3 (75.0%); over the labelled
    two (q1s1 refuted, q1s2 supported) it would be 50/50, as seed 001's Table 5 (its gold
    subset) counts. P/R/F1: q1s1 error flagged (TP), q1s2 no error, supported (TN): TP 1, TN 1.
    The caption said only "Share of claims per verdict"; now it says whose claims it counts.
    """
    small_study(tmp_path, capsys, "tab", PART_SET, judge='kinds = ["retrieval"]')
    (tmp_path / "d1.csv").write_text(
        "question_id,sentence_id,claim,verdict,system,retriever,reasoning,passage\n"
        "q1,q1s1,claim one,refuted,A,r1,because a1,Passage one text.\n"
        "q1,q1s2,claim two,supported,A,r1,because a2,Passage two text.\n"
        "q2,q2s1,claim three,refuted,A,r1,because a3,Passage three text.\n"
        "q2,q2s2,claim four,refuted,A,r1,because a4,Passage four text.\n",
        encoding="utf-8",
    )
    (tmp_path / "l.jsonl").write_text(
        '{"question_id": "q1", "sentence_id": "q1s1", "has_error": true}\n'
        '{"question_id": "q1", "sentence_id": "q1s2", "has_error": false}\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["run", str(tmp_path)], capsys)
    assert code == 0, err
    tables = tmp_path / "report" / "tables"
    prf = (tables / "prf_sentence.md").read_text(encoding="utf-8")
    assert "| A | refuted | 100.0 | 100.0 | 100.0 | 1 | 0 | 0 | 1 |" in prf
    verdicts = (tables / "verdicts.md").read_text(encoding="utf-8").splitlines()
    assert verdicts[0] == (
        "**Share of claims per verdict; over every claim of the traces, labelled or not "
        "(labels cover part of the units of A, and P/R/F1 only the labelled ones)**"
    )
    assert "| A | 4 | 1 (25.0%) | 3 (75.0%) |" in verdicts
