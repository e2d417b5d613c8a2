"""A judge's annotations JSONL file, streamed and read by unit id without holding it.

``read_models_jsonl(path, Annotation)`` holds every annotation: a paper-scale study's 210k
judge annotations took gigabytes as models, and its strict reading (the standard library's
parser with a duplicate-key hook, then the model) cost ~4x the parse itself.

:func:`iter_annotations` gives the same annotations one at a time, each checked as strictly:
a line :func:`~failcodes.annotationlines.vouched` accepts (decoded by msgspec and checked as
the model would be) as its struct, with the model's values; any other line goes through the
exact reader's own steps (strict JSON, then the model), so a bad line is that reader's
one-line error naming file, line and field.

:class:`AnnotationIndex` keeps, of each annotation it is asked to keep, the 8 bytes of its
unit id and its line's byte offset (16 bytes); :meth:`AnnotationIndex.get` reads that line
again. A unit id is the first 64 bits of a content hash in hex (``units.unit_id``), so its 8
bytes are the id itself; a file with any other unit id (review exports, hand-written files)
is held whole instead, as are files the byte reader cannot split into the text reader's lines
(a carriage return inside a line, text that is not UTF-8: the text reader then names the
problem). Like a dict built in file order, a unit annotated twice gets its last annotation.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import numpy as np

from failcodes.annotationlines import AnnotationRead, decode_line, vouched
from failcodes.annotations import Annotation
from failcodes.columnar import ExactReaderNeededError
from failcodes.errors import InputError
from failcodes.fileio import check_regular_file
from failcodes.jsonio import parse_json
from failcodes.tableio import read_models_jsonl, validate_record

_UNIT_ID = re.compile(r"[0-9a-f]{16}")
_BOM = b"\xef\xbb\xbf"


def _lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, bytes)`` of each line the text reader would give."""
    with path.open("rb") as fh:
        offset = 0
        for lineno, raw in enumerate(fh, start=1):
            start, body = offset, raw
            offset += len(raw)
            if lineno == 1 and raw.startswith(_BOM):
                start, body = start + len(_BOM), raw[len(_BOM) :]
            if b"\r" in body.rstrip(b"\r\n"):
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
    obj = parse_json(text.rstrip("\r\n"), path=path, line=lineno)
    if not isinstance(obj, dict):
        raise InputError(
            f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno
        )
    return validate_record(Annotation, obj, path, lineno)


def _annotations(path: Path) -> Iterator[tuple[int, bytes, AnnotationRead]]:
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


class AnnotationIndex:
    """The kept annotations of a JSONL file by unit id (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        keys: np.ndarray[Any, np.dtype[np.int64]],
        offsets: np.ndarray[Any, np.dtype[np.int64]],
        held: dict[str, Annotation] | None,
        lines: int,
    ) -> None:
        self.path = path
        self._keys = keys
        self._offsets = offsets
        self._held = held
        #: Annotations read (kept or not).
        self.lines = lines
        self._fh: BinaryIO | None = None

    @classmethod
    def read(
        cls, path: str | Path, keep: Callable[[AnnotationRead], bool] | None = None
    ) -> AnnotationIndex:
        """Read and check every line of ``path``; index the annotations ``keep`` accepts.

        ``keep`` sees every annotation once, in file order (a vouched line as its
        :class:`~failcodes.annotationlines.AnnotationLine`, any other as its model).
        """
        src = check_regular_file(path)
        kept = bytearray()  # keep's answers so far: a file held whole does not ask again
        try:
            return cls._indexed(src, keep, kept)
        except ExactReaderNeededError:
            held: dict[str, Annotation] = {}
            annotations = read_models_jsonl(src, Annotation)
            for i, ann in enumerate(annotations):
                if kept[i] if i < len(kept) else keep is None or keep(ann):
                    held[ann.unit_id] = ann
            return cls(src, np.zeros(0, np.int64), np.zeros(0, np.int64), held, len(annotations))

    @classmethod
    def _indexed(
        cls, src: Path, keep: Callable[[AnnotationRead], bool] | None, kept: bytearray
    ) -> AnnotationIndex:
        keys, offsets = array("q"), array("q")
        for start, _, ann in _annotations(src):
            if _UNIT_ID.fullmatch(ann.unit_id) is None:
                raise ExactReaderNeededError  # not a content id
            kept.append(keep is None or keep(ann))
            if kept[-1]:
                keys.append(int.from_bytes(bytes.fromhex(ann.unit_id), "big", signed=True))
                offsets.append(start)
        key_arr = np.frombuffer(keys, dtype=np.int64) if keys else np.zeros(0, np.int64)
        off_arr = np.frombuffer(offsets, dtype=np.int64) if offsets else np.zeros(0, np.int64)
        order = np.argsort(key_arr, kind="stable")
        key_arr, off_arr = key_arr[order], off_arr[order]
        last = np.ones(len(key_arr), dtype=bool)  # the last annotation of each unit wins
        last[:-1] = key_arr[1:] != key_arr[:-1]
        return cls(src, key_arr[last], off_arr[last], None, len(kept))

    def __len__(self) -> int:
        return len(self._held) if self._held is not None else len(self._keys)

    def get(self, unit_id: str) -> AnnotationRead | None:
        """The kept annotation of ``unit_id`` (the last in the file), if any.

        Its line was checked when indexed and is read again: as its
        :class:`~failcodes.annotationlines.AnnotationLine` where msgspec decodes it at all
        (every field given, none in a form pydantic converts: the model's values, its
        ``created_at`` as text), else as the model.
        """
        if self._held is not None:
            return self._held.get(unit_id)
        line = self._line(unit_id)
        if line is None:
            return None
        try:
            return decode_line(line)
        except msgspec.DecodeError:
            return Annotation.model_validate_json(line)

    def _line(self, unit_id: str) -> bytes | None:
        """The kept line of ``unit_id`` (checked when indexed), None if there is none."""
        if _UNIT_ID.fullmatch(unit_id) is None:
            return None
        key = int.from_bytes(bytes.fromhex(unit_id), "big", signed=True)
        at = int(np.searchsorted(self._keys, key))
        if at >= len(self._keys) or int(self._keys[at]) != key:
            return None
        if self._fh is None:
            self._fh = self.path.open("rb")
        self._fh.seek(int(self._offsets[at]))
        return self._fh.readline()

    def close(self) -> None:
        """Close the file :meth:`get` reads."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> AnnotationIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


__all__ = ["AnnotationIndex", "iter_annotations"]
