"""A judge's annotations JSONL file, streamed and read by unit id without holding it.

:func:`iter_annotations` gives the annotations one at a time, each checked as strictly as
``read_models_jsonl(path, Annotation)`` does (a line :func:`~failcodes.annotationlines.vouched`
accepts as its struct, any other through the exact reader, whose one-line error names file,
line and field). :class:`AnnotationIndex` finds a line by its unit id (a unit id is the first
64 bits of a content hash, so its 8 bytes are the id itself): read in file order when asked
in that order, by offset otherwise (docs/architecture.md, ``AnnotationIndex.open``). A unit
annotated twice gets its last annotation, as a dict built in file order would.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np

from failcodes.annotationlines import AnnotationRead, decode_line, vouched
from failcodes.annotations import Annotation
from failcodes.columnar import ExactReaderNeededError
from failcodes.errors import InputError
from failcodes.fileio import check_regular_file
from failcodes.jsonio import byte_lines, jsonl_object
from failcodes.tableio import read_models_jsonl, validate_record

_UNIT_ID = re.compile(r"[0-9a-f]{16}")
_READ_BUFFER = 1 << 16
_BOM = b"\xef\xbb\xbf"


def _lines(path: Path) -> Generator[tuple[int, int, bytes]]:
    """``(line number, byte offset, bytes)`` of each line the text reader would give.

    Through a 64 KB buffer: ``readline`` through the default 8 KB one took 0.13-0.20 user
    CPU-s on a paper-scale study's 476 MB of retrieval annotations, 0.02-0.04 through this.
    """
    with path.open("rb", buffering=_READ_BUFFER) as fh:
        offset = 0
        for lineno, raw in byte_lines(fh, path):
            start, body = offset, raw
            offset += len(raw)
            if lineno == 1 and raw.startswith(_BOM):
                start, body = start + len(_BOM), raw[len(_BOM) :]
            if b"\r" in body and b"\r" in body.rstrip(b"\r\n"):
                raise ExactReaderNeededError  # the text reader ends a line there too
            yield lineno, start, body


def _exact(body: bytes, path: Path, lineno: int) -> Annotation | None:
    """The exact reader's steps for one line (its errors; None: a blank line to it)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ExactReaderNeededError from None  # the text reader's error names the byte
    if not text.strip():  # blank to str.strip, which takes more than ASCII spaces
        return None
    return validate_record(Annotation, jsonl_object(text, path, lineno), path, lineno)


def _annotations(path: Path) -> Generator[tuple[int, bytes, AnnotationRead]]:
    """``(byte offset, line, annotation)`` of each line (ExactReaderNeededError: see _lines)."""
    for lineno, start, body in _lines(path):
        if not body.strip():
            continue
        ann: AnnotationRead | None = vouched(body)
        if ann is None:
            ann = _exact(body, path, lineno)
        if ann is not None:
            yield start, body, ann


def iter_annotations(path: str | Path) -> Iterator[AnnotationRead]:
    """The annotations of a JSONL file one at a time, as strictly as ``read_models_jsonl``.

    A vouched line is its :class:`~failcodes.annotationlines.AnnotationLine`, any other its
    model: the same fields and values (``created_at`` as text in the struct).
    """
    src = check_regular_file(path)
    given = 0
    try:
        for _, _, ann in _annotations(src):
            yield ann
            given += 1
    except ExactReaderNeededError:
        yield from read_models_jsonl(src, Annotation)[given:]


#: A line as the judge writes it begins with its unit id (the pre-pass reads only this).
_HEAD = re.compile(rb'\{"unit_id":"([0-9a-f]{16})"')
_KEPT, _LEFT_OUT = 1, 2
#: Bytes the pre-pass reads at a time.
_BLOCK = 1 << 22


def _key(unit_id: str | bytes) -> int:
    """A content id (16 lower-case hex digits, checked by the caller) as a signed 64-bit key."""
    value = int(unit_id, 16)
    return value - (1 << 64) if value >> 63 else value


