"""Session 16 readers hardening (issue 30: validate once at the boundary).

Each test failed before its fix: a bad input gets one line naming the file, the line or cell
(and field where known) and what was expected, exit 2, nothing written; or the right value.
"""

from __future__ import annotations

import json
from pathlib import Path

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
