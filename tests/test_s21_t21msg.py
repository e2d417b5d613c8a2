"""Session 21 (t21msg): what a read assumed, and the refusals' ways through, said where read.

Each test failed on the code before its fix; the values are by hand, beside the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_compare_says_rows_hidden_in_excel_on_its_assumed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import openpyxl  # type: ignore[import-untyped]

    # units u1..u6, gpt/claude/truth; sheet row 3 (u2) hidden by a filter: read like the
    # others (6 units, where the sheet shows 5). compare said it on stderr only, not on its
    # Assumed line (the first) nor in --format json's 'assumed', as agree does (922a48a)
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["unit", "gpt", "claude", "truth"])
    for i, row in enumerate([(1, 1, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0), (0, 0, 0), (1, 1, 1)]):
        ws.append([f"u{i + 1}", *row])
    ws.row_dimensions[3].hidden = True
    path = tmp_path / "c.xlsx"
    book.save(path)
    hidden = "1 row is hidden in Excel (a filter?) and read like the others (sheet row 3)"
    code, out, _ = run_cli(["compare", str(path), "--truth", "truth"], capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("Assumed: systems (2): gpt, claude;")
    assert "every one of 6 units has every outcome" in first and hidden in first
    code, out, _ = run_cli(["compare", str(path), "--truth", "truth", "--format", "json"], capsys)
    assert code == 0
    assert hidden in json.loads(out)["assumed"]


_HEAD = "question_id,sentence_id,claim_id,system,verdict,claim\n"
_LABELS = "sentence_id,has_error\ns1,false\ns2,true\n"


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        # R's write.csv writes its row names under an empty header cell: the hint named
        # pandas alone
        (
            "r.csv",
            '"",'
            + _HEAD.replace(",", '","').replace("question_id", '"question_id')[:-1]
            + '"\n"1","q1","s1","c1","gpt","supported","x"\n',
            "r.csv:2: a value in column A, which has no header name (a row index? write the "
            "file with pandas' to_csv(index=False) or R's write.csv(row.names = FALSE))",
        ),
        # an empty verdict cell: the way through was '--alias RAW=CANONICAL', which no alias
        # fits (ingest reads a blank as no verdict)
        (
            "blank.csv",
            _HEAD + "q1,s1,c1,gpt,supported,x\nq1,s2,c2,gpt,,x\n",
            "blank.csv:3, field 'verdict': unknown verdict '' (canonical verdicts: ambiguous, "
            "no_evidence, out_of_scope, refuted, supported; a missing mark: `ingest generic "
            "--option no_verdict=drop` leaves such rows out)",
        ),
        # a JSON null verdict: 'missing required field', no way through
        (
            "null.jsonl",
            '{"question_id": "q1", "sentence_id": "s1", "claim_id": "c1", "system": "gpt", '
            '"verdict": null, "claim": "x"}\n',
            "null.jsonl:1, field 'verdict': missing required field; no verdict? `ingest generic "
            "--option no_verdict=drop` leaves such rows out",
        ),
        # 'cat a.csv b.csv': line 3 is the header again; refused as an unknown verdict
        # 'verdict' with the --alias way through (ingest names it since 6dd144a)
        (
            "joined.csv",
            _HEAD + "q1,s1,c1,gpt,supported,x\n" + _HEAD + "q1,s2,c2,gpt,refuted,x\n",
            "joined.csv:3, field 'verdict': unknown verdict 'verdict' (canonical verdicts: "
            "ambiguous, no_evidence, out_of_scope, refuted, supported; the header again (its "
            "column's name): two files appended? delete the row)",
        ),
    ],
    ids=["r-row-names", "blank", "json-null", "joined"],
)
def test_traces_read_directly_name_the_way_through(
    command: str,
    name: str,
    text: str,
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text, encoding="utf-8")
    Path("l.csv").write_text(_LABELS, encoding="utf-8")
    out = ["-o", "d.csv"] if command == "disagreements" else []
    code, _, err = run_cli([command, "--traces", name, "--labels", "l.csv", *out], capsys)
    assert code == 2
    assert f"failcodes: error: {said}" in err
    assert not Path("d.csv").exists()


def test_claim_labels_naming_one_systems_claims_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # shared claim labels keyed by gpt's claim ids (g1..g3) alone; claude's claims c1..c3 of
    # the same sentences get no label. gpt by hand: g1 supported/false TN, g2 refuted/true TP,
    # g3 supported/true FN -> n 3, TP 1, FN 1, TN 1. claude: n 0, every metric undefined,
    # said on line 2 only ('claude: 0 of 3'), not on the first line a report repeats
    monkeypatch.chdir(tmp_path)
    rows = [
        ("s1", "g1", "gpt", "supported"),
        ("s2", "g2", "gpt", "refuted"),
        ("s3", "g3", "gpt", "supported"),
        ("s1", "c1", "claude", "supported"),
        ("s2", "c2", "claude", "supported"),
        ("s3", "c3", "claude", "refuted"),
    ]
    Path("t.csv").write_text(
        "question_id,sentence_id,claim_id,system,verdict,claim\n"
        + "".join(f"q1,{s},{c},{sys},{v},x\n" for s, c, sys, v in rows),
        encoding="utf-8",
    )
    Path("l.csv").write_text(
        "sentence_id,claim_id,has_error\ns1,g1,false\ns2,g2,true\ns3,g3,true\n", encoding="utf-8"
    )
    args = ["metrics", "--traces", "t.csv", "--labels", "l.csv", "--level", "claim"]
    code, out, _ = run_cli([*args, "--format", "json"], capsys)
    assert code == 0
    got = {r["system"]: (r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in json.loads(out)}
    assert got == {"gpt": (3, 1, 0, 1, 1), "claude": (0, 0, 0, 0, 0)}
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    said = (
        "; claude: no label names any of its claims (n 0: every metric undefined, no "
        "disagreement; labels keyed by another system's claim ids? label its claims too, or "
        "use --level sentence)"
    )
    assert out.splitlines()[0].endswith(said)
    # disagreements: claude has none (its table row is missing, not 0 errors): said there too
    code, out, _ = run_cli(["disagreements", *args[1:], "-o", "d.jsonl"], capsys)
    assert code == 0
    assert f"claim level: a claim's own label, else its sentence's{said};" in out.splitlines()[0]
    assert len(Path("d.jsonl").read_text(encoding="utf-8").splitlines()) == 1  # gpt's FN g3


def test_a_json_labels_file_given_to_metrics_names_the_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a .json labels file (one JSON array) given to metrics: refused as 'cannot tell the
    # format' with no way through, where ingest generic-labels reads it (a workbook's
    # refusal names it)
    monkeypatch.chdir(tmp_path)
    Path("t.csv").write_text(_HEAD + "q1,s1,c1,gpt,supported,x\n", encoding="utf-8")
    Path("l.json").write_text('[{"sentence_id": "s1", "has_error": false}]\n', encoding="utf-8")
    code, _, err = run_cli(["metrics", "--traces", "t.csv", "--labels", "l.json"], capsys)
    assert code == 2
    assert err == (
        "failcodes: error: l.json: cannot tell the format from the extension '.json'; expected "
        ".jsonl, .csv or .parquet (a JSON document? `failcodes ingest generic` (traces) or "
        "`failcodes ingest generic-labels` (labels) reads it)\n"
    )
