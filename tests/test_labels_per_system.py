"""Labels per system, and the shape the tool assumed on its first line (issue 25, item 1).

The fixture is the shape of long-form QA evaluations: six systems, each answering its own
questions (disjoint), clinicians labelling the sentences of each system's own answer. Sentence
ids are numbered per system ("1", "2", ...), so the same id recurs under every system: a label
applies to its own system's traces only.

Hand count under the ``refuted`` mapping (E = clinician error, N = no error; a sentence is
flagged when one of its claims is refuted; "none" = no claim, counted as no error flagged):

    system  question  sentence  label  claims         outcome
    S1      q1        1         E      R, S           TP
                      2         N      S              TN
                      3         E      S              FN
            q2        4         N      R              FP
                      5         N      S              TN
                      6         E      none           FN (no claims)
    S2      q3        1         E      R              TP
                      2         E      S, R           TP
                      3         N      S              TN
            q4        4         N      S              TN
                      5         N      S              TN
                      6         N      none           TN (no claims)
    S3      q5        1         N      R              FP
                      2         N      R              FP
                      3         E      S              FN
            q6        4         E      S              FN
                      5         -      S              unlabelled (left out)
                      6         E      R              TP
    S4      q7        1         E      R              TP
                      2         E      NE             FN (no_evidence is no error here)
                      3         N      S              TN
            q8        4         E      R              TP
                      5         N      S              TN
                      6         N      S              TN
    S5      q9        1         N      S              TN
                      2         E      R              TP
                      3         E      R              TP
                      4         N      R              FP
    S6      q10       1         E      S              FN
            q11       2         N      S              TN
            q12       3         E      R              TP
                      4         E      none           FN (no claims)

    S1: n 6, TP 1, FP 1, FN 2, TN 2     S4: n 6, TP 2, FP 0, FN 1, TN 3
    S2: n 6, TP 2, FP 0, FN 0, TN 4     S5: n 4, TP 2, FP 1, FN 0, TN 1
    S3: n 5, TP 1, FP 2, FN 2, TN 0     S6: n 4, TP 1, FP 0, FN 2, TN 1

Disagreements (FN and FP rows above): 11.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes import labelio, traceio
from failcodes.disagreements import find_disagreements
from failcodes.errors import InputError, StatisticsError
from failcodes.labels import Label, LabelIndex
from failcodes.labelscope import (
    DataShape,
    LabelScope,
    QuestionScope,
    QuestionShape,
    assumptions_line,
)
from failcodes.metrics import compute_metrics
from failcodes.outcomes import paired_outcomes_from_traces
from failcodes.traces import Trace
from failcodes.verdicts import Verdict
from tests.cli_helpers import run_cli

R, S, NE = Verdict.REFUTED, Verdict.SUPPORTED, Verdict.NO_EVIDENCE
E, N = True, False
# system -> question -> [(label, verdicts of its claims)], sentences numbered per system
ANSWERS: dict[str, dict[str, list[tuple[bool | None, list[Verdict]]]]] = {
    "S1": {"q1": [(E, [R, S]), (N, [S]), (E, [S])], "q2": [(N, [R]), (N, [S]), (E, [])]},
    "S2": {"q3": [(E, [R]), (E, [S, R]), (N, [S])], "q4": [(N, [S]), (N, [S]), (N, [])]},
    "S3": {"q5": [(N, [R]), (N, [R]), (E, [S])], "q6": [(E, [S]), (None, [S]), (E, [R])]},
    "S4": {"q7": [(E, [R]), (E, [NE]), (N, [S])], "q8": [(E, [R]), (N, [S]), (N, [S])]},
    "S5": {"q9": [(N, [S]), (E, [R]), (E, [R]), (N, [R])]},
    "S6": {"q10": [(E, [S])], "q11": [(N, [S])], "q12": [(E, [R]), (E, [])]},
}
#: (n, TP, FP, FN, TN) per system: the hand count of the module docstring.
COUNTS = {
    "S1": (6, 1, 1, 2, 2),
    "S2": (6, 2, 0, 0, 4),
    "S3": (5, 1, 2, 2, 0),
    "S4": (6, 2, 0, 1, 3),
    "S5": (4, 2, 1, 0, 1),
    "S6": (4, 1, 0, 2, 1),
}
#: (system, question, sentence, kind, claims): the FN and FP rows of the hand count.
DISAGREEMENTS = [
    ("S1", "q1", "3", "FN", 1),
    ("S1", "q2", "4", "FP", 1),
    ("S1", "q2", "6", "FN", 0),
    ("S3", "q5", "1", "FP", 1),
    ("S3", "q5", "2", "FP", 1),
    ("S3", "q5", "3", "FN", 1),
    ("S3", "q6", "4", "FN", 1),
    ("S4", "q7", "2", "FN", 1),
    ("S5", "q9", "4", "FP", 1),
    ("S6", "q10", "1", "FN", 1),
    ("S6", "q12", "4", "FN", 0),
]


def six_systems(*, shared: bool = False) -> tuple[list[Trace], list[Label]]:
    """The fixture: per-system labels, or (``shared``) ids qualified ``q1:3`` and no system."""
    traces: list[Trace] = []
    labels: list[Label] = []
    for system, questions in ANSWERS.items():
        number = 0
        for qid, sentences in questions.items():
            for label, verdicts in sentences:
                number += 1
                sid = f"{qid}:{number}" if shared else str(number)
                for i, verdict in enumerate(verdicts):
                    traces.append(
                        Trace(
                            system=system,
                            question_id=qid,
                            sentence_id=sid,
                            claim_id=f"{qid}:{number}:c{i}",
                            claim=f"claim {i} of {sid}",
                            verdict=verdict,
                        )
                    )
                if label is not None:
                    labels.append(
                        Label(
                            system=None if shared else system,
                            question_id=qid,
                            sentence_id=sid,
                            has_error=label,
                        )
                    )
    return traces, labels


def _write(tmp_path: Path, traces: list[Trace], labels: list[Label]) -> tuple[Path, Path]:
    traceio.write_traces(tmp_path / "traces.jsonl", traces)
    labelio.write_labels(tmp_path / "labels.jsonl", labels)
    return tmp_path / "traces.jsonl", tmp_path / "labels.jsonl"


def _counts(results: object) -> dict[str, tuple[int, int, int, int, int]]:
    return {r.system: (r.n, r.tp, r.fp, r.fn, r.tn) for r in results}  # type: ignore[attr-defined]


def test_per_system_labels_give_each_system_its_own_counts() -> None:
    traces, labels = six_systems()
    report = compute_metrics(traces, labels, ["refuted"])
    assert _counts(report.results) == COUNTS
    assert report.shape is not None and report.shape.labels is LabelScope.PER_SYSTEM
    # S3's sentence 5 has a claim and no label: left out, not counted
    assert {r.system: r.n_unlabelled for r in report.results}["S3"] == 1
    # without claims: S1's 6, S2's 6, S6's 4, each its own system's (no other system's)
    assert sorted((m.system, m.sentence_id) for m in report.without_claims) == [
        ("S1", "6"),
        ("S2", "6"),
        ("S6", "4"),
    ]
    # the coverage: each system's own labelled questions and sentences, all counted
    assert {c.system: (c.labelled_questions, c.labelled_sentences) for c in report.coverage} == {
        "S1": (2, 6),
        "S2": (2, 6),
        "S3": (2, 5),
        "S4": (2, 6),
        "S5": (1, 4),
        "S6": (3, 4),
    }


def test_per_system_disagreements_equal_the_hand_count() -> None:
    traces, labels = six_systems()
    found = find_disagreements(traces, labels, "refuted")
    got = [(d.system, d.question_id, d.sentence_id, d.kind.value, len(d.claims)) for d in found]
    assert got == DISAGREEMENTS
    # a claim record carries its own system's label (sentence 1 is labelled under every
    # system: S3's is no error, and its claim was refuted)
    s3_first = next(d for d in found if d.system == "S3" and d.sentence_id == "1")
    assert s3_first.label_has_error is False
    assert [c.label_has_error for c in s3_first.claims] == [False]


def test_cli_columns_path_agrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces, labels = six_systems()
    t, lab = _write(tmp_path, traces, labels)
    code, out, err = run_cli(
        ["metrics", "--traces", str(t), "--labels", str(lab), "--format", "json"], capsys
    )
    assert code == 0, err
    rows = json.loads(out)
    assert {r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows} == COUNTS
    assert {r["labels"] for r in rows} == {"per_system"}
    assert rows == [r.flat() for r in compute_metrics(traces, labels, ["refuted"]).results]
    assert rows[0]["n_labelled_sentences"] == 6 and rows[0]["n_unanswered"] == 0
    code, out, err = run_cli(["metrics", "--traces", str(t), "--labels", str(lab)], capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("Assumed: per-system labels")
    assert "6 systems, each scored on its own labelled sentences" in first
    assert "Coverage: labelled questions and sentences per system" in out
    dis = tmp_path / "dis.jsonl"
    code, out, err = run_cli(
        ["disagreements", "--traces", str(t), "--labels", str(lab), "-o", str(dis)], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0].startswith("Assumed: per-system labels")
    written = [json.loads(line) for line in dis.read_text().splitlines()]
    assert [
        (d["system"], d["question_id"], d["sentence_id"], d["kind"], len(d["claims"]))
        for d in written
    ] == DISAGREEMENTS
    # the object path writes the same records
    objects = [d.model_dump(mode="json") for d in find_disagreements(traces, labels, "refuted")]
    assert written == objects


def test_shared_labels_of_disjoint_questions_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same answers labelled with shared labels (ids made unique as ``q1:3``)."""
    traces, labels = six_systems(shared=True)
    report = compute_metrics(traces, labels, ["refuted"])
    # by default a question a system never answered is not its miss: the per-system counts
    assert _counts(report.results) == COUNTS
    assert report.shape is not None
    assert report.shape.questions is QuestionShape.DISJOINT
    assert report.shape.question_scope is QuestionScope.ANSWERED
    # 31 labelled sentences in 12 questions apply to each system; S1 answered 2 of them, and
    # 31 - 6 = 25 labelled sentences lie in questions it never answered
    s1 = next(c for c in report.coverage if c.system == "S1")
    assert (s1.labelled_questions, s1.answered_questions) == (12, 2)
    assert (s1.labelled_sentences, s1.unanswered_sentences) == (31, 25)
    t, lab = _write(tmp_path, traces, labels)
    code, out, err = run_cli(["metrics", "--traces", str(t), "--labels", str(lab)], capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("Assumed: shared labels")
    assert "the 6 systems answered disjoint questions" in first
    assert "a question it never answered is not its miss (--question-scope answered)" in first
    assert "25 in questions it never answered" in out  # S1's row of the coverage table
    # the sentence groups matched by code (CLI) and the trace columns (objects) agree, row
    # for row, every field
    code, out, err = run_cli(
        ["metrics", "--traces", str(t), "--labels", str(lab), "--format", "json"], capsys
    )
    assert code == 0, err
    assert json.loads(out) == [r.flat() for r in report.results]
    dis = tmp_path / "dis.jsonl"
    code, out, err = run_cli(
        ["disagreements", "--traces", str(t), "--labels", str(lab), "-o", str(dis)], capsys
    )
    assert code == 0, err
    assert "the 6 systems answered disjoint questions" in out.splitlines()[0]
    assert len(dis.read_text().splitlines()) == len(DISAGREEMENTS)


def test_seed_rule_stays_an_explicit_option() -> None:
    """``--question-scope all``: every labelled sentence counts for every system.

    S2 then also gets the other five systems' 25 labelled sentences as sentences without
    claims: their 14 errors (S1 3, S3 3, S4 3, S5 2, S6 3) as misses and their 11 non-errors
    (S1 3, S3 2, S4 3, S5 2, S6 1) as true negatives: n 6 + 25 = 31, FN 0 + 14, TN 4 + 11.
    """
    traces, labels = six_systems(shared=True)
    report = compute_metrics(traces, labels, ["refuted"], question_scope="all")
    s2 = next(r for r in report.results if r.system == "S2")
    assert (s2.n, s2.tp, s2.fp, s2.fn, s2.tn) == (31, 2, 0, 14, 15)
    assert report.shape is not None and report.shape.question_scope is QuestionScope.ALL
    line = report.assumptions()
    assert line is not None
    assert "yet every labelled sentence counts for every system" in line
    # the same rule for disagreements: S2 now misses the other systems' 14 errors
    found = find_disagreements(traces, labels, "refuted", question_scope="all")
    assert sum(1 for d in found if d.system == "S2") == 14


def test_partial_overlap_keeps_the_seed_rule_and_says_so() -> None:
    """A system that failed on some questions (issue 14's fixture shape) keeps the seed rule.

    A and B answer q1 and q2; only A answers q3. B's labelled error in q3 counts as its miss
    (all), unless --question-scope answered leaves q3 out of B's scope.
    """
    traces = [
        Trace(system=s, question_id=q, sentence_id=q, claim_id=f"{q}c", claim="c", verdict=S)
        for s, qs in (("A", ("q1", "q2", "q3")), ("B", ("q1", "q2")))
        for q in qs
    ]
    labels = [Label(question_id=q, sentence_id=q, has_error=True) for q in ("q1", "q2", "q3")]
    report = compute_metrics(traces, labels, ["refuted"])
    assert report.shape is not None and report.shape.questions is QuestionShape.PARTIAL
    assert {r.system: r.fn for r in report.results} == {"A": 3, "B": 3}
    line = report.assumptions()
    assert line is not None and "not every system answered every labelled question" in line
    assert "--question-scope answered scores each on its own" in line
    scoped = compute_metrics(traces, labels, ["refuted"], question_scope="answered")
    assert {r.system: (r.n, r.fn, r.n_unanswered) for r in scoped.results} == {
        "A": (3, 3, 0),
        "B": (2, 2, 1),
    }


def test_same_question_own_answers_do_not_cross() -> None:
    """Two systems answer one question, each with its own sentence "1" labelled differently.

    Shared labels could not say this (one label per id); per-system labels do: A's "1" is an
    error (A flags it: TP), B's "1" is not (B flags it: FP).
    """
    traces = [
        Trace(system=s, question_id="q", sentence_id="1", claim_id="c", claim="c", verdict=R)
        for s in ("A", "B")
    ]
    labels = [
        Label(system="A", question_id="q", sentence_id="1", has_error=True),
        Label(system="B", question_id="q", sentence_id="1", has_error=False),
    ]
    report = compute_metrics(traces, labels, ["refuted"])
    assert _counts(report.results) == {"A": (1, 1, 0, 0, 0), "B": (1, 0, 1, 0, 0)}
    claim_level = compute_metrics(traces, labels, ["refuted"], level="claim")
    assert _counts(claim_level.results) == {"A": (1, 1, 0, 0, 0), "B": (1, 0, 1, 0, 0)}
    assert claim_level.assumptions() == (
        "Assumed: per-system labels (each label applies to its own system's traces; 2 "
        "systems, each scored on its own labelled claims); claim level: no label names a "
        "claim, so each claim takes its sentence's label (a sentence labelled an error makes "
        "each of its claims one)"
    )


def test_claim_labels_per_system() -> None:
    """A claim label of system B overrides B's sentence label only.

    Both systems have claims c1 (refuted) and c2 (supported) of sentence "1" (an error for
    both). B's own claim label says c1 is no error: claim level, A: c1 TP, c2 FN; B: c1 FP
    (its own claim label), c2 FN (its sentence's label).
    """
    traces = [
        Trace(system=s, question_id="q", sentence_id="1", claim_id=c, claim=c, verdict=v)
        for s in ("A", "B")
        for c, v in (("c1", R), ("c2", S))
    ]
    labels = [
        Label(system=s, question_id="q", sentence_id="1", has_error=True) for s in ("A", "B")
    ] + [Label(system="B", claim_id="c1", sentence_id="1", has_error=False)]
    report = compute_metrics(traces, labels, ["refuted"], level="claim")
    assert _counts(report.results) == {"A": (2, 1, 0, 1, 0), "B": (2, 0, 1, 1, 0)}
    found = find_disagreements(traces, labels, "refuted", level="claim")
    assert [(d.system, d.claim_id, d.kind.value) for d in found] == [
        ("A", "c2", "FN"),
        ("B", "c1", "FP"),
        ("B", "c2", "FN"),
    ]


def test_compare_refuses_units_without_one_truth() -> None:
    traces, labels = six_systems()
    with pytest.raises(StatisticsError, match="per-system labels"):
        paired_outcomes_from_traces(traces, labels, "refuted")
    traces, labels = six_systems(shared=True)
    with pytest.raises(StatisticsError, match="answered by one system only"):
        paired_outcomes_from_traces(traces, labels, "refuted")


def test_a_label_index_of_per_system_labels_names_the_system() -> None:
    _, labels = six_systems()
    index = LabelIndex(labels)
    assert index.scope is LabelScope.PER_SYSTEM
    assert index.of("S3").for_sentence("q5", "1") == labels[12]  # S3's first label
    assert index.of("nobody").for_sentence("q5", "1") is None
    with pytest.raises(TypeError, match=r"LabelIndex\.of"):
        index.sentence.get("1")


def test_a_mix_of_labels_with_and_without_a_system_is_refused() -> None:
    labels = [
        Label(system="A", sentence_id="1", has_error=True),
        Label(sentence_id="2", has_error=False),
    ]
    with pytest.raises(InputError, match="names no system, but the first names 'A'"):
        LabelIndex(labels)


def test_assumptions_line_of_the_seed_shape() -> None:
    shape = DataShape(
        labels=LabelScope.SHARED,
        level="sentence",
        systems=3,
        questions=QuestionShape.COMMON,
        question_scope=QuestionScope.ALL,
        without_claims="no_error",
    )
    assert assumptions_line(shape) == (
        "Assumed: shared labels (each label applies to every system's traces of its "
        "sentence); every system answered every labelled question (3 systems); a labelled "
        "sentence it made no claim for counts as no error flagged (--without-claims no_error)"
    )


def test_report_run_box_and_coverage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces, labels = six_systems(shared=True)
    t, lab = _write(tmp_path, traces, labels)
    run = tmp_path / "run"
    (run / "metrics").mkdir(parents=True)
    metrics_file = run / "metrics" / "six.json"
    code, out, err = run_cli(
        ["metrics", "--traces", str(t), "--labels", str(lab), "-o", str(metrics_file)], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0].startswith("Assumed: shared labels")
    code, _, err = run_cli(["report", str(run), "-o", str(run / "report")], capsys)
    assert code == 0, err
    page = (run / "report" / "index.html").read_text()
    assert "the 6 systems answered disjoint questions" in page  # the run box's Data line
    coverage = (run / "report" / "tables" / "coverage.csv").read_text().splitlines()
    assert coverage[0] == "system,questions,answered,sentences,counted,not counted"
    # S1: 12 labelled questions, 2 answered, 31 labelled sentences, 6 counted (the hand
    # count's n), 25 in the 10 questions it never answered
    assert coverage[1] == "S1,12,2,31,6,25 in questions it never answered"


def test_ingest_gives_labels_a_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A table of two systems' own answers: one sentence id under both, labelled differently.

    Without --option label_scope=system the rule's two labels of sentence "1" conflict (one
    shared label per sentence); with it each row's label is its own system's.
    """
    table = tmp_path / "answers.csv"
    table.write_text(
        "model,qid,sent,text,pred,gold\n"
        "m1,q1,1,a,refuted,wrong\n"
        "m1,q1,2,b,supported,ok\n"
        "m2,q1,1,c,supported,ok\n"
        "m2,q1,2,d,refuted,wrong\n"
    )
    base = [
        *("ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")),
        *("--labels-out", str(tmp_path / "l.csv"), "--map", "model=system"),
        *("--map", "qid=question_id", "--map", "sent=sentence_id", "--map", "pred=verdict"),
        *("--map", "text=claim", "--label-rule", "gold = wrong -> error"),
    ]
    code, _, err = run_cli(base, capsys)
    assert code == 2 and "sentence '1' has_error=false here but true at line 2" in err
    code, _, err = run_cli([*base, "--option", "label_scope=system"], capsys)
    assert code == 0, err
    written = (tmp_path / "l.csv").read_text().splitlines()
    assert written[0].endswith(",system")
    assert [line.split(",")[-1] for line in written[1:]] == ["m1", "m1", "m2", "m2"]
    code, out, err = run_cli(
        ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.csv")],
        capsys,
    )
    assert code == 0, err
    assert out.startswith("Assumed: per-system labels")
    rows = json.loads(
        run_cli(
            [
                *("metrics", "--traces", str(tmp_path / "t.jsonl")),
                *("--labels", str(tmp_path / "l.csv"), "--format", "json"),
            ],
            capsys,
        )[1]
    )
    # m1 flags its error "1" (TP), not "2" (TN); m2 flags its error "2" (TP), not "1" (TN)
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("m1", 1, 0, 0, 1),
        ("m2", 1, 0, 0, 1),
    ]
    # a label table of its own takes a system column (renamed with --map)
    own = tmp_path / "own.csv"
    own.write_text("model,question_id,sentence_id,has_error\nm1,q1,1,true\nm2,q1,1,false\n")
    code, _, err = run_cli(
        [
            *("ingest", "generic-labels", str(own), "-o", str(tmp_path / "own.jsonl")),
            *("--map", "model=system"),
        ],
        capsys,
    )
    assert code == 0, err
    read = labelio.read_labels(tmp_path / "own.jsonl")
    assert [(x.system, x.sentence_id, x.has_error) for x in read] == [
        ("m1", "1", True),
        ("m2", "1", False),
    ]


def test_shared_labels_are_written_without_a_system_column(tmp_path: Path) -> None:
    _, labels = six_systems(shared=True)
    labelio.write_labels(tmp_path / "l.csv", labels)
    assert (tmp_path / "l.csv").read_text().splitlines()[0] == (
        "sentence_id,claim_id,question_id,has_error,rationale,severity,annotator,sentence"
    )
    labelio.write_labels(tmp_path / "l.parquet", labels)
    import pyarrow.parquet as pq

    assert "system" not in pq.read_schema(tmp_path / "l.parquet").names
    _, per = six_systems()
    labelio.write_labels(tmp_path / "p.parquet", per)
    assert labelio.read_labels(tmp_path / "p.parquet") == per


def test_consensus_is_per_system(tmp_path: Path) -> None:
    """Two clinicians label sentence "1" of two systems' answers: two targets, not one."""
    from failcodes.consensus import Rule, combine

    votes = [
        (Label(system=s, sentence_id="1", has_error=e, annotator=a), tmp_path, i)
        for i, (s, a, e) in enumerate(
            [("A", "x", True), ("A", "y", True), ("B", "x", False), ("B", "y", False)], start=1
        )
    ]
    combined, summary = combine(votes, Rule.MAJORITY)
    assert [(x.system, x.has_error) for x in combined] == [("A", True), ("B", False)]
    assert summary.targets == 2 and summary.unanimous == 2


