"""The decompression-bomb pass of failcodes.parquetio (issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from failcodes import parquetio


def test_a_nested_text_column_over_two_row_groups_is_counted_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each row group has a dictionary of its own: a batch across two failed for a nested
    column read as its dictionary, and the file was read again plainly (two passes)."""
    path = tmp_path / "t.parquet"
    rows = pa.table({"id": list("abcdef"), "p": [[{"text": "x" * i}] for i in range(6)]})
    pq.write_table(rows, path, row_group_size=3)
    passes: list[int] = []
    counted = parquetio._size

    def spy(*args: Any, **kwargs: Any) -> int:
        passes.append(counted(*args, **kwargs))
        return passes[-1]

    monkeypatch.setattr(parquetio, "_size", spy)
    parquetio.open_parquet(path)
    # by hand, per row group (both text columns read as dictionary arrays: the text's bytes
    # plus 4-byte indices; the list's 4 offsets of 4 bytes):
    #   rows a-c: id 3 + 12 = 15; p: text 0+1+2 + 12 = 15, offsets 16 -> 31
    #   rows d-f: id 3 + 12 = 15; p: text 3+4+5 + 12 = 24, offsets 16 -> 40
    assert passes == [15 + 31 + 15 + 40]
