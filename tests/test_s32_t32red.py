"""Session 32 (t32red): whole-CLI data shapes nobody tried, run as a researcher would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli

#: Questions 1 and 13, three sentences each, one claim a sentence, ids 'Q-S' ('1-2': question
#: 1, sentence 2). (verdict, the clinician's error) by hand under -m refuted:
#: 1-1 refuted/error TP, 1-2 supported/ok TN, 1-3 supported/ok TN,
#: 13-1 refuted/error TP, 13-2 supported/ok TN, 13-3 refuted/ok FP -> TP 2, FP 1, FN 0, TN 3.
_SENTENCES = {
    ("1", "1"): ("refuted", True),
    ("1", "2"): ("supported", False),
    ("1", "3"): ("supported", False),
    ("13", "1"): ("refuted", True),
    ("13", "2"): ("supported", False),
    ("13", "3"): ("refuted", False),
}


def _excel(question: str, sentence: str) -> str:
    """The id as Excel (US) saves a cell '1-2' it read as a date: '2-Jan'; '13-1' is no date."""
    month = int(question)
    if month > 3:
        return f"{question}-{sentence}"
    return f"{sentence}-{['Jan', 'Feb', 'Mar'][month - 1]}"


def _traces(path: Path, system: str, *, excel: bool = False) -> Path:
    rows = []
    for (q, s), (verdict, _) in _SENTENCES.items():
        sid = _excel(q, s) if excel else f"{q}-{s}"
        rows.append(
            {
                "system": system,
                "question_id": q,
                "sentence_id": sid,
                "claim_id": f"{q}-{s}-c",
                "claim": f"Claim {q} {s}.",
                "verdict": verdict,
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _labels(path: Path, *, excel: bool) -> Path:
    lines = ["question_id,sentence_id,has_error"]
    for (q, s), (_, error) in _SENTENCES.items():
        sid = _excel(q, s) if excel else f"{q}-{s}"
        lines.append(f"{q},{sid},{'TRUE' if error else 'FALSE'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_hand_counts_with_ids_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = _traces(tmp_path / "t.jsonl", "sysA")
    labels = _labels(tmp_path / "l.csv", excel=False)
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"sysA": (2, 1, 0, 3)}  # by hand, above


@pytest.mark.parametrize("command", ["metrics", "disagreements", "compare"])
def test_label_ids_a_spreadsheet_saved_as_dates_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # The labels went through Excel: '1-1', '1-2', '1-3' saved as '1-Jan', '2-Jan', '3-Jan'
    # ('13-1' is no date: kept). Main read them: the three named no trace's sentence but
    # question 1, so they counted as sentences without claims (1-Jan an error: FN; 2-Jan,
    # 3-Jan TN) and the traces' 1-1..1-3 as unlabelled: TP 1, FP 1, FN 1, TN 3 (recall 1/2)
    # for TP 2, FP 1, FN 0, TN 3 (recall 2/2), exit 0, said only as "labels cover 6 of 9".
    traces = _traces(tmp_path / "t.jsonl", "sysA")
    labels = _labels(tmp_path / "l.csv", excel=True)
    args = [command, "--traces", str(traces), "--labels", str(labels)]
    if command == "disagreements":
        args += ["-o", str(tmp_path / "d.jsonl")]
    if command == "compare":
        args += ["--traces", str(_traces(tmp_path / "b.jsonl", "sysB")), "-m", "refuted"]
    code, out, err = run_cli(args, capsys)
    assert code == 2, out
    assert "l.csv:2, field 'sentence_id'" in err
    assert "no trace has sentence_id '1-Jan', but one has '1-1'" in err
    assert "a spreadsheet (Excel) read '1-1' as a date and saved the date, '1-Jan'" in err
    assert not (tmp_path / "d.jsonl").exists()


def test_label_ids_saved_as_dates_refused_by_the_python_functions(tmp_path: Path) -> None:
    import failcodes as fc
    from failcodes.errors import InputError

    traces = fc.read_traces(_traces(tmp_path / "t.jsonl", "sysA"))
    labels = fc.read_labels(_labels(tmp_path / "l.csv", excel=True))
    with pytest.raises(InputError, match="'1-Jan', but one has '1-1'"):
        fc.compute_metrics(traces, labels)


@pytest.mark.parametrize("labels_excel", [False, True])
def test_one_systems_trace_ids_saved_as_dates_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], labels_excel: bool
) -> None:
    # sysB's traces went through Excel ('1-1' -> '1-Jan'), sysA's did not. Main, labels as
    # typed: sysA TP 2, FP 1, TN 3 (right); sysB's 1-Jan..3-Jan unlabelled and the labelled
    # 1-1..1-3 sentences it 'made no claim for': TP 1, FP 1, FN 1, TN 3 for TP 2, FP 1, TN 3,
    # exit 0, said only as "sysB: 6 of 9". Labels saved with sysB's (1-Jan): sysA's the same.
    a = _traces(tmp_path / "a.jsonl", "sysA")
    b = _traces(tmp_path / "b.jsonl", "sysB", excel=True)
    labels = _labels(tmp_path / "l.csv", excel=labels_excel)
    code, out, err = run_cli(
        ["metrics", "--traces", str(a), "--traces", str(b), "--labels", str(labels)], capsys
    )
    assert code == 2, out
    assert "the traces write sentence" in err
    assert "a spreadsheet (Excel) read '1-1' as a date and saved the date, '1-Jan'" in err


def test_one_systems_question_ids_saved_as_dates_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Questions '1-2' and '13-1', sentences '<question>:s0' (refuted, an error: TP) and
    # ':s1' (supported, no error: TN) -> TP 2, TN 2 for each system. sysB's file went through
    # Excel: question '1-2' became '2-Jan', its sentences '2-Jan:s0', '2-Jan:s1'. Main:
    # sysB TP 1, FN 1, TN 2 (the labelled 1-2:s0 counted as a sentence it made no claim
    # for), exit 0, said only as "not every system answered every labelled question".
    def rows(system: str, dated: bool) -> list[str]:
        out = []
        for q in ("1-2", "13-1"):
            shown = "2-Jan" if dated and q == "1-2" else q
            for s, verdict in enumerate(["refuted", "supported"]):
                out.append(
                    json.dumps(
                        {
                            "system": system,
                            "question_id": shown,
                            "sentence_id": f"{shown}:s{s}",
                            "claim_id": f"{shown}:s{s}:c",
                            "claim": f"Claim {q} {s}.",
                            "verdict": verdict,
                        }
                    )
                )
        return out

    a, b, labels = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "l.jsonl"
    a.write_text("\n".join(rows("sysA", False)) + "\n", encoding="utf-8")
    b.write_text("\n".join(rows("sysB", True)) + "\n", encoding="utf-8")
    labels.write_text(
        "".join(
            json.dumps({"question_id": q, "sentence_id": f"{q}:s{s}", "has_error": s == 0}) + "\n"
            for q in ("1-2", "13-1")
            for s in (0, 1)
        ),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        ["metrics", "--traces", str(a), "--traces", str(b), "--labels", str(labels)], capsys
    )
    assert code == 2, out
    assert "the traces write sentence '1-2:s0' also as '2-Jan:s0'" in err
    assert "read '1-2' as a date and saved the date, '2-Jan'" in err


def test_date_sources_by_hand() -> None:
    from failcodes.idzeros import date_sources, date_variants

    # Excel (US) reads '1-2' as 2 January, shows and saves '2-Jan'; (UK) 1 February, '1-Feb';
    # '1-32' as January 1932, 'Jan-32'; '2024-01-02' as a date saved '1/2/2024'.
    assert {"1-2", "1/2", "2-1", "01-02"} <= set(date_sources("2-Jan"))
    assert "1-2" in date_sources("1-Feb")
    assert "1-32" in date_sources("Jan-32")
    assert "2024-01-02" in date_sources("1/2/2024")
    assert "1-2-3" in date_sources("1/2/2003")  # '1-2-3' read as 2 January 2003
    # ids that show no date: none
    assert date_sources("q1:s2") == []
    assert date_sources("1-2") == []  # two numbers alone: an id, not a date shown
    assert date_sources("1.2.10") == []  # a version: no four-digit year, no slash
    assert date_sources("Foo-2") == []
    # a part of an id: question '1-2' saved as '2-Jan', then the sentence's ':s0'
    assert "1-2:s0" in date_variants("2-Jan:s0")
    assert date_variants("q1:s0") == []
    assert date_variants("x2-Jan") == []  # no date's edge before it


def test_a_duplicate_label_of_a_decimal_id_names_the_spreadsheet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sentence ids 'answer.sentence' (1.1 .. 1.11) in labels saved by Excel: '1.10' became
    # 1.1, a second label of sentence 1.1. Refused on main too, but its hint sent the user to
    # --option duplicates=same (a row per code), which kept one label '1.1' for both and left
    # sentence 1.10 unlabelled; the hint now names the number first.
    lines = ["question_id,sentence_id,has_error"]
    lines += [f"1,{float(f'1.{s}')!r},{'TRUE' if s == 10 else 'FALSE'}" for s in range(1, 12)]
    assert lines[10] == "1,1.1,TRUE"  # 1.10 as a spreadsheet saves it
    labels = tmp_path / "l.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(
        ["ingest", "generic-labels", str(labels), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2, out
    assert "l.csv:11, field 'sentence_id': duplicate label for sentence '1.1'" in err
    assert "it saves the ids 1.10 and 1.1 both as 1.1 (import the column as Text)" in err


#: Two verifiers as columns of one table, opposite ways: minicheck_support's 1 (or true) says
#: the claim holds, selfcheck_hallucination's 1 (or true) flags a hallucination. Each is right
#: on all four sentences: q1:s0 and q2:s1 errors, flagged by both; TP 2, TN 2 each by hand.
_TWO_WAYS = (
    "question_id,sentence_id,claim,minicheck_support,selfcheck_hallucination,gold\n"
    "q1,q1:s0,a,0,1,1\nq1,q1:s1,b,1,0,0\nq2,q2:s0,c,1,0,0\nq2,q2:s1,d,0,1,1\n"
)


@pytest.mark.parametrize(
    ("values", "aliases"),
    [
        # 0/1 codes read with one pair of aliases: main gave selfcheck TP 0, FP 2, FN 2, TN 0
        (("0", "1"), ["--alias", "1=supported", "--alias", "0=refuted"]),
        # true/false read with the aliases the refusal of selfcheck's true/false names: main
        # gave minicheck TP 0, FP 2, FN 2, TN 0
        (("false", "true"), ["--alias", "true=refuted", "--alias", "false=supported"]),
    ],
)
def test_verdict_columns_named_in_opposite_ways_under_one_alias_are_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    values: tuple[str, str],
    aliases: list[str],
) -> None:
    zero, one = values
    table = _TWO_WAYS.replace(",0,1,", f",{zero},{one},").replace(",1,0,", f",{one},{zero},")
    (tmp_path / "t.csv").write_text(table, encoding="utf-8")
    out_file = tmp_path / "o.jsonl"
    code, out, err = run_cli(
        [
            *("ingest", "generic", str(tmp_path / "t.csv"), "-o", str(out_file)),
            *("--labels-out", str(tmp_path / "l.jsonl"), "--option", "ids=line"),
            *("--verdict-column", "minicheck_support"),
            *("--verdict-column", "selfcheck_hallucination"),
            *("--label-rule", "gold = 1 -> error", *aliases),
        ],
        capsys,
    )
    assert code == 2, out
    assert "'selfcheck_hallucination' is named as an error flag and 'minicheck_support'" in err
    assert "ingest each system apart, each with its own --alias" in err
    assert not out_file.exists()


def test_the_way_through_two_verifiers_named_opposite_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t.csv"
    table.write_text(_TWO_WAYS, encoding="utf-8")
    mc, sc, labels = tmp_path / "mc.jsonl", tmp_path / "sc.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(mc), "--labels-out", str(labels)),
            *("--option", "ids=line", "--verdict-column", "minicheck_support"),
            *("--map", "selfcheck_hallucination=", "--label-rule", "gold = 1 -> error"),
            *("--alias", "1=supported", "--alias", "0=refuted"),
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(sc), "--option", "ids=line"),
            *("--verdict-column", "selfcheck_hallucination", "--map", "minicheck_support="),
            *("--map", "gold=", "--alias", "1=refuted", "--alias", "0=supported"),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(mc), "--traces", str(sc)),
            *("--labels", str(labels), "--format", "csv"),
        ],
        capsys,
    )
    assert code == 0, err
    # by hand (above): each TP 2, FP 0, FN 0, TN 2
    assert metrics_counts(out, "refuted") == {
        "minicheck_support": (2, 0, 0, 2),
        "selfcheck_hallucination": (2, 0, 0, 2),
    }


def test_the_true_false_refusal_says_the_alias_reads_every_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # selfcheck beside a verifier column with no direction in its name ('minicheck'): the
    # refusal's way (--alias true=refuted ...) would read minicheck's true as refuted too.
    table = _TWO_WAYS.replace("minicheck_support", "minicheck")
    table = table.replace(",0,1,", ",false,true,").replace(",1,0,", ",true,false,")
    (tmp_path / "t.csv").write_text(table, encoding="utf-8")
    code, out, err = run_cli(
        [
            *("ingest", "generic", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.jsonl")),
            *("--option", "ids=line", "--map", "gold="),
            *("--verdict-column", "minicheck", "--verdict-column", "selfcheck_hallucination"),
        ],
        capsys,
    )
    assert code == 2, out
    assert "holds true/false, which read as supported/refuted" in err
    assert (
        "--alias applies to every --verdict-column: if another's true means the claim holds" in err
    )


@pytest.mark.parametrize(
    ("rule", "way"),
    [
        ("is_correct = 1 -> error", "is_correct = 0 -> error"),
        ("is_correct in {yes} -> error; otherwise -> no_error", "is_correct = no -> error"),
        ("has_error = 0 -> error", "has_error = 1 -> error"),
        ("hallucinated = false -> error", "hallucinated = true -> error"),
        ("clinician_agrees = 1 -> error", "clinician_agrees = 0 -> error"),
        ("is_not_supported = f -> error", "is_not_supported = t -> error"),
    ],
)
def test_a_label_rule_inverting_its_columns_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, way: str
) -> None:
    # q1:s0 refuted and wrong (the clinician: is_correct 0), q1:s1 supported and right (1).
    # By hand TP 1, TN 1. Main read 'is_correct = 1 -> error': q1:s0 no error, q1:s1 an
    # error: TP 0, FP 1, FN 1, TN 0, exit 0, the note only "1 error / 1 no-error".
    column = rule.split()[0]
    values = {
        "is_correct": ("0", "1"),
        "has_error": ("1", "0"),
        "hallucinated": ("true", "false"),
        "clinician_agrees": ("0", "1"),
        "is_not_supported": ("t", "f"),
    }
    if "yes" in rule:
        values["is_correct"] = ("no", "yes")
    wrong, right = values[column]
    table = tmp_path / "t.csv"
    table.write_text(
        f"question_id,sentence_id,claim,verdict,{column}\n"
        f"q1,q1:s0,a,refuted,{wrong}\nq1,q1:s1,b,supported,{right}\n",
        encoding="utf-8",
    )
    out_file = tmp_path / "o.jsonl"
    code, out, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(out_file), "--option", "ids=line"),
            *("--system", "A", "--labels-out", str(tmp_path / "l.jsonl"), "--label-rule", rule),
        ],
        capsys,
    )
    assert code == 2, out
    assert f"column {column!r} is named as if its true value marks" in err
    assert f"give {way!r}" in err
    assert not out_file.exists()
    code, out, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(out_file), "--option", "ids=line"),
            *("--system", "A", "--labels-out", str(tmp_path / "l.jsonl"), "--label-rule", way),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(out_file),
            "--labels",
            str(tmp_path / "l.jsonl"),
            "--format",
            "csv",
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (1, 0, 0, 1)}  # by hand, above


@pytest.mark.parametrize(
    ("column", "rule", "cells"),
    [
        # 'accuracy' 1-5 (1 least accurate): 1 is a scale's value, no truth value
        ("accuracy", "accuracy in {1, 2} -> error", ("1", "5", "3")),
        # ... even where the sample's rows hold 1 alone beside a 5: the rule names 2
        ("accuracy", "accuracy in {1, 2} -> error", ("1", "5", "5")),
        # 'correction' is no correctness word: its 1 is an error
        ("needs_correction", "needs_correction = 1 -> error", ("1", "0", "0")),
        # the reference itself: its 1 is whatever the labels' 1 is
        ("correct_label", "correct_label = 1 -> error", ("1", "0", "0")),
        # names turned round: 0 error-free, 1 not correct are errors
        ("error_free", "error_free = 0 -> error", ("0", "1", "1")),
        ("not_correct", "not_correct = 1 -> error", ("1", "0", "0")),
        ("hallucination_free", "hallucination_free = no -> error", ("no", "yes", "yes")),
        # the rule the refusal names
        ("is_correct", "is_correct = 0 -> error", ("0", "1", "1")),
        ("has_error", "has_error = 1 -> error", ("1", "0", "0")),
    ],
)
def test_a_label_rule_its_columns_name_does_not_contradict_is_read(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    column: str,
    rule: str,
    cells: tuple[str, ...],
) -> None:
    # q1:s0 refuted, the rule's error; s1, s2 supported, no error -> TP 1, TN 2 by hand.
    table = tmp_path / "t.csv"
    table.write_text(
        f"question_id,sentence_id,claim,verdict,{column}\n"
        f"q1,q1:s0,a,refuted,{cells[0]}\nq1,q1:s1,b,supported,{cells[1]}\n"
        f"q1,q1:s2,c,supported,{cells[2]}\n",
        encoding="utf-8",
    )
    traces, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(table), "-o", str(traces), "--option", "ids=line"),
            *("--system", "A", "--labels-out", str(labels), "--label-rule", rule),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (1, 0, 0, 2)}
