"""Session 32, t32ingest: the traces ingest's Parquet writer reuses its heap (issue 30)."""

from __future__ import annotations

import itertools
import json
import platform
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from failcodes import tableio, traceio
from failcodes.tracelines import TraceLine, Voucher


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's heap (mallopt)")
def test_each_parquet_row_group_reuses_the_heap_the_last_one_freed(tmp_path: Path) -> None:
    """A row group's text buffers are freed once it is written; the next reuses their pages.

    Working: 4 row groups of PARQUET_ROWS (8,192) traces, each with one passage of ~1,005
    characters: ~8.2 MB of passage text a group, joined once and encoded once
    (tableio._text_buffers), ~2,000 pages of 4 kB. Main gave the top of glibc's heap back to
    the system after each group (glibc trims past twice its dynamic mmap threshold, ~8 MB
    here) and faulted every page anew: 2,016-2,817 minor faults in each of groups 3 and 4
    (4,126-4,834 in both, three runs). Kept (tableio.keep_heap), groups 3 and 4 fault 0 and
    ~45 pages (arrow's own buffers).
    """
    vouch = Voucher()
    rows: list[TraceLine] = []
    for i in range(4 * tableio.PARQUET_ROWS):
        record = {
            "system": "s",
            "question_id": f"q{i}",
            "sentence_id": f"q{i}:s0",
            "claim_id": f"q{i}:s0:c0",
            "claim": "a claim",
            "verdict": "supported",
            "passages": [{"passage_id": f"p{i}", "rank": 1, "text": f"{i} " + "x" * 1000}],
        }
        rows.append(vouch(json.dumps(record)))
    assert None not in rows
    faults: list[int] = []

    def counted() -> Iterator[TraceLine]:
        for n, row in enumerate(rows):
            if n % tableio.PARQUET_ROWS == 0:  # the group before was built and written
                faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
            yield row

    out = tmp_path / "traces.parquet"
    traceio.write_traces(out, counted())
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)
    per_group = [b - a for a, b in itertools.pairwise(faults)]
    assert len(per_group) == 4
    # groups 3 and 4: ~4,100 page faults on main (above), under 100 kept
    assert per_group[2] + per_group[3] < 1000, per_group
    assert traceio.read_traces(out)[-1].passages[0].text == f"{len(rows) - 1} " + "x" * 1000
