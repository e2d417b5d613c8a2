"""Session 31, helper t31lax: values the readers coerced without a word (issue 30).

pydantic's lax mode read a passage's ``"score": true`` as the retriever's score 1.0 and
``"rank": true`` as rank 1, and a claim of no text (``""``, spaces) was a claim, counted: each
is now refused in one line (file, line, field, what was expected), in every reader (the exact
one, the JSONL voucher, the Parquet scan, a table's cells).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _trace(cid: str, verdict: str, passages: list[dict[str, object]], claim: str) -> str:
    record = {
        "system": "A",
        "question_id": "q1",
        "sentence_id": f"s{cid[1:]}",
        "claim_id": cid,
        "claim": claim,
        "verdict": verdict,
        "passages": passages,
    }
    return json.dumps(record) + "\n"


def _passage(i: int, **extra: object) -> dict[str, object]:
    return {"passage_id": f"p{i}", "rank": 1, "text": f"Aspirin reduces fever, trial {i}.", **extra}


_LABELS = '{"sentence_id": "s1", "has_error": false}\n{"sentence_id": "s2", "has_error": true}\n'


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1, err  # one line
    return err


def test_a_yes_no_score_is_refused_not_written_as_the_retrievers_score_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A reranker's yes/no relevance in "score": main wrote 2 disagreements (s1 an FP: c1
    # refuted, label no error; s2 an FN: c2 supported, label error) at exit 0, c1's passages
    # with "score": 1.0 and "score": 0.0, a retriever's score the file never gave.
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        _trace("c1", "refuted", [_passage(1, score=True), _passage(2, rank=2, score=False)], "X")
        + _trace("c2", "supported", [_passage(3, score=0.5)], "Aspirin lowers fever."),
        encoding="utf-8",
    )
    (tmp_path / "l.jsonl").write_text(_LABELS, encoding="utf-8")
    out = tmp_path / "out" / "dis.jsonl"
    labels = tmp_path / "l.jsonl"
    args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    err = _refused(args, capsys)
    assert f"{traces}:1, field 'passages[0].score'" in err
    assert "got the boolean true" in err and "read as 1.0" in err and "gold" in err
    assert not out.parent.exists()


def test_a_yes_no_rank_is_refused_not_read_as_rank_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "rank": true beside rank 2 was rank 1: `judge retrieval --top-k 1 --dry-run` counted
    # 1 (trace, passage) row (p2, the flag's passage, taken as the top hit), exit 0
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        _trace("c1", "refuted", [_passage(1, rank=2), _passage(2, rank=True)], "X"),
        encoding="utf-8",
    )
    err = _refused(
        ["judge", "retrieval", "--from", str(traces), "--top-k", "1", "--dry-run"], capsys
    )
    assert f"{traces}:1, field 'passages[1].rank'" in err
    assert "got the boolean true: a yes/no is no rank" in err


@pytest.mark.parametrize("blank", ["", "   ", "\u3000"])
def test_a_claim_of_no_text_is_refused_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blank: str
) -> None:
    # 2 traces of 1 passage each, line 2's claim blank: main's dry run counted "2 (trace,
    # passage) rows -> 2 deduplicated units" (1 has a claim to judge the passage against),
    # and metrics gave TP 1, TN 1 (s2 flagged by its blank claim's "refuted"); without the
    # row s2 is a labelled sentence the system made no claim for: FN 1, TN 1.
    # ("   " and U+3000 pass msgspec's non-empty check: the voucher sends them on too)
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        _trace("c1", "supported", [_passage(1)], "Aspirin lowers fever.")
        + _trace("c2", "refuted", [_passage(2)], blank),
        encoding="utf-8",
    )
    err = _refused(["judge", "retrieval", "--from", str(traces), "--dry-run"], capsys)
    said = "spaces alone" if blank else "empty"
    assert f"{traces}:2, field 'claim': the claim has no text ({said})" in err
    (tmp_path / "l.jsonl").write_text(_LABELS, encoding="utf-8")
    err = _refused(
        ["metrics", "--traces", str(traces), "--labels", str(tmp_path / "l.jsonl")], capsys
    )
    assert f"{traces}:2, field 'claim'" in err


def test_a_parquet_boolean_score_column_and_blank_claim_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the Parquet scan read a bool score column as 1.0/0.0 and an empty claim as a claim
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(name: str, score_type: pa.DataType, score: object, claim: str) -> Path:
        passage = pa.struct(
            [
                pa.field("passage_id", pa.string()),
                pa.field("rank", pa.int64()),
                pa.field("text", pa.string()),
                pa.field("score", score_type),
            ]
        )
        schema = pa.schema(
            [(n, pa.string()) for n in ("system", "question_id", "sentence_id", "claim_id")]
            + [("claim", pa.string()), ("verdict", pa.string()), ("passages", pa.list_(passage))]
        )
        rows = [
            {
                "system": "A",
                "question_id": "q1",
                "sentence_id": f"s{i}",
                "claim_id": f"c{i}",
                "claim": text,
                "verdict": "refuted",
                "passages": [{"passage_id": f"p{i}", "rank": 1, "text": "T.", "score": score}],
            }
            for i, text in ((1, "Aspirin lowers fever."), (2, claim))
        ]
        path = tmp_path / name
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        return path

    (tmp_path / "l.jsonl").write_text(_LABELS, encoding="utf-8")
    flags = write("flags.parquet", pa.bool_(), True, "Aspirin cures colds.")
    blank = write("blank.parquet", pa.float64(), 0.5, "")
    for path, said in (
        (flags, f"{flags}:1, field 'passages[0].score'"),
        (blank, f"{blank}:2, field 'claim': the claim has no text"),
    ):
        for args in (
            ["metrics", "--traces", str(path), "--labels", str(tmp_path / "l.jsonl")],
            ["judge", "retrieval", "--from", str(path), "--dry-run"],
        ):
            assert said in _refused(args, capsys)


def test_a_table_claim_cell_of_spaces_is_refused_as_a_blank_one_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a blank claim cell was refused ("missing required field"), one of spaces written as the
    # claim '   ' (2 traces), exit 0
    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "A,q1,s1,c1,Aspirin lowers fever.,refuted\nA,q1,s2,c2,   ,refuted\n",
        encoding="utf-8",
    )
    out = tmp_path / "traces.jsonl"
    err = _refused(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert f"{table}:3, field 'claim': the claim has no text" in err
    assert not out.exists()


def test_python_layer_refuses_the_same_values() -> None:
    from pydantic import ValidationError

    from failcodes.traces import Passage, Trace

    with pytest.raises(ValidationError, match="a yes/no is no score"):
        Passage(passage_id="p", rank=1, text="t", score=True)
    with pytest.raises(ValidationError, match="a yes/no is no rank"):
        Passage(passage_id="p", rank=True, text="t")
    with pytest.raises(ValidationError, match="the claim has no text"):
        Trace(
            system="A", question_id="q", sentence_id="s", claim_id="c", claim=" ", verdict="refuted"
        )


def test_a_rank_or_score_with_an_underscore_is_refused_not_read_as_python_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Python's number syntax allows '_' between digits: a chunk id "1_0" in "rank" was rank
    # 10 (int("1_0") == 10) and "0_5" in "score" the score 5.0, exit 0
    for field, value, read in (("rank", "1_0", "10"), ("score", "0_5", "5.0")):
        traces = tmp_path / f"{field}.jsonl"
        traces.write_text(
            _trace("c1", "refuted", [_passage(1, **{field: value})], "Aspirin lowers fever."),
            encoding="utf-8",
        )
        err = _refused(["judge", "retrieval", "--from", str(traces), "--dry-run"], capsys)
        assert f"{traces}:1, field 'passages[0].{field}'" in err
        assert f"got '{value}': an underscore is no part of a number (it was read as {read})" in err


def test_a_blank_claim_cell_read_as_the_sentence_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a claim table (sentence and claim columns) whose row 3 leaves the claim blank: ingest took
    # the sentence's text as its claim (a sentence table's default, cell by cell) with no word
    table = tmp_path / "t.csv"
    table.write_text(
        "system,question_id,sentence_id,claim_id,sentence,claim,verdict\n"
        "A,q1,s1,c1,Aspirin lowers fever and pain.,Aspirin lowers fever.,refuted\n"
        "A,q1,s1,c2,Aspirin lowers fever and pain.,,supported\n",
        encoding="utf-8",
    )
    out = tmp_path / "traces.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(table), "-o", str(out)], capsys)
    assert code == 0, err
    claims = [json.loads(line)["claim"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert claims == ["Aspirin lowers fever.", "Aspirin lowers fever and pain."]
    assert (
        f"1 claim(s) whose claim cell is blank (first at {table}:3) read as their sentence's text"
        in err
    )
