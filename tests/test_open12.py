"""Session 11's known open shapes, each with a hand-computed value or the exact refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_compare_file_with_systems_names_the_id_column_and_rows_sharing_an_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --systems A,B passed over the 'id' column as before, but the first line said "unit ids:
    # none" and so never that unit 2 is on two rows (4 rows = 4 units of every test, 3 ids).
    path = tmp_path / "o.csv"
    path.write_text("id,sysA,sysB,sysC\n1,1,1,0\n2,0,0,1\n2,1,0,1\n4,0,1,0\n")
    code, out, _ = run_cli(["compare", str(path), "--systems", "sysA,sysB"], capsys)
    first = out.splitlines()[0]
    assert code == 0
    assert first.startswith("Assumed: systems (2) (given with --systems): sysA, sysB; unit ids: ")
    assert "unit ids: column(s) 'id' (2 rows share an id, e.g. '2': each row counts" in first
    # --unit-column names it too; a system named like an id stays a system, not an id
    code, out, _ = run_cli(
        ["compare", str(path), "--systems", "sysA,sysB", "--unit-column", "id"], capsys
    )
    assert code == 0 and "unit ids: column(s) 'id' (2 rows share" in out.splitlines()[0]


def _selected_on_another_code(root: Path) -> None:
    """100 units of retriever A; u000..u049 drawn. The judge codes exact_entity on even units
    (all high), partial_entity where i % 4 == 1, entity_mismatch where i % 4 == 3. The reviewer
    agrees with the judge on the 13 drawn even units u000..u024 and the 13 drawn partial ones
    (u001, u005, ..., u049): 26 reviewed, none of the 12 drawn entity_mismatch units."""
    from failcodes.study.layout import StudyLayout
    from failcodes.units import UnitKind
    from tests.test_outside_review11 import _entity
    from tests.test_review_plan import coded_table, write_half_plan

    def code(i: int) -> str:
        return "exact_entity" if i % 2 == 0 else ("partial_entity", "entity_mismatch")[i % 4 // 2]

    judge = {f"u{i:03d}": code(i) for i in range(100)}
    table = StudyLayout.of(root).per_passage("ds")
    table.parent.mkdir(parents=True)
    coded_table(judge, dict.fromkeys(judge, "A")).to_csv(table, index=False)
    drawn = [f"u{i:03d}" for i in range(50)]
    write_half_plan(root, "p", UnitKind.RETRIEVAL, table, drawn, list(judge))
    reviewed = [f"u{i:03d}" for i in range(0, 25, 2)] + [f"u{i:03d}" for i in range(1, 50, 4)]
    reviews = [_entity(u, judge[u]) for u in reviewed]
    (root / "review" / "alice.jsonl").write_text(
        "".join(a.model_dump_json() + "\n" for a in reviews), encoding="utf-8"
    )


#: Fisher's exact test on the drawn units, reviewed (26) vs not (24), of each judge split:
#: all_high (= exact_entity) 13/26 vs 12/24: p = 1; partial_entity 13/26 vs 0/24: p =
#: [C(26,13) + C(24,13)] / C(50,13) = 3.6e-5; entity_mismatch 0/26 vs 12/24: p = C(24,12) /
#: C(50,12) = 2.23e-5 (the other tail, C(26,12) / C(50,12) = 7.96e-5, is more likely than
#: the table seen). Three distinct splits (exact_entity is all_high's): Bonferroni 3 x 2.23e-5
#: = 6.7e-5.
SKEW_ON_A_CODE = (
    "the reviewed units are not a random part of the drawn ones: the judge coded entity_match "
    "entity_mismatch on 0 of 26 reviewed and 12 of 24 drawn but not reviewed (Fisher p = "
    "6.7e-05); counting those as not drawn biases the human and corrected shares toward the "
    "units reviewed"
)


def test_reviews_selected_on_a_code_other_than_the_flag_are_said_not_missing_at_random(
    tmp_path: Path,
) -> None:
    # Before: the check tested the judge's all_high only (13/26 vs 12/24, p = 1) and said
    # nothing, while human-only entity_mismatch read 0.0 (0 of the 26 reviewed; the judge, who
    # the reviewer agrees with everywhere, codes it on 25 of 100 units).
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind

    _selected_on_another_code(tmp_path)
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    assert (
        f"(24 not yet, counted as not drawn, which assumes they are missing at random); "
        f"{SKEW_ON_A_CODE}" in caption
    )
    assert inputs.notes["corrected:retrieval"] == [f"Plan 'p': {SKEW_ON_A_CODE}"]
    mismatch = table[table["code"] == "entity_mismatch"].iloc[0]
    assert mismatch["human-only (%)"].startswith("0.0 [")
    assert mismatch["note"].startswith("the missing reviews are not missing at random (caption)")


def test_review_status_warns_of_reviews_selected_on_another_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _selected_on_another_code(tmp_path)
    plan = tmp_path / "review" / "plans" / "p.json"
    reviews = tmp_path / "review" / "alice.jsonl"
    code, out, err = run_cli(["review", "status", str(plan), "--reviews", str(reviews)], capsys)
    assert code == 0 and "estimation sample 26/50 reviewed" in out
    assert err == f"failcodes: warning: {SKEW_ON_A_CODE}\n"


def _unsigned(ann_id: int | None, entity: str) -> dict[str, object]:
    """A Label Studio annotation with no completed_by (a trimmed or hand-made export)."""
    from tests.test_outside_review11 import _choice

    result = [_choice("entity", entity), _choice("scope", "exact_scope")]
    raw: dict[str, object] = {"result": result, "was_cancelled": False}
    if ann_id is not None:
        raw["id"] = ann_id
    return raw


def test_two_annotations_with_no_annotator_are_two_coders_named_by_annotation_id() -> None:
    # Two annotations of one task, neither with completed_by. Before: both were the coder
    # 'unknown-annotator', so one was dropped as "several annotations by the same coder" (one
    # real review lost). Label Studio gives each annotation its own id: each is kept as a
    # coder of its own, named by it, and a problem line says the annotator is unknown.
    from failcodes.coderagreement import annotation_agreement
    from failcodes.labelstudio.results import annotations_from_export
    from failcodes.units import UnitKind
    from tests.labelstudio_helpers import toy_codebook
    from tests.test_outside_review11 import _task

    tasks = [
        _task(0, [_unsigned(5, "exact_entity"), _unsigned(11, "exact_entity")]),
        _task(1, [_unsigned(6, "exact_entity"), _unsigned(12, "irrelevant")]),
    ]
    got = annotations_from_export(tasks, toy_codebook(), UnitKind.RETRIEVAL)
    coders = [(a.coder, a.codes["entity"]) for a in got.annotations]
    assert coders == [
        ("unknown-annotator-5", "exact_entity"),
        ("unknown-annotator-11", "exact_entity"),
        ("unknown-annotator-6", "exact_entity"),
        ("unknown-annotator-12", "irrelevant"),
    ]
    unit = got.annotations[0].unit_id
    assert str(got.problems[0]) == (
        f"task 100 (unit {unit}), coder unknown-annotator-5: no completed_by (the annotator is "
        "not in the export): kept as a coder of its own, named by its annotation id; agreement "
        "per coder pair cannot follow this annotator to other units"
    )
    assert len(got.problems) == 4
    # both reviews of each unit count: entity percent agreement over the 2 units with two
    # ratings = (1 + 0) / 2 = 0.5 (before: one rating per unit, no unit to compare)
    percent = [
        r.result.value
        for r in annotation_agreement(got.annotations)
        if r.scope == "dimension" and r.dimension == "entity" and r.result.statistic == "percent"
    ]
    assert percent == [0.5]
    # with no annotation id either: the task and the annotation's place in it
    bare = annotations_from_export(
        [_task(0, [_unsigned(None, "exact_entity"), _unsigned(None, "irrelevant")])],
        toy_codebook(),
        UnitKind.RETRIEVAL,
    )
    assert [a.coder for a in bare.annotations] == [
        "unknown-annotator-task100-1",
        "unknown-annotator-task100-2",
    ]


def test_an_interval_over_repeated_rows_counts_their_units(
    tmp_path: Path,
) -> None:
    # 24 units in two rows each, 12 drawn and reviewed (6 exact_entity): 24 reviewed rows. On
    # the rows the human-only interval was 50.0 [31.0, 69.0] (Jeffreys), marked "too narrow".
    # Now it counts the 12 units (Kish, 24 rows of 2 -> 12): Clopper-Pearson for 6 of 12,
    # Beta(6, 7) at 2.5% and Beta(7, 6) at 97.5%: [21.1, 78.9]; no mark is needed.
    from scipy.stats import beta as beta_dist

    from tests.test_outside_review11 import _duplicated_rows

    got = _duplicated_rows(tmp_path, 24, 12).loc["exact_entity"]
    low, high = beta_dist.ppf(0.025, 6, 7), beta_dist.ppf(0.975, 7, 6)
    assert (round(100 * low, 1), round(100 * high, 1)) == (21.1, 78.9)
    assert got["human-only (%)"] == "50.0 [21.1, 78.9]"
    assert got["corrected (%)"].startswith("50.0 [")
    # one row per unit (25 of 50 drawn units reviewed at random): no mark (the control)
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind
    from tests.test_outside_review11 import _half_reviewed_study

    _half_reviewed_study(tmp_path / "once", [f"u{i:03d}" for i in range(25)])
    [(_, table)] = load_run_dir(tmp_path / "once").corrected[UnitKind.RETRIEVAL]
    # exact_entity on 13 of the 25 reviewed (u000, u002, ..., u024): Clopper-Pearson,
    # Beta(13, 13) at 2.5% and Beta(14, 12) at 97.5%
    exact = table.set_index("code").loc["exact_entity"]
    low, high = beta_dist.ppf(0.025, 13, 13), beta_dist.ppf(0.975, 14, 12)
    assert exact["human-only (%)"] == f"52.0 [{100 * low:.1f}, {100 * high:.1f}]"
    assert not any("too narrow" in c for c in [*table["human-only (%)"], *table["corrected (%)"]])


def test_agree_refuses_one_set_of_codes_joined_in_two_orders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'overreach' and 'conflict' are never written alone, so the set check passed them by;
    # read as categories 'overreach;conflict' and 'conflict;overreach' disagreed: percent
    # (0 + 1 + 1 + 0) / 4 = 0.500, exit 0. As sets u1, u2, u3 agree and u4 does not: 3/4.
    path = tmp_path / "r.csv"
    path.write_text(
        "id,r1,r2\nu1,overreach;conflict,conflict;overreach\nu2,none,none\n"
        "u3,overreach;conflict,overreach;conflict\nu4,none,overreach;conflict\n"
    )
    args = ["agree", str(path), "--stat", "percent", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {path}:2, field 'r2': 'conflict;overreach' holds the codes of "
        "'overreach;conflict' (line 2, column 'r1') written another way (order or spacing): "
        "read as one category each they would disagree; compare cells as sets with --sets ';' "
        "(exact-set agreement, alpha with the MASI and Jaccard distances)\n"
    )
    code, out, _ = run_cli([*args, "--sets", ";"], capsys)
    # the exact-set row (code None; each code's own rows follow it)
    percent = [
        r["value"] for r in json.loads(out) if r["statistic"] == "percent" and not r.get("code")
    ]
    assert code == 0 and percent == [0.75]


def test_agree_says_on_the_first_line_how_many_ratings_hold_a_separator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Joined one way only, each is one category (percent 3/4 = 0.750 either way), but the
    # first line said only "one category per cell": 3 of the 8 ratings hold ';'.
    path = tmp_path / "r.csv"
    path.write_text("id,r1,r2\nu1,a;b,a;b\nu2,c,c\nu3,a;b,c\nu4,c,c\n")
    code, out, _ = run_cli(["agree", str(path), "--stat", "percent", "--bootstrap", "0"], capsys)
    first = out.splitlines()[0]
    assert code == 0
    assert first.endswith(
        "; one category per cell (not code sets); 3 of 8 ratings hold ';' (e.g. 'a;b'): each "
        "is one category, not a set of codes (--sets ';' compares them as sets)"
    )
    assert "0.750" in out


def _formatted_sheet(path: Path, empty: int, last: tuple[str, str] | None = None) -> None:
    """Header + row s1 (an error), then ``empty`` rows of two styled empty cells (a sheet
    formatted down), then ``last`` as one more row if given."""
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["sentence_id", "has_error"])
    book.active.append(["s1", True])
    book.save(path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    end = empty + 2
    rows = "".join(
        f'<row r="{n}"><c r="A{n}" s="0"/><c r="B{n}" s="0"/></row>' for n in range(3, end + 1)
    )
    if last is not None:
        n = end + 1
        rows += (
            f'<row r="{n}"><c r="A{n}" t="inlineStr"><is><t>{last[0]}</t></is></c>'
            f'<c r="B{n}" t="b"><v>{last[1]}</v></c></row>'
        )
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    parts["xl/worksheets/sheet1.xml"] = sheet.replace(
        "</sheetData>", rows + "</sheetData>"
    ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in parts.items():
            out.writestr(name, data)


def test_rows_formatted_below_the_last_value_are_not_read(tmp_path: Path) -> None:
    # A sheet formatted down to row 1,048,576 with one labelled row: openpyxl walked every
    # empty row (21.5 of 30.8 CPU-s). The scan of the sheet's XML knows the last row holding a
    # value (2): openpyxl stops there. 5,000 empty rows here: 5,002 rows read -> 2.
    from failcodes import sheetio

    path = tmp_path / "l.xlsx"
    _formatted_sheet(path, 5000)
    scan = sheetio.check_workbook(path)
    assert scan.last_value_row == 2
    assert len(list(sheetio._rows(path, sheetio._Clock(path), None))) == 5002  # before
    assert [n for n, _ in sheetio._rows(path, sheetio._Clock(path), scan)] == [1, 2]
    assert list(sheetio.sheet_rows(path)) == [(2, {"sentence_id": "s1", "has_error": True})]
    # a value below the empty rows is read (row 5,003), not cut off
    _formatted_sheet(path, 5000, ("s2", "0"))
    assert sheetio.check_workbook(path).last_value_row == 5003
    assert [n for n, _ in sheetio.sheet_rows(path)] == [2, 5003]


@pytest.mark.parametrize(
    ("table", "rule"),
    [
        # has_error column: sums under it (1 of 2 sentences in error)
        ("sentence_id,has_error\ns1,true\ns2,false\nTotal,1\n", ()),
        # a label rule's column: a count beside 'Total' ('Total' took the rule's otherwise)
        (
            "sentence_id,errors\ns1,yes\ns2,no\nTotal,1\n",
            ("--label-rule", "errors = yes -> error; otherwise -> no_error"),
        ),
    ],
)
def test_a_totals_row_under_the_labels_is_refused_at_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, rule: tuple[str, ...]
) -> None:
    # Before: 'wrote 3 labels', the third the label 'Total' (exit 0); metrics refused it later
    # as "no trace has sentence_id 'Total'", naming the labels file written, not the table.
    path, out = tmp_path / "l.csv", tmp_path / "l.jsonl"
    path.write_text(table)
    code, stdout, err = run_cli(
        ["ingest", "generic-labels", str(path), "-o", str(out), *rule], capsys
    )
    assert (code, stdout, out.exists()) == (2, "", False)
    assert err == (
        f"failcodes: error: {path}:4, field 'sentence_id': a row of totals? its sentence_id "
        "'Total' names a total, not a label: delete the row\n"
    )
    path.write_text(table.replace("Total", "s3"))  # the control: a sentence s3
    code, stdout, _ = run_cli(
        ["ingest", "generic-labels", str(path), "-o", str(out), *rule], capsys
    )
    assert code == 0 and len(out.read_text().splitlines()) == 3


def test_metrics_on_a_foreign_file_names_the_command_that_has_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # metrics has no --map, yet its refusal of a foreign field said "rename foreign fields with
    # --map FOREIGN=ours" (t11red3 row 13): the flag is ingest generic's (generic-labels' for
    # a labels file), which write the tool's format. ingest generic keeps its words.
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    trace = {"system": "A", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1"}
    trace |= {"claim": "X.", "verdict": "supported"}
    traces.write_text(json.dumps(trace | {"model": "m"}) + "\n")
    labels.write_text('{"sentence_id": "s1", "has_error": false}\n')
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"failcodes: error: {traces}:1, field 'model': unknown field (a foreign file: convert "
        "it with failcodes ingest generic --map FOREIGN=ours)\n"
    )
    csv = tmp_path / "t.csv"
    csv.write_text(",".join([*trace, "model"]) + "\n" + ",".join([*trace.values(), "m"]) + "\n")
    code, _, err = run_cli(["metrics", "--traces", str(csv), *args[3:]], capsys)
    assert code == 2 and err.endswith(
        "a foreign file: convert it with failcodes ingest generic --map FOREIGN=ours, drop a "
        "column with --map FOREIGN=)\n"
    )
    traces.write_text(json.dumps(trace) + "\n")
    labels.write_text('{"sentence_id": "s1", "has_error": false, "note": "x"}\n')
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err == (
        f"failcodes: error: {labels}:1, field 'note': unknown field (a foreign file: convert it "
        "with failcodes ingest generic-labels --map FOREIGN=ours)\n"
    )
