"""Sentence labels matched to sentence groups by code (issue 18, memory at 10x).

``compute_metrics`` on :class:`~failcodes.tracecols.SentenceColumns` matches the labels to
the groups' sorted vocabularies by binary search (no label index dict, no tuple per labelled
sentence), and ``check_labels_against_traces`` on groups does the same. The values below
are counted by hand from the five traces and four labels of ``_example``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes import columnar, labelio
from failcodes.errors import InputError
from failcodes.labels import (
    Label,
    SentenceLabelCodes,
    check_labels_against_traces,
    first_questions,
    vocabulary_codes,
)
from failcodes.metrics import compute_metrics, counts_by_cluster
from failcodes.tracecols import SentenceColumns

# system, question, sentence, claim, verdict (file order)
ROWS = [
    ("A", "q1", "s1", "c1", "refuted"),
    ("A", "q1", "s1", "c2", "supported"),
    ("B", "q1", "s1", "c1", "supported"),
    ("A", "q1", "s2", "c3", "supported"),
    ("A", "q2", "s3", "c4", "no_evidence"),
    ("B", "q2", "s3", "c4", "refuted"),
]


def _example(tmp_path: Path) -> SentenceColumns:
    path = tmp_path / "traces.jsonl"
    lines = [
        {
            "system": s,
            "question_id": q,
            "sentence_id": sid,
            "claim_id": c,
            "claim": "a claim",
            "verdict": v,
        }
        for s, q, sid, c, v in ROWS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    cols = columnar.read_sentence_columns(path)
    assert isinstance(cols, SentenceColumns)
    return cols


LABELS = [
    Label(sentence_id="s1", has_error=True),
    Label(sentence_id="s2", has_error=False),
    Label(sentence_id="s3", question_id="q2", has_error=True),
    Label(sentence_id="s4", question_id="q2", has_error=False),  # in no trace
]


def test_vocabulary_codes_by_binary_search() -> None:
    vocabulary = ["a", "b", "d"]
    codes = vocabulary_codes(vocabulary, ["d", "c", None, "a", "b", "e"], 6)
    assert codes.tolist() == [2, -1, -1, 0, 1, -1]
    assert codes.dtype == np.int64


def test_labels_matched_by_code(tmp_path: Path) -> None:
    cols = _example(tmp_path)
    # groups sorted by (system, question, sentence): A q1 s1, A q1 s2, A q2 s3, B q1 s1, B q2 s3
    assert cols.sentences == ["s1", "s2", "s3"] and cols.questions == ["q1", "q2"]
    assert first_questions(cols).tolist() == [0, 0, 1]  # s1, s2 under q1; s3 under q2
    codes = SentenceLabelCodes.match(LABELS, cols)
    assert codes.sentence.tolist() == [0, 1, 2, -1]
    assert codes.question.tolist() == [-1, -1, 1, 1]
    assert codes.problem_mask().tolist() == [False, False, False, False]
    wrong = [
        Label(sentence_id="s1", question_id="q2", has_error=True),  # s1 is under q1
        Label(sentence_id="s9", has_error=True),  # in no trace, no question
        Label(sentence_id="s8", question_id="q7", has_error=True),  # nor its question
        Label(sentence_id="s2", question_id="q1", has_error=True),  # fine
    ]
    codes = SentenceLabelCodes.match(wrong, cols)
    assert codes.question.tolist() == [1, -1, -2, 0]
    assert codes.problem_mask().tolist() == [True, True, True, False]
    problems = check_labels_against_traces(wrong, cols)
    assert [(p.position, p.field, p.message) for p in problems] == [
        (0, "question_id", "sentence 's1' belongs to question 'q1' in the traces, not 'q2'"),
        (1, "sentence_id", "no trace has sentence_id 's9'"),
        (2, "sentence_id", "no trace has sentence_id 's8' and no trace has question_id 'q7'"),
    ]


@pytest.mark.parametrize(
    ("policy", "counts"),
    [
        # (tp, fp, fn, tn) of A and B under "refuted" (error verdicts: refuted only):
        # A: s1 flagged (c1 refuted), error -> TP; s2 not flagged, no error -> TN;
        #    s3 not flagged (no_evidence), error -> FN; s4 no claim, no error
        # B: s1 not flagged, error -> FN; s3 flagged, error -> TP; s2, s4 no claim, no error
        ("exclude", {"A": (1, 0, 1, 1), "B": (1, 0, 1, 0)}),
        ("no_error", {"A": (1, 0, 1, 2), "B": (1, 0, 1, 2)}),  # + one TN per claimless
    ],
)
def test_group_metrics_counted_by_hand(
    tmp_path: Path, policy: str, counts: dict[str, tuple[int, int, int, int]]
) -> None:
    cols = _example(tmp_path)
    report = compute_metrics(cols, LABELS, ["refuted"], without_claims=policy, bootstrap=50)
    got = {r.system: (r.tp, r.fp, r.fn, r.tn) for r in report.results}
    assert got == counts
    assert {r.system: r.n_without_claims for r in report.results} == {"A": 1, "B": 2}
    assert [(m.system, m.question_id, m.sentence_id) for m in report.without_claims] == [
        ("A", "q2", "s4"),
        ("B", "q1", "s2"),
        ("B", "q2", "s4"),
    ]
    # the generic path (claim rows, label index) gives the same report to the last digit
    rows = columnar.read_trace_columns(tmp_path / "traces.jsonl")
    generic = compute_metrics(rows, LABELS, ["refuted"], without_claims=policy, bootstrap=50)
    assert report == generic


def test_duplicate_sentence_label_keeps_the_index_error(tmp_path: Path) -> None:
    cols = _example(tmp_path)
    twice = [*LABELS, Label(sentence_id="s2", has_error=True, annotator="b")]
    with pytest.raises(InputError, match=r"two labels for sentence 's2' \(annotators None, 'b'\)"):
        compute_metrics(cols, twice, ["refuted"])
    claimless_twice = [*LABELS, Label(sentence_id="s4", question_id="q2", has_error=True)]
    with pytest.raises(InputError, match="two labels for sentence 's4'"):
        compute_metrics(cols, claimless_twice, ["refuted"])


def test_counts_by_cluster_cells_by_hand() -> None:
    # units: (cluster, group, label, pred) -> cell tp=0, fp=1, fn=2, tn=3
    per = counts_by_cluster(
        [0, 0, 1, 1, 1],
        [0, 1, 0, 0, 1],
        [True, False, True, False, False],
        [True, True, False, False, True],
        2,
        2,
    )
    assert per.tolist() == [
        [[1, 0, 0, 0], [0, 1, 0, 0]],  # cluster 0: group 0 TP, group 1 FP
        [[0, 0, 1, 1], [0, 1, 0, 0]],  # cluster 1: group 0 FN + TN, group 1 FP
    ]


def test_group_columns_by_hand(tmp_path: Path) -> None:
    cols = _example(tmp_path)
    # groups sorted by (system, question, sentence): A q1 s1, A q1 s2, A q2 s3, B q1 s1, B q2 s3
    assert cols.system.tolist() == [0, 0, 0, 1, 1]
    assert cols.question.tolist() == [0, 0, 1, 0, 1]
    assert cols.sentence.tolist() == [0, 1, 2, 0, 2]
    assert cols.first.tolist() == [0, 3, 4, 2, 5]  # each group's first row in the file
    assert {a.dtype for a in (cols.system, cols.question, cols.sentence, cols.first)} == {
        np.dtype(np.int32)
    }
    # verdict bits (VERDICTS order: supported 1, refuted 2, no_evidence 4, ...)
    assert cols.verdicts.tolist() == [1 | 2, 1, 4, 1, 2]
    assert len(cols) == 6


def test_compacted_label_columns(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    rows = [
        {"sentence_id": "s1", "has_error": True, "annotator": "ann"},
        {"sentence_id": "s2", "has_error": False, "annotator": "ann"},
        {"sentence_id": "s3", "has_error": True, "annotator": "ann"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    held = labelio.read_labels(path, columns=True)
    annotators = held.column("annotator")
    assert not isinstance(annotators, list)  # one value, held once
    assert len(annotators) == 3 and list(annotators) == ["ann"] * 3
    assert annotators[-1] == "ann" and annotators[1:] == ["ann", "ann"]
    with pytest.raises(IndexError):
        annotators[3]
    assert list(held.column("claim_id")) == [None, None, None]
    assert isinstance(held.column("sentence_id"), list)  # distinct values stay a list
    assert held[1] == Label(sentence_id="s2", has_error=False, annotator="ann")
    assert held[1].model_fields_set == {"sentence_id", "has_error", "annotator"}
    # appending after compact: lists again, earlier labels unchanged
    held.append(Label(sentence_id="s4", has_error=True, annotator="other"))
    assert list(held.column("annotator")) == ["ann", "ann", "ann", "other"]
    assert [label.sentence_id for label in held] == ["s1", "s2", "s3", "s4"]
    assert held[0] == Label(sentence_id="s1", has_error=True, annotator="ann")


def test_sentence_ids_given_are_shared_not_copied(tmp_path: Path) -> None:
    _example(tmp_path)
    given = ["".join(["s", "2"]), "s9", None, "".join(["s", "1"])]  # strings built at run time
    cols = columnar.read_sentence_columns(tmp_path / "traces.jsonl", given)
    assert isinstance(cols, SentenceColumns)
    assert cols.sentences == ["s1", "s2", "s3"]  # s9 is in no trace: left out
    assert cols.sentences[0] is given[3] and cols.sentences[1] is given[0]
    # the same groups as without the ids
    plain = _example(tmp_path)
    assert cols.sentence.tolist() == plain.sentence.tolist() == [0, 1, 2, 0, 2]
    assert cols.question.tolist() == plain.question.tolist()
    assert cols.first.tolist() == plain.first.tolist()
