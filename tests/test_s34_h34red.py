"""Session 34 (h34red): red-team of ingest generic/generic-labels, metrics and compare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli
from tests.cli_helpers import write_csv as _write_csv
from tests.test_s29_t29red import _SENTENCES


def _traces(tmp_path: Path) -> Path:
    return _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"],
        [["A", q, s, f"{s}:c1", text, text, v] for q, s, text, v in _SENTENCES],
    )


@pytest.mark.parametrize(
    ("column", "true", "false"),
    [("is_correct", "1", "0"), ("is_correct", "yes", "no"), ("no_error", "1", "0")],
)
def test_the_correct_column_refusal_names_the_columns_own_false(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, true: str, false: str
) -> None:
    # The column is true on s1 and s3 (right), false on s2 and s4 (errors, both refuted): by
    # hand TP 2, TN 2 under -m refuted. main's refusal of --map named '... = false -> error'
    # on a 1/0 column, a rule then refused ("names 'false', which no row has, and not '0'").
    table = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", column],
        [[q, s, true if v == "supported" else false] for q, s, _, v in _SENTENCES],
    )
    out = tmp_path / "l.jsonl"
    base = ["ingest", "generic-labels", str(table), "-o", str(out)]
    code, _, err = run_cli([*base, "--map", f"{column}=has_error"], capsys)
    assert code == 2 and not out.exists()
    named = re.findall(r"--label-rule '([^']*)'", err)
    assert named == [f"{column} = {false} -> error"], err
    code, _, err = run_cli([*base, "--label-rule", named[0]], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(_traces(tmp_path)), "--labels", str(out), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 0, 0, 2)}


def test_system_on_a_table_naming_several_systems_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every row names its system (A, B): --system A (help: "for inputs that lack one") went
    # unused and main wrote both systems' traces, exit 0 ("2 system(s): A 4, B 4"), as if it
    # chose A. Now refused naming the option that does choose (--option systems=A).
    rows = [[sys, q, s, f"{s}:c1", t, t, v] for sys in "AB" for q, s, t, v in _SENTENCES]
    table = _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"],
        rows,
    )
    out = tmp_path / "t.jsonl"
    base = ["ingest", "generic", str(table), "-o", str(out), "--evidence", "none"]
    code, _, err = run_cli([*base, "--system", "A"], capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines() == [
        "failcodes: error: --system 'A' names the system of rows that give none, but every "
        "row names its own (A, B), so it chose none of them: give --option systems=A to read "
        "the rows of 'A' alone, or drop --system to keep every system's"
    ]
    code, stdout, err = run_cli([*base, "--option", "systems=A"], capsys)
    assert code == 0, err
    assert "(1 system(s): A 4; left out, not among --option systems: B 4)" in stdout
    # one system named alike, or a table without a system column: --system is read as before
    code, stdout, err = run_cli([*base, "--system", "A", "--option", "systems=A"], capsys)
    assert code == 0, err


def test_the_same_labels_file_given_twice_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `metrics --labels l --labels l` read l once, silently (--traces t --traces t is
    # refused; --labels a --labels b too): a second file meant, the first typed again? The
    # numbers are l's once (TP 2, TN 2, as with one --labels); now a line says it.
    labels = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [[q, s, "true" if v == "refuted" else "false"] for q, s, _, v in _SENTENCES],
    )
    args = ["metrics", "--traces", str(_traces(tmp_path)), "--labels", str(labels)]
    args += ["-m", "refuted", "--format", "csv"]
    code, stdout, err = run_cli([*args, "--labels", str(labels)], capsys)
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 0, 0, 2)}
    assert err.strip().splitlines() == [f"note: --labels: {labels} is given twice; read once"]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0 and err == "", err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 0, 0, 2)}


def test_claim_level_rows_printed_say_claims_took_their_sentences_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 7 claims under 4 sentence labels (s1 and q2:s1 errors). By hand, -m refuted per claim:
    # q1:s1 (error) c1 refuted TP, c2 supported FN; q1:s2 c1 supported TN; q2:s1 (error) c1,
    # c2 refuted TP 2; q2:s2 c1 refuted FP, c2 supported TN: TP 3, FP 1, FN 1, TN 2. The table
    # says the claims took their sentence's label on its first line; CSV or JSON printed to
    # stdout said it nowhere (no field, nothing on stderr).
    claims = [
        ["q1", "q1:s1", "q1:s1:c1", "a", "refuted"],
        ["q1", "q1:s1", "q1:s1:c2", "b", "supported"],
        ["q1", "q1:s2", "q1:s2:c1", "c", "supported"],
        ["q2", "q2:s1", "q2:s1:c1", "d", "refuted"],
        ["q2", "q2:s1", "q2:s1:c2", "e", "refuted"],
        ["q2", "q2:s2", "q2:s2:c1", "f", "refuted"],
        ["q2", "q2:s2", "q2:s2:c2", "g", "supported"],
    ]
    traces = _write_csv(
        tmp_path / "c.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "verdict"],
        [["A", *row] for row in claims],
    )
    labels = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "1"], ["q1", "q1:s2", "0"], ["q2", "q2:s1", "1"], ["q2", "q2:s2", "0"]],
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    said = (
        "Assumed: claim level: no label names a claim, so each claim takes its sentence's "
        "label (a sentence labelled an error makes each of its claims one)"
    )
    for fmt in ("csv", "json"):
        code, stdout, err = run_cli([*args, "--level", "claim", "--format", fmt], capsys)
        assert code == 0, err
        assert err.strip().splitlines() == [said]
        if fmt == "csv":
            assert metrics_counts(stdout, "refuted") == {"A": (3, 1, 1, 2)}
    # sentence level: nothing taken from a sentence, nothing said
    code, stdout, err = run_cli([*args, "--format", "csv"], capsys)
    assert code == 0 and err == "", err


#: Three answers (7 sentences, one claim each) and the answers' labels: q1 and q3 wrong, q2
#: right. Per answer under -m refuted: q1 (a refuted claim) TP, q2 (a refuted claim) FP, q3
#: (none refuted) FN.
_ANSWERS = [
    ["q1", "q1:s1", "Aspirin lowers fever.", "supported", "yes"],
    ["q1", "q1:s2", "Aspirin cures cancer.", "refuted", "yes"],
    ["q1", "q1:s3", "Aspirin is an NSAID.", "supported", "yes"],
    ["q2", "q2:s1", "Ibuprofen is an NSAID.", "supported", "no"],
    ["q2", "q2:s2", "Ibuprofen is safe for most.", "refuted", "no"],
    ["q3", "q3:s1", "Statins lower LDL.", "supported", "yes"],
    ["q3", "q3:s2", "Statins cure diabetes.", "supported", "yes"],
]


def test_an_answers_label_on_each_sentence_row_of_a_flat_table_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # main read answer_has_error per sentence, exit 0: 5 error / 2 no-error sentence labels,
    # metrics TP 1, FP 1, FN 4, TN 1 (q1:s1, q1:s3, q3:s1, q3:s2 misses) where the clinicians
    # labelled answers (TP 1, FP 1, FN 1) and no sentence.
    table = _write_csv(
        tmp_path / "a.csv",
        ["question_id", "sentence_id", "claim", "verdict", "answer_has_error"],
        _ANSWERS,
    )
    out, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    rule = ["--label-rule", "answer_has_error = yes -> error"]
    base = ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels)]
    base += ["--system", "A", "--evidence", "none", *rule]
    code, _, err = run_cli(base, capsys)
    assert code == 2 and not out.exists() and not labels.exists()
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:2, field 'answer_has_error': column 'answer_has_error' is "
        "named as the answer's, and each question's sentences have one label (3 question(s) "
        "of several sentences, none split; question 'q1': all 3 sentences an error): the "
        "answer's label on each sentence row? read per sentence, the right sentences of a "
        "wrong answer count as errors (sentence metrics need each sentence's own label); if "
        "the clinicians labelled each sentence, --option label_level=sentence reads them as "
        "the sentences' own"
    ]
    # the labels file alone (generic-labels): refused alike
    apart = _write_csv(
        tmp_path / "al.csv",
        ["question_id", "sentence_id", "answer_has_error"],
        [[q, s, e] for q, s, _, _, e in _ANSWERS],
    )
    lab = ["ingest", "generic-labels", str(apart), "-o", str(labels), *rule]
    code, _, err = run_cli(lab, capsys)
    assert code == 2 and not labels.exists()
    assert "column 'answer_has_error' is named as the answer's" in err
    # the way it names: read as written (the user says they are the sentences' own)
    code, _, err = run_cli([*lab, "--option", "label_level=sentence"], capsys)
    assert code == 0, err
    code, _, err = run_cli([*base, "--option", "label_level=sentence"], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(out), "--labels", str(labels), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (1, 1, 4, 1)}


@pytest.mark.parametrize(
    ("column", "values"),
    [
        # a plain name: all-right and all-wrong answers are sentence labels too
        ("has_error", ["yes", "yes", "yes", "no", "no", "yes", "yes"]),
        # named as the answer's, but split within q1: labelled sentence by sentence
        ("answer_has_error", ["no", "yes", "no", "no", "no", "yes", "yes"]),
        # named as a sentence's
        ("answer_sentence_error", ["yes", "yes", "yes", "no", "no", "yes", "yes"]),
    ],
)
def test_sentence_labels_alike_within_answers_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, values: list[str]
) -> None:
    table = _write_csv(
        tmp_path / "a.csv",
        ["question_id", "sentence_id", "claim", "verdict", column],
        [[*row[:4], v] for row, v in zip(_ANSWERS, values, strict=True)],
    )
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(tmp_path / "l.jsonl"),
         "--system", "A", "--evidence", "none", "--label-rule", f"{column} = yes -> error"],
        capsys,
    )  # fmt: skip
    assert code == 0, err


def test_label_refusals_name_the_way_for_per_system_columns_and_answer_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A label column per system (has_error_A, has_error_B): the hint named melts per
    # sentence or clinician alone. Answers' labels (question_id, has_error, no sentence):
    # "a label needs a sentence_id or a claim_id" with no word of why.
    wide = _write_csv(
        tmp_path / "w.csv",
        ["question_id", "sentence_id", "has_error_A", "has_error_B"],
        [["q1", "q1:s1", "1", "0"], ["q1", "q1:s2", "0", "0"]],
    )
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(wide), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert "a column per sentence, per clinician or per system" in err
    assert "or 'system', the columns named by their systems first" in err
    answers = _write_csv(
        tmp_path / "a.csv", ["question_id", "has_error"], [["q1", "1"], ["q2", "0"]]
    )
    code, _, err = run_cli(["ingest", "generic-labels", str(answers), "-o", str(out)], capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines() == [
        f"failcodes: error: {answers}:2: a label needs a sentence_id or a claim_id (labels of "
        "whole answers, one per question? metrics score sentences (or claims): each label "
        "needs the id of the sentence it judges; an answer's label is no label of each of its "
        "sentences)"
    ]


def test_rows_printed_with_intervals_say_the_units_were_resampled_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each sentence its own question (question ids copied from the sentence ids), so the
    # cluster bootstrap resamples sentences as independent (sentences of one answer are not:
    # the intervals may not cover). The table's first line says so; CSV or JSON printed to
    # stdout said nothing.
    traces = _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "verdict"],
        [["A", s, s, s, text, v] for _, s, text, v in _SENTENCES],
    )
    labels = _write_csv(
        tmp_path / "l.csv",
        ["sentence_id", "has_error"],
        [[s, "1" if v == "refuted" else "0"] for _, s, _, v in _SENTENCES],
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, stdout, err = run_cli([*args, "--bootstrap", "200", "--format", "csv"], capsys)
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 0, 0, 2)}
    assert err.strip().splitlines() == [
        "Assumed: each question holds one sentence: the bootstrap resamples sentences as "
        "independent (if sentences share an answer, give its id as question_id)"
    ]
    # no intervals: nothing resampled, nothing said
    code, stdout, err = run_cli([*args, "--format", "csv"], capsys)
    assert code == 0 and err == "", err


def test_a_system_column_beside_verdict_columns_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A table of two answering systems (gpt, llama) and two verifiers' columns: each row
    # became one trace per column, system v1 or v2, the table's system column dropped with
    # no word (gpt's and llama's answers pooled: "2 system(s): v1 3, v2 3", exit 0), where
    # --map gen=system is refused.
    table = _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim", "v1", "v2"],
        [
            ["gpt", "q1", "q1:s1", "a", "refuted", "supported"],
            ["gpt", "q2", "q2:s1", "b", "supported", "supported"],
            ["llama", "q3", "q3:s1", "c", "refuted", "refuted"],
        ],
    )
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--evidence", "none"]
    args += ["--verdict-column", "v1", "--verdict-column", "v2"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:2, field 'system': a system column ('gpt' here) beside "
        "--verdict-column, which gives each trace its system: the column would be read for no "
        "trace; drop or rename it in the table (if its systems are pipelines of their own, "
        "ingest each one's rows apart)"
    ]


def test_a_label_id_with_a_space_the_traces_lack_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The label 'q1: s2' (a space after the colon) names the traces' 'q1:s2' (refuted, an
    # error: TP). main read it as a labelled sentence without claims (no error flagged: FN)
    # and q1:s2 as unlabelled: TP 0, FP 0, FN 2, TN 2 for TP 1, FN 1, TN 2, exit 0 (the
    # other spellings, case, leading zeros, Unicode form, runs of spaces, were refused).
    labels = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "0"], ["q1", "q1: s2", "1"], ["q2", "q2:s1", "1"], ["q2", "q2:s2", "0"]],
    )
    traces = _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "verdict"],
        [
            ["A", "q1", "q1:s1", "q1:s1", "a", "supported"],
            ["A", "q1", "q1:s2", "q1:s2", "b", "refuted"],
            ["A", "q2", "q2:s1", "q2:s1", "c", "supported"],
            ["A", "q2", "q2:s2", "q2:s2", "d", "supported"],
        ],
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, _, err = run_cli([*args, "--format", "csv"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:3, field 'sentence_id': no trace has sentence_id 'q1: s2', "
        "but one has 'q1:s2' (ids are compared exactly: spacing (a space where the other has "
        "none)); write the trace's id"
    ]
    fixed = _write_csv(
        tmp_path / "l2.csv",
        ["question_id", "sentence_id", "has_error"],
        [["q1", "q1:s1", "0"], ["q1", "q1:s2", "1"], ["q2", "q2:s1", "1"], ["q2", "q2:s2", "0"]],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(fixed), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (1, 0, 1, 2)}


def test_the_correct_column_refusal_names_no_false_a_column_of_words_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # is_correct holding 'correct'/'incorrect' (s2, s4 incorrect: TP 2, TN 2 by hand): the
    # refusal named '--label-rule 'is_correct = false -> error'', which matched no row: every
    # sentence no error (TP 0, FN 2 ... with notes alone), exit 0. Now it names the values.
    table = _write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", "is_correct"],
        [[q, s, "correct" if v == "supported" else "incorrect"] for q, s, _, v in _SENTENCES],
    )
    out = tmp_path / "l.jsonl"
    base = ["ingest", "generic-labels", str(table), "-o", str(out)]
    code, _, err = run_cli([*base, "--map", "is_correct=has_error"], capsys)
    assert code == 2 and not out.exists()
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:1, field 'is_correct': --map is_correct=has_error: the "
        "column's name says true means correct (no error), but has_error reads true as an "
        "error; give --label-rule 'is_correct = VALUE -> error' naming the value that marks an "
        "error (its values: 'correct', 'incorrect')"
    ]
    code, _, err = run_cli([*base, "--label-rule", "is_correct = incorrect -> error"], capsys)
    assert code == 0, err
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(_traces(tmp_path)), "--labels", str(out), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert metrics_counts(stdout, "refuted") == {"A": (2, 0, 0, 2)}
