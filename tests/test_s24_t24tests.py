"""Session 24, t24tests: the readers' last refusals (a touched file, an export over 1 GB).

Each test states the input, what failcodes gave before the fix, and the value by hand beside
the assertion.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from failcodes import jsonio, tableio
from failcodes.errors import InputError

#: 3 lines of 8 bytes ('{"a":1}' and '\n'): 24 bytes
_THREE = b'{"a":1}\n{"a":2}\n{"a":3}\n'


def _touched_midway(lines: Iterator[Any], path: Path) -> list[Any]:
    """Read ``lines``, touching ``path`` (its modification time a minute on) after the first."""
    got = [next(lines)]
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60_000_000_000))
    got.extend(lines)
    return got


@pytest.mark.parametrize("reader", ["jsonl_lines", "byte_lines", "byte_blocks"])
def test_a_jsonl_file_touched_while_read_is_read(tmp_path: Path, reader: str) -> None:
    # `touch t.jsonl` (or a sync client setting its time) while ingest read it: refused, "the
    # file changed while it was read (24 bytes when opened, 24 at the end: still being
    # written?)", exit 2, though every byte was there: its 3 lines, 24 bytes, as written
    path = tmp_path / "t.jsonl"
    path.write_bytes(_THREE)
    with path.open("rb") as fh:
        if reader == "jsonl_lines":
            got = _touched_midway(jsonio.jsonl_lines(path), path)
        elif reader == "byte_lines":
            got = _touched_midway(jsonio.byte_lines(fh, path), path)
        else:  # one read holds the 24 bytes: the lists of lines, one
            got = _touched_midway(jsonio.byte_blocks(fh, path), path)
    if reader == "byte_blocks":
        assert got == [([b'{"a":1}\n', b'{"a":2}\n', b'{"a":3}\n'], 6)]  # 2 '"' a line
    else:
        assert [n for n, _ in got] == [1, 2, 3]


def test_a_csv_file_copied_over_with_the_same_bytes_while_read_is_read(tmp_path: Path) -> None:
    # `cp backup/t.csv t.csv` (the same 8 bytes, a new time) while metrics read it: refused as
    # changed; its rows are '1', '2', '3' whichever copy was read
    path, backup = tmp_path / "t.csv", tmp_path / "backup.csv"
    path.write_bytes(b"a\n1\n2\n3\n")
    backup.write_bytes(b"a\n1\n2\n3\n")
    rows = tableio.csv_rows(path, ())
    got = [next(rows)]
    st = path.stat()
    shutil.copyfile(backup, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 60_000_000_000))
    got.extend(rows)
    assert [r["a"] for _, r in got] == ["1", "2", "3"]


def test_a_read_that_ended_before_the_files_end_is_refused(tmp_path: Path) -> None:
    # a file cut by its writer while read, then written back to its size: the read ended at
    # byte 8 of 24 (here: 8 bytes read of the 24, the size when opened and now). The size
    # alone would take the 8 bytes as the file
    path = tmp_path / "t.jsonl"
    path.write_bytes(_THREE)
    with path.open("rb", buffering=0) as fh:
        opened = jsonio.file_state(fh)
        assert fh.read(8) == b'{"a":1}\n'
        with pytest.raises(InputError) as caught:
            jsonio.check_unchanged(fh, path, opened)
        assert str(caught.value) == (
            f"{path}: the file changed while it was read (24 bytes, but its read ended at byte "
            "8: rewritten while read?): read it once its writer is done"
        )
        assert fh.read() == _THREE[8:]
        jsonio.check_unchanged(fh, path, opened)  # read to its end: 24 of 24
