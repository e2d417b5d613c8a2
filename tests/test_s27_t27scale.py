"""Session 27, helper t27scale: a study's steps whose peak memory grew with their input (issue 30).

bench/bench_study.py at 10x paper scale: the labels ingest peaked 1.67-1.72x its 1x peak
(45.8 MB against 27.4: every label held as columns before one was written), attribute
1.82x. Each test here fails with the source before the change.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from failcodes import labelio
from failcodes.cli import direct


def _labels(path: Path, n: int, *, last: str | None = None) -> None:
    """``n`` sentence labels, one annotator (bench_study's shape), ``last`` appended."""
    with path.open("w", encoding="utf-8") as fh:
        for s in range(n):
            qid = f"q{s // 10:06d}"
            rec = {
                "sentence_id": f"{qid}:s{s % 10}",
                "question_id": qid,
                "has_error": s % 7 == 0,
                "rationale": "dose differs from the guideline",
                "annotator": "clinician-1",
            }
            fh.write(json.dumps(rec) + "\n")
        if last is not None:
            fh.write(last + "\n")


def _ingest(src: Path, out: Path) -> int:
    """``failcodes ingest generic-labels SRC -o OUT`` as the study runs it (cli/direct.py):
    the traced peak in bytes above the start."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        with pytest.raises(SystemExit) as done:
            direct.run(["ingest", "generic-labels", str(src), "-o", str(out)])
        assert done.value.code == 0
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_a_labels_ingest_does_not_hold_its_labels(tmp_path: Path) -> None:
    """Each label more costs at most ~100 bytes of peak: the one hash of its target kept for
    the duplicate check (a 64-bit int, 32 bytes, in a set: ~30-40 bytes a slot), not the label.

    Measured (tracemalloc, 10,000 vs 40,000 labels): main held every label as columns, its
    sentence id (~60 bytes), 8 bytes in each of its lists, the ids' sets for the checks: 160
    bytes a label more (3.43 -> 8.30 MB); streamed a piece at a time: 67 bytes (3.35 -> 5.36).
    """
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _labels(small, 10_000)
    _labels(large, 40_000)
    _ingest(small, tmp_path / "warm.jsonl")  # imports and caches first
    low = _ingest(small, tmp_path / "small.out.jsonl")
    high = _ingest(large, tmp_path / "large.out.jsonl")
    per_label = (high - low) / 30_000
    assert per_label < 100, per_label
    # the bytes read_labels + write_labels write (one label a line, None left out)
    held = labelio.read_labels(large, column_map={}, columns=True)
    labelio.write_labels(tmp_path / "whole.jsonl", held)
    written = (tmp_path / "large.out.jsonl").read_bytes()
    assert written == (tmp_path / "whole.jsonl").read_bytes()
    assert written.count(b"\n") == 40_000
    first = json.loads(written.split(b"\n")[0])
    assert first == {
        "sentence_id": "q000000:s0",
        "question_id": "q000000",
        "has_error": True,
        "rationale": "dose differs from the guideline",
        "annotator": "clinician-1",
    }


def test_a_duplicate_past_the_first_piece_is_refused_at_its_line_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A guard of the streamed copy (passes with main's src too, which read the file whole):
    the 5,001st label repeats the 1st's target, ~700 kB in, past the first 256 kB piece
    written; the usual one-line error names its line and the first's, and no file is left."""
    src, out = tmp_path / "labels.jsonl", tmp_path / "out" / "labels.jsonl"
    dup = {"sentence_id": "q000000:s0", "has_error": False, "annotator": "clinician-1"}
    _labels(src, 5_000, last=json.dumps(dup))
    with pytest.raises(SystemExit) as done:
        direct.run(["ingest", "generic-labels", str(src), "-o", str(out)])
    assert done.value.code != 0
    err = capsys.readouterr().err
    assert err == (
        f"failcodes: error: {src}:5001, field 'sentence_id': duplicate label for sentence "
        "'q000000:s0' by 'clinician-1' (first at line 1); a row per code of one sentence "
        "(several codes)? failcodes ingest generic-labels FILE -o OUT --option "
        "duplicates=same keeps one of each target labelled alike; labels of several "
        "systems' answers stacked? ingest each system's with --system NAME (or --option "
        "label_scope=system) so each label names its system\n"
    )
    assert not out.exists()
    assert not out.parent.exists()


class _Named:
    """An annotation under another unit id (a model copy each took too long)."""

    def __init__(self, base: Any, uid: str) -> None:
        self.base, self.unit_id = base, uid

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)


