"""Session 20 red team (t20red2): agreement and human review on shapes the tests did not use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from failcodes.annotationio import iter_annotations
from tests.cli_helpers import run_cli
from tests.judge_helpers import write_codebook
from tests.labelstudio_helpers import toy_codebook
from tests.test_outside_red12b import _ls_ann, _ls_task


def _import(tmp_path: Path, tasks: list[dict[str, Any]], capsys: Any) -> tuple[str, str, Path]:
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    out = tmp_path / "h.jsonl"
    args = ["labelstudio", "import", str(export), "-p", "retrieval", "-c", str(cb), "-o", str(out)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    return stdout, err, out


def test_reviews_without_a_prediction_field_on_tasks_with_predictions_are_not_read_as_blind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Label Studio's tasks API (and exports built from it) leaves the annotation's
    # 'prediction' field out (tasks/serializers.py: exclude = ['prediction', ...]); the task
    # still lists its predictions (the judge's codes, pre-selected in the editor). Both reviews
    # were read as blind: no "Assumed: ... pre-selected" line, judge_shown absent, exit 0.
    one = _ls_task(1, [{**_ls_ann(3, "irrelevant"), "id": 11, "lead_time": 3.0}])
    two = _ls_task(2, [{**_ls_ann(3, "exact_entity"), "id": 12, "lead_time": 2.0}])
    one["predictions"], two["predictions"] = [1], [2]
    # a third task with no predictions at all: blind, as before
    three = _ls_task(3, [{**_ls_ann(3, "exact_entity"), "id": 13, "lead_time": 2.0}])
    stdout, _, out = _import(tmp_path, [one, two, three], capsys)
    assert stdout.splitlines()[0].startswith(
        "Assumed: 2 of 3 annotations were made with the judge's codes pre-selected (Label "
        "Studio predictions; 2 of them by assumption: their tasks hold predictions and the "
        "export does not record what the reviewer was shown (no 'prediction' field)): "
    )
    assert sorted(a.judge_shown for a in iter_annotations(out)) == [False, True, True]


def test_a_prediction_listed_among_the_annotations_is_not_a_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a hand-merged export listing the judge's prediction (model_version, score, no
    # completed_by: fields of a Label Studio prediction, which no annotation has) among the
    # annotations: it was kept as a human coder 'unknown-annotator-41' agreeing with the judge
    pred = {"id": 41, "result": _ls_ann(3, "exact_entity")["result"], "model_version": "judge"}
    task = _ls_task(5, [{**pred, "score": 0.9}, {**_ls_ann(3, "irrelevant"), "id": 42}])
    stdout, err, out = _import(tmp_path, [task], capsys)
    assert [a.coder for a in iter_annotations(out)] == ["label-studio-user-3"]
    assert (
        "a prediction (model_version 'judge', no completed_by) listed among the annotations: "
        "the judge's codes, not a review; not kept"
    ) in err
    assert stdout.splitlines()[-1].startswith("1 annotations from 1 coder(s) on 1 tasks")


def test_a_skip_written_among_text_codes_is_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # r2 skipped units 3 and 6 and wrote 'skip': read as a third category, Fleiss 0.250
    # (statsmodels fleiss_kappa over the counts yes/no/skip [[2,1,0],[0,3,0],[2,0,1],[1,2,0],
    # [3,0,0],[0,2,1]] = 0.2500) where the cells left empty read 0.556, with no word
    table = tmp_path / "skip.csv"
    rows = ["1,yes,yes,no", "2,no,no,no", "3,yes,skip,yes", "4,no,no,yes", "5,yes,yes,yes"]
    table.write_text("\n".join(["unit,r1,r2,r3", *rows, "6,no,skip,no"]) + "\n")
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert row["value"] == pytest.approx(0.25)
    assert (
        "'skip' (2 rating(s), by r2) read as a category: a missing rating? leave those cells empty"
    ) in row["notes"][0]
    # among numbers it is refused, as 'missing' was (it read as a category, with no word)
    table.write_text("unit,r1,r2\n1,1,2\n2,3,3\n3,2,skip\n4,4,4\n5,5,4\n")
    code, _, err = run_cli(["agree", str(table)], capsys)
    assert code == 2
    assert "skip.csv:4, field 'r2': 'skip' among numeric ratings: a missing rating" in err


# 40 units, 4 codes: raters A and B, and C their consensus (A where they agree, else one of
# the two: A on 8 of their 17 splits, B on 9), under a name no consensus word holds
_ABC = (
    "cbc ccc dbd ada dcc caa dcd ddd aaa dbd ddd bbb bbb add bbb cbb ccc ccc aaa abb "
    "ddd add ddd ccc baa bbb bbb bdd aaa cbb aaa aba ddd ccc bbb bbb ddd dad bcc bbb"
)


def test_a_consensus_column_beside_two_raters_is_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # read as a third rater, C raised Fleiss to 0.618 (statsmodels fleiss_kappa of the three
    # columns: 0.61776) from the two raters' 0.426 (0.42592), exit 0, with no word: the value
    # rule starts at four columns. C equals A and B on all 23 units where they agree; A and B
    # side with the other two on 23 + 9 and 23 + 8 of 40 (73%): binom.cdf(0, 23, 0.27) = 7e-4
    table = tmp_path / "abc.csv"
    lines = [f"{i},{','.join(r)}" for i, r in enumerate(_ABC.split(), start=1)]
    table.write_text("\n".join(["id,A,B,C", *lines]) + "\n")
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert row["value"] == pytest.approx(0.6177627880831926)
    assert row["notes"][0].endswith(
        "; C equals the row-wise majority of the other columns on 23 of 23 rows (the other "
        "columns equal theirs on 73%): a consensus of A and B? read here as a rater (--raters "
        "A,B leaves it out)"
    )
    code, out, err = run_cli([*args, "--raters", "A,B"], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert row["value"] == pytest.approx(0.42591810890671167)
    assert "a consensus of" not in row["notes"][0]


def test_rater_columns_named_like_units_are_a_transposed_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # five readers (rows) answered four questions (columns): read as given the questions were
    # four raters of five units, Fleiss -0.067 (statsmodels fleiss_kappa over the columns),
    # where the readers' own agreement on the four questions is 0.200 (over the rows), exit 0:
    # fewer question columns than rows, and 'reader' is no rater name of a unit column
    table = tmp_path / "readers.csv"
    rows = ["Ann,yes,no,yes,no", "Bob,yes,no,no,no", "Cat,yes,yes,yes,no", "Dan,no,no,yes,no"]
    table.write_text("\n".join(["reader,q1,q2,q3,q4", *rows, "Eve,yes,no,yes,yes"]) + "\n")
    code, _, err = run_cli(["agree", str(table)], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1: 4 rater columns (q1, q2, q3, ...) named like units: is "
        "the table one row per rater and one column per unit? agreement needs one row per "
        "unit: transpose it (to read it as given, name the raters with --raters)"
    )
    args = ["agree", str(table), "--raters", "q1,q2,q3,q4", "--stat", "fleiss", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(-0.0666666666666667)


def test_human_vs_judge_agreement_says_how_many_reviews_saw_the_judges_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # alice's 6 reviews of the offline judge's units, 4 made with the judge's codes
    # pre-selected (judge_shown, as labelstudio pull writes them): the corrected shares'
    # caption said so, the human vs judge agreement (where a reviewer who keeps the judge's
    # codes raises kappa most) said nothing
    from failcodes.report.rundir import load_run_dir
    from tests.test_outside_red16b import _review_study

    ee, pe, irr = "exact_entity", "partial_entity", "irrelevant"
    root = _review_study(tmp_path, [ee, ee, pe, irr, ee, irr], {"alice": [ee, pe, pe, irr, ee, ee]})
    path = root / "review" / "alice.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines[:4]:
        line["judge_shown"] = True
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    notes = load_run_dir(root).notes["agreement"]
    assert (
        "4 of 6 reviews made with the judge's codes pre-selected (Label Studio predictions, "
        "push --judged): a reviewer who keeps them agrees with the judge more than a blind one "
        "may, so human vs judge agreement may lean toward the judge"
    ) in notes
    # agree on the reviews and the judge's codes: its first line says it too
    both = tmp_path / "both.jsonl"
    judge = root / "judge" / "d" / "retrieval" / "annotations.jsonl"
    both.write_text(path.read_text(encoding="utf-8") + judge.read_text(encoding="utf-8"))
    code, out, err = run_cli(["agree", str(both), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    assert (
        "; 4 of 6 human annotations made with the judge's codes pre-selected (Label Studio "
        "predictions, push --judged): human vs machine agreement may lean toward the judge"
    ) in json.loads(out)[0]["notes"][0]


def test_an_annotation_marked_ground_truth_is_named_on_the_import_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # users 3 and 4 reviewed task 101; user 5's annotation is marked ground truth (an
    # adjudicated answer): read as a third reviewer, unsaid, it raised the reviewers' agreement
    # with each other (the report leaves out only a coder named like a consensus)
    task = _ls_task(
        1,
        [
            {**_ls_ann(3, "irrelevant"), "id": 21},
            {**_ls_ann(4, "exact_entity"), "id": 22},
            {**_ls_ann(5, "exact_entity"), "id": 23, "ground_truth": True},
        ],
    )
    stdout, _, out = _import(tmp_path, [task], capsys)
    assert stdout.splitlines()[-1] == (
        f"3 annotations from 3 coder(s) on 1 tasks -> {out}; marked ground truth in Label "
        "Studio: 1 by label-studio-user-5, each read as its coder's review (an adjudicator's? "
        "name it like a consensus, --user ID=adjudicated, so the report counts it as the unit's "
        "review and leaves it out of reviewer vs reviewer agreement)"
    )


def test_a_csv_export_is_refused_asking_for_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Label Studio's CSV export was refused as 'malformed JSON (Expecting value at column 1)'
    export = tmp_path / "project-7.csv"
    export.write_text(
        "id,failcodes_unit_id,entity,scope,annotator\n101,u1,irrelevant,exact_scope,3\n"
    )
    cb = write_codebook(tmp_path / "cb.yaml", toy_codebook())
    args = [
        "labelstudio",
        "import",
        str(export),
        "-p",
        "retrieval",
        "-c",
        str(cb),
        "-o",
        str(tmp_path / "h.jsonl"),
    ]
    code, _, err = run_cli(args, capsys)
    assert (code, err.strip()) == (
        2,
        f"failcodes: error: {export}: a CSV or TSV export (one row per submitted annotation: a "
        "skipped task is left out, and so is the judge's prediction the reviewer was shown): "
        "export the project as JSON",
    )
