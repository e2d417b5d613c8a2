"""Session 25, t25red: red team on data shapes the tests did not use (issue 30's standard)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli_helpers import run_cli

_CODES = "sentence_id,error_type\ns1,dosage;interaction\ns2,none\ns3,dosage\ns4,interaction\n"


@pytest.mark.parametrize(
    "rule",
    [
        "error_type in {dosage, interaction} -> error; otherwise -> no_error",
        "error_type in {dosage, interaction} -> error",  # the implied opposite: only a note
    ],
)
def test_a_cell_joining_codes_the_label_rule_names_is_refused(tmp_path, capsys, rule) -> None:
    # One row per sentence, its error codes joined by ';' (s1 has two errors). main wrote s1
    # has_error false at exit 0 (under the implied opposite with a note that listed
    # 'dosage;interaction' among the values given no_error): 2 error labels for the 3
    # sentences whose cells name an error code (s1, s3, s4; by hand).
    table = tmp_path / "codes.csv"
    table.write_text(_CODES)
    out = tmp_path / "o" / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule", rule]
    code, _, err = run_cli(args, capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:2, field 'error_type': 'dosage;interaction' is not "
            f"named by --label-rule {rule!r} but joins values ('dosage', 'interaction', by "
            "';') that get error: several codes in one cell? those rows got the 'no_error' "
            'label; name it in the rule, quoted ({..., "dosage;interaction"}), or give its '
            "own clause"
        ],
    )
    assert not out.parent.exists()
    # the way through: the joined value named, quoted (';' separates the rule's clauses)
    named = (
        'error_type in {dosage, interaction, "dosage;interaction"} -> error; otherwise -> no_error'
    )
    code, _, err = run_cli([*args[:-1], named], capsys)
    assert code == 0, err
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["sentence_id"], x["has_error"]) for x in labels] == [
        ("s1", True),
        ("s2", False),
        ("s3", True),
        ("s4", True),
    ]


def test_a_cell_whose_codes_get_another_outcome_than_it_is_refused(tmp_path, capsys) -> None:
    # 'none -> no_error; otherwise -> error': 'dosage;interaction' got error, as each of its
    # codes would: nothing wrong, read (s1 error, s2 not, s3 and s4 errors). 'Dosage|none'
    # also got error, where its 'none' gets no_error: refused (main: an error label, exit 0).
    table = tmp_path / "codes.csv"
    table.write_text(_CODES)
    out = tmp_path / "l.jsonl"
    rule = "error_type = none -> no_error; otherwise -> error"
    args = ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule", rule]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["has_error"] for x in labels] == [True, False, True, True]
    table.write_text(_CODES + "s5,Dosage|none\n")
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.startswith(
        f"failcodes: error: {table}:6, field 'error_type': 'Dosage|none' is not named by "
        f"--label-rule {rule!r} but joins values ('dosage', 'none', by '|') that get error and "
        "no_error: several codes in one cell? those rows got the 'error' label"
    )


def test_agree_says_unit_ids_one_csv_writes_as_1_and_1_0(tmp_path, capsys) -> None:
    # Two exports joined: '1' in one, '1.0' (a pandas float column) in the other. JSON's 1 and
    # 1.0 are one unit (refused on two rows); the CSV's texts are two units, as for '01' and
    # '1', which the first lines name: main named '01'/'1' but said nothing of '1.0'/'1'.
    # Cohen over the 5 rows as given: p_o 4/5, p_e (2/5)(3/5) + (3/5)(2/5) = 12/25, kappa
    # (4/5 - 12/25) / (1 - 12/25) = 8/13 (by hand).
    table = tmp_path / "r.csv"
    table.write_text("unit,r1,r2\n1,yes,yes\n2,no,yes\n1.0,no,no\n3,yes,yes\n4,no,no\n")
    code, out, err = run_cli(
        ["agree", str(table), "--stat", "cohen", "--bootstrap", "0", "--format", "json"], capsys
    )
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(8 / 13)
    assert row["n_units"] == 5
    assert (
        "unit ids that differ only in case, spacing, Unicode form or a whole number written "
        "as a float ('1.0' for '1') are read as different units: '1' and '1.0'; write them "
        "one way if they name one unit"
    ) in row["notes"]


def test_a_rater_written_1_and_1_0_in_a_long_table_is_refused(tmp_path, capsys) -> None:
    # Two raters numbered 1 and 2; one export wrote '1.0' and '2.0' for some rows (a pandas
    # float column). main read 4 raters (1, 1.0, 2, 2.0), each rating 1 or 3 of the 4 units,
    # at exit 0 (Fleiss 0.467, the two raters' own; Cohen refused as 'the table has 4').
    table = tmp_path / "long.csv"
    table.write_text(
        "unit,rater,rating\nu1,1,yes\nu1,2,yes\nu2,1,no\nu2,2.0,yes\nu3,1.0,no\nu3,2,no\n"
        "u4,1,yes\nu4,2,yes\n"
    )
    args = ["agree", str(table), "--long", "rater,rating", "--unit-column", "unit"]
    code, _, err = run_cli([*args, "--stat", "fleiss", "--bootstrap", "0"], capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:5, field 'rater': rater '2.0' is '2' (line 3) written "
            "another way (a whole number as a float): it would be a rater of its own; write it "
            "one way"
        ],
    )


def test_a_consensus_says_the_targets_one_annotator_labelled_alone(tmp_path, capsys) -> None:
    # Two clinicians, the second labelled 3 of the 5 sentences. main's note: '4 unanimous, 1
    # split, 1 tied', where s3 and s4 carry dr A's label alone (kept as is: no consensus).
    # By hand: s1 (A, B error) and s5 (A, B no error) unanimous; s2 split 1-1, tied -> error;
    # s3 A error, s4 A no error, each alone.
    table = tmp_path / "two.csv"
    table.write_text(
        "sentence_id,annotator,has_error\ns1,A,true\ns1,B,true\ns2,A,false\ns2,B,true\n"
        "s3,A,true\ns4,A,false\ns5,A,false\ns5,B,false\n"
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out)]
    code, _, err = run_cli(
        [*args, "--option", "consensus=majority", "--option", "ties=error"], capsys
    )
    assert code == 0, err
    assert err.splitlines()[0] == (
        "note: consensus (majority) of 2 annotators over 5 targets: 4 unanimous (2 of them "
        "labelled by one annotator alone, that label kept: no consensus), 1 split, 1 tied"
    )
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["sentence_id"], x["has_error"], x["annotator"]) for x in labels] == [
        ("s1", True, "majority of 2: A, B"),
        ("s2", True, "majority of 2: A, B"),
        ("s3", True, "A"),
        ("s4", False, "A"),
        ("s5", False, "majority of 2: A, B"),
    ]


def _medexpert_tasks() -> list[dict[str, Any]]:
    from failcodes import bundled

    path = bundled.path("medexpert-sample", "sample_data_export_from_JSL.json")
    tasks: list[dict[str, Any]] = json.loads(path.read_text())
    return tasks


def _medexpert(tmp_path, capsys, tasks) -> tuple[int, str, list[dict[str, Any]]]:
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "medexpert", str(export), "-o", str(out)], capsys)
    labels = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return code, err, labels


def test_a_medexpert_completion_with_no_result_labels_nothing(tmp_path, capsys) -> None:
    # The bundled sample (11 tasks, 203 sentences, 4 error sentences; every completion holds
    # at least its certainty choice) with the first task's completion emptied, as a review
    # submitted untouched: main labelled its 15 sentences no error (203 labels, 3 errors,
    # exit 0), though no one reviewed them. Right: 188 labels, 3 errors, and a note.
    tasks = _medexpert_tasks()
    first = tasks[0]["data"]["title"]
    tasks[0]["completions"][0]["result"] = []
    code, err, labels = _medexpert(tmp_path, capsys, tasks)
    assert code == 0, err
    assert (len(labels), sum(x["has_error"] for x in labels)) == (188, 3)
    assert not [x for x in labels if x["question_id"] == first]
    assert (
        f"note: task {first!r}: its completion holds no annotation (an empty result); its "
        "sentences are unlabelled"
    ) in err.splitlines()


def test_a_skipped_medexpert_completion_is_no_review(tmp_path, capsys) -> None:
    # A second annotator skipped the second task (Label Studio's was_cancelled, an empty
    # result): main refused the task as '2 completions (..., dr_x); pick one annotator', and
    # alone the skip labelled its sentences no error. Right: the bundled labels, 203 and 4.
    tasks = _medexpert_tasks()
    skip = {"created_username": "dr_x", "was_cancelled": True, "result": []}
    tasks[1]["completions"].append(skip)
    code, err, labels = _medexpert(tmp_path, capsys, tasks)
    assert code == 0, err
    assert (len(labels), sum(x["has_error"] for x in labels)) == (203, 4)


def test_a_label_studio_export_of_medexpert_is_read(tmp_path, capsys) -> None:
    # Label Studio names a task's completions 'annotations' and their author 'completed_by':
    # main refused 'no labels found (expected at least one record)'. Right: 203 labels, 4
    # errors, as JSL's export of the same tasks.
    tasks = _medexpert_tasks()
    for task in tasks:
        task["annotations"] = task.pop("completions")
        for one in task["annotations"]:
            one["completed_by"] = {"id": 3, "email": one.pop("created_username")}
    code, err, labels = _medexpert(tmp_path, capsys, tasks)
    assert code == 0, err
    assert (len(labels), sum(x["has_error"] for x in labels)) == (203, 4)
    assert {x["annotator"] for x in labels} == {
        c["created_username"] for t in _medexpert_tasks() for c in t["completions"]
    }


def test_medscore_answer_records_with_numbered_ids_are_not_read_as_sentences(
    tmp_path, capsys
) -> None:
    # medscore_output.jsonl of three answers with ids case_1..case_3, each with claims from
    # two sentences. main's ids=auto took every id ending in _<digits> for PUMA's sentence
    # ids: question 'case' for all three answers (one cluster for the bootstrap), each
    # answer one sentence (its two sentences' claims pooled), with no word, exit 0. Right
    # (by hand): questions case_1..3, two sentences each (6), claims c0..c3.
    records = [
        {
            "id": f"case_{q}",
            "score": 0.5,
            "claims": [
                {
                    "claim": f"claim {q}.{s}.{c}",
                    "sentence": f"Answer {q} sentence {s}.",
                    "evidence": None,
                    "raw": "True",
                    "score": 1.0,
                }
                for s in range(2)
                for c in range(2)
            ],
        }
        for q in range(1, 4)
    ]
    source = tmp_path / "medscore_output.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "medscore", str(source), "-o", str(out)], capsys)
    assert code == 0, err
    traces = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted({t["question_id"] for t in traces}) == ["case_1", "case_2", "case_3"]
    assert len({t["sentence_id"] for t in traces}) == 6
    assert [t["sentence_id"] for t in traces[:4]] == ["case_1:s0"] * 2 + ["case_1:s1"] * 2
    assert err.splitlines()[0] == (
        f"note: {source}: ids read as one answer per record (--option ids=response), though "
        "every id ends in _<digits>: the claims of record 'case_1' (line 1) come from 2 "
        "sentences"
    )


def test_a_blank_sentence_id_under_a_filled_one_is_refused(tmp_path, capsys) -> None:
    # A claim table that names each sentence on its first claim's row alone (the rows under
    # it blank). main made the blank row's claim a sentence of its own ('c3'): q1:s1's
    # refuted claim c3 left it, so the error sentence q1:s1 counted as missed: TP 0, FN 1,
    # TN 1 at exit 0, no word, where by hand q1:s1 (c2 supported, c3 refuted) is TP 1, TN 1.
    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "gpt,q1,q1:s0,c0,a,supported\ngpt,q1,,c1,b,supported\n"
        "gpt,q1,q1:s1,c2,c,supported\ngpt,q1,,c3,d,refuted\n"
    )
    out = tmp_path / "o" / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:3, field 'sentence_id': no sentence_id here, where line "
            "2 gives one: a row without one is read as its own sentence (its claim id) (a sheet "
            "that names each sentence on its first row alone? fill the column on every row, or "
            "leave it out of every row)"
        ],
    )
    assert not out.parent.exists()
    # filled: TP 1, TN 1 (by hand, above)
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "gpt,q1,q1:s0,c0,a,supported\ngpt,q1,q1:s0,c1,b,supported\n"
        "gpt,q1,q1:s1,c2,c,supported\ngpt,q1,q1:s1,c3,d,refuted\n"
    )
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 0, err
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,has_error\nq1:s0,false\nq1:s1,true\n")
    args = ["metrics", "--traces", str(out), "--labels", str(labels), "--format", "json"]
    code, printed, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(printed)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 0, 1)


def test_a_blank_question_id_under_a_filled_one_is_refused(tmp_path, capsys) -> None:
    # Parquet of a nullable column: the second answer's question left null on its second
    # row. main read that row as question 'q2:s1' of its own (a cluster of its own), exit 0.
    table = tmp_path / "t.jsonl"
    rows = [
        {"question_id": "q1", "sentence_id": "q1:s0", "claim": "a", "verdict": "supported"},
        {"question_id": "q2", "sentence_id": "q2:s0", "claim": "b", "verdict": "refuted"},
        {"question_id": None, "sentence_id": "q2:s1", "claim": "c", "verdict": "refuted"},
    ]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "o" / "t.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(out), "--system", "gpt"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.startswith(
        f"failcodes: error: {table}:3, field 'question_id': no question_id here, where line 1 "
        "gives one: a row without one is read as its own question (its sentence id)"
    )
