"""The slim inputs of attribution (issue 30): CodeIndex and ClaimUnits against the models."""

import pandas as pd
import pytest

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.attribution import CodeIndex, UnitCodes, claim_units
from failcodes.errors import InputError
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.units import UnitKind, unit_id
from failcodes.verdicts import Verdict
from tests.judge_helpers import make_codebook

CB = make_codebook()
HIGH = CB.high_quality_codes(UnitKind.RETRIEVAL)


def _ann(uid: str, codes: dict[str, str] | None, *, coder: str = "x", kind=UnitKind.RETRIEVAL):
    return Annotation(
        unit_id=uid,
        unit_kind=kind,
        codebook=CB.ref(),
        coder=coder,
        coder_kind=CoderKind.LLM,
        status=Status.SCORED if codes is not None else Status.UNSCORED,
        reason=None if codes is not None else "invalid",
        codes=codes or {},
    )


def test_code_index_keeps_the_last_annotation_of_a_unit_and_shares_records() -> None:
    a, b = "00000000000000ff", "ffffffffffffff00"  # b is a negative 64-bit key
    low = {**HIGH, "scope": "broader_scope"}
    index = CodeIndex.of(
        [
            _ann(a, low),
            _ann(b, dict(HIGH)),
            _ann(a, dict(HIGH)),  # a again: this one counts
            _ann("review-7", {**HIGH, "trustworthy": NOT_ASSESSABLE}),  # not a content id
            _ann("0123456789abcdef", None),  # unscored
            _ann("1111111111111111", dict(HIGH), kind=UnitKind.VERIFICATION),  # other kind
        ],
        CB,
        UnitKind.RETRIEVAL,
    )
    dims = list(HIGH)
    high = UnitCodes("scored", "x", "llm", tuple(HIGH[d] for d in dims), len(dims), True)
    assert index.get(a) == high
    assert index.get(b) is index.get(a)  # one shared record for equal codes
    review = index.get("review-7")
    assert review is not None
    # 5 dimensions, one not assessable: 4 assessed, all high
    assert (review.assessed, review.flag) == (len(dims) - 1, True)
    assert index.get("0123456789abcdef") == (
        "unscored",
        "x",
        "llm",
        (None,) * len(dims),
        None,
        None,
    )
    assert index.get("1111111111111111") is None  # a verification unit: skipped
    assert index.get("2222222222222222") is None
    assert len(index) == 4
    uids = [a, "2222222222222222", "review-7", b, "ABCDEF0123456789"]
    assert index.get_many(uids) == [index.get(u) for u in uids]
    assert index.get_many(uids[:2] + uids[3:4]) == [high, None, high]
    assert sum(index.coders.values()) == 6  # every annotation is counted, of every kind


@pytest.mark.parametrize("settle", [1, 2, 3, 1000])
def test_code_index_settles_ids_in_chunks_as_one_at_a_time(settle: int, monkeypatch) -> None:
    # issue 31: ids are moved into the sorted arrays a chunk at a time (all content ids: one
    # hex decode); a chunk with another id (or ids of other lengths summing to 16 each) goes
    # one id at a time; lookups between adds see every id added so far
    from failcodes import attribution

    monkeypatch.setattr(attribution, "_SETTLE", settle)
    low = {**HIGH, "scope": "broader_scope"}
    a, b = "00000000000000ff", "ffffffffffffff00"
    index = CodeIndex(CB, UnitKind.RETRIEVAL)
    for ann in (_ann(a, low), _ann("0" * 15, dict(HIGH)), _ann("f" * 17, low)):
        index.add(ann)  # hex digits, 48 of them: not three content ids
    assert index.get(a) is not None and index.get(a).flag is False  # scope is low
    for ann in (_ann("review-7", dict(HIGH)), _ann(b, dict(HIGH)), _ann(a, dict(HIGH))):
        index.add(ann)  # a again, after a lookup: this one counts
    assert [index.flag(u) for u in (a, b, "review-7", "0" * 15, "f" * 17)] == [True] * 4 + [False]
    assert index.get_many([b, a, "1111111111111111"]) == [index.get(b), index.get(a), None]
    assert len(index) == 5
    assert index.coders == {("x", "llm"): 6}