def _repeats(keys: array[int]) -> frozenset[str]:
    """The unit ids found on more than one line (``keys`` is sorted in place)."""
    if not keys:
        return frozenset()
    ordered = np.frombuffer(keys, dtype=np.int64)
    ordered.sort()
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    return frozenset(f"{key:016x}" for key in repeated.view(np.uint64).tolist())


def _line_keys(path: Path, offsets: array[int] | None = None) -> tuple[array[int], int]:
    """Each line's unit id key (and byte offset, into ``offsets``), from its head only.

    And the CRC-32 of the lines' unit ids in file order (what :class:`AnnotationIndex` checks
    the lines it reads against). ExactReaderNeededError unless every non-blank line begins as
    the judge writes it (``{"unit_id":"<16 hex digits>"``; a line that decodes at all then
    has that unit id) and the text reader splits the file where :func:`_lines` does. The
    file is read a block at a time and only its line breaks are looked for (no object per
    line).
    """
    keys = array("q")
    crc = 0
    match = _HEAD.match
    # one buffer read into again and again: a fresh 4 MB block each time was 1,024 page
    # faults (87k, 0.2 s of system time, on a paper-scale study's 476 MB of annotations)
    buf = bytearray(_BLOCK)
    with path.open("rb", buffering=0) as fh:
        size, at = fh.readinto(buf), 0  # size: the bytes of buf read; at: the file offset of buf[0]
        pos = len(_BOM) if buf[:size].startswith(_BOM) else 0
        while True:
            end = buf.find(b"\n", pos, size) + 1
            if not end:  # the rest of the line is in the next block (or the file ends)
                rest = size - pos
                if rest == len(buf):  # a line longer than the buffer
                    buf.extend(bytes(len(buf)))
                buf[:rest] = buf[pos:size]
                at, pos, size = at + pos, 0, rest
                more = fh.readinto(memoryview(buf)[size:])
                if more:
                    size += more
                    continue
                end = size
                if pos >= end:
                    break
            if buf.find(b"\r", pos, end) >= 0 and b"\r" in buf[pos:end].rstrip(b"\r\n"):
                raise ExactReaderNeededError  # the text reader ends a line there too
            found = match(buf, pos, end)
            if found is not None:
                head = found.group(1)
                keys.append(_key(head))
                crc = zlib.crc32(head, crc)
                if offsets is not None:
                    offsets.append(at + pos)
            elif buf[pos:end].strip():
                raise ExactReaderNeededError
            pos = end
    return keys, crc


