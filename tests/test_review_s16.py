"""Review of session 16's refusals and numbers (t17rev): false refusals and their way through.

Each test states the input, what main gave before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl


def _trace(question: str, sentence: str, claim: str, verdict: str) -> dict[str, object]:
    return {
        "system": "A",
        "question_id": question,
        "sentence_id": sentence,
        "claim_id": claim,
        "claim": f"claim of {sentence}",
        "verdict": verdict,
    }


_ZERO_MESSAGE = (
    "the labels number sentences from 0 ('q1:0', 'q2:0': no trace has them) where the "
    "traces of those 2 answers number them from 1 ('q1:1'): each label would fall on the next "
    "sentence, and sentence 0 count as one without claims; number the labels as the traces "
    "do (if both number from 0 and sentence 0 gave no claim, give these answers' labels "
    "their sentence's text, column 'sentence': the traces' texts are then compared instead)"
)


def _texts(sentence: str) -> str:
    return {"q1:0": "Good question.", "q1:1": "Statins lower LDL.", "q1:2": "Take them daily."}.get(
        sentence, "Aspirin thins blood." if sentence == "q2:1" else "Here is what we know."
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_labels_and_traces_both_numbered_from_zero_have_a_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    # Both number each answer's sentences from 0, and sentence 0 of both answers (a preamble)
    # gave no claim: traces q1:1, q1:2, q2:1; every sentence labelled (q1:0..q1:2, q2:0..q2:1).
    # By ids alone this is labels from 0 for traces from 1 whose last sentences gave no claim
    # (a shift), so 3e00fce's refusal stands; but its way through, "number the labels as the
    # traces do", was no way (they are). Now the line names one: the labels' sentence texts,
    # compared with the traces'. With them, by hand: q1:0 ok, no claim (TN); q1:1 error,
    # refuted (TP); q1:2 ok, supported (TN); q2:0 ok, no claim (TN); q2:1 ok, refuted (FP):
    # n 5, TP 1, FP 1, FN 0, TN 3. Shifted (the traces' q1:1 is the labels' q1:0 text) the
    # texts refuse it.
    def trace(question: str, sentence: str, claim: str, verdict: str) -> dict[str, object]:
        return _trace(question, sentence, claim, verdict) | {"sentence": _texts(sentence)}

    traces = write_jsonl(
        tmp_path / "t.jsonl",
        [
            trace("q1", "q1:1", "c1", "refuted"),
            trace("q1", "q1:2", "c2", "supported"),
            trace("q2", "q2:1", "c3", "refuted"),
        ],
    )
    if suffix == ".parquet":  # the study's own Parquet (the engine's groups path)
        own = tmp_path / "t.parquet"
        assert run_cli(["ingest", "generic", str(traces), "-o", str(own)], capsys)[0] == 0
        traces = own
    rows = [("q1", "q1:0", False), ("q1", "q1:1", True), ("q1", "q1:2", False)]
    rows += [("q2", "q2:0", False), ("q2", "q2:1", False)]
    bare = [{"question_id": q, "sentence_id": s, "has_error": e} for q, s, e in rows]
    labels = write_jsonl(tmp_path / "l.jsonl", bare)
    m = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert (code, out) == (2, "")
    assert err.strip().splitlines() == [
        f"failcodes: error: {labels}:1, field 'sentence_id': {_ZERO_MESSAGE}"
    ]
    assert not m.exists()
    write_jsonl(labels, [r | {"sentence": _texts(str(r["sentence_id"]))} for r in bare])
    code, _, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert code == 0, err
    got = json.loads(m.read_text(encoding="utf-8"))
    assert [(r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in got] == [(5, 1, 1, 0, 3)]
    m.unlink()
    # the same texts one sentence off (labels made on a list's index): the texts refuse it
    shifted = {"q1:0": "q1:1", "q1:1": "q1:2", "q1:2": "q1:3", "q2:0": "q2:1", "q2:1": "q2:2"}
    write_jsonl(labels, [r | {"sentence": _texts(shifted[str(r["sentence_id"])])} for r in bare])
    code, out, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert (code, out) == (2, "")
    assert "is not sentence 'q1:1' of the traces of system 'A'" in err
    assert not m.exists()


def _rezipped(src: Path, dst: Path, how: str) -> Path:
    """``src`` repackaged: ``_rels/.rels`` left out or empty (EPPlus/ImportExcel wrote such),
    or Strict Open XML throughout (relationship types and the spreadsheet namespace)."""
    import zipfile

    rels = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    empty = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns='
        '"http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>'
    )
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for item in zin.infolist():
            data = zin.read(item.filename).decode("utf-8")
            if item.filename == "_rels/.rels" and how == "no-rels":
                continue
            if item.filename == "_rels/.rels" and how == "empty-rels":
                data = empty
            if how == "strict":
                data = data.replace(rels, "http://purl.oclc.org/ooxml/officeDocument/relationships")
                data = data.replace(main, "http://purl.oclc.org/ooxml/spreadsheetml/main")
            out.writestr(item, data)
    return dst


@pytest.mark.parametrize("how", ["no-rels", "empty-rels", "strict"])
def test_a_workbook_packaged_without_excels_relationship_is_read_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    # 22146c9 refused a workbook whose _rels/.rels is missing or names no workbook (a writer's
    # bug: EPPlus/ImportExcel wrote an empty one) though openpyxl reads it by its content
    # types, telling the user to "open and save it in Excel" (which cannot open it). The
    # scan now finds the workbook as openpyxl does, so the file is read with its checks (a
    # row out of order there is refused: test_readers16). A Strict Open XML workbook (Excel's
    # "Strict Open XML Spreadsheet") was "the workbook has no worksheet" with two lines of
    # openpyxl's UserWarning: refused in one line saying what it is.
    from openpyxl import Workbook

    book = Workbook()
    for row in (
        ["question_id", "sentence_id", "has_error"],
        ["q1", "s1", True],
        ["q1", "s2", False],
    ):
        book.active.append(row)
    book.save(tmp_path / "ok.xlsx")
    src = _rezipped(tmp_path / "ok.xlsx", tmp_path / "l.xlsx", how)
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    if how == "strict":
        assert (code, err.strip().splitlines()) == (
            2,
            [
                f"failcodes: error: {src}: the workbook is saved as Strict Open XML (Excel's "
                "'Strict Open XML Spreadsheet'), which failcodes does not read (openpyxl finds "
                "no sheet in it): save it as 'Excel Workbook (.xlsx)', or save the sheet as CSV"
            ],
        )
        assert not out.parent.exists()
        return
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["sentence_id"], r["has_error"]) for r in rows] == [("s1", True), ("s2", False)]


def test_a_mixed_panels_coded_tables_say_the_heuristic_is_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `judge --judge offline --judge openai:M`: the consensus is coded llm, and 0376e09 made
    # attribute's line and the report say the heuristic baseline is in the panel; but
    # per_passage.csv (and per_trace.csv), the tables a user opens, still said coder_kind llm
    # on every row. Now llm+heuristic.
    import csv

    from tests.fakeserver import FakeServer
    from tests.judge_helpers import make_traces, write_codebook, write_traces

    monkeypatch.setenv("OPENAI_API_KEY", "sk-mixed-panel")
    monkeypatch.chdir(tmp_path)
    traces = write_traces(tmp_path / "traces.jsonl", make_traces(2))
    cb = write_codebook(tmp_path / "cb.yaml")
    with FakeServer() as fake:
        judge = ["judge", "retrieval", "--from", str(traces), "--codebook", str(cb)]
        judge += ["--judge", "offline", "--judge", "openai:panel-b", "-o", "run"]
        judge += ["--base-url", fake.openai_base_url, "--price-as", "openai:gpt-5-mini"]
        code, _, err = run_cli(judge, capsys)
        assert code == 0, err
    attribute = ["attribute", "--from", str(traces), "--codebook", str(cb), "--retrieval", "run"]
    code, _, err = run_cli([*attribute, "-o", "att"], capsys)
    assert code == 0, err
    with (tmp_path / "att" / "per_passage.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    assert {(r["coder"], r["coder_kind"]) for r in rows} == {
        ("panel(offline+openai:panel-b)", "llm+heuristic")
    }
    # the reviewers' tasks: the judge's label said the panel's name alone
    export = ["labelstudio", "export", str(traces), "-p", "retrieval", "-c", str(cb)]
    code, _, err = run_cli([*export, "--judged", "run", "-o", "tasks.json"], capsys)
    assert code == 0, err
    tasks = (tmp_path / "tasks.json").read_text(encoding="utf-8")
    assert "Judge: panel(offline+openai:panel-b) (includes the heuristic baseline)" in tasks


def test_set_codes_of_four_raters_with_missing_ratings_take_single_rated_units_as_a_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # agree --sets on 4 raters with blanks; unit 3 rated by A alone. The first line says a
    # unit rated by one rater enters the chance margins (Gwet's missing-data form), and the
    # exact-set Fleiss (0.184) takes it so; 27f9c9c's per-code rows left it out: code a
    # Fleiss 0.529 (margins of 5 units), where the same code as a 0/1 table gives 0.502.
    # By hand, code a (1 = the set holds a; - missing):
    #   u1 1 1 1 -, u2 0 1 0 0, u3 1 - - -, u4 0 0 1 1, u5 1 1 - 1, u6 0 0 0 0
    #   P_i (units with 2+ ratings): 1, 6/12, -, 4/12, 1, 1 -> p_a = (23/6)/5 = 23/30
    #   pi_a (all 6 units, mean of n_ia/r_i): (1 + 1/4 + 1 + 1/2 + 1 + 0)/6 = 5/8
    #   p_e = (5/8)^2 + (3/8)^2 = 17/32 -> Fleiss (23/30 - 17/32)/(15/32) = 113/225
    # code b: P_i 1/3, 1, -, 1/3, 1/3, 1 -> p_a = 3/5; pi_b = (1/3+1+0+1/2+1/3+1)/6 = 19/36
    #   p_e = (19^2 + 17^2)/36^2 = 325/648 -> (3/5 - 325/648)/(323/648) = 319/1615
    sets = tmp_path / "sets.csv"
    sets.write_text(
        "unit,A,B,C,D\n1,a,a,a;b,\n2,b,a;b,b,b\n3,a,,,\n4,b,b,a,a\n5,a;b,a,,a\n6,b,b,b,b\n"
    )
    code, out, err = run_cli(["agree", str(sets), "--sets", ";", "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    fleiss = {r["code"]: r for r in rows if r.get("code") and r["statistic"] == "fleiss"}
    assert fleiss["a"]["value"] == pytest.approx(113 / 225, abs=1e-12)
    assert fleiss["b"]["value"] == pytest.approx(319 / 1615, abs=1e-12)
    assert (fleiss["a"]["n_units"], fleiss["a"]["n_single_rated"]) == (5, 1)
    # prevalence over the units compared (A gave a on u1, u5 of its 5): unchanged
    assert fleiss["a"]["prevalence"] == pytest.approx({"A": 0.4, "B": 0.6, "C": 0.5, "D": 0.5})
    # the same code as a 0/1 ratings table: the same numbers
    table = tmp_path / "a.csv"
    table.write_text("unit,A,B,C,D\n1,1,1,1,\n2,0,1,0,0\n3,1,,,\n4,0,0,1,1\n5,1,1,,1\n6,0,0,0,0\n")
    code, out, err = run_cli(["agree", str(table), "--format", "json"], capsys)
    assert code == 0, err
    plain = {r["statistic"]: r["value"] for r in json.loads(out)}
    mine = {r["statistic"]: r["value"] for r in rows if r.get("code") == "a"}
    assert mine == pytest.approx({s: plain[s] for s in mine}, abs=1e-12)


def _understated(src: Path, dst: Path, honest: int, said: int) -> Path:
    """``src`` whose footer says row group 0 unpacks to ``said`` bytes for ``honest``.

    The Thrift varint of ``honest`` (zigzag) is replaced in place by ``said`` written in as
    many bytes (a varint may carry leading zero groups), so nothing else moves.
    """
    import struct

    def varint(n: int, width: int = 0) -> bytes:
        out = bytearray()
        while n >= 0x80 or len(out) + 1 < width:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)

    data = src.read_bytes()
    size = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - size
    old = varint(honest << 1)
    assert data.count(old, start) == 1
    dst.write_bytes(data[:start] + data[start:].replace(old, varint(said << 1, len(old))))
    return dst


def test_a_parquet_page_its_metadata_understates_is_refused_by_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a55ea0c held the row groups' uncompressed size (metadata) to the decoded budget, since
    # a page is unpacked whole; a footer that understates it (1,000 bytes) let the page be
    # unpacked all the same: 30,000 texts of 10 KB in a 147 KB file took ingest 1.31 GB peak,
    # exit 0 (/usr/bin/time). Now the pages' own headers are read (a 1 KB read each: 0.02
    # CPU-s for a 132 MB file of 20 columns). Here the budget's floor is 1 MB, the dictionary
    # 300 texts of 8 + 10,000 characters, each with its 4-byte length: 300 x 10,012 =
    # 3,003,600 bytes = 2.9 MB (the two rows' other pages a few bytes).
    import pyarrow as pa
    import pyarrow.parquet as pq

    from failcodes import parquetio

    monkeypatch.setattr(parquetio, "DECODED_MIN", 1 << 20)
    texts = pa.array([f"{i:08d}" + "x" * 10_000 for i in range(300)])
    ids = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), texts)
    table = pa.table({"sentence_id": ids, "has_error": [True, False], "annotator": ["a", "a"]})
    honest = tmp_path / "honest.parquet"
    pq.write_table(table, honest, compression="zstd", dictionary_pagesize_limit=1 << 30)
    unpacked = pq.ParquetFile(honest).metadata.row_group(0).total_byte_size
    src = _understated(honest, tmp_path / "l.parquet", unpacked, 1000)
    assert pq.ParquetFile(src).metadata.row_group(0).total_byte_size == 1000
    out = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(src), "-o", str(out)], capsys)
    size = src.stat().st_size / (1 << 20)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {src}: its pages unpack to 2.9 MB from {size:,.1f} MB (at most "
            "1.0 MB, or 32 times the file's size) (a decompression bomb, or a table too large "
            "to read here): split the table into smaller files"
        ],
    )
    assert not out.parent.exists()