def test_code_index_refuses_another_codebook_on_check() -> None:
    other = make_codebook(version=9)
    ann = _ann("00000000000000ff", dict(HIGH))
    index = CodeIndex(other, UnitKind.RETRIEVAL)
    index.add(ann)  # remembered, not raised: the command raises where it did
    with pytest.raises(InputError, match=r"made under codebook .*migrate it first"):
        index.check()


def test_claim_units_ids_are_the_units_ids() -> None:
    passages = (
        Passage(passage_id="p1", rank=1, text='a "quoted" passage \u00e9', gold=True),
        Passage(passage_id="p2", rank=2, text="second"),
        Passage(passage_id="p3", rank=3, text="third"),
    )
    trace = Trace(
        system="s",
        question_id="q",
        sentence_id="q:s1",
        claim_id="c",
        claim="Aspirin lowers fever.",
        verdict=Verdict.REFUTED,
        reasoning="because",
        retriever="bm25",
        passages=passages,
    )
    u = claim_units(trace, top_k=2)
    assert [p.unit_id for p in u.passages] == [
        unit_id(UnitKind.RETRIEVAL, trace.claim, (p.text,)) for p in passages[:2]
    ]
    # the verification prompt shows each passage's id: the step unit's id holds them
    texts = tuple(p.text for p in passages[:2])
    assert u.step_unit == unit_id(
        UnitKind.VERIFICATION, trace.claim, passages[:2], "because", Verdict.REFUTED
    )
    assert u.step_unit != unit_id(
        UnitKind.VERIFICATION, trace.claim, texts, "because", Verdict.REFUTED
    )
    assert (u.n_passages, u.has_gold, u.evidence, u.cites) == (
        3,
        True,
        EvidenceSource.RETRIEVED,
        False,
    )
    blank = claim_units(trace.model_copy(update={"reasoning": "  "}))
    assert blank.step_unit is None and len(blank.passages) == 3


def test_csv_sink_writes_the_whole_frames_bytes_chunk_by_chunk(tmp_path) -> None:
    """Chunks written one by one give the bytes of ``to_csv`` of the whole table.

    The whole table has a missing value in ``assessed``, so pandas writes its whole numbers
    as floats (``5.0``): the first two chunks (no missing value) were written as ``5`` and
    are rewritten; text needing quotes or neutralising and bool/None cells pass unchanged.
    """
    from failcodes.commands.attribute import _CsvSink
    from failcodes.csvcells import safe_frame
    from failcodes.fileio import AtomicBatch

    rows = [
        ("a,b", True, 5, "=1+1"),
        ('say "x"', None, 4, "ok"),
        ("line\nbreak", False, 5, "-2"),
        ("plain", True, 3, "@home"),
        ("none", None, None, None),
        ("after", False, 5, "+x"),
    ]
    columns = ["text", "gold", "assessed", "cell"]
    whole = pd.DataFrame({c: [r[i] for r in rows] for i, c in enumerate(columns)})
    path = tmp_path / "t.csv"
    expected = safe_frame(whole, path).to_csv(index=False)
    assert "5.0" in expected and ",5," not in expected  # what the whole table writes
    with AtomicBatch() as batch:
        sink = _CsvSink(batch, path)
        for i in range(0, len(rows), 2):
            part = rows[i : i + 2]
            sink.write(
                pd.DataFrame({c: [r[j] for r in part] for j, c in enumerate(columns)}), "assessed"
            )
        sink.close()
    assert path.read_text(encoding="utf-8") == expected


def test_attribute_in_one_claim_chunks_equals_one_chunk(workdir, capsys, monkeypatch) -> None:
    from failcodes.commands import attribute as command
    from tests.cli_helpers import run_cli
    from tests.judge_helpers import make_traces, write_codebook, write_traces

    traces = write_traces(workdir / "t.jsonl", make_traces(3))
    cb = write_codebook(workdir / "cb.yaml")
    base = ["--from", str(traces), "--codebook", str(cb)]
    assert run_cli(["judge", "retrieval", *base, "-o", "r"], capsys)[0] == 0
    assert run_cli(["judge", "reasoning", *base, "-o", "v"], capsys)[0] == 0
    args = ["attribute", *base, "--retrieval", "r", "--reasoning", "v"]
    assert run_cli([*args, "-o", "one"], capsys)[0] == 0
    monkeypatch.setattr(command, "_CLAIMS_PER_CHUNK", 1)
    monkeypatch.setattr(command, "_ROWS_PER_CHUNK", 1)
    assert run_cli([*args, "-o", "many"], capsys)[0] == 0
    names = sorted(p.name for p in (workdir / "one").iterdir())
    assert len(names) == 10  # 9 tables and notes.json (attribute's first lines)
    assert names == sorted(p.name for p in (workdir / "many").iterdir())
    for name in names:
        assert (workdir / "many" / name).read_bytes() == (workdir / "one" / name).read_bytes()


