"""Session 33 (h33red): whole-CLI data shapes nobody tried, run as a researcher would."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli

#: A long table, a row per claim, the clinician's sentence label repeated on each claim row.
#: By hand under -m refuted, per sentence: q1:s1 wrong, claim a refuted -> TP; q1:s2 ok,
#: supported -> TN; q2:s1 wrong, nothing refuted -> FN; q2:s2 ok, g refuted -> FP:
#: TP 1, FP 1, FN 1, TN 1.
_LONG = (
    "question_id,sentence_id,claim,verdict,sentence_label\n"
    "q1,q1:s1,a,refuted,wrong\nq1,q1:s1,b,supported,wrong\nq1,q1:s1,c,supported,wrong\n"
    "q1,q1:s2,d,supported,ok\nq2,q2:s1,e,supported,wrong\nq2,q2:s1,f,supported,wrong\n"
    "q2,q2:s2,g,refuted,ok\n"
)


def _ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    table = tmp_path / "t.csv"
    table.write_text(_LONG, encoding="utf-8")
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")),
            *("--labels-out", str(tmp_path / "l.jsonl"), "--system", "A"),
            *("--evidence", "none", "--option", "ids=claim"),
            *("--label-rule", "sentence_label = wrong -> error", *extra),
        ],
        capsys,
    )
    return code, err


def test_a_sentence_label_repeated_on_each_claim_row_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Main wrote 7 claim labels (5 errors: b and c, right claims, among them); sentence-level
    # metrics refused them naming --level claim, which scored TP 1, FP 1, FN 4, TN 1, exit 0.
    code, err = _ingest(tmp_path, capsys)
    assert code == 2, err
    assert "t.csv:2, field 'claim_id'" in err
    assert "the label rule gives each sentence's claims one label (2 sentences" in err
    assert "sentence 'q1:s1': all 3 claims an error" in err
    assert "--option label_level=sentence" in err
    assert not (tmp_path / "o.jsonl").exists()
    assert not (tmp_path / "l.jsonl").exists()
    code, err = _ingest(tmp_path, capsys, "--option", "label_level=sentence")
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "o.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "--format", "csv"),
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (1, 1, 1, 1)}  # by hand, above
    # the clinicians labelled each claim: kept per claim, each claim its own label
    code, err = _ingest(tmp_path, capsys, "--option", "label_level=claim")
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "o.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "--format", "csv", "--level", "claim"),
        ],
        capsys,
    )
    assert code == 0, err
    # claims: a TP; b, c, e, f FN; d TN; g FP
    assert metrics_counts(out, "refuted") == {"A": (1, 1, 4, 1)}


def test_claim_labels_that_split_a_sentence_are_read_per_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # q1:s1's claims differ (a wrong, b right): labelled claim by claim, read so under auto.
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,claim_label\n"
        "q1,q1:s1,a,refuted,wrong\nq1,q1:s1,b,supported,ok\n"
        "q1,q1:s2,c,supported,wrong\nq1,q1:s2,d,supported,wrong\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")),
            *("--labels-out", str(tmp_path / "l.jsonl"), "--system", "A"),
            *("--evidence", "none", "--option", "ids=claim"),
            *("--label-rule", "claim_label = wrong -> error"),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "o.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "--format", "csv", "--level", "claim"),
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (1, 0, 2, 1)}  # a TP, b TN, c d FN


#: One record per answer, the clinician's label on the answer, the sentences its rows.
_ANSWERS = (
    '{"qid": "q1", "answer_has_error": "yes", "sentences": [{"sid": "q1:s1", "claim": "a", '
    '"verdict": "refuted"}, {"sid": "q1:s2", "claim": "b", "verdict": "supported"}, '
    '{"sid": "q1:s3", "claim": "c", "verdict": "supported"}]}\n'
    '{"qid": "q2", "answer_has_error": "no", "sentences": [{"sid": "q2:s1", "claim": "d", '
    '"verdict": "supported"}, {"sid": "q2:s2", "claim": "e", "verdict": "refuted"}]}\n'
)


def test_an_answers_label_given_to_each_of_its_sentences_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Main wrote 5 sentence labels (q1's three errors) at exit 0: TP 1, FP 1, FN 2, TN 1,
    # where the clinicians judged answers: q1 wrong and flagged (a refuted), q2 right and
    # flagged (e refuted): TP 1, FP 1; b and c, right sentences, were two misses.
    data = tmp_path / "answers.jsonl"
    data.write_text(_ANSWERS, encoding="utf-8")
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(data), "-o", str(tmp_path / "o.jsonl")),
            *("--labels-out", str(tmp_path / "l.jsonl"), "--system", "A"),
            *("--evidence", "none", "--option", "rows=sentences[]"),
            *("--map", "qid=question_id", "--map", "sid=sentence_id"),
            *("--label-rule", "answer_has_error = yes -> error"),
        ],
        capsys,
    )
    assert code == 2, err
    assert "answers.jsonl:1, field 'answer_has_error'" in err
    assert "column 'answer_has_error' is a key of the record, not of the rows" in err
    assert not (tmp_path / "o.jsonl").exists()
    assert not (tmp_path / "l.jsonl").exists()


def test_a_records_label_is_read_where_the_record_is_the_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record per sentence, its claims the rows and the label the sentence's: q1:s1 wrong,
    # a refuted -> TP; q1:s2 right, d refuted -> FP; q2:s1 wrong, nothing refuted -> FN.
    data = tmp_path / "sentences.jsonl"
    data.write_text(
        '{"sid": "q1:s1", "qid": "q1", "gold": "wrong", "claims": [{"claim": "a", '
        '"verdict": "refuted"}, {"claim": "b", "verdict": "supported"}]}\n'
        '{"sid": "q1:s2", "qid": "q1", "gold": "ok", "claims": [{"claim": "d", '
        '"verdict": "refuted"}]}\n'
        '{"sid": "q2:s1", "qid": "q2", "gold": "wrong", "claims": [{"claim": "e", '
        '"verdict": "supported"}]}\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(data), "-o", str(tmp_path / "o.jsonl")),
            *("--labels-out", str(tmp_path / "l.jsonl"), "--system", "A"),
            *("--evidence", "none", "--option", "rows=claims[]", "--option", "ids=claim"),
            *("--map", "qid=question_id", "--map", "sid=sentence_id"),
            *("--label-rule", "gold = wrong -> error", "--option", "label_level=sentence"),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "o.jsonl")),
            *("--labels", str(tmp_path / "l.jsonl"), "--format", "csv"),
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (1, 1, 1, 0)}