class AnnotationIndex:
    """The kept annotations of a JSONL file by unit id (see the module docstring).

    :meth:`open` reads each line's unit id from its head (no decoding), keeping only how many
    lines there are, the ids on more than one line and a CRC of them all; then it reads the
    lines themselves in file order as :meth:`get` asks for them: units asked for in the
    file's order (a judge run's annotations, in the order of the units it judged) are each
    decoded and checked once, as read, and nothing is held per line but a status byte. A unit
    asked for out of the file's order makes it read every line's id and offset again (8 + 8
    bytes a line, kept from then on): its line, if passed, is read again by its offset.
    Every line is checked and offered to ``keep`` once, in file order, by :meth:`finish`
    at the latest. :meth:`read` does it all at once.
    """

    def __init__(
        self,
        path: Path,
        keep: Callable[[AnnotationRead], bool] | None,
        lines: int,
        repeated: frozenset[str],
        crc: int,
    ) -> None:
        self.path = path
        self._keep = keep
        self._count = lines
        self._repeated = repeated
        self._crc = crc  # of the lines' unit ids, as the pre-pass read them
        self._read_crc = 0  # of those read since
        self._status = bytearray(lines)  # 0: not read yet, _KEPT or _LEFT_OUT
        # each line's unit id key and offset, in file order (once a unit is out of order)
        self._keys: array[int] | None = None
        self._offsets: array[int] | None = None
        self._held: dict[str, Annotation] | None = None  # a file that is not indexed
        self._held_lines = 0
        self._reader: Generator[tuple[int, int, bytes]] | None = None
        self._peeked: tuple[int, int, bytes, bytes | None] | None = None
        self._next = 0  # the line the reader gives next
        self._sorted: Any = None  # (keys ascending, their lines), once a unit is out of order
        self._fh: BinaryIO | None = None
        # units with a kept line, counted as lines are read (:meth:`__len__` without
        # reading every line's id again: a second pass over the file)
        self._kept_once = 0  # kept lines of ids on one line
        self._kept_repeated: set[str] = set()  # ids on several lines with a kept one

    @property
    def lines(self) -> int:
        """Annotations in the file (kept or not)."""
        return self._held_lines if self._held is not None else self._count

    @classmethod
    def open(
        cls, path: str | Path, keep: Callable[[AnnotationRead], bool] | None = None
    ) -> AnnotationIndex:
        """The index of ``path``, its lines checked as :meth:`get` and :meth:`finish` read them.

        ``keep`` sees every annotation once, in file order (a vouched line as its
        :class:`~failcodes.annotationlines.AnnotationLine`, any other as its model). A file
        whose lines do not all begin with a content unit id is read at once (:meth:`read`).
        """
        src = check_regular_file(path)
        try:
            keys, crc = _line_keys(src)
        except ExactReaderNeededError:
            return cls.read(src, keep)
        return cls(src, keep, len(keys), _repeats(keys), crc)

    @classmethod
    def read(
        cls, path: str | Path, keep: Callable[[AnnotationRead], bool] | None = None
    ) -> AnnotationIndex:
        """Read and check every line of ``path``; index the annotations ``keep`` accepts."""
        src = check_regular_file(path)
        index = cls(src, keep, 0, frozenset(), 0)
        keys, offsets, status = array("q"), array("q"), index._status
        try:
            for start, _, ann in _annotations(src):
                if _UNIT_ID.fullmatch(ann.unit_id) is None:
                    raise ExactReaderNeededError  # not a content id
                keys.append(_key(ann.unit_id))
                offsets.append(start)
                status.append(_KEPT if keep is None or keep(ann) else _LEFT_OUT)
        except ExactReaderNeededError:
            held: dict[str, Annotation] = {}
            annotations = read_models_jsonl(src, Annotation)
            for i, ann in enumerate(annotations):  # keep's answers so far: not asked again
                if status[i] == _KEPT if i < len(status) else keep is None or keep(ann):
                    held[ann.unit_id] = ann
            index._held, index._held_lines = held, len(annotations)
            return index
        index._keys, index._offsets = keys, offsets
        index._count = index._next = len(keys)
        index._repeated = _repeats(array("q", keys))
        return index

    def __len__(self) -> int:
        """Units with a kept annotation (every line read: see :meth:`finish`)."""
        if self._held is not None:
            return len(self._held)
        self.finish()
        if self._keys is None:  # every line read once, in order: counted as read
            return self._kept_once + len(self._kept_repeated)
        keys = self._keys
        status = np.frombuffer(self._status, dtype=np.uint8)
        return len(np.unique(np.frombuffer(keys, dtype=np.int64)[status == _KEPT]))

    def get(self, unit_id: str) -> AnnotationRead | None:
        """The kept annotation of ``unit_id`` (the last in the file), if any.

        As its :class:`~failcodes.annotationlines.AnnotationLine` where msgspec decodes it at
        all (every field given, none in a form pydantic converts: the model's values, its
        ``created_at`` as text), else as the model. Lines up to the unit's last are read
        (checked) first: a bad one raises the reader's one-line error.
        """
        if self._held is not None:
            return self._held.get(unit_id)
        at = self._next
        if at < self._count and unit_id not in self._repeated:
            if self._keys is None:  # a head is a content id: unit_id is one if they are equal
                following = self._peek()[3] == unit_id.encode()
            else:
                following = _UNIT_ID.fullmatch(unit_id) is not None and (
                    self._keys[at] == _key(unit_id)
                )
            if following:  # the next line, as a judge run's export has it
                ann = self._read_next(unit_id)
                return ann if self._status[at] == _KEPT else None
        if _UNIT_ID.fullmatch(unit_id) is None:
            return None
        key = _key(unit_id)
        if self._sorted is None:
            keys = np.frombuffer(self._located(), dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            self._sorted = (keys[order], order)
        sorted_keys, order = self._sorted
        lo = int(np.searchsorted(sorted_keys, key))
        hi = int(np.searchsorted(sorted_keys, key, side="right"))
        last = None
        while hi > lo and self._next <= int(order[hi - 1]):
            last = self._read_next()
        for line in reversed(order[lo:hi].tolist()):
            if self._status[line] == _KEPT:
                return last if line == self._next - 1 and last is not None else self._reread(line)
        return None

    def _changed(self) -> InputError:
        return InputError("the file changed while it was read", path=self.path)

    def _located(self) -> array[int]:
        """Each line's unit id key, in file order (its offsets too): read again once."""
        if self._keys is None:
            offsets: array[int] = array("q")
            try:
                keys, crc = _line_keys(self.path, offsets)
            except ExactReaderNeededError:
                raise self._changed() from None
            if len(keys) != self._count or crc != self._crc:
                raise self._changed()
            self._keys, self._offsets = keys, offsets
        return self._keys

    def _peek(self) -> tuple[int, int, bytes, bytes | None]:
        """The next non-blank line: its number, offset, bytes and unit id as its head has it."""
        if self._peeked is None:
            if self._reader is None:
                self._reader = _lines(self.path)
            try:
                for lineno, start, body in self._reader:
                    if body.strip():
                        head = _HEAD.match(body)
                        self._peeked = (lineno, start, body, head and head.group(1))
                        break
                else:
                    raise self._changed()
            except ExactReaderNeededError:  # a line the text reader takes otherwise: its error
                read_models_jsonl(self.path, Annotation)
                raise self._changed() from None
        return self._peeked

    def _read_next(self, unit_id: str | None = None) -> AnnotationRead:
        """Read, check and offer the next line (the reader's errors, or the text reader's).

        ``unit_id``: the line's, as its head has it (else it is worked out again).
        """
        at = self._next
        if at >= self._count:
            raise self._changed()
        try:
            lineno, start, body, head = self._peek()
            ann: AnnotationRead | None = vouched(body)
            if ann is None:
                ann = _exact(body, self.path, lineno)
        except ExactReaderNeededError:  # a line the text reader takes otherwise: its error
            read_models_jsonl(self.path, Annotation)
            raise self._changed() from None
        self._peeked = None
        if head is None or ann is None or ann.unit_id != (unit_id or head.decode()):
            raise self._changed()
        if self._offsets is not None and start != self._offsets[at]:
            raise self._changed()
        self._read_crc = zlib.crc32(head, self._read_crc)
        self._next += 1
        if self._next == self._count and self._read_crc != self._crc:
            raise self._changed()
        if self._keep is None or self._keep(ann):
            self._status[at] = _KEPT
            if ann.unit_id in self._repeated:
                self._kept_repeated.add(ann.unit_id)
            else:
                self._kept_once += 1
        else:
            self._status[at] = _LEFT_OUT
        return ann

    def _reread(self, line: int) -> AnnotationRead:
        """A line checked before, read again by its offset."""
        if self._fh is None:
            self._fh = self.path.open("rb")
        offsets = self._offsets
        if offsets is None:  # a line is read again only once it was located by its offset
            raise self._changed()
        self._fh.seek(offsets[line])
        text = self._fh.readline()
        try:
            return decode_line(text)
        except msgspec.DecodeError:
            return Annotation.model_validate_json(text)

    def finish(self) -> None:
        """Read, check and offer every line not read yet."""
        if self._held is None:
            while self._next < self._count:
                self._read_next()

    def close(self) -> None:
        """Close the file :meth:`get` reads."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._peeked = None

    def __enter__(self) -> AnnotationIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
