"""Session 14 outside checker (readers and the run's integrity): the attacks that found a fault.

Each test failed before its fix (issue 30).
"""

from __future__ import annotations

import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.judge_helpers import make_traces, write_codebook, write_traces

KEY = "sk-test-SECRET-0f3c9a7e51"


class _EchoKey(BaseHTTPRequestHandler):
    """A server answering every call HTTP 400 with the caller's key in the message."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        key = self.headers.get("authorization", "").removeprefix("Bearer ")
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {key}.", "type": "x"}}
        ).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoKey)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _judge_args(tmp_path: Path, judge: str, base_url: str) -> list[str]:
    traces = write_traces(tmp_path / "traces.jsonl", make_traces(1))
    cb = write_codebook(tmp_path / "cb.yaml")
    return [
        *("judge", "retrieval", "--from", str(traces), "--codebook", str(cb)),
        *("--judge", judge, "--base-url", base_url, "--no-cache", "--max-attempts", "1"),
        *("--concurrency", "1", "-o", str(tmp_path / "run")),
    ]


def _files_holding(folder: Path, text: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_server_error_echoing_the_key_is_printed_without_it(
    tmp_path, capsys, monkeypatch, echo_server
) -> None:
    # the server's 400 said "Incorrect API key provided: sk-test-SECRET-..." and the error
    # line printed the key in full (a study's log writes the same line to disk)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code, _, err = run_cli(_judge_args(tmp_path, "openai:m", echo_server), capsys)
    assert code == 2
    assert err.splitlines()[-1] == (
        f"failcodes: error: openai:m: HTTP 400 from {echo_server}/chat/completions: "
        "Error code: 400 - Incorrect API key provided: ***."
    )
    assert KEY not in err
    assert _files_holding(tmp_path, KEY) == []


@pytest.mark.parametrize("with_env", [True, False])
def test_a_key_given_as_the_model_name_is_refused(
    tmp_path, capsys, monkeypatch, echo_server, with_env
) -> None:
    # --judge openai:sk-... (the key typed where the model goes) judged with the key as the
    # model's name, written to journal.sqlite, summary.json and every annotation's coder
    if with_env:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = run_cli(_judge_args(tmp_path, f"openai:{KEY}", echo_server), capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "failcodes: error: --judge: the model name is an API key; name the model "
        "(openai:gpt-5-mini) and give the key in the environment (OPENAI_API_KEY or "
        "ANTHROPIC_API_KEY)"
    ]
    assert KEY not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cb.yaml", "traces.jsonl"]


def _shared_strings_workbook(path: Path, n_strings: int) -> Path:
    """A workbook whose two-row table uses 6 shared strings of ``n_strings`` in its table."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    texts = ["question_id", "sentence_id", "sentence", "q1", "s1", "A."]
    texts += [f"unused {i}" for i in range(n_strings - len(texts))]
    cells = "".join(
        f'<row r="{r + 1}">'
        + "".join(
            f'<c r="{col}{r + 1}" t="s"><v>{3 * r + i}</v></c>' for i, col in enumerate("ABC")
        )
        + "</row>"
        for r in range(2)
    )
    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/'
            'sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.'
            'worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="r1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>"
        ),
        "xl/workbook.xml": (
            f'<workbook xmlns="{ns}" xmlns:r="{rel}"><sheets>'
            '<sheet name="data" sheetId="1" r:id="rS"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rS" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rT" Type="{rel}/sharedStrings" Target="sharedStrings.xml"/>'
            "</Relationships>"
        ),
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{ns}"><sheetData>{cells}</sheetData></worksheet>'
        ),
        "xl/sharedStrings.xml": (
            f'<sst xmlns="{ns}" count="{n_strings}" uniqueCount="{n_strings}">'
            + "".join(f"<si><t>{t}</t></si>" for t in texts)
            + "</sst>"
        ),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return path


def test_a_workbook_of_too_many_shared_strings_is_refused_before_openpyxl_holds_them(
    tmp_path, capsys, monkeypatch
) -> None:
    # 5,000,000 short shared strings (a 37 MB workbook, 4 used) were all held by openpyxl
    # before the first row, past the 120 s clock: 0.85 GB, 45 CPU-s a reading, 237 s wall,
    # exit 0. The cap is made small here (10 strings) to build the workbook in a test.
    from failcodes import sheetio

    monkeypatch.setattr(sheetio, "MAX_SHARED_STRINGS", 10, raising=False)
    out = tmp_path / "out" / "labels.jsonl"
    ok = _shared_strings_workbook(tmp_path / "ok.xlsx", 10)
    code, _, err = run_cli(
        [
            "ingest",
            "generic-labels",
            str(ok),
            "-o",
            str(out),
            "--label-rule",
            "sentence in {A.} -> error",
        ],
        capsys,
    )
    assert code == 0, err
    assert [json.loads(x)["sentence_id"] for x in out.read_text().splitlines()] == ["s1"]
    big = _shared_strings_workbook(tmp_path / "big.xlsx", 11)
    out2 = tmp_path / "out2" / "labels.jsonl"
    code, _, err = run_cli(
        [
            "ingest",
            "generic-labels",
            str(big),
            "-o",
            str(out2),
            "--label-rule",
            "sentence in {A.} -> error",
        ],
        capsys,
    )
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {big}: the workbook holds over 10 distinct texts (its shared "
        "strings, all held in memory before the first row) (a zip bomb, or a sheet too large "
        "to read here): save the sheet as CSV"
    ]
    assert not out2.parent.exists()


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_a_jsonl_line_past_the_limit_is_refused_before_it_is_held(
    tmp_path, capsys, monkeypatch, end
) -> None:
    # a 200 MB line took ingest 1.4 GB (7x: 1 GB would take 7), exit 0; the limit is 64 MB,
    # made 2 MB here (lines are read 1 MB at a time) so the test writes 3 MB
    from failcodes import jsonio

    monkeypatch.setattr(jsonio, "MAX_LINE", 2 << 20, raising=False)
    row = {"question_id": "q1", "sentence_id": "s1", "verdict": "supported", "system": "a"}
    long = {**row, "sentence_id": "s2", "sentence": "x" * (3 << 20)}
    src = tmp_path / "t.jsonl"
    with src.open("w", newline="") as fh:
        fh.write(json.dumps({**row, "sentence": "A."}) + end + json.dumps(long) + end)
    out = tmp_path / "out" / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2: a line of over 2 MB (no trace or label record is that "
        "long: a JSON document? name it .json)"
    ]
    assert not out.parent.exists()


