"""Parquet files opened within bounds: THE way every reader opens a Parquet file.

A Parquet file can decode to far more than its size: 3 million rows of one dictionary-encoded
1 KB string are a 2 MB file and 3 GB of text (``ingest generic`` and ``metrics`` went past
3 GB). :func:`open_parquet` refuses such a file before any reader holds its rows:

1. from the file's metadata, nothing decoded: at most :data:`MAX_ROWS` rows, every row group
   at most :data:`MAX_GROUP_BYTES` uncompressed, the file at most :data:`MAX_UNCOMPRESSED`
   and at most the budget of 2. (a page, a dictionary's too, is unpacked whole);
2. then a pass over the file in batches of :data:`CHECK_ROWS` rows, one batch held at a time,
   adding up what the rows decode to (a dictionary-encoded text column is read as its
   dictionary and its indices, and its decoded size computed from them, never built): past
   :data:`DECODED_MIN` bytes or :data:`DECODED_RATIO` times the file's size, whichever is
   larger, the file is refused.

The file then decodes to a bounded size, which the readers (each streaming batch by batch)
may hold. Real trace files decode to 1-10 times their size.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from failcodes.errors import InputError, mb
from failcodes.fileio import check_regular_file, kind_hint

#: Limits read from the file's metadata before anything is decoded.
MAX_ROWS = 50_000_000
MAX_GROUP_BYTES = 2 << 30
MAX_UNCOMPRESSED = 16 << 30
#: What the rows may decode to: the larger of a floor and a multiple of the file's size.
DECODED_MIN = 256 << 20
DECODED_RATIO = 32
#: Rows per batch of the checking pass (one batch held at a time).
CHECK_ROWS = 4096
#: A text column holding fewer encoded bytes than this per value is read as its dictionary
#: in the checking pass (only such a column can decode to much more than it is stored as).
_DICTIONARY_BYTES = 64


def _too_large(path: Path, why: str) -> InputError:
    return InputError(
        f"{why} (a decompression bomb, or a table too large to read here): split the table "
        "into smaller files",
        path=path,
    )


def open_parquet(path: str | Path, *, index_read: bool = False) -> Any:
    """Open ``path`` as a ``pyarrow.parquet.ParquetFile`` after its limits are checked.

    A missing or special file, a file that is no Parquet, one past the limits above and one
    whose named pandas index no column holds (unless ``index_read``: :func:`check_metadata`)
    are one :class:`InputError` naming the file. The file is streamed through a 1 MB buffer
    (whole column chunks are not read ahead).
    """
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    p = check_regular_file(path)
    try:
        pf = pq.ParquetFile(p, pre_buffer=False, buffer_size=1 << 20)
        check_metadata(p, pf.metadata, index_read=index_read)
        check_decoded(p, pf)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file ({exc}){kind_hint(p)}", path=p) from None
    return pf


def check_metadata(path: Path, meta: Any, *, index_read: bool = False) -> None:
    """Refuse a file whose metadata gives too many rows or too many uncompressed bytes.

    And one whose pandas index is named but kept only in the metadata (:func:`lost_index`),
    unless the reader rebuilds it (``index_read``: pandas' ``to_pandas``, as ``agree`` reads).
    """
    lost = None if index_read else lost_index(meta.metadata, meta.schema.names)
    if lost is not None:
        raise InputError(lost, path=path)
    if meta.num_rows > MAX_ROWS:
        raise _too_large(path, f"{meta.num_rows:,} rows (at most {MAX_ROWS:,})")
    total = 0
    for group in range(meta.num_row_groups):
        size = meta.row_group(group).total_byte_size
        if size > MAX_GROUP_BYTES:
            raise _too_large(
                path,
                f"row group {group} is {mb(size)} uncompressed (at most {mb(MAX_GROUP_BYTES)})",
            )
        total += size
    if total > MAX_UNCOMPRESSED:
        raise _too_large(path, f"{mb(total)} uncompressed (at most {mb(MAX_UNCOMPRESSED)})")
    # a page is unpacked whole before a row of it is decoded: a 147 KB file whose dictionary
    # page (30,000 texts of 10 KB, two of them used) unpacks to 300 MB took ingest 1.3 GB,
    # and its rows decoded to 20 KB, within check_decoded's budget. The pages' own headers
    # say it where the metadata understates it (written so: 1,000 bytes, exit 0 at 1.3 GB)
    size = path.stat().st_size
    budget = max(DECODED_MIN, DECODED_RATIO * size)
    if total <= budget:
        total = max(total, _pages_unpacked(path, meta))
    if total > budget:
        raise _too_large(
            path,
            f"its pages unpack to {mb(total)} from {mb(size)} (at most {mb(DECODED_MIN)}, or "
            f"{DECODED_RATIO} times the file's size)",
        )


def lost_index(kv: dict[bytes, bytes] | None, names: Sequence[str]) -> str | None:
    """Why a file's named pandas index is no column of it, or None (a file pandas wrote so).

    pandas writes a frame's index whose values are a run of whole numbers (``set_index`` on
    a column of ids 1, 2, 3; ``rename_axis('sentence_id')``) as a RangeIndex named only in
    the file's pandas metadata: a reader of the columns never sees it. Labels so written were
    refused as "a label needs a sentence_id or a claim_id", traces as "missing column", with
    no word of the index. The metadata is read once per file (its footer, already parsed).
    """
    raw = (kv or {}).get(b"pandas")
    if raw is None or b'"range"' not in raw:
        return None
    import json

    try:
        indexes = json.loads(raw).get("index_columns") or []
    except (ValueError, AttributeError):
        return None
    for index in indexes:
        if not isinstance(index, dict) or index.get("kind") != "range":
            continue
        name = index.get("name")
        if isinstance(name, str) and name not in names:
            try:
                span = range(*(int(index[k]) for k in ("start", "stop", "step")))
            except (KeyError, TypeError, ValueError):
                span = range(0)
            shown = [*span[:2], *(["...", span[-1]] if len(span) > 3 else span[2:])]
            values = f" ({', '.join(map(str, shown))})" if shown else ""
            return (
                f"the pandas index {name!r}{values} is kept only in the file's metadata, "
                f"not as a column (pandas writes an index of consecutive whole numbers so): "
                f"write the frame with df.reset_index().to_parquet(...) to keep {name!r} as a "
                "column (df.reset_index(drop=True) where it is only a row number)"
            )
    return None


def _pages_unpacked(path: Path, meta: Any) -> int:
    """What the pages unpack to by their headers (a 1 KB read each; pyarrow shows none)."""
    total = 0
    with path.open("rb") as fh:
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                col = group.column(c)
                pos = min(
                    (o for o in (col.dictionary_page_offset, col.data_page_offset) if o), default=0
                )
                end = pos and pos + col.total_compressed_size  # (no page: no rows)
                while pos < end:
                    length, unpacked, packed = _page_header(fh, pos, path)
                    total, pos = total + unpacked, pos + length + packed
    return total


def _page_header(fh: Any, pos: int, path: Path) -> tuple[int, int, int]:
    """``(header length, uncompressed size, compressed size)`` of the page at ``pos``."""
    size = 1 << 10
    while True:
        fh.seek(pos)
        buf = fh.read(size)
        found: dict[int, int] = {}
        try:
            length = _struct(buf, 0, found)
        except (IndexError, ValueError, RecursionError):
            length = len(buf) + 1
        if length <= len(buf) and found.keys() == {2, 3} and min(found.values()) >= 0:
            return length, found[2], found[3]
        if len(buf) < size or size >= _MAX_HEADER:
            raise InputError(
                f"not a readable Parquet file (no page header at byte {pos})", path=path
            )
        size *= 2


#: A page header's longest read (its statistics hold a page's least and greatest values).
_MAX_HEADER = 16 << 20


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if byte < 0x80:
            return value, i


def _struct(buf: bytes, i: int, found: dict[int, int] | None) -> int:
    """The end of a Thrift compact struct at ``i`` (a PageHeader: its fields 2, 3 found)."""
    last = 0
    while True:
        head, i = buf[i], i + 1
        if head == 0:
            return i
        kind, delta = head & 0xF, head >> 4
        if delta:
            last += delta
        else:
            value, i = _varint(buf, i)
            last = (value >> 1) ^ -(value & 1)
        if found is not None and kind == 5 and last in (2, 3):  # i32 page sizes (zigzag)
            value, i = _varint(buf, i)
            found[last] = (value >> 1) ^ -(value & 1)
        else:
            i = _skip(buf, i, kind)


def _skip(buf: bytes, i: int, kind: int) -> int:
    """The end of a Thrift compact value of type ``kind`` at ``i``."""
    if kind in (1, 2):  # a struct field's bool: in its header
        return i
    if kind in (3, 7):  # byte, double
        return i + (1 if kind == 3 else 8)
    if kind in (4, 5, 6):  # integers: varints
        return _varint(buf, i)[1]
    if kind == 8:  # binary: length, bytes
        n, i = _varint(buf, i)
        return i + n
    if kind in (9, 10):  # list, set: size and element type, elements
        n, elem, i = buf[i] >> 4, buf[i] & 0xF, i + 1
        if n == 15:
            n, i = _varint(buf, i)
        for _ in range(n):
            i = i + 1 if elem in (1, 2) else _skip(buf, i, elem)
        return i
    if kind == 11:  # map: size, key and value types, pairs
        n, i = _varint(buf, i)
        if n:
            key, value, i = buf[i] >> 4, buf[i] & 0xF, i + 1
            for _ in range(n):
                i = _skip(buf, _skip(buf, i, key), value)
        return i
    if kind == 12:
        return _struct(buf, i, None)
    raise ValueError(f"Thrift type {kind}")


def _dictionary_columns(meta: Any) -> list[str]:
    """Text columns (paths) stored in fewer than :data:`_DICTIONARY_BYTES` bytes per value."""
    schema = meta.schema
    stored: dict[int, list[int]] = {}
    for group in range(meta.num_row_groups):
        rg = meta.row_group(group)
        for i in range(rg.num_columns):
            col = rg.column(i)
            sums = stored.setdefault(i, [0, 0])
            sums[0] += col.total_uncompressed_size
            sums[1] += col.num_values
    return [
        schema.column(i).path
        for i, (size, values) in stored.items()
        if schema.column(i).physical_type == "BYTE_ARRAY" and size < _DICTIONARY_BYTES * values
    ]


def decoded_size(array: Any) -> int:
    """The bytes ``array`` decodes to; a dictionary array's text counted, not built."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary)
        total = pc.sum(pc.take(lengths, array.indices)).as_py() if len(lengths) else 0
        return int(total or 0) + int(array.indices.nbytes)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return decoded_size(array.flatten()) + int(array.offsets.nbytes)
    if pa.types.is_struct(kind):
        return sum(decoded_size(f) for f in array.flatten())
    return int(array.nbytes)