@pytest.mark.parametrize("missing_first", [False, True])
def test_csv_sink_rows_write_the_whole_frames_bytes(missing_first: bool) -> None:
    """Rows written by ``csv`` (a chunk to neutralise by pandas) = the whole table's bytes.

    A missing value first: later whole numbers are written as floats at once; later: the
    integer chunks before it are rewritten at close.
    """
    import tempfile
    from pathlib import Path

    from failcodes.attribution import rows_frame
    from failcodes.commands.attribute import _CsvSink
    from failcodes.csvcells import safe_frame
    from failcodes.fileio import AtomicBatch

    columns = ["text", "rank", "gold", "assessed", "flag"]
    rows = [
        ("a,b", 1, True, 5, True),
        ('say "x"', 2, None, 4, False),
        ("line\nbreak", 3, False, 5, None),
        ("=cmd", 4, True, 3, True),  # this chunk goes through pandas (a cell to neutralise)
        ("none", 5, None, None, None),  # the first missing value: 5 -> 5.0 from here on
        ("after", 6, False, 5, False),
        ("", 7, None, 2, None),
    ]
    if missing_first:
        rows.insert(0, rows.pop(4))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        expected = safe_frame(rows_frame(rows, columns), path).to_csv(index=False)
        assert "5.0" in expected and "'=cmd" in expected
        with AtomicBatch() as batch:
            sink = _CsvSink(batch, path)
            for i in range(0, len(rows), 2):
                sink.write_rows(rows[i : i + 2], columns, "assessed")
            sink.close()
        assert path.read_text(encoding="utf-8") == expected


def test_count_rows_equals_the_frame_counts() -> None:
    """The streamed counts equal quality_counts and error_counts of the whole table."""
    from failcodes.attribution import (
        coded_columns,
        count_rows,
        error_counts,
        quality_counts,
        rows_frame,
    )

    dims = list(HIGH)
    index = CodeIndex(CB, UnitKind.RETRIEVAL)
    columns = coded_columns(index, passage=True)
    low = next(
        sc.id
        for d in CB.part(UnitKind.RETRIEVAL).dimensions
        if d.id == dims[0]
        for sc in d.subcodes
        if not sc.high_quality
    )

    def row(group: str, status: str, cells: list[str | None], flag: bool | None) -> tuple:
        assessed = None if status != "scored" else sum(c != NOT_ASSESSABLE for c in cells)
        head = ("s", group, "q", "q:s", "c", 1, "p", None, "u")
        return (*head, status, "x", "llm", *cells, assessed, flag)

    high = [HIGH[d] for d in dims]
    rows = [
        row("bm25", "scored", high, True),
        row("bm25", "scored", [low, *high[1:]], False),
        row("bm25", "scored", [NOT_ASSESSABLE, *high[1:]], True),
        row("dense", "missing", [None] * len(dims), None),
        row("dense", "unscored", [None] * len(dims), None),
        row("dense", "scored", [f"{low}|{high[0]}", *high[1:]], False),
    ]
    rows += rows[1:3] + rows[5:] * 3  # rows tallied by their keys count each time (issue 31)
    frame = rows_frame(rows, columns)
    rates: dict = {}
    errors: dict = {}
    count_rows(
        rows,
        columns,
        CB,
        UnitKind.RETRIEVAL,
        by="retriever",
        flag="all_high",
        rates=rates,
        errors=errors,
    )
    assert rates == quality_counts(frame, by="retriever", flag="all_high")
    # bm25: 3 rows + 2 again (low, not_assessable) = 5, all coded, all-high: the first and the
    # not_assessable one twice = 3, with a not_assessable cell: 2; dense: 3 rows + the scored
    # one 3 times = 6, coded: 1 + 3 = 4, none all-high
    assert rates == {"bm25": [5, 5, 3, 2], "dense": [6, 4, 0, 0]}
    assert errors == error_counts(frame, CB, UnitKind.RETRIEVAL, by="retriever")
    assert errors["dense"][0] == [4] and errors["dense"][1][dims[0]][low] == 4
    assert errors["bm25"][1][dims[0]][low] == 2


