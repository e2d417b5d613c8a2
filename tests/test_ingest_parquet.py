"""Parquet tables built from their buffers (``tableio.arrow_table``, issue 30).

Each Arrow array is made from its validity bitmap, values and offsets, not by ``pa.array`` of
a list (which imports pandas in pyarrow 26). The table must equal what pyarrow makes of the
rows' JSON-mode dumps (``Table.from_pylist``): every type the models have, missing values in
each, text beyond ASCII, empty lists and texts, row counts not a multiple of 8 (bitmaps).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes import tableio
from failcodes.labels import Label
from failcodes.sentences import Sentence
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict


def _traces(n: int) -> list[Trace]:
    out = []
    for i in range(n):
        passages = tuple(
            Passage(
                passage_id=f"p{i}.{k}",
                rank=k + 1,
                text="Dosis über dem Grenzwert — 5 µg 日本語" if (i + k) % 3 == 0 else f"text {k}",
                source="pubmed" if k % 2 else None,
                title="" if k == 1 else None,
                score=None if (i + k) % 4 == 0 else 0.25 * k - 1.5,
                gold=None if k % 3 == 0 else k % 3 == 1,
                gold_verdict=Verdict.REFUTED if k == 2 else None,
            )
            for k in range(i % 4)  # 0 to 3 passages: some traces have none
        )
        out.append(
            Trace(
                system="s" if i % 2 else "模型β",
                question_id=f"q{i // 3}",
                sentence_id=f"q{i // 3}:s{i % 3}",
                claim_id=f"c{i}",
                claim="x" * (i % 5) + "é",
                sentence=None if i % 3 else "a sentence",
                verdict=[Verdict.SUPPORTED, Verdict.REFUTED, Verdict.NO_EVIDENCE][i % 3],
                reasoning="" if i == 4 else None,
                passages=passages,
                evidence_source=EvidenceSource.RETRIEVED if passages else EvidenceSource.NONE,
            )
        )
    return out


def _pylist(model: type, rows: list) -> pa.Table:
    schema = tableio.arrow_schema(model)
    return pa.Table.from_pylist([r.model_dump(mode="json") for r in rows], schema=schema)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 30])
def test_trace_tables_equal_pyarrows_own_conversion(n: int) -> None:
    traces = _traces(n)
    built = tableio.arrow_table(tableio.arrow_schema(Trace), traces)
    assert built.equals(_pylist(Trace, traces))
    # independently: the 5th trace's reasoning and the 2nd trace's sentence are missing
    rows = built.to_pylist()
    if n > 4:
        assert rows[4]["reasoning"] is None  # the model reads an empty optional text as none
    if n > 1:
        assert rows[1]["sentence"] is None
        assert rows[1]["passages"][0]["score"] == -1.5  # i = 1, k = 0: 0.25 * 0 - 1.5
    assert sum(len(r["passages"]) for r in rows) == sum(i % 4 for i in range(n))


@pytest.mark.parametrize("n", [1, 8, 9, 1025])
def test_fields_no_row_has_are_null_columns_as_pyarrow_makes_them(n: int) -> None:
    # passages with no source, title, score, gold flag or gold verdict (bench_study's have
    # none of the last four): each such column is n * 2 missing values, made without a pass
    # over them (issue 30); the table must still equal pyarrow's own conversion
    traces = [
        Trace(
            system="s",
            question_id="q",
            sentence_id=f"q:s{i}",
            claim_id=f"c{i}",
            claim="c",
            verdict=Verdict.SUPPORTED,
            passages=tuple(Passage(passage_id=f"p{i}.{k}", rank=k + 1, text="t") for k in (0, 1)),
        )
        for i in range(n)
    ]
    built = tableio.arrow_table(tableio.arrow_schema(Trace), traces)
    assert built.equals(_pylist(Trace, traces))
    passages = built.column("passages").combine_chunks().flatten()
    for name in ("source", "title", "score", "gold", "gold_verdict"):
        assert passages.field(name).null_count == 2 * n, name
    assert passages.field("rank").to_pylist() == [1, 2] * n
    assert built.column("raw_verdict").null_count == n


def test_vouched_lines_make_the_table_their_models_make() -> None:
    # rows that are vouched trace lines (msgspec structs) are read one astuple a row, their
    # passages too (issue 30); the table must equal the one of the models of the same lines
    from failcodes.tracelines import Voucher, trace_of

    traces = [t for t in _traces(30) if t.passages]
    vouch = Voucher()
    lines = [vouch(t.model_dump_json(exclude_none=True)) for t in traces]
    assert all(line is not None for line in lines)
    schema = tableio.arrow_schema(Trace)
    built = tableio.arrow_table(schema, lines)
    assert built.equals(tableio.arrow_table(schema, [trace_of(line) for line in lines]))
    assert built.equals(_pylist(Trace, traces))
    # i = 1, k = 0: passage p1.0 of rank 1, score 0.25 * 0 - 1.5
    first = built.column("passages")[0].as_py()[0]
    assert (first["passage_id"], first["rank"], first["score"]) == ("p1.0", 1, -1.5)


@pytest.mark.parametrize(
    ("texts", "offsets", "data"),
    [
        # by hand: "a" 1 byte, "" 0, "é" 2 bytes (c3 a9), "日本" 6 (3 each)
        (["a", "", "é", "日本"], [0, 1, 1, 3, 9], "aé日本".encode()),
        # a NUL in a text (the join's separator): each text encoded on its own, same buffers
        (["a\0b", "", "c"], [0, 3, 3, 4], b"a\0bc"),
        (["\0"], [0, 1], b"\0"),
        (["x"], [0, 1], b"x"),
        ([], [0], b""),
    ],
)
def test_text_columns_have_the_offsets_and_bytes_of_their_texts(
    texts: list[str], offsets: list[int], data: bytes
) -> None:
    # the texts are joined with NUL between them, encoded once and the NULs' places give the
    # offsets (issue 30); a text holding a NUL takes the encoding of each text
    column = tableio.string_array(texts)
    assert column.to_pylist() == texts
    validity, starts, values = column.buffers()
    assert validity is None
    assert list(memoryview(starts).cast("i")) == offsets
    assert values.to_pybytes() == data
    assert column.equals(pa.array(texts, type=pa.string()))


def test_label_and_sentence_tables_equal_pyarrows_own_conversion() -> None:
    labels = [
        Label(sentence_id=f"s{i}", has_error=i % 3 == 0, severity="Mild" if i % 2 else None)
        for i in range(11)
    ] + [Label(claim_id="c1", has_error=True, system="sys", annotator="Zoë")]
    built = tableio.arrow_table(tableio.arrow_schema(Label), labels)
    assert built.equals(_pylist(Label, labels))
    # has_error of s0..s10: True where i % 3 == 0 (0, 3, 6, 9), then the claim label's True
    assert built.column("has_error").to_pylist() == [i % 3 == 0 for i in range(11)] + [True]
    sentences = [
        Sentence(
            question_id="q",
            sentence_id=f"q:s{i}",
            index=i,
            start=10 * i,
            end=10 * i + 9,
            text="ü" * i,
        )
        for i in range(10)
    ]
    assert tableio.arrow_table(tableio.arrow_schema(Sentence), sentences).equals(
        _pylist(Sentence, sentences)
    )


def test_ingest_to_parquet_imports_no_pandas(tmp_path: Path) -> None:
    # pa.array of a Python list imports pandas in pyarrow 26 (~0.4 CPU-s, ~55 MB); the
    # arrays are built from buffers instead, so an ingest to Parquet never loads it
    traces = _traces(30)
    src, out = tmp_path / "t.jsonl", tmp_path / "t.parquet"
    src.write_text("".join(t.model_dump_json() + "\n" for t in traces), encoding="utf-8")
    code = (
        "import sys\n"
        "from failcodes.cli.main import main\n"
        f"sys.argv = ['failcodes', 'ingest', 'generic', {str(src)!r}, '-o', {str(out)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('pandas' in sys.modules, 'pyarrow' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.splitlines()[-1] == "False True"
    assert pq.read_table(out).equals(_pylist(Trace, traces))