def _size(pf: Any, budget: int, rows: int = CHECK_ROWS) -> int:
    """What the file decodes to, one batch held at a time (counting stops past ``budget``).

    Batched a row group at a time: each row group has a dictionary of its own, and a batch
    across two came back as two chunks, which Arrow cannot give for a nested column read as
    its dictionary (ArrowNotImplementedError: the whole file was read again plainly, in
    batches of 256 rows; bench_engine's foreign Parquet, 12 row groups, 1.6-1.9 -> 1.0 CPU-s).
    """
    total = 0
    for group in range(pf.metadata.num_row_groups):
        for batch in pf.iter_batches(batch_size=rows, row_groups=[group], use_threads=False):
            total += sum(decoded_size(column) for column in batch.columns)
            if total > budget:
                return total
    return total


def check_decoded(path: Path, pf: Any) -> None:
    """Refuse a file that decodes past its budget, from a pass of one batch at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pf.metadata
    budget = max(DECODED_MIN, DECODED_RATIO * path.stat().st_size)
    counted = pq.ParquetFile(
        path,
        read_dictionary=_dictionary_columns(meta) or None,
        pre_buffer=False,
        buffer_size=1 << 20,
    )
    try:
        total = _size(counted, budget)
    except pa.ArrowNotImplementedError:
        # a nested column whose pages change dictionary within a row group (the writer fell
        # back to plain pages): read plainly, in small batches (plain pages decode to their
        # own size)
        total = _size(pf, budget, rows=CHECK_ROWS // 16)
    if total > budget:
        raise _too_large(
            path,
            f"the file decodes to over {mb(budget)} from {mb(path.stat().st_size)} (at "
            f"most {mb(DECODED_MIN)}, or {DECODED_RATIO} times the file's size)",
        )


def parquet_schema_names(path: str | Path) -> list[str]:
    """The column names of a Parquet file (its schema only; nothing decoded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = check_regular_file(path)
    try:
        schema = pq.read_schema(p)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file ({exc}){kind_hint(p)}", path=p) from None
    lost = lost_index(schema.metadata, schema.names)
    if lost is not None:
        raise InputError(lost, path=p)
    return list(schema.names)
