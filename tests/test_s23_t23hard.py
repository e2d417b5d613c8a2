"""Session 23, t23hard: foreign files read as an attacker or a careless user would write them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli

CODEBOOK = Path(__file__).parents[1] / "taxonomy" / "medical-fact-check.v1.yaml"


def test_a_study_file_integer_over_pythons_digit_limit_is_one_line(tmp_path, capsys) -> None:
    # tomllib reads an integer with int(): 1 followed by 5000 zeros has 5001 digits, over
    # Python's 4300-digit limit, and int() raised ValueError: a traceback, exit 1.
    study = tmp_path / "st"
    assert run_cli(["init", str(study)], capsys)[0] == 0
    toml = study / "failcodes.toml"
    lines = toml.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("bootstrap = "))
    lines[at] = "bootstrap = 1" + "0" * 5000
    toml.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(["run", str(study), "--plan"], capsys)
    # the line: the bootstrap line's index + 1 (1-based); 5001 digits = "1" + 5000 zeros
    assert (code, out, err.splitlines()) == (
        2,
        "",
        [
            f"failcodes: error: {toml}:{at + 1}: not valid TOML: an integer of 5001 digits "
            "(at most 4300 are read)"
        ],
    )


def test_a_codebook_integer_over_pythons_digit_limit_is_one_line(tmp_path, capsys) -> None:
    # PyYAML's int constructor raised the same ValueError: a traceback, exit 1.
    text = CODEBOOK.read_text().splitlines()
    at = text.index("version: 1")  # line 9 of the bundled codebook
    text[at] = "version: 1" + "0" * 5000
    book = tmp_path / "medical-fact-check.v1.yaml"
    book.write_text("\n".join(text) + "\n")
    code, _, err = run_cli(["codebook", "validate", str(book)], capsys)
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {book}:{at + 1}: yaml-syntax: invalid YAML: an integer of 5001 "
            "digits (at most 4300 are read)"
        ],
    )
    assert at + 1 == 9


@pytest.mark.parametrize("number", ["1" + "0" * 5000, "-" + "9" * 4301])
def test_every_yaml_reader_refuses_a_too_long_integer_with_its_line(number: str) -> None:
    # (yamlio.safe_load reads price tables and saturation reviews: a marked YAML error, which
    # their callers report as invalid YAML, not a ValueError; digits: 5001, then 4301)
    import yaml

    from failcodes import yamlio

    with pytest.raises(yaml.MarkedYAMLError) as caught:
        yamlio.safe_load(f"a: 1\nb: {number}\n")
    digits = len(number.lstrip("-"))
    assert caught.value.problem == f"an integer of {digits} digits (at most 4300 are read)"
    assert caught.value.problem_mark is not None
    assert caught.value.problem_mark.line + 1 == 2
    assert yamlio.safe_load("a: 0x1F\nb: 1_000\n") == {"a": 31, "b": 1000}  # others still read


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("1e400", "'1e400'"),
        ("1" + "0" * 5000, "'100000000000... (5001 characters)'"),  # 10**5000 as text
    ],
)
def test_a_rating_past_the_largest_float_names_its_file_line_and_column(
    tmp_path, capsys, cell, shown
) -> None:
    # float('1e400') = float('1' + 5000 zeros) = inf (the largest double is 1.797e308): the
    # statistics refused "ratings contain infinite values; use NaN ..." naming no file
    table = tmp_path / "r.csv"
    table.write_text(f"unit,alice,bob\nu1,{cell},1\nu2,0,0\nu3,1,1\n")
    code, out, err = run_cli(["agree", str(table), "--bootstrap", "0"], capsys)
    assert (code, out, err.splitlines()) == (
        2,
        "",
        [
            f"failcodes: error: {table}:2, field 'alice': {shown} is past the largest number, "
            "1.8e308 (read as infinite), so it is not a rating (write a number; leave the cell "
            "empty for a missing rating)"
        ],
    )


def test_an_infinite_parquet_rating_names_its_row_and_column(tmp_path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "r.parquet"
    rows = {"unit": ["u1", "u2", "u3"], "alice": [0.0, float("inf"), 1.0], "bob": [1.0, 0, 1]}
    pq.write_table(pa.table(rows), table)
    code, _, err = run_cli(["agree", str(table), "--bootstrap", "0"], capsys)
    # row 2 (the second record; Parquet rows are numbered from 1), column alice
    assert (code, err.splitlines()) == (
        2,
        [
            f"failcodes: error: {table}:2, field 'alice': 'inf' (a number past 1.8e308?) is not "
            "a rating (write a number; leave the cell empty for a missing rating)"
        ],
    )


def _append_midway(lines: Any, path: Path) -> list[Any]:
    """Read ``lines``, appending one 8-byte line to ``path`` after the first one is given."""
    got = [next(lines)]
    with path.open("ab") as fh:
        fh.write(b'{"a":4}\n')
    got.extend(lines)
    return got


@pytest.mark.parametrize("reader", ["jsonl_lines", "byte_lines", "byte_blocks"])
def test_a_jsonl_file_written_while_read_is_refused(tmp_path, reader: str) -> None:
    # a pipeline still writing its JSONL: ingest read 217,801 of its 260,000 traces, exit 0.
    # 3 lines of 8 bytes ('{"a":1}' and '\n') = 24 bytes when opened, 32 after one more
    from failcodes import jsonio
    from failcodes.errors import InputError

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":3}\n')
    with path.open("rb") as fh, pytest.raises(InputError) as caught:
        if reader == "jsonl_lines":
            _append_midway(jsonio.jsonl_lines(path), path)
        elif reader == "byte_lines":
            _append_midway(jsonio.byte_lines(fh, path), path)
        else:  # one 64 kB read holds the 24 bytes: the check comes at the end of the file
            _append_midway(jsonio.byte_blocks(fh, path), path)
    assert str(caught.value) == (
        f"{path}: the file changed while it was read (24 bytes when opened, 32 at the end: "
        "still being written?): read it once its writer is done"
    )
    # unchanged, every line is read: 3 (32 bytes now, 4 lines)
    assert [n for n, _ in jsonio.jsonl_lines(path)] == [1, 2, 3, 4]
    with path.open("rb") as fh:
        assert len(list(jsonio.byte_lines(fh, path))) == 4


def test_a_csv_file_written_while_read_is_refused(tmp_path) -> None:
    # "a\n1\n2\n3\n": 8 bytes when opened, 16 after the 8 bytes of '{"a":4}\n' midway
    from failcodes import tableio
    from failcodes.errors import InputError

    path = tmp_path / "t.csv"
    path.write_bytes(b"a\n1\n2\n3\n")
    with pytest.raises(InputError) as caught:
        _append_midway(tableio.csv_rows(path, ()), path)
    assert str(caught.value) == (
        f"{path}: the file changed while it was read (8 bytes when opened, 16 at the end: "
        "still being written?): read it once its writer is done"
    )
    # unchanged: its 3 rows then the 8 bytes appended ('{"a":4}' is one cell, as CSV reads it)
    assert [r["a"] for _, r in tableio.csv_rows(path, ())] == ["1", "2", "3", '{"a":4}']


def test_a_json_document_past_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    # a JSON document is read whole: 170 MB of 1,000,000 records took ingest 776 MB (4.5x),
    # so a 4 GB one 18 GB. The limit is 1 GB; here 64 bytes, the file 65 (below)
    from failcodes import jsonio
    from failcodes.errors import InputError

    monkeypatch.setattr(jsonio, "MAX_DOCUMENT", 64)
    doc = tmp_path / "t.json"
    record = '{"claim":"x","n":1}'  # 19 characters
    doc.write_text("[ " + ", ".join([record] * 3) + " ]")
    assert doc.stat().st_size == 2 + 3 * 19 + 2 * 2 + 2 == 65  # "[ ", 3 records, 2 ", ", " ]"
    for read in (jsonio.read_json, jsonio.read_json_list):
        with pytest.raises(InputError) as caught:
            read(doc)
        assert str(caught.value) == (
            f"{doc}: a JSON document of 65 bytes, over the 64-byte limit of a document read "
            "whole (in memory it takes about 4.5 times its size): write it as JSONL, one record "
            "a line (jq -c '.[]' FILE), which is read line by line"
        )
    monkeypatch.setattr(jsonio, "MAX_DOCUMENT", 65)  # at the limit: read
    assert len(jsonio.read_json(doc)) == 3


_PYARROW = (
    "Parquet magic bytes not found in footer. Either the file is corrupted or this is not a "
    "parquet file."
)


def test_a_file_named_parquet_that_is_none_says_what_it_is(tmp_path, capsys) -> None:
    # main said pyarrow's words alone ("magic bytes not found"); the first bytes tell text,
    # a zip (an .xlsx) and an empty file apart, as sheetio said of a file named .xlsx
    import openpyxl
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = tmp_path / "c.parquet"
    text.write_text("claim,verdict\nc,supported\n")
    book = tmp_path / "x.parquet"
    workbook = openpyxl.Workbook()
    workbook.active.append(["claim"])
    workbook.save(book)
    empty = tmp_path / "e.parquet"
    empty.write_bytes(b"")
    parquet = tmp_path / "p.xlsx"
    pq.write_table(pa.table({"claim": ["c"]}), parquet)
    expected = {
        text: f"not a readable Parquet file ({_PYARROW}); it is text (a CSV renamed .parquet?): "
        "name it .csv",
        book: f"not a readable Parquet file ({_PYARROW}); it is a zip archive (an Excel "
        "workbook? name it .xlsx)",
        empty: "not a readable Parquet file (Parquet file size is 0 bytes); the file is empty",
        parquet: "not a readable Excel workbook (File is not a zip file); it is a Parquet file: "
        "name it .parquet",
    }
    for path, said in expected.items():
        out = tmp_path / "out" / "t.jsonl"
        code, _, err = run_cli(["ingest", "generic", str(path), "-o", str(out)], capsys)
        assert (code, err.splitlines()) == (2, [f"failcodes: error: {path}: {said}"])
        assert not out.parent.exists()