@pytest.mark.parametrize(
    ("texts", "reasoning"),
    [
        ((), None),
        (("plain",), "r"),
        (('quote " and \\ back', "\u00e9\u2028\x00\x1f tab\t", "\U0001f600 emoji"), "why\nnot"),
    ],
)
def test_claim_unit_ids_are_unit_id(texts: tuple[str, ...], reasoning: str | None) -> None:
    from failcodes.units import claim_unit_ids, retrieval_unit_digests

    claim = 'A "claim" \u00e9'
    # each passage under a source, a title, both, none, an empty one: the retrieval ids and
    # the verification id cover what the prompt shows beside each text
    shown = [("pubmed", None), (None, "A title"), ("blog", "t"), (None, None), ("", "")]
    passages = [
        Passage(passage_id=f"p{i}", rank=i + 1, text=t, source=shown[i % 5][0],
                title=shown[i % 5][1])
        for i, t in enumerate(texts)
    ]  # fmt: skip
    digests, step = claim_unit_ids(claim, passages, reasoning, Verdict.SUPPORTED)
    assert digests == retrieval_unit_digests(claim, passages)
    assert [digests[8 * i : 8 * i + 8].hex() for i in range(len(texts))] == [
        unit_id(UnitKind.RETRIEVAL, claim, (p,)) for p in passages
    ]
    assert step == unit_id(UnitKind.VERIFICATION, claim, passages, reasoning, Verdict.SUPPORTED)
    if texts:  # "pubmed" beside the first text: not the texts-only id
        assert step != unit_id(UnitKind.VERIFICATION, claim, texts, reasoning, Verdict.SUPPORTED)


def test_attribute_reads_a_disagreements_file_once_and_falls_back_mid_file(workdir, capsys) -> None:
    # issue 31: the file is read once, as it is attributed; a line only the exact reader takes
    # (here line 2 leaves out a field that has a default) sends the rest of the file to it:
    # the tables are the bytes of the file every line of which the fast reader takes
    import json

    from tests.cli_helpers import run_cli
    from tests.judge_helpers import (
        fn_disagreements,
        make_traces,
        write_codebook,
        write_disagreements,
    )

    items = fn_disagreements(make_traces(2))
    fast = write_disagreements(workdir / "fast.jsonl", items)
    lines = fast.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    second = json.loads(lines[1])
    assert second.pop("label_annotator") is None  # the model's default
    (workdir / "mixed.jsonl").write_text(
        "\n".join([lines[0], json.dumps(second), *lines[2:]]) + "\n", encoding="utf-8"
    )
    cb = write_codebook(workdir / "cb.yaml")
    base = ["--codebook", str(cb)]
    assert run_cli(["judge", "retrieval", "--from", str(fast), *base, "-o", "r"], capsys)[0] == 0
    assert run_cli(["judge", "reasoning", "--from", str(fast), *base, "-o", "v"], capsys)[0] == 0
    runs = ["--retrieval", "r", "--reasoning", "v"]
    for name in ("fast", "mixed"):
        argv = ["attribute", "--from", f"{name}.jsonl", *base, *runs, "-o", f"out-{name}"]
        assert run_cli(argv, capsys)[0] == 0
    names = sorted(p.name for p in (workdir / "out-fast").iterdir())
    assert len(names) == 10  # 9 tables and notes.json (attribute's first lines)
    assert sorted(p.name for p in (workdir / "out-mixed").iterdir()) == names
    for name in names:
        if name == "notes.json":  # the same but the file attributed (its --from)
            fast_notes, mixed_notes = (
                json.loads((workdir / f"out-{n}" / name).read_text(encoding="utf-8"))
                for n in ("fast", "mixed")
            )
            assert (fast_notes.pop("source"), mixed_notes.pop("source")) == (
                "../fast.jsonl",
                "../mixed.jsonl",
            )
            assert fast_notes == mixed_notes
            continue
        assert (workdir / "out-mixed" / name).read_bytes() == (
            workdir / "out-fast" / name
        ).read_bytes(), name
    assert len((workdir / "out-fast" / "attribution.jsonl").read_text().splitlines()) == 4
