"""`failcodes ingest` through a real subprocess: outputs, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = {
    "system": "s",
    "question_id": "q",
    "sentence_id": "q:s0",
    "claim_id": "c0",
    "claim": "x",
    "verdict": "supported",
}


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failcodes", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _jsonl(path: Path, *records: dict[str, object], raw_lines: tuple[str, ...] = ()) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "".join(raw_lines))
    return path


def test_generic_round_trip_with_map_and_alias(tmp_path: Path) -> None:
    src = tmp_path / "foreign.jsonl"
    rec = {k: v for k, v in GOOD.items() if k != "claim"} | {"claim_text": "y", "verdict": "Yes"}
    _jsonl(src, rec)
    proc = run(
        "ingest",
        "generic",
        src,
        "-o",
        tmp_path / "out.csv",
        "--map",
        "claim_text=claim",
        "--alias",
        "Yes=supported",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "out.csv").read_text().splitlines()
    assert rows[1] == "s,q,q:s0,c0,y,,supported,Yes,,,,"
    assert (tmp_path / "out.passages.csv").exists()


BAD_CASES = {
    "malformed_json": ((GOOD,), ("{oops",), "bad.jsonl:2", "malformed JSON"),
    "missing_field": (
        ({k: v for k, v in GOOD.items() if k != "claim"},),
        (),
        "bad.jsonl:1",
        "field 'claim'",
    ),
    "unknown_verdict": (
        ({**GOOD, "verdict": "Probably"},),
        (),
        "bad.jsonl:1",
        "unknown verdict 'Probably'",
    ),
    "duplicate_ids": ((GOOD, GOOD), (), "bad.jsonl:2", "duplicate (system, claim_id)"),
    # a whole number is an id read as text (generic tables); a list is not an id
    "wrong_type": (({**GOOD, "claim_id": [7]},), (), "bad.jsonl:1", "field 'claim_id'"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_jsonl_gives_one_line_and_no_output(tmp_path: Path, case: str) -> None:
    records, raw, where, what = BAD_CASES[case]
    src = _jsonl(tmp_path / "bad.jsonl", *records, raw_lines=raw)
    out = tmp_path / "out" / "traces.jsonl"
    proc = run("ingest", "generic", src, "-o", out, cwd=tmp_path)
    assert_one_line_error(proc, where, what)
    assert not out.exists()
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_missing_csv_column(tmp_path: Path) -> None:
    src = tmp_path / "t.csv"
    src.write_text("system,question_id,sentence_id,claim_id,verdict\ns,q,q:s0,c0,supported\n")
    proc = run("ingest", "generic", src, "-o", tmp_path / "o.parquet", cwd=tmp_path)
    assert_one_line_error(proc, "t.csv:1", "field 'claim'", "missing column")
    assert not (tmp_path / "o.parquet").exists()


def test_missing_file_and_unknown_adapter(tmp_path: Path) -> None:
    proc = run(
        "ingest", "generic", tmp_path / "nope.jsonl", "-o", tmp_path / "o.jsonl", cwd=tmp_path
    )
    assert_one_line_error(proc, "nope.jsonl", "file not found")
    proc = run("ingest", "nosuch", tmp_path / "x.jsonl", "-o", tmp_path / "o.jsonl", cwd=tmp_path)
    assert_one_line_error(proc, "unknown adapter 'nosuch'", "generic")
    proc = run("ingest", "generic", tmp_path / "x.jsonl", "-o", tmp_path / "o.txt", cwd=tmp_path)
    assert_one_line_error(proc, "o.txt", "expected .jsonl, .csv or .parquet")


def test_bad_alias_and_map_syntax(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "t.jsonl", GOOD)
    proc = run(
        "ingest", "generic", src, "-o", tmp_path / "o.jsonl", "--alias", "Yes=great", cwd=tmp_path
    )
    assert_one_line_error(proc, "'great' is not a canonical verdict")
    proc = run(
        "ingest", "generic", src, "-o", tmp_path / "o.jsonl", "--map", "nonsense", cwd=tmp_path
    )
    assert_one_line_error(proc, "--map expects KEY=VALUE")


def test_existing_output_untouched_on_error(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    out.write_text("precious\n")
    src = _jsonl(tmp_path / "t.jsonl", {**GOOD, "verdict": "??"})
    proc = run("ingest", "generic", src, "-o", out, cwd=tmp_path)
    assert_one_line_error(proc, "t.jsonl:1", "field 'verdict'")
    assert out.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl", "t.jsonl"]


def test_generic_labels_adapter_and_duplicate_label(tmp_path: Path) -> None:
    src = tmp_path / "clin.csv"
    src.write_text("sid,error\nq:s0,true\nq:s0,false\n")
    proc = run(
        "ingest",
        "generic-labels",
        src,
        "-o",
        tmp_path / "l.jsonl",
        "--map",
        "sid=sentence_id",
        "--map",
        "error=has_error",
        cwd=tmp_path,
    )
    assert_one_line_error(proc, "clin.csv:3", "field 'sentence_id'", "duplicate label")


def test_medexpert_cli_writes_labels_and_sentences(tmp_path: Path) -> None:
    from failcodes import bundled

    src = bundled.path("medexpert-sample", "sample_data_export_from_JSL.json")
    proc = run(
        "ingest",
        "medexpert",
        src,
        "-o",
        tmp_path / "labels.csv",
        "--sentences-out",
        tmp_path / "sentences.jsonl",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    labels = (tmp_path / "labels.csv").read_text().splitlines()
    sentences = (tmp_path / "sentences.jsonl").read_text().splitlines()
    assert len(labels) - 1 == len(sentences)  # header + one label per sentence
    assert sum(",true," in row for row in labels) == 4  # the sample's 4 error spans
    assert "4 error span(s), 4 sentence(s) with an error" in proc.stderr


def test_ragchecker_cli_bad_json_and_option(tmp_path: Path) -> None:
    src = tmp_path / "out.json"
    src.write_text('{"results": [\n  {"query_id": 1,,}\n]}\n')
    proc = run("ingest", "ragchecker", src, "-o", tmp_path / "t.jsonl", cwd=tmp_path)
    assert_one_line_error(proc, "out.json:2", "malformed JSON")
    assert not (tmp_path / "t.jsonl").exists()
    from failcodes import bundled

    good = bundled.path("ragchecker", "checking_outputs.json")
    proc = run(
        "ingest",
        "ragchecker",
        good,
        "-o",
        tmp_path / "t.jsonl",
        "--option",
        "neutral=maybe",
        cwd=tmp_path,
    )
    assert_one_line_error(proc, "--option neutral='maybe' is not one of: skip, error, no_error")
    proc = run(
        "ingest",
        "ragchecker",
        good,
        "-o",
        tmp_path / "t.jsonl",
        "--option",
        "colour=red",
        cwd=tmp_path,
    )
    assert_one_line_error(proc, "adapter 'ragchecker' has no option 'colour'")
    data = json.loads(good.read_text())
    data["results"][0]["answer2response"][3] = "Unsure"
    bad = tmp_path / "out.json"
    text = json.dumps(data, indent=2)
    bad.write_text(text)
    (line,) = [i for i, ln in enumerate(text.splitlines(), 1) if '"Unsure"' in ln]
    proc = run("ingest", "ragchecker", bad, "-o", tmp_path / "t.jsonl", cwd=tmp_path)
    assert_one_line_error(
        proc, f"out.json:{line}", "field 'results[0].answer2response[3]'", "'Unsure'"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_medscore_cli_unknown_verdict_names_line_and_field(tmp_path: Path) -> None:
    src = tmp_path / "ms.jsonl"
    claim = {"claim": "x", "sentence": None, "evidence": None, "score": 1.0}
    src.write_text(
        json.dumps({"id": "q_0", "claims": [{**claim, "raw": "True"}]})
        + "\n"
        + json.dumps({"id": "q_1", "claims": [{**claim, "raw": "True"}, {**claim, "raw": "Yes"}]})
        + "\n"
    )
    out = tmp_path / "t.parquet"
    proc = run("ingest", "medscore", src, "-o", out, cwd=tmp_path)
    assert_one_line_error(proc, "ms.jsonl:2", "field 'claims[1].raw'", "unknown verdict 'Yes'")
    assert not out.exists()
    proc = run("ingest", "medscore", src, "-o", out, "--alias", "yes=supported", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote 3 traces -> {out} (1 system(s): medscore 3)"


def test_label_for_unknown_sentence_names_label_file_and_line(tmp_path: Path) -> None:
    traces = _jsonl(tmp_path / "t.jsonl", GOOD)
    labels = tmp_path / "labels.csv"
    labels.write_text("sentence_id,has_error\nq:s0,true\nq:s7,false\n")
    proc = run("metrics", "--traces", traces, "--labels", labels, cwd=tmp_path)
    assert_one_line_error(
        proc, "labels.csv:3", "field 'sentence_id'", "no trace has sentence_id 'q:s7'"
    )


def test_evidence_option_declares_the_pipeline(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "t.jsonl", GOOD, {**GOOD, "system": "r", "claim_id": "c1"})
    proc = run(
        "ingest", "generic", src, "-o", tmp_path / "o.jsonl", "--evidence", "provided",
        "--evidence", "r=none", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [(r["system"], r["evidence_source"]) for r in rows] == [("s", "provided"), ("r", "none")]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ("--evidence", "closed"),
            "'closed' is not an evidence source (retrieved, provided, none, post-hoc)",
        ),
        (("--evidence", "zz=none"), "--evidence names system 'zz', not in the input (systems: s)"),
    ],
)
def test_evidence_option_bad_values(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    src = _jsonl(tmp_path / "t.jsonl", GOOD)
    proc = run("ingest", "generic", src, "-o", tmp_path / "o.jsonl", *args, cwd=tmp_path)
    assert_one_line_error(proc, needle)
    assert not (tmp_path / "o.jsonl").exists()
