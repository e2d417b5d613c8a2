"""Session 30, helper t30left: this session's left items (an outcome column beside raters,
a Parquet whose id is the pandas index, sci-notation ids in traces of the tool's own format).

Each test names what main gave and the value worked by hand beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: Three raters of 10 units (a/b). Fleiss by hand (n = 3): unanimous units u1, u2, u5, u6
#: (P_i = 1), six 2-1 units (P_i = (4 + 1 - 3) / 6 = 1/3): P-bar = (4 + 2) / 10 = 0.6; a is
#: given 15 of 30 times: P_e = 0.5; kappa = (0.6 - 0.5) / 0.5 = 0.2.
RATERS = [
    ("a", "a", "a"),
    ("a", "a", "a"),
    ("a", "a", "b"),
    ("a", "b", "b"),
    ("b", "b", "b"),
    ("b", "b", "b"),
    ("a", "b", "a"),
    ("b", "a", "b"),
    ("a", "a", "b"),
    ("b", "b", "a"),
]
#: The adjudicated outcome: the raters' majority except on u3 (b for a) and u4 (a for b).
#: Read as a 4th rater (n = 4): P_i = 1 on u1, u2, u5, u6; 1/3 on the 2-2 units u3, u4;
#: (9 + 1 - 4) / 12 = 1/2 on the 3-1 units u7-u10: P-bar = (4 + 2/3 + 2) / 10 = 2/3; a 20 of
#: 40: P_e = 0.5; kappa = (2/3 - 1/2) / (1/2) = 1/3.
OUTCOME = ["a", "a", "b", "a", "b", "b", "a", "b", "a", "b"]


def _table(folder: Path, names: tuple[str, str, str, str]) -> Path:
    path = folder / "ratings.csv"
    lines = [",".join(("unit", *names))]
    lines += [
        f"u{i + 1}," + ",".join((*r, o))
        for i, (r, o) in enumerate(zip(RATERS, OUTCOME, strict=True))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _fleiss(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[float, str]:
    args = ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", *extra]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    code, text, _ = run_cli(args, capsys)
    return row["value"], text.splitlines()[0]


@pytest.mark.parametrize("name", ["y", "decision", "outcome", "class", "result"])
def test_an_outcome_column_beside_the_raters_is_not_a_fourth_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Before: `unit,r1,r2,r3,y` (y adjudicated, off the majority on 2 of 10 rows, so the
    value rule cannot see it) was read as a 4th rater: Fleiss 1/3 for the raters' 0.2, exit
    0, the first line saying only "y (a covariate? ...)". Now left out by name, the line
    naming the way to keep it."""
    value, line = _fleiss(_table(tmp_path, ("r1", "r2", "r3", name)), capsys)
    assert value == pytest.approx(0.2)  # by hand, RATERS (main: 1/3)
    assert line.startswith(
        f"Assumed: raters (3): r1, r2, r3; left out: {name} (named like the data set's label "
        f"('{name}'); a rater? --raters r1,r2,r3,{name} keeps it)"
    )
    value, _ = _fleiss(tmp_path / "ratings.csv", capsys, "--raters", f"r1,r2,r3,{name}")
    assert value == pytest.approx(1 / 3)  # by hand, OUTCOME as a 4th rater


