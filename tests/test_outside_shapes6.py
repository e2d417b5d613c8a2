"""Data shapes the sixth outside check tried (redteam6, 2026-12-02): values by hand.

Each test failed on the code before its fix (a note the text output gave and the JSON did
not, a warning not beside the cell it concerns, a number that looked right and was wrong).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.review_versions import v1_reviews_of_a_v2_judge, v2_codebook_file


def test_compare_json_says_which_systems_never_flag_beside_their_f1_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare --format json` had no word for a system that never flags an error.

    The text output's first line names it (its F1 is 2TP / (2TP + FP + FN) = 0 in the F1
    tests, undefined in `metrics`); the JSON, which scripts and the report read, did not.
    By hand, truth 1 1 1 0 0 0: A 1 1 0 0 1 0 (TP 2, FP 1, FN 1: F1 4/6 = 2/3), B 1 0 1 0 0 0
    (TP 2, FP 0, FN 1: F1 4/5), C never flags (F1 0). Differences: A vs B 2/3 - 4/5 = -2/15,
    A vs C 2/3, B vs C 4/5; the last two concern C, the first does not.
    """
    rows = ["unit_id,A,B,C,ref"]
    rows += [
        f"u{i},{a},{b},0,{t}"
        for i, (a, b, t) in enumerate(zip("110010", "101000", "111000", strict=True))
    ]
    path = tmp_path / "o.csv"
    path.write_text("\n".join(rows) + "\n")
    args = ["compare", str(path), "--truth", "ref", "--metrics", "f1", "--resamples", "200"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert "C never flag(s) an error: F1 counted as 0 in the F1 tests" in payload["assumed"]
    assert payload["never_flag"] == [{"mapping": None, "systems": ["C"]}]
    f1 = {t["comparison"]: t for t in payload["tests"] if t["test"] == "permutation_f1"}
    assert f1["A vs B"]["effect"] == pytest.approx(-2 / 15)
    assert f1["A vs C"]["effect"] == pytest.approx(2 / 3)
    assert f1["B vs C"]["effect"] == pytest.approx(4 / 5)
    assert f1["A vs B"]["note"] is None
    for pair in ("A vs C", "B vs C"):
        assert f1[pair]["note"].startswith("C never flag(s) an error: F1 counted as 0")
    # the text table gives the same note beside those rows
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert sum("never flag" in line for line in out.splitlines()[1:]) >= 2


def test_agree_json_carries_the_lines_printed_above_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`agree --format json` dropped the lines the table output prints above the table.

    A long table (item, rater, code) where rater b wrote the unit 'U1' and rater a 'u1': the
    text output says the table was read as long, which column holds the unit ids, and names
    the pair 'U1'/'u1' read as two units; the JSON (and the `-o` file a study's report reads)
    gave the numbers alone. By hand, units u2 (no/no) and u3 (yes/no) are the only ones rated
    twice: percent agreement (1 + 0) / 2 = 0.5 over 2 units.
    """
    table = tmp_path / "l.csv"
    table.write_text("item,rater,code\nu1,a,yes\nU1,b,yes\nu2,a,no\nu2,b,no\nu3,a,yes\nu3,b,no\n")
    code, text, err = run_cli(["agree", str(table), "--stat", "percent"], capsys)
    assert code == 0, err
    above = text.split("┏")[0]  # the lines printed above the table
    out_file = tmp_path / "agreement.json"
    code, out, err = run_cli(
        ["agree", str(table), "--stat", "percent", "--format", "json", "-o", str(out_file)],
        capsys,
    )
    assert code == 0, err
    for rows in (json.loads(out), json.loads(out_file.read_text())):
        (row,) = rows
        assert (row["value"], row["n_units"]) == (0.5, 2)
        notes = row["notes"]
        assert any(n.startswith("Assumed: ") for n in notes)
        assert any("'U1' and 'u1'" in n for n in notes)
        assert any("long" in n for n in notes)
        # every line above the table is in the JSON (the table wraps none of them here)
        assert " ".join(" ".join(notes).split()) == " ".join(above.split())


def test_v1_reviews_of_a_v2_step_are_noted_beside_each_cell_they_enter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The v1 -> v2 warning was in the caption and on stderr, not beside the cells.

    20 traces of verifier v; the judge (v2) gives inference {overreach,
    conflict_synthesis_failure} on t0..t9 and valid_inference on t10..t19. A reviewer under v1
    could give one code: overreach on t0..t9. Migrated, the human share of
    conflict_synthesis_failure is 0/20 = 0.0 (judge 10/20 = 50.0): a cell a reader copies into
    a paper without the caption. Each cell of a step that took one code under v1 (the steps
    v2 widened: evidence_selection, grounding, inference, verbal_confidence) now says in its
    note that its 20 reviewed units were migrated and the share may undercount; the all-correct
    rate (every step its correct code) may overcount; a step v2 did not widen
    (label_consistency) has no such note. The human vs judge agreement rows of inference say
    the same.
    """

    import pandas as pd

    def plan() -> None:
        code, _, err = run_cli(
            ["review", "plan", str(tmp_path), "-p", "verification", "-n", "20"], capsys
        )
        assert code == 0, err

    v1_reviews_of_a_v2_judge(tmp_path, plan, judge_annotations=True)
    cb_file = v2_codebook_file()
    out = tmp_path / "report"
    code, _, err = run_cli(
        ["report", str(tmp_path), "--codebook", str(cb_file), "-o", str(out)], capsys
    )
    assert code == 0, err
    corrected = pd.read_csv(out / "tables" / "reasoning_steps_corrected.csv", dtype=str).fillna("")
    notes = {(r.dimension, r.code): r.note for r in corrected.itertuples()}
    row = corrected[corrected["code"] == "conflict_synthesis_failure"].iloc[0]
    assert float(row["judge-only (%)"]) == 50.0
    assert str(row["human-only (%)"]).startswith("0.0 [")
    for dim in ("evidence_selection", "grounding", "inference", "verbal_confidence"):
        for (d, c), note in notes.items():
            if d == dim:
                assert (
                    f"20 reviewed unit(s) migrated from an earlier codebook version, where "
                    f"{dim} took one code: a co-occurring code may be missing, so this share "
                    "may undercount"
                ) in note, (d, c)
    assert all("migrated" not in n for (d, _), n in notes.items() if d == "label_consistency")
    assert "so this rate may overcount" in notes[("all_correct", "all_correct")]
    agreement = pd.read_csv(out / "tables" / "agreement.csv", dtype=str).fillna("")
    inference = agreement[agreement["subject"].astype(str).str.startswith("inference")]
    assert len(inference) > 0
    assert all("where inference took one code" in str(w) for w in inference["warning"])


def test_a_labelled_sentence_whose_claims_list_is_empty_keeps_its_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nested answers keyed by system: a labelled sentence with no claims lost its label.

    `--option rows=answers.*.sentences[].claims[]` makes a row per claim, so a sentence whose
    claims list is empty gave no row and its label was never written: metrics did not count
    it as a sentence without claims (the seed's rule: no error flagged, a miss where the
    clinicians found an error), exit 0 and a note on "lists missing or empty". On 75 invented
    sentences of 3 systems, 13 without claims (8 errors), gpt-4.1's recall read 3/8 for 3/11.
    By hand here, system "gpt-4.1" (a dot in its name), sentences: s1 error, claim refuted
    (TP); s2 error, no claims (FN under the rule); s3 no error, claim supported (TN):
    recall 1/2, n 3, one without claims (it read recall 1/1 over 2).
    """
    record = {
        "qid": "q1",
        "answers": {
            "gpt-4.1": {
                "sentences": [
                    {"sid": "s1", "label": "error", "claims": [{"c": "a", "v": "Refuted"}]},
                    {"sid": "s2", "label": "error", "claims": []},
                    {"sid": "s3", "label": "ok", "claims": [{"c": "b", "v": "Supported"}]},
                ]
            }
        },
    }
    src = tmp_path / "answers.jsonl"
    src.write_text(json.dumps(record) + "\n")
    traces, labels = tmp_path / "t.parquet", tmp_path / "l.jsonl"
    args = [
        "ingest", "generic", str(src), "-o", str(traces), "--labels-out", str(labels),
        "--option", "rows=answers.*.sentences[].claims[]", "--map", "answers.*=system",
        "--map", "qid=question_id", "--map", "answers.*.sentences.sid=sentence_id",
        "--map", "c=claim", "--map", "v=verdict", "--option", "label_scope=system",
        "--label-rule", "answers.*.sentences.label = error -> error",
    ]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "1 labelled sentence(s) with an empty claims list (1 with an error)" in err
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--bootstrap", "0",
         "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)
    assert row["recall"] == pytest.approx(1 / 2)
    assert row["n_without_claims"] == 1


def test_agree_leaves_a_reference_column_out_of_the_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `reference` column (the majority of three physicians) was read as a fourth rater.

    `compare` takes a `reference` column for the truth; `agree` counted it as a rater, which
    inflates agreement (it agrees with every rater at least as often as they agree with each
    other): 40 invented answers gave Fleiss 0.700 for the physicians' 0.597 (statsmodels).
    By hand, units y/y/y, n/n/n, y/y/n, n/n/y (reference y, n, y, n): per-unit agreement 1, 1,
    1/3, 1/3, mean 2/3, p(y) = 6/12, chance 1/2, Fleiss (2/3 - 1/2) / (1/2) = 1/3. With the
    reference as a rater: 1, 1, 1/2, 1/2, mean 3/4, chance 1/2, Fleiss 1/2.
    """
    table = tmp_path / "r.csv"
    table.write_text(
        "case_id,dr_a,dr_b,dr_c,reference\nc1,y,y,y,y\nc2,n,n,n,n\nc3,y,y,n,y\nc4,n,n,y,n\n"
    )
    args = ["agree", str(table), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["raters"] == ["dr_a", "dr_b", "dr_c"]
    assert "reference" in row["left_out"]
    assert row["value"] == pytest.approx(1 / 3)
    code, out, err = run_cli([*args, "--raters", "dr_a,dr_b,dr_c,reference"], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(1 / 2)


def test_a_study_of_one_file_per_system_with_shared_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One claim table per system, each row carrying the clinicians' shared sentence label.

    Each traces ingest writes its labels (`labels = true`); the study's merge refused the
    same label in the second file ("duplicate label for sentence 's1'"), so the only way on
    was `labels = true` on one ingest, which drops the labels of sentences that system made
    no claim for (their misses vanish). Labelled alike, one label per sentence is kept now.
    By hand, labels s1 error, s2 error, s3 no error (s2 has claims only in B's file):
    A: s1 refuted (TP), no claim for s2 (FN under the rule), s3 supported (TN);
    B: s1 supported (FN), s2 refuted (TP), s3 refuted (FP). Recall 1/2 each; A's precision
    1/1, B's 1/2.
    """
    from failcodes import codebook as codebooks

    root = tmp_path / "st"
    (root / "runs").mkdir(parents=True)
    cb = "medical-fact-check.v1.yaml"
    (root / cb).write_bytes((codebooks.bundled_dir() / cb).read_bytes())
    head = "question,sentence_id,claim,verdict,expert\n"
    (root / "runs" / "a.csv").write_text(head + "q1,s1,x,refuted,wrong\nq1,s3,z,supported,right\n")
    (root / "runs" / "b.csv").write_text(
        head + "q1,s1,x,supported,wrong\nq1,s2,y,refuted,wrong\nq1,s3,z,refuted,right\n"
    )
    ingest = """
[[datasets.ingest]]
adapter = "generic"
paths = ["runs/{name}.csv"]
labels = true
system = "{name}"
map = ["question=question_id"]
label_rule = "expert = wrong -> error"
"""
    (root / "failcodes.toml").write_text(
        'name = "per-system-files"\ncodebook = "medical-fact-check.v1.yaml"\n'
        + '\n[[datasets]]\nname = "ds"\n'
        + ingest.format(name="a")
        + ingest.format(name="b")
        + '\n[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
        + "\n[metrics]\nbootstrap = 0\n\n[judge]\nkinds = []\n"
    )
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    rows = {r["system"]: r for r in json.loads((root / "metrics" / "ds.json").read_text())}
    assert [(rows[s]["tp"], rows[s]["fp"], rows[s]["fn"], rows[s]["tn"]) for s in "ab"] == [
        (1, 0, 1, 1),
        (1, 1, 1, 0),
    ]
    assert rows["a"]["n_without_claims"] == 1
    assert rows["a"]["precision"] == pytest.approx(1.0)
    assert rows["b"]["precision"] == pytest.approx(1 / 2)


def test_a_column_hidden_in_excel_is_not_read_as_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rater column hidden in Excel (a draft) was read as a third rater, exit 0.

    Two raters, r1 and r2, rate 6 cases; a hidden column D holds a discarded draft. Read as
    it was, Fleiss over r1, r2 and the draft; the person who made the sheet sees two raters.
    It is refused now, naming the column; with the column deleted, by hand: r1 and r2 agree
    on 5 of 6 (y/y, n/n, y/n, n/n, y/y, n/n): percent 5/6; Cohen: p(y) r1 3/6, r2 2/6,
    chance 3/6 * 2/6 + 3/6 * 4/6 = 1/2, kappa (5/6 - 1/2) / (1/2) = 2/3.
    """
    import openpyxl  # type: ignore[import-untyped]

    rows = [("y", "y", "n"), ("n", "n", "y"), ("y", "n", "n"), ("n", "n", "y"),
            ("y", "y", "n"), ("n", "n", "n")]  # fmt: skip
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["case", "r1", "r2", "r3_draft"])
    for i, row in enumerate(rows):
        sheet.append([f"c{i}", *row])
    sheet.column_dimensions["D"].hidden = True
    path = tmp_path / "r.xlsx"
    book.save(path)
    code, _, err = run_cli(["agree", str(path), "--stat", "cohen"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {path}:1, field 'D': column D is hidden in Excel and holds values "
        "(first at D1), and failcodes reads every column: unhide it (it will be read), or "
        "delete it"
    ]
    sheet.delete_cols(4)
    book.save(path)
    args = ["agree", str(path), "--stat", "percent", "--stat", "cohen", "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    got = {r["statistic"]: r["value"] for r in json.loads(out)}
    assert got["percent"] == pytest.approx(5 / 6)
    assert got["cohen"] == pytest.approx(2 / 3)


def test_the_corrected_attribution_says_its_shares_are_over_the_items_kept(
    tmp_path: Path,
) -> None:
    """A row that leaves items out printed a judge-only share that is not Figure 1's.

    In the demo, multivers-fever's row said items 59, judge-only verification 17.9 (= 10/56,
    over the items kept) where Figure 1 has 10/59 = 16.9, beside "3 of 59 items left out".
    By hand here: 12 one-passage items (u0..u11, judge verification on u0..u5, retrieval on
    u6..u11; u0..u9 reviewed, the reviewer agreeing) and one two-passage item (u12, u13:
    only u12 drawn, so never fully reviewed): its group holds no fully reviewed item and is
    left out, so the shares are over 12 items: judge-only verification 6/12 = 50.0 (6/13 =
    46.2 over all 13), and the row now says so.
    """
    from failcodes.attribution import ReviewedAttribution, Stage
    from failcodes.report.corrected import attribution_rows, attribution_table
    from failcodes.reviewplan import read_plan
    from failcodes.units import UnitKind
    from tests.test_review_plan import write_half_plan

    table = tmp_path / "per_passage.csv"
    table.write_text("unit_id\n")
    units = [f"u{i}" for i in range(14)]
    population = [*units, *(f"x{i}" for i in range(8))]  # 11 of 22 drawn: p = 1/2
    write_half_plan(tmp_path, "p", UnitKind.RETRIEVAL, table, [*units[:10], "u12"], population)
    plan = read_plan(tmp_path / "review" / "plans" / "p.json")
    pairs = [
        ReviewedAttribution(
            item_id=f"i{i}",
            system="S",
            judge=Stage.VERIFICATION if i < 6 else Stage.RETRIEVAL,
            human=(Stage.VERIFICATION if i < 6 else Stage.RETRIEVAL) if i < 10 else None,
            units=(f"u{i}",),
        )
        for i in range(12)
    ]
    pairs.append(
        ReviewedAttribution(
            item_id="i12", system="S", judge=Stage.RETRIEVAL, human=None, units=("u12", "u13")
        )
    )
    rows = attribution_table(attribution_rows(pairs, plan)).set_index("stage")
    ver = rows.loc["verification"]
    assert (ver["items"], ver["reviewed"]) == (13, 10)
    assert ver["judge-only (%)"] == "50.0"
    assert ver["note"].startswith(
        "1 of 13 items left out: 1 group(s) with < 2 fully reviewed; the judge-only, "
        "human-only and corrected shares are over the other 12 (not Figure 1's)"
    )


def test_the_shared_v1_review_setup_is_the_shape_both_tests_describe(tmp_path: Path) -> None:
    # tests/review_versions.py holds the setup test_outside_shapes4 and this file repeated:
    # 20 traces, the judge's inference a set of two on t0..t9 (10 of 20), alice's 20 v1
    # reviews one code each (overreach on the same 10)
    import pandas as pd

    from failcodes.annotations import Annotation

    planned: list[bool] = []

    def plan() -> None:  # `review plan` makes review/ (and its plan): here only the folder
        planned.append(True)
        (tmp_path / "review").mkdir()

    v1_reviews_of_a_v2_judge(tmp_path, plan, judge_annotations=True)
    assert planned == [True]
    table = pd.read_csv(tmp_path / "attribution" / "ds" / "per_trace.csv", dtype=str)
    assert len(table) == 20
    assert (table["inference"] == "overreach|conflict_synthesis_failure").sum() == 10
    lines = (tmp_path / "review" / "alice.jsonl").read_text().splitlines()
    reviews = [Annotation.model_validate_json(line) for line in lines]
    assert [r.codebook.version for r in reviews] == [1] * 20
    assert sum(r.codes["inference"] == "overreach" for r in reviews) == 10
    judged = (tmp_path / "judge" / "ds" / "reasoning" / "annotations.jsonl").read_text()
    judge = [Annotation.model_validate_json(line) for line in judged.splitlines()]
    assert [j.codebook.version for j in judge] == [2] * 20
    assert sum(bool(j.code_sets) for j in judge) == 10
    assert v2_codebook_file().name.endswith(".v2.yaml")
