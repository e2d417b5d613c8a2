"""Session 16 readers hardening (issue 30: validate once at the boundary).

Each test failed before its fix: a bad input gets one line naming the file, the line or cell
(and field where known) and what was expected, exit 2, nothing written; or the right value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces


def _rows() -> list[dict[str, object]]:
    return [t.model_dump(mode="json", exclude_none=True) for t in make_traces(2)]


def _write_jsonl(path: Path, rows: list[dict[str, object]], end: str = "\n") -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + end for r in rows))
    return path


def _labels(path: Path) -> Path:
    path.write_text("sentence_id,has_error,annotator\nq0-s1,true,a\nq1-s1,false,a\n")
    return path


LONG = "a line of over 2 MB (no trace or label record is that long: a JSON document? name it .json)"


@pytest.mark.parametrize("end", ["\n", "\r\n"])  # (the text reader's two paths)
@pytest.mark.parametrize(("chars", "refused"), [(1_200_000, True), (900_000, False)])
def test_every_reader_counts_a_lines_bytes(tmp_path, capsys, monkeypatch, end, chars, refused):
    # MAX_LINE counted characters in the text reader (ingest) and bytes in the byte readers
    # (metrics): a line of 1.2 M 'é' (2.4 MB, the limit made 2 MB here) was ingested, exit 0,
    # and the same file refused by metrics. Now both count bytes: refused by both; 900,000
    # 'é' (1.8 MB, under the limit) are read by both.
    from failcodes import jsonio

    monkeypatch.setattr(jsonio, "MAX_LINE", 2 << 20)
    rows = _rows()
    rows[1] = {**rows[1], "reasoning": "é" * chars}
    traces = _write_jsonl(tmp_path / "t.jsonl", rows, end)
    out = tmp_path / "out" / "t.jsonl"
    ingest = run_cli(["ingest", "generic", str(traces), "-o", str(out)], capsys)
    metrics = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(_labels(tmp_path / "l.csv"))], capsys
    )
    if refused:
        line = [f"failcodes: error: {traces}:2: {LONG}"]
        assert (ingest[0], ingest[2].strip().splitlines()) == (2, line)
        assert (metrics[0], metrics[2].strip().splitlines()) == (2, line)
        assert not out.parent.exists()
    else:
        assert (ingest[0], metrics[0]) == (0, 0), (ingest[2], metrics[2])


@pytest.mark.parametrize("escaped", [True, False])
def test_a_system_written_two_ways_is_named_at_its_line_in_a_bom_file(
    tmp_path, capsys, escaped
) -> None:
    # columnar.first_row_of_system read the JSONL file by itself, unbounded, without the BOM
    # (line 1 failed to parse and the whole file was skipped) and matched the name in the raw
    # text ('modèle' written "mod\u00e8le" was never found): the refusal named no line. Now
    # the lines of jsonio.jsonl_lines, as every other reader numbers them.
    rows = [*_rows(), {**_rows()[1], "claim_id": "q1-c9"}]
    rows[0]["system"], rows[1]["system"], rows[2]["system"] = "Modèle", "sysA", "modèle"
    rows[0]["reasoning"] = "Le modèle"  # (the name in line 1's text: it is parsed, BOM and all)
    text = "".join(json.dumps(r, ensure_ascii=escaped) + "\n" for r in rows)
    traces = tmp_path / "t.jsonl"
    traces.write_text("\ufeff" + text, encoding="utf-8")
    out = tmp_path / "out" / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(_labels(tmp_path / "l.csv"))]
    code, _, err = run_cli([*args, "-o", str(out)], capsys)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {traces}:3, field 'system': system 'modèle' is 'Modèle' written "
            "another way (case, spacing or Unicode form): they would be scored as two systems; "
            "write it one way"
        ],
    )
    assert not out.parent.exists()


def test_temporary_files_of_an_earlier_failcodes_are_said_and_kept(tmp_path, capsys) -> None:
    # a failcodes before run tags (c996e99) named its temporary files .{output}.{8 random}.tmp:
    # one left by a killed run was never swept, and nothing said it was there (a 300,000-trace
    # ingest left 15 MB a kill). Nothing tells a dead run's from a live one's, or from a user's
    # file so named: kept, and said once on stderr with its size; the user's .notes.tmp not.
    src = _write_jsonl(tmp_path / "t.jsonl", _rows())
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    old = out_dir / ".t.jsonl.k3j_h1xq.tmp"
    old.write_bytes(b"x" * 1_500_000)
    (out_dir / ".notes.tmp").write_text("mine")
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out_dir / "t.jsonl")], capsys)
    assert code == 0, err
    assert [line for line in err.splitlines() if "temporary" in line] == [
        f"failcodes: note: {out_dir}: 1 temporary file named as an earlier failcodes named its "
        "own (.t.jsonl.k3j_h1xq.tmp; 1.5 MB) is kept: nothing tells a killed run's from one "
        "still writing; remove it when no failcodes run writes into this folder"
    ]
    assert sorted(p.name for p in out_dir.iterdir()) == [
        ".notes.tmp",
        ".t.jsonl.k3j_h1xq.tmp",
        "t.jsonl",
    ]


def _workbook(path: Path, rows: list[list[object]], edit: Any = None) -> Path:
    """An .xlsx of ``rows`` made by openpyxl; ``edit`` rewrites its sheet XML (a str)."""
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    plain = path.with_name("plain-" + path.name)
    book.save(plain)
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item.filename)
            if edit is not None and item.filename == "xl/worksheets/sheet1.xml":
                data = edit(data.decode()).encode()
            out.writestr(item, data)
    plain.unlink()
    return path


_LABEL_ROWS: list[list[object]] = [
    ["sentence_id", "has_error", "annotator"],
    ["q0-s1", True, "a"],
    ["q1-s1", False, "a"],
]


def _row(xml: str, r: int) -> str:
    import re

    found = re.search(rf'<row r="{r}"[ >].*?</row>', xml)
    assert found is not None
    return found[0]


def _swap_rows(xml: str) -> str:
    return xml.replace(_row(xml, 2) + _row(xml, 3), _row(xml, 3) + _row(xml, 2))


def _row_twice(xml: str) -> str:
    second = _row(xml, 2).replace("<v>1</v>", "<v>0</v>")  # row 2 again, has_error false
    return xml.replace(_row(xml, 2), _row(xml, 2) + second)


def _cell_twice(xml: str) -> str:
    b2 = '<c r="B2" t="b"><v>1</v></c>'
    assert b2 in xml
    return xml.replace(b2, b2 + '<c r="B2" t="b"><v>0</v></c>')


def _cells_out_of_order(xml: str) -> str:
    row = _row(xml, 2)
    a, b, c = (row[row.index(f'<c r="{k}2"') :] for k in "ABC")
    a, b = a[: len(a) - len(b)], b[: len(b) - len(c)]
    c = c.removesuffix("</row>")
    return xml.replace(row, row.replace(a + b + c, c + a + b))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # openpyxl reads rows as the XML gives them and the reading stops at the last row
        # holding a value: row 2 after row 3 was left out, 1 label written for 2, exit 0
        (_swap_rows, "l.xlsx:2: sheet row 2 comes after row 3"),
        # row 2 twice (true, then false): one of them lost without a word
        (_row_twice, "l.xlsx:2: sheet row 2 is given twice"),
        # B2 twice (true, then false): read as false, exit 0
        (_cell_twice, "l.xlsx:2, field 'B': cell B2 is given twice"),
        # C2 before A2, B2: a row is as wide as its last cell, C2 (the annotator) was lost
        (_cells_out_of_order, "l.xlsx:2, field 'A': cell A2 comes after C2 in its row"),
    ],
)
def test_a_sheet_whose_xml_gives_rows_or_cells_out_of_order_is_refused(
    tmp_path, capsys, edit, expected
) -> None:
    src = _workbook(tmp_path / "l.xlsx", _LABEL_ROWS, edit)
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {tmp_path}/{expected} in the sheet's XML (out of order or given "
            "twice: a program wrote it; read as given, a value would be lost): open and save it "
            "in Excel, or save the sheet as CSV"
        ],
    )
    assert not out.parent.exists()


def test_a_sheet_whose_cells_and_rows_carry_no_reference_is_read_in_order(tmp_path, capsys):
    # (cells and rows may leave out r=: each is the next one; not a disorder)
    import re

    def bare(xml: str) -> str:
        return re.sub(r'<row r="\d+"', "<row", re.sub(r' r="[A-Z]+\d+"', "", xml))

    src = _workbook(tmp_path / "l.xlsx", _LABEL_ROWS, bare)
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    assert code == 0, err
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"sentence_id": "q0-s1", "has_error": True, "annotator": "a"},
        {"sentence_id": "q1-s1", "has_error": False, "annotator": "a"},
    ]


def test_a_parquet_dictionary_page_past_the_budget_is_refused_from_the_metadata(
    tmp_path, capsys, monkeypatch
) -> None:
    # a page is unpacked whole before a row of it is decoded: a 147 KB labels file whose
    # dictionary page held 30,000 texts of 10 KB (two of them used) unpacks to 300 MB, and
    # ingest took 1.31 GB (/usr/bin/time -v), exit 0: its rows decode to 20 KB, within the
    # decoded budget (256 MB). Now the metadata's uncompressed size is held to that budget
    # (85 MB, exit 2). Here the budget's floor is made 1 MB and the dictionary 3 MB.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from failcodes import parquetio

    monkeypatch.setattr(parquetio, "DECODED_MIN", 1 << 20)
    texts = pa.array([f"{i:08d}" + "x" * 10_000 for i in range(300)])
    ids = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), texts)
    table = pa.table({"sentence_id": ids, "has_error": [True, False], "annotator": ["a", "a"]})
    src = tmp_path / "l.parquet"
    pq.write_table(table, src, compression="zstd", dictionary_pagesize_limit=1 << 30)
    meta = pq.ParquetFile(src).metadata
    unpacked, size = meta.row_group(0).total_byte_size, src.stat().st_size
    assert unpacked > 3_000_000 and 32 * size < 1 << 20  # (the file: a few KB)
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {src}: its pages unpack to {unpacked / (1 << 20):,.1f} MB from "
            f"{size / (1 << 20):,.1f} MB (at most 1.0 MB, or 32 times the file's size) (a "
            "decompression bomb, or a table too large to read here): split the table into "
            "smaller files"
        ],
    )
    assert not out.parent.exists()


def _with_shared_text(path: Path, text: str, ref: str = "0") -> Path:
    """:func:`_workbook` of the labels, C2 (an annotator) shared text ``ref``; text 0 ``text``."""
    import zipfile

    def shared(xml: str) -> str:
        inline = '<c r="C2" t="inlineStr"><is><t>a</t></is></c>'
        assert inline in xml
        return xml.replace(inline, f'<c r="C2" t="s"><v>{ref}</v></c>')

    plain = _workbook(path.with_name("inline-" + path.name), _LABEL_ROWS, shared)
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    kind = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item.filename).decode()
            if item.filename == "[Content_Types].xml":
                data = data.replace(
                    "</Types>",
                    f'<Override PartName="/xl/sharedStrings.xml" ContentType="{kind}"/></Types>',
                )
            elif item.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(
                    "</Relationships>",
                    f'<Relationship Id="rSS" Type="{rel}/sharedStrings" '
                    'Target="sharedStrings.xml"/></Relationships>',
                )
            out.writestr(item, data)
        out.writestr(
            "xl/sharedStrings.xml",
            f'<sst xmlns="{main}" count="1" uniqueCount="1"><si><t>{text}</t></si></sst>',
        )
    plain.unlink()
    return path


@pytest.mark.parametrize("where", ["shared", "inline"])
def test_a_workbook_cell_past_the_cell_limit_is_refused_before_openpyxl_holds_it(
    tmp_path, capsys, monkeypatch, where
) -> None:
    # a 17 MB workbook whose one shared text (an annotator) unpacked to 250 MB: ingest took
    # 829 MB (/usr/bin/time -v), exit 0, and wrote a JSONL line that metrics then refuses
    # (past 64 MB). A CSV cell is held to 64 M characters; a workbook's had no bound (Excel
    # holds 32,767). Now the scan refuses it, the cell named where the sheet holds it (44 MB,
    # 0.30 CPU-s). The limit is made 1 M characters here.
    from failcodes import sheetio

    monkeypatch.setattr(sheetio, "MAX_CELL", 1 << 20, raising=False)
    long = "é" * ((1 << 20) + 1)
    src = tmp_path / "l.xlsx"
    if where == "shared":
        _with_shared_text(src, long)
        expected = f"{src}: the workbook's shared text 1"
    else:
        inline = '<c r="C2" t="inlineStr"><is><t>a</t></is></c>'  # (openpyxl cuts a long one)
        _workbook(
            src, _LABEL_ROWS, lambda xml: xml.replace(inline, inline.replace(">a<", f">{long}<"))
        )
        expected = f"{src}:2, field 'C': cell C2"
    short = _with_shared_text(tmp_path / "ok.xlsx", "é" * (1 << 20))  # (at the limit: read)
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(short), "-o", str(out)], capsys)
    assert code == 0, err
    out = tmp_path / "out2" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {expected}: a text of over 1 M characters (no trace or label "
            "cell is that long)"
        ],
    )
    assert not out.parent.exists()


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
@pytest.mark.parametrize("level", ["sentence", "claim"])
def test_a_pandas_row_index_in_a_labels_parquet_is_refused_alike_at_both_levels(
    tmp_path, capsys, command, level
) -> None:
    # session 15 left "read at claim level, refused at sentence level": on this main both
    # levels refuse it, with the pandas hint (and so does ingest generic-labels). Kept a
    # refusal: the index holds no data the tool needs, but the bad-input row of cba50cd
    # asserts it, and the fix is one argument (index=False). This guards the two levels.
    import pandas as pd

    traces = _write_jsonl(tmp_path / "t.jsonl", _rows())
    if level == "sentence":
        frame = pd.DataFrame({"sentence_id": ["q0-s1", "q1-s1"], "has_error": [True, False]})
    else:
        frame = pd.DataFrame(
            {"claim_id": ["q0-c1", "q1-c1"], "system": "sysA", "has_error": [True, False]}
        )
    frame["annotator"] = "a"
    frame.index = pd.Index([5, 9])  # (not a range: written as __index_level_0__)
    labels = tmp_path / "l.parquet"
    frame.to_parquet(labels)
    out = tmp_path / "out" / ("o.jsonl" if command == "disagreements" else "o.json")
    args = [command, "--traces", str(traces), "--labels", str(labels), "--level", level]
    code, _, err = run_cli([*args, "-o", str(out)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(
        f"failcodes: error: {labels}:1, field '__index_level_0__': unknown column"
    )
    assert "pandas' row index: write the file with to_parquet(index=False)" in lines[0]
    assert not out.parent.exists()


def test_a_damaged_shared_text_or_true_false_cell_is_refused_naming_the_cell(tmp_path, capsys):
    # C2 referring to shared text 99 of the 1 the workbook holds: openpyxl's IndexError came
    # out as a traceback, exit 1; a TRUE/FALSE cell holding 2 (Excel writes 0 or 1) read as
    # true, exit 0. Now the scan names the cell.
    bad_ref = _with_shared_text(tmp_path / "ref.xlsx", "bob", "99")
    b2 = '<c r="B2" t="b"><v>1</v></c>'
    two = _workbook(
        tmp_path / "two.xlsx", _LABEL_ROWS, lambda x: x.replace(b2, b2.replace("1", "2"))
    )
    ok = _with_shared_text(tmp_path / "ok.xlsx", "bob")
    out = tmp_path / "ok.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(ok), "-o", str(out)], capsys)
    assert code == 0, err
    assert json.loads(out.read_text().splitlines()[0])["annotator"] == "bob"
    expected = {
        bad_ref: "2, field 'C': cell C2 refers to shared text '99', of the 1 the workbook holds "
        "(numbered from 0: the file is damaged)",
        two: "2, field 'B': cell B2 is a TRUE/FALSE cell holding '2' (Excel writes 0 or 1: the "
        "file is damaged)",
    }
    for src, why in expected.items():
        out = tmp_path / "out" / "l.jsonl"
        code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
        assert (code, err.strip().splitlines()) == (
            2,
            [f"failcodes: error: {src}:{why}: open and save it in Excel, or save the sheet as CSV"],
        )
        assert not out.parent.exists()


def _repackaged(src: Path, dst: Path, how: str) -> Path:
    """``src`` without ``_rels/.rels`` (``"no-rels"``) or with Strict Open XML relationship
    types (``"strict"``): openpyxl finds the workbook by its content types all the same."""
    import zipfile

    transitional = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "_rels/.rels" and how == "no-rels":
                continue
            if item.filename.endswith(".rels") and how == "strict":
                data = data.replace(
                    transitional, b"http://purl.oclc.org/ooxml/officeDocument/relationships/"
                )
            out.writestr(item, data)
    return dst


@pytest.mark.parametrize("how", ["no-rels", "strict"])
def test_a_workbook_the_scan_cannot_find_its_sheet_in_is_refused_not_read_unchecked(
    tmp_path, capsys, how
) -> None:
    # the scan found the workbook and its first sheet by the package's relationships (as
    # Excel writes them), openpyxl by the content types and the sheet's relationship id: a
    # workbook without _rels/.rels, or with Strict Open XML relationship types, was read with
    # every check of the scan skipped: row 2 given after row 3 left out (1 label for 2),
    # exit 0. Since t17rev the scan finds a workbook without _rels/.rels as openpyxl does (its
    # checks run: the row order refused), and a Strict package is refused as such.
    swapped = _workbook(tmp_path / "swapped.xlsx", _LABEL_ROWS, _swap_rows)
    src = _repackaged(swapped, tmp_path / "l.xlsx", how)
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    why = {
        "no-rels": ":2: sheet row 2 comes after row 3 in the sheet's XML (out of order or given "
        "twice: a program wrote it; read as given, a value would be lost): open and save it in "
        "Excel, or save the sheet as CSV",
        "strict": ": the workbook is saved as Strict Open XML (Excel's 'Strict Open XML "
        "Spreadsheet'), which failcodes does not read (openpyxl finds no sheet in it): save "
        "it as 'Excel Workbook (.xlsx)', or save the sheet as CSV",
    }[how]
    assert (code, err.strip().splitlines()) == (2, [f"failcodes: error: {src}{why}"])
    assert not out.parent.exists()


DATE_ID = (
    "is a date or time, not text (a spreadsheet reads an id typed as 1-2 or 3/4 as a date): "
    "format the column as Text and type the ids again, or save them as text"
)


def test_a_date_in_an_id_column_is_refused_saying_how_an_id_becomes_one(tmp_path, capsys):
    # Excel reads '1-2' typed in a cell as 2 January: the refusal said "Input should be a
    # valid string (got datetime.datetime(2026, 1, 2, 0, 0))", nothing of why; a Parquet
    # timestamp id the same. Now one rule (tableio.id_text) says it, with file, line, field.
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    book = _workbook(
        tmp_path / "l.xlsx",
        [_LABEL_ROWS[0], [datetime.datetime(2026, 1, 2), True, "a"], _LABEL_ROWS[2]],
    )
    stamps = pa.array([datetime.datetime(2026, 1, 7), datetime.datetime(2026, 1, 8)])
    labels = tmp_path / "l.parquet"
    pq.write_table(
        pa.table({"sentence_id": stamps, "has_error": [True, False], "annotator": ["a", "a"]}),
        labels,
    )
    traces = _write_jsonl(tmp_path / "t.jsonl", _rows())
    runs = {
        f"{book}:2, field 'sentence_id': id 2026-01-02 00:00:00": [
            "ingest", "generic-labels", str(book), "-o", str(tmp_path / "o1" / "l.jsonl")
        ],
        f"{labels}:1, field 'sentence_id': id 2026-01-07 00:00:00": [
            "metrics", "--traces", str(traces), "--labels", str(labels), "-o",
            str(tmp_path / "o2" / "m.json"),
        ],
    }  # fmt: skip
    for where, args in runs.items():
        code, _, err = run_cli(args, capsys)
        assert (code, err.strip().splitlines()) == (2, [f"failcodes: error: {where} {DATE_ID}"])
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
