"""Session 31 (t31read): the readers attacked with files nobody had tried.

Each test writes the file a real program writes (a spreadsheet in another language's CSV,
pyarrow, openpyxl) and asserts what is read, or the one line that refuses it; expected
values are hand-counted from the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import agree_percent, run_cli

# s1 correct, s2 and s3 errors, s4 correct: 2 error labels of 4
_GERMAN = (
    "question_id,sentence_id,claim,verdict,system,is_wrong\n"
    "q1,s1,Aspirin helps,supported,A,FALSCH\n"
    "q1,s2,Dose is 5g,refuted,A,WAHR\n"
    "q2,s3,Water is wet,supported,A,WAHR\n"
    "q2,s4,Sky green,refuted,A,FALSCH\n"
)


@pytest.mark.parametrize(
    ("true", "false"),
    [
        ("WAHR", "FALSCH"),  # German Excel saving a TRUE/FALSE column as CSV
        ("VRAI", "FAUX"),  # French
        ("VERDADERO", "FALSO"),  # Spanish
        ("ja", "nein"),
    ],
)
@pytest.mark.parametrize("named", ["true", "1", "yes"])
def test_a_rule_naming_true_on_truth_words_of_another_language_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], true: str, false: str, named: str
) -> None:
    # `is_wrong = true -> error` on a column a German spreadsheet saved (WAHR/FALSCH) matched
    # no row: every row got no_error, '0 error / 4 no-error sentence labels' for 2 / 2, exit 0
    # with a note. 'Y'/'N' or '1'/'0' there were already refused as the same truth value
    # written another way; so is WAHR now, named at its first row (s2, line 3).
    table = tmp_path / "t.csv"
    table.write_text(_GERMAN.replace("WAHR", true).replace("FALSCH", false), encoding="utf-8")
    out, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels),
         "--label-rule", f"is_wrong = {named} -> error"], capsys
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'is_wrong': --label-rule 'is_wrong = {named} -> "
        f"error' names '{named}', which no row has, and not '{true}', which rows have (the "
        "same truth value written another way? those rows got the 'no_error' label): name the "
        "values as the column writes them"
    )
    assert not out.exists() and not labels.exists()


def test_a_rule_naming_the_columns_own_truth_word_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the way through: name the word the column writes; s2 and s3 (WAHR) are the errors
    table = tmp_path / "t.csv"
    table.write_text(_GERMAN, encoding="utf-8")
    labels = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl"), "--labels-out",
         str(labels), "--label-rule", "is_wrong = wahr -> error"], capsys
    )  # fmt: skip
    assert code == 0, err
    read = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    assert [(x["sentence_id"], x["has_error"]) for x in read] == [
        ("s1", False),
        ("s2", True),
        ("s3", True),
        ("s4", False),
    ]


_SHARD_1 = "system,question_id,sentence_id,claim_id,claim,verdict\nA,q1,s1,c1,a,supported\n"
_SHARD_2 = "A,q2,s3,c3,c,supported\nA,q2,s4,c4,d,refuted\n"


def test_a_csv_line_starting_with_a_byte_order_mark_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Shards each saved as 'CSV UTF-8' (a BOM first), joined with cat: the second shard's
    # first row begins with U+FEFF. Read so, with question_id in the first column, its
    # question was '\ufeffq2' beside the next row's 'q2': q1, '\ufeffq2', q2 = n_questions 3
    # (the bootstrap's clusters) for q1, q2 = 2, exit 0. Now refused at that line (3).
    traces = tmp_path / "t.csv"
    first = _SHARD_1.replace("system,question_id", "question_id,system").replace("A,q1", "q1,A")
    second = _SHARD_2.replace("A,q2", "q2,A")
    traces.write_text("\ufeff" + first + "\ufeff" + second, encoding="utf-8")
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"sentence_id": s, "has_error": e}) + "\n"
            for s, e in [("s1", False), ("s3", True), ("s4", False)]
        ),
        encoding="utf-8",
    )
    code, _, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {traces}:3: the line starts with a byte-order mark (U+FEFF), which "
        "only begins a file: files joined with cat, each saved with one (CSV UTF-8, "
        "utf-8-sig)? it would be part of the row's first cell: delete it"
    )
    # without the second BOM: the two questions
    traces.write_text("\ufeff" + first + second, encoding="utf-8")
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "json"], capsys
    )
    assert code == 0, err
    assert {r["n_questions"] for r in json.loads(out)} == {2}


@pytest.mark.parametrize("command", ["ingest", "labels", "agree"])
def test_every_csv_reader_refuses_a_later_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # ingest generic (a system '\ufeffA' beside 'A'), a labels CSV (a sentence '\ufeffs3')
    # and agree's ratings (a unit '\ufeffu3') all read CSV through one line reader
    table = tmp_path / "t.csv"
    if command == "ingest":
        table.write_text(_SHARD_1 + "\ufeff" + _SHARD_2, encoding="utf-8")
        argv = ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")]
    elif command == "labels":
        traces = tmp_path / "t.jsonl"
        traces.write_text(
            '{"system": "A", "question_id": "q1", "sentence_id": "s1", "claim_id": "c1", '
            '"claim": "a", "verdict": "supported"}\n',
            encoding="utf-8",
        )
        table.write_text("sentence_id,has_error\ns1,false\n\ufeffs3,true\n", encoding="utf-8")
        argv = ["metrics", "--traces", str(traces), "--labels", str(table)]
    else:
        table.write_text("unit,r1,r2\nu1,yes,yes\nu2,no,yes\n\ufeffu3,no,no\n", encoding="utf-8")
        argv = ["agree", str(table), "--bootstrap", "0"]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    line = 4 if command == "agree" else 3
    assert err.strip().startswith(
        f"failcodes: error: {table}:{line}: the line starts with a byte-order mark (U+FEFF)"
    ), err
    assert not (tmp_path / "o.jsonl").exists()


def test_an_excel_error_value_in_a_csv_label_column_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The label column computed by a formula (=IF(...)) failed on s3 and s4 and Excel saved
    # '#VALUE!' in the CSV. Read as a value, the rule gave both no_error: 1 error label (s2)
    # for the sheet's 2 (s2, s3), exit 0 with a note. A workbook's error cell is refused;
    # its CSV's now too, naming the first (s3, line 4).
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,system,label\n"
        "q1,s1,Aspirin helps,supported,A,correct\n"
        "q1,s2,Dose is 5g,refuted,A,incorrect\n"
        "q2,s3,Water is wet,supported,A,#VALUE!\n"
        "q2,s4,Sky green,refuted,A,#VALUE!\n",
        encoding="utf-8",
    )
    out, labels = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--labels-out", str(labels),
         "--label-rule", "label = incorrect -> error"], capsys
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:4, field 'label': Excel error value #VALUE! (a formula "
        "that failed; the CSV holds its text): fix or clear the cell"
    )
    assert not out.exists() and not labels.exists()


@pytest.mark.parametrize("error", ["#REF!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!"])
def test_an_excel_error_value_in_a_csv_rating_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], error: str
) -> None:
    # r1 yes,yes,no,no,yes,no; r2 yes,no,ERR,yes,yes,no. Read as a category, u2 was one more
    # disagreement: percent 3/6 = 0.5; the unit has one rating, 3/5 = 0.6 without it.
    table = tmp_path / "r.csv"
    r2 = ["yes", "no", error, "yes", "yes", "no"]
    r1 = ["yes", "yes", "no", "no", "yes", "no"]
    table.write_text(
        "unit,r1,r2\n"
        + "".join(f"u{i},{a},{b}\n" for i, (a, b) in enumerate(zip(r1, r2, strict=True))),
        encoding="utf-8",
    )
    code, _, err = run_cli(["agree", str(table), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:4, field 'r2': Excel error value {error} (a formula that "
        "failed; the CSV holds its text): fix or clear the cell"
    )
    # cleared, the unit drops out of the pairs: 3 of 5 agree
    table.write_text(table.read_text(encoding="utf-8").replace(error, ""), encoding="utf-8")
    assert agree_percent(table, capsys) == pytest.approx(3 / 5)


def test_a_hash_in_a_csv_text_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # only a whole cell equal to an error value is one: '#REF! in the sheet' and '#3' are text
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim,verdict,system\n"
        "q1,#3,Aspirin #REF! helps,supported,A\n"
        'q1,s2,"Dose, #VALUE!",refuted,A\n',
        encoding="utf-8",
    )
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 0, err
    read = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(t["sentence_id"], t["claim"]) for t in read] == [
        ("#3", "Aspirin #REF! helps"),
        ("s2", "Dose, #VALUE!"),
    ]


def _workbook(path: Path, sheets: list[tuple[str, list[list[object]]]]) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    for i, (name, rows) in enumerate(sheets):
        sheet = book.active if i == 0 else book.create_sheet(name)
        assert sheet is not None
        sheet.title = name
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


@pytest.mark.parametrize("adapter", ["generic", "generic-labels"])
def test_a_readme_sheet_before_the_table_names_the_sheets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], adapter: str
) -> None:
    # the README's one column was read as the table's header: "unknown column 'About'" /
    # "unknown fields About", no word that the table is on the second sheet
    table = (
        [
            ["question_id", "sentence_id", "claim", "verdict", "system"],
            ["q1", "s1", "a", "supported", "A"],
        ]
        if adapter == "generic"
        else [["sentence_id", "has_error"], ["s1", False]]
    )
    book = _workbook(
        tmp_path / "t.xlsx", [("README", [["About"], ["Round 2 of the review."]]), ("data", table)]
    )
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", adapter, str(book), "-o", str(out)], capsys)
    assert code == 2
    assert err.count("\n") == 1, err
    assert err.strip().endswith(
        "(failcodes reads the first of the workbook's 2 sheets: 'README', 'data'; move the "
        "table to the first sheet)"
    ), err
    assert f"{book}:{1 if adapter == 'generic' else 2}, field " in err
    assert not out.exists()


def test_a_later_rows_refusal_in_a_workbook_names_no_sheet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the table is on the first sheet, a notes sheet after it: an unknown verdict on row 2 is
    # the row's fault, not the sheet's
    book = _workbook(
        tmp_path / "t.xlsx",
        [
            (
                "data",
                [
                    ["question_id", "sentence_id", "claim", "verdict", "system"],
                    ["q1", "s1", "a", "maybe", "A"],
                ],
            ),
            ("notes", [["x"]]),
        ],
    )
    code, _, err = run_cli(
        ["ingest", "generic", str(book), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert "unknown verdict 'maybe'" in err and "sheets" not in err, err