def test_an_unclosed_quote_swallowing_the_csv_is_refused_at_64_mb(tmp_path, capsys) -> None:
    # the csv module held a cell up to 1 GB (4 bytes a character): a 100 MB cell took ingest
    # 0.9 GB, and an unclosed quote in a 1 GB file would take GBs before "expected 5 cells
    # (as in the header), got 3" (a 72 MB file: 389 MB). Now 64 MB at most, said as such.
    src = tmp_path / "t.csv"
    with src.open("w") as fh:
        fh.write('question_id,sentence_id,sentence,verdict,system\nq1,s1,"A.,supported,a\n')
        fh.write("q1,s2,B.,supported,a\n" * 3_300_000)  # 69.3 MB (66.1 MiB) after the quote
    out = tmp_path / "out" / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(src), "-o", str(out)], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f'failcodes: error: {src}:2: a cell of over 64 MB from this line on (an unclosed " '
        "quote? no trace or label cell is that long)"
    ]
    assert not out.parent.exists()


def test_a_fifo_named_as_the_cache_is_refused_as_one(tmp_path, capsys, monkeypatch, echo_server):
    # was "database is read-only (permission denied); fix its permissions or pass ...": the
    # FIFO's permissions were fine (rw-r--r--), it is no file a database can live in
    import os

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fifo = tmp_path / "cache.sqlite"
    os.mkfifo(fifo)
    args = [*_judge_args(tmp_path, "openai:m", echo_server), "--cache", str(fifo)]
    args.remove("--no-cache")
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {fifo}: not a regular file (a FIFO, socket or device), expected a "
        "SQLite file; pass another --cache (or --no-cache)"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite", "cb.yaml", "traces.jsonl"]


@pytest.mark.parametrize("recalc", [True, False])
def test_a_formula_value_excel_computes_again_on_opening_is_refused(
    tmp_path, capsys, recalc
) -> None:
    # XlsxWriter saves 0 as every formula's value and sets fullCalcOnLoad, so Excel shows
    # the computed values: label =IF(D2="refuted",1,0) read as 0 on both rows (s1 is 1 in
    # Excel), has_error false for s1, exit 0. Excel's own file (no fullCalcOnLoad) is read.
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["question_id", "sentence_id", "sentence", "verdict", "system", "label"])
    sheet.append(["q1", "s1", "A.", "refuted", "a", "F2"])
    sheet.append(["q1", "s2", "B.", "supported", "a", "F3"])
    plain = tmp_path / "plain.xlsx"
    book.save(plain)
    src = tmp_path / "t.xlsx"
    with zipfile.ZipFile(plain) as z, zipfile.ZipFile(src, "w") as out:
        for name in z.namelist():
            data = z.read(name).decode()
            for ref, verdict in (("F2", "D2"), ("F3", "D3")):
                data = data.replace(
                    f'<c r="{ref}" t="inlineStr"><is><t>{ref}</t></is></c>',
                    f'<c r="{ref}"><f>IF({verdict}="refuted",1,0)</f><v>0</v></c>',
                )
            if not recalc:
                data = data.replace(' fullCalcOnLoad="1"', "")
            out.writestr(name, data)
    assert ('fullCalcOnLoad="1"' in zipfile.ZipFile(src).read("xl/workbook.xml").decode()) == recalc
    out_dir = tmp_path / "out"
    args = ["ingest", "generic", str(src), "-o", str(out_dir / "t.jsonl"), "--labels-out"]
    args += [str(out_dir / "l.jsonl"), "--label-rule", "label in {1} -> error"]
    code, _, err = run_cli(args, capsys)
    if not recalc:  # Excel saved 0 with the formula: what it shows, read as such
        assert code == 0, err
        labels = [json.loads(x) for x in (out_dir / "l.jsonl").read_text().splitlines()]
        assert [x["has_error"] for x in labels] == [False, False]
        return
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {src}:2, field 'label': cell F2 holds a formula whose saved value "
        "is not Excel's (the workbook asks Excel to compute every formula on opening: a "
        "program such as XlsxWriter wrote it, saving 0): open and save it in Excel, or write "
        "the values"
    ]
    assert not out_dir.exists()