def test_a_rater_y_among_raters_named_by_one_letter_stays_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`W,X,Z,Y`: every column one letter, so Y is a rater (as `gt` among initials)."""
    value, line = _fleiss(_table(tmp_path, ("W", "X", "Z", "Y")), capsys)
    assert value == pytest.approx(1 / 3)  # four raters, by hand above
    assert line.startswith("Assumed: raters (4): W, X, Z, Y; unit ids")


def _range_index(path: Path, frame: object, index: str) -> Path:
    """``frame.set_index(index).to_parquet(path)``: ids 1, 2, 3 -> a RangeIndex (metadata)."""
    import pandas as pd

    assert isinstance(frame, pd.DataFrame)
    frame.set_index(index).to_parquet(path)
    return path


LOST = (
    "the pandas index {name!r} (1, 2, 3) is kept only in the file's metadata, not as a "
    "column (pandas writes an index of consecutive whole numbers so): write the frame with "
    "df.reset_index().to_parquet(...) to keep {name!r} as a column "
    "(df.reset_index(drop=True) where it is only a row number)"
)


def test_an_id_kept_in_a_pandas_range_index_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `df.set_index('sentence_id').to_parquet()` with ids 1, 2, 3 (pandas keeps
    such an index only in the file's metadata) was refused with "a label needs a sentence_id
    or a claim_id" (labels) and "field 'claim_id': missing column (have: question_id, ...)"
    (traces), no word of the index. Now both name it and the way to write it."""
    import pandas as pd

    traces = pd.DataFrame(
        {
            "sentence_id": [1, 2, 3],
            "question_id": ["q1", "q1", "q2"],
            "claim": ["A is B.", "C is D.", "E is F."],
            "verdict": ["supported", "refuted", "supported"],
            "system": ["A"] * 3,
        }
    )
    t = _range_index(tmp_path / "t.parquet", traces, "sentence_id")
    code, out, err = run_cli(["ingest", "generic", str(t), "-o", str(tmp_path / "o.jsonl")], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {t}: {LOST.format(name='sentence_id')}\n"
    labels = pd.DataFrame({"claim_id": [1, 2, 3], "has_error": [True, False, True]})
    lab = _range_index(tmp_path / "l.parquet", labels, "claim_id")
    out_file = tmp_path / "l.jsonl"
    code, out, err = run_cli(["ingest", "generic-labels", str(lab), "-o", str(out_file)], capsys)
    assert (code, out) == (2, "")
    assert err == f"failcodes: error: {lab}: {LOST.format(name='claim_id')}\n"
    assert not out_file.exists()
    # the way the line names reads the ids: 3 labels, 2 of them errors (claims 1 and 3)
    labels.to_parquet(lab, index=False)
    code, _, err = run_cli(["ingest", "generic-labels", str(lab), "-o", str(out_file)], capsys)
    assert code == 0, err
    rows = [json.loads(x) for x in out_file.read_text().splitlines()]
    assert [(r["claim_id"], r["has_error"]) for r in rows] == [
        ("1", True),
        ("2", False),
        ("3", True),
    ]


def test_agree_still_reads_unit_ids_from_a_pandas_range_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """agree reads a Parquet through pandas, which rebuilds the index: units 1..4 kept (the
    refusal above is for the readers of columns). Percent by hand: r1 a a b b, r2 a b b b
    agree on units 1, 3, 4: 3/4."""
    import pandas as pd

    frame = pd.DataFrame({"unit": [1, 2, 3, 4], "r1": list("aabb"), "r2": list("abbb")})
    path = _range_index(tmp_path / "r.parquet", frame, "unit")
    args = ["agree", str(path), "--stat", "percent", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(0.75)


#: Own-format traces: sentences 123456789012 and 123456789013 as a spreadsheet shows both,
#: each one claim (c1 supported, c2 refuted), and s3, s4; labels for s3 and s4 alone.
SCI = "1.23457E+11"
SCI_TRACES = [(SCI, "c1", "supported"), (SCI, "c2", "refuted")]
SCI_TRACES += [("s3", "c3", "supported"), ("s4", "c4", "refuted")]


def _sci_jsonl(path: Path) -> Path:
    lines = [
        json.dumps(
            {"system": "A", "question_id": "q1", "sentence_id": s, "claim_id": c}
            | {"claim": f"Claim {c}.", "verdict": v, "passages": []}
        )
        for s, c, v in SCI_TRACES
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_trace_id_in_scientific_notation_is_refused_on_the_fast_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: own-format traces JSONL (tracelines' block check), a Parquet in the trace
    schema (columnar's arrow scan) and a Parquet the tool validated before this rule
    (DuckDB) took the id '1.23457E+11' as read: two sentences one, metrics saying "labels
    cover 2 of 3 sentences" (4 sentences: s3, s4 and the two cut to one id), exit 0, and
    ingest wrote the traces; a CSV of them (tableio.id_text, 8bb8f94) was refused. Now each
    path refuses the id, the exact reader's line."""
    import pyarrow.parquet as pq

    from failcodes.engine import MARKER_KEY
    from failcodes.tableio import exponent_problem

    jsonl = _sci_jsonl(tmp_path / "t.jsonl")
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"sentence_id": "s3", "has_error": true}\n{"sentence_id": "s4", "has_error": false}\n'
    )
    why = f"field 'sentence_id': {exponent_problem(SCI)}"
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(jsonl), "-o", str(out)], capsys)
    assert (code, err) == (2, f"failcodes: error: {jsonl}:1, {why}\n")
    assert not out.exists()
    # a Parquet in the trace schema: the same rows, pyarrow-written (no marker), and a copy
    # with the marker an earlier failcodes (version 1) wrote after its checks
    clean = tmp_path / "clean.jsonl"
    text = jsonl.read_text().replace(SCI, "123456789012", 1).replace(SCI, "123456789013", 1)
    clean.write_text(text, encoding="utf-8")
    tool = tmp_path / "tool.parquet"
    code, _, err = run_cli(["ingest", "generic", str(clean), "-o", str(tool)], capsys)
    assert code == 0, err
    table = pq.read_table(tool)
    ids = [SCI if s[0] == "1" else s for s in table.column("sentence_id").to_pylist()]
    table = table.set_column(table.schema.get_field_index("sentence_id"), "sentence_id", [ids])
    plain = tmp_path / "plain.parquet"
    pq.write_table(table.replace_schema_metadata(None), plain)
    old = tmp_path / "old.parquet"
    marker = b'{"kind": "traces", "rows": 4, "version": 1}'
    pq.write_table(table.replace_schema_metadata({MARKER_KEY: marker}), old)
    for traces in (jsonl, plain, old):
        for command in ("metrics", "disagreements"):
            args = [command, "--traces", str(traces), "--labels", str(labels)]
            args += ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
            code, stdout, err = run_cli(args, capsys)
            assert (code, stdout) == (2, ""), (traces.name, command, stdout)
            assert err == f"failcodes: error: {traces}:1, {why}\n", (traces.name, command)
    # the clean file reads as 4 sentences, 2 labelled (the count the cut ids gave as 3)
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(clean), "--labels", str(labels)], capsys
    )
    assert code == 0, err
    assert "labels cover 2 of 4 sentences" in stdout