def test_atomic_facts_of_one_id_under_two_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fact ids are unique per system: "f1" of A (wrong, FALSE confirmed) and "f1" of B
    (right, TRUE confirmed) are two facts, so their labels are per system.

    Claim level, refuted mapping: A's f1 is refuted and wrong (TP); B's f1 is supported and
    right (TN). One shared label "f1" would have stood for both.
    """
    facts = tmp_path / "facts.jsonl"
    facts.write_text(
        json.dumps(
            {
                "system": "A",
                "answer_id": "a1",
                "fact_id": "f1",
                "fact": "x",
                "verdict": "FALSE",
                "human_confirms": True,
                "error_category": "hallucination",
            }
        )
        + "\n"
        + json.dumps(
            {
                "system": "B",
                "answer_id": "a2",
                "fact_id": "f1",
                "fact": "y",
                "verdict": "TRUE",
                "human_confirms": True,
            }
        )
        + "\n"
    )
    out, labels_out = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    code, stdout, err = run_cli(
        ["ingest", "atomic", str(facts), "-o", str(out), "--labels-out", str(labels_out)], capsys
    )
    assert code == 0, err
    assert "labels per system" in stdout + err
    assert [x.system for x in labelio.read_labels(labels_out)] == ["A", "B"]
    code, stdout, err = run_cli(
        [
            *("metrics", "--traces", str(out), "--labels", str(labels_out)),
            *("--level", "claim", "--format", "json"),
        ],
        capsys,
    )
    assert code == 0, err
    rows = json.loads(stdout)
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("A", 1, 0, 0, 0),
        ("B", 0, 0, 0, 1),
    ]


def test_shared_labels_copied_to_every_system_change_nothing() -> None:
    """The seed's shape with each shared label copied once per system (per-system labels).

    Every system verifies the same answer, so each system's own copy is the shared label:
    metrics (counts and bootstrap intervals, one random stream per question set) and the
    disagreements must be the same, only the label design on the first line differs.
    """
    from tests.metrics_fixtures import CLAIMS, labels, trace

    traces = [
        trace(s, q, sid, c, v)
        for s in ("A", "B")
        for q, sid, c, v in CLAIMS[:: -1 if s == "B" else 1]
    ]
    shared = labels()
    per = [x.model_copy(update={"system": s}) for s in ("A", "B") for x in shared]
    maps = ["refuted", "non_supported"]
    for level in ("sentence", "claim"):
        a = compute_metrics(traces, shared, maps, level=level, bootstrap=200, seed=3)
        b = compute_metrics(traces, per, maps, level=level, bootstrap=200, seed=3)
        facts = {"labels", "question_shape", "question_scope"}
        assert [{k: v for k, v in r.flat().items() if k not in facts} for r in a.results] == [
            {k: v for k, v in r.flat().items() if k not in facts} for r in b.results
        ]
        assert {r.labels for r in b.results} == {LabelScope.PER_SYSTEM}
        assert find_disagreements(traces, shared, "refuted", level=level) == find_disagreements(
            traces, per, "refuted", level=level
        )


def test_the_python_api_says_the_assumed_shape_through_note(tmp_path: Path) -> None:
    # Outside check (redteam): failcodes.run(MetricsRequest(...)) returned the assumed shape
    # in its result but said nothing, where the CLI's first line says it. The same six
    # systems with shared labels on disjoint questions: note gets the CLI's first line.
    import failcodes
    from failcodes.commands.measure import DisagreementsRequest, MetricsRequest

    t, lab = _write(tmp_path, *six_systems(shared=True))
    said: list[str] = []
    result = failcodes.run(MetricsRequest(traces=[t], labels=lab), note=said.append)
    assert _counts(result.report.results) == COUNTS
    # and the CLI's second line, the labels' coverage (t13red1: S3's one unlabelled sentence)
    assert said == [result.assumed, result.coverage, *result.later]  # later: t22api
    assert said[1].startswith("labels cover 31 of 32 sentences (S1: 6 of 6, S2: 6 of 6, S3: 5 of 6")
    assert said[0].startswith("Assumed: shared labels")
    assert "the 6 systems answered disjoint questions" in said[0]
    said.clear()
    request = DisagreementsRequest(traces=[t], labels=lab, out=tmp_path / "d.jsonl")
    result = failcodes.run(request, note=said.append)
    assert said == [result.assumed, result.coverage]
    assert "the 6 systems answered disjoint questions" in said[0]