def _index(n: int, seed: int = 7) -> tuple[Any, list[str]]:
    """A retrieval CodeIndex of ``n`` random content ids (one code record), and the ids."""
    from failcodes.annotations import Annotation, CoderKind, Status
    from failcodes.attribution import CodeIndex
    from failcodes.units import UnitKind
    from tests.judge_helpers import make_codebook

    cb = make_codebook()
    high = cb.high_quality_codes(UnitKind.RETRIEVAL)
    base = Annotation(
        unit_id="0" * 16,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=cb.ref(),
        coder="x",
        coder_kind=CoderKind.LLM,
        status=Status.SCORED,
        codes=dict(high),
    )
    rng = random.Random(seed)
    uids = [f"{rng.getrandbits(64):016x}" for _ in range(n)]
    index = CodeIndex(cb, UnitKind.RETRIEVAL)
    for uid in uids:
        index.add(_Named(base, uid))
    return index, uids


def test_the_code_index_is_sorted_a_bucket_at_a_time() -> None:
    """The first lookup sorts the ids: the new memory it takes is the sorted arrays (an int64
    id and an int32 record number: 12 bytes a unit, kept) and one bucket's sort at a time
    (1/64 of the ids: ~21 bytes / 64 a unit). Main sorted all at once: its argsort (8 bytes
    a unit), the sorted id and record arrays (12) and the last-wins mask (1): ~21 bytes a
    unit at once (traced: 20.0 there, 12.5 here, 131,072 units)."""
    n = 1 << 17
    index, uids = _index(n)
    absent = "1" * 16
    assert absent not in uids
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        found = index.get_many([uids[5], absent, uids[-1]])
        per_unit = (tracemalloc.get_traced_memory()[1] - before) / n
    finally:
        tracemalloc.stop()
    assert per_unit < 14, per_unit
    assert found[0] is not None and found[0].flag is True  # every code high
    assert found[1] is None
    assert found[2] == found[0]
    assert len(index) == n
    places = index.positions([uids[5], absent, "review-7", uids[5]]).tolist()
    assert places[1:3] == [-1, -1] and places[0] == places[3]
    # each id's place is its rank among the ids sorted as signed 64-bit numbers
    numbers = sorted(int.from_bytes(bytes.fromhex(u), "big", signed=True) for u in uids)
    assert places[0] == numbers.index(int.from_bytes(bytes.fromhex(uids[5]), "big", signed=True))


def test_attribute_counts_a_retrievers_unit_once_by_a_bit_not_16_bytes() -> None:
    """count_rows with attribute's SeenUnits counts what it counted with a FirstUnits (each
    (retriever, unit) once; an uncoded unit too), holding a bit a unit and retriever (main's
    FirstUnits: a 64-bit hash of the key and one of the codes, 16 bytes a unit)."""
    from failcodes.attribution import SeenUnits, coded_columns, coded_rows, count_rows
    from failcodes.unitrepeats import FirstUnits
    from failcodes.units import UnitKind
    from tests.judge_helpers import make_codebook

    cb = make_codebook()
    n = 1 << 15
    index, uids = _index(n, seed=11)
    columns = coded_columns(index, passage=True)

    def heads(system: str, retriever: str, picked: list[str]) -> list[tuple[object, ...]]:
        return [(system, retriever, "q", "q:s", "c", 1, "p", None) for _ in picked]

    uncoded = "f" * 15 + "e"  # not held: a "missing" row
    chunks = []
    for system, retriever, picked in (
        ("A", "bm25", [*uids[:1000], uncoded]),
        ("B", "bm25", [*uids[500:1500], uncoded]),  # 500 repeat A's, and the uncoded one
        ("C", "dense", uids[:1000]),  # another retriever: none repeats
    ):
        chunks.append(coded_rows(heads(system, retriever, picked), picked, index))
    counted = []
    for once in (SeenUnits(index), FirstUnits()):
        rates: dict[str, list[int]] = {}
        errors: dict[str, Any] = {}
        for rows in chunks:
            count_rows(
                rows,
                columns,
                cb,
                UnitKind.RETRIEVAL,
                by="retriever",
                flag="all_high",
                rates=rates,
                errors=errors,
                once=once,
            )
        counted.append((rates, errors))
    assert counted[0] == counted[1]
    # bm25: 1,500 coded units + the uncoded one, all high; dense 1,000
    assert counted[0][0] == {"bm25": [1501, 1500, 1500, 0], "dense": [1000, 1000, 1000, 0]}
    seen = SeenUnits(index)
    rows = coded_rows(heads("A", "bm25", uids), uids, index)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert len(seen.first_rows(rows, columns, "retriever", [])) == n
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < n  # a bit a unit (n / 8 bytes), its dict, freelists; FirstUnits: 16 n
