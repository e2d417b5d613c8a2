"""Session 27, helper t27scale: a study's steps whose peak memory grew with their input (issue 30).

bench/bench_study.py at 10x paper scale: the labels ingest peaked 1.67-1.72x its 1x peak
(45.8 MB against 27.4: every label held as columns before one was written), attribute
1.82x. Each test here fails with the source before the change.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

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
        "'q000000:s0' by 'clinician-1' (first at line 1)\n"
    )
    assert not out.exists()
    assert not out.parent.exists()
