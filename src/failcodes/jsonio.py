"""Strict JSON and JSONL reading: THE JSON parser of every failcodes file reader.

:func:`parse_json` refuses what :func:`json.loads` lets through (duplicate keys, ``NaN``,
numbers that overflow, deep nesting, lone surrogates); :func:`iter_jsonl`, :func:`read_json`,
:func:`read_json_list` (a list with each element's line, in one parse) and
:func:`peek_jsonl` read files through it; :func:`json_field_line` finds the line of a
field path in a whole document, for errors; :func:`keys_vouched` tells a fast reader whether it
silently dropped a duplicate key. Every problem is an
:class:`~failcodes.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from failcodes.errors import InputError
from failcodes.fileio import check_regular_file, utf16_hint


def open_text(path: Path, newline: str = "") -> IO[str]:
    r"""Open a text file for reading (UTF-8, a BOM tolerated); absent/folder/unreadable: one line.

    Lines end at any of ``\r``, ``\n``, ``\r\n`` (kept); ``newline="\n"``: at ``\n`` only.
    """
    check_regular_file(path)
    try:
        return path.open(encoding="utf-8-sig", newline=newline)  # tolerate a BOM (Excel exports)
    except OSError as exc:
        raise InputError(
            f"cannot read file: {(exc.strerror or str(exc)).lower()}", path=path
        ) from None


def decode_error(path: Path, exc: UnicodeDecodeError, delimiter: str | None = None) -> InputError:
    """The one-line error for text that is not UTF-8: its line, field and byte offset.

    A text stream decodes its file a chunk at a time, and its error's offset is the
    chunk's: a bad byte at 44,910 was reported "at byte 3950". The file is read again as
    bytes (only on this error) for the offset of its first byte that is not UTF-8, its line
    (as the text readers count them) and the field it is in: a JSONL line's field path, or
    the CSV column (``delimiter``: the file is CSV) -- the error named the byte alone.
    """
    at = _first_bad_byte(path)
    hint = utf16_hint(path)
    line = field = None
    if at is not None and not hint:  # (UTF-16 text, binary data: no lines to name)
        line = _line_of_byte(path, at)
        field = _bad_text_field(path, line, delimiter)
        bad = exc.object[exc.start : exc.start + 1].decode("cp1252", errors="ignore")
        if bad.isprintable() and not bad.isascii():  # Excel's "CSV (Comma delimited)"
            saved = "'CSV UTF-8'" if path.suffix.lower() in (".csv", ".tsv") else "UTF-8"
            hint = f"; {bad!r} in Windows-1252 (Latin-1)? save the file as {saved}"
    return InputError(
        f"not UTF-8 text ({exc.reason} at byte {exc.start if at is None else at}){hint}",
        path=path,
        line=line,
        field=field,
    )


def _line_of_byte(path: Path, at: int) -> int:
    r"""The line of byte ``at`` of ``path``, universal newlines (``\r``, ``\n``, ``\r\n``)."""
    line, done, last = 1, 0, b""
    with path.open("rb") as f:
        while done < at and (chunk := f.read(min(1 << 20, at - done))):
            line += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
            line -= last == b"\r" and chunk[:1] == b"\n"  # a \r\n across two chunks
            done, last = done + len(chunk), chunk[-1:]
    return line


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # an undecodable byte, decoded as surrogateescape


def _bad_text_field(path: Path, line: int, delimiter: str | None) -> str | None:
    """The field of ``path`` holding its first byte that is not UTF-8 (None: not known)."""
    try:
        with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            if delimiter is not None:
                header: list[str] = []
                for row in csv.reader(fh, delimiter=delimiter):
                    column = next((i for i, c in enumerate(row) if _NOT_UTF8.search(c)), None)
                    if column is not None:  # (in the header itself: no field)
                        return header[column] if column < len(header) else None
                    header = header or row
                return None
            if path.suffix.lower() not in (".jsonl", ".ndjson"):
                return None
            for number, text in enumerate(fh, start=1):
                if number == line:
                    return _json_field_of(json.loads(text), _NOT_UTF8)
    except (OSError, ValueError, csv.Error, StopIteration):
        pass
    return None


def _json_field_of(value: Any, pattern: re.Pattern[str]) -> str | None:
    """The path (``passages[1].text``) of the first string in ``value`` ``pattern`` finds."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if pattern.search(item):
                return where or None
        elif isinstance(item, dict):
            if any(pattern.search(k) for k in item):
                return where or None  # a key: the object holding it
            stack.extend((v, f"{where}.{k}" if where else k) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(item))))
    return None


def _first_bad_byte(path: Path) -> int | None:
    """The offset of the first byte of ``path`` that is not UTF-8 (None: none, or unreadable)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    done = 0  # bytes given to the decoder so far
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                pending = len(decoder.getstate()[0])  # an incomplete character held back
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    return done - pending + exc.start
                done += len(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:  # the file ends inside a character
        return done - len(exc.object) + exc.start
    except OSError:
        return None
    return None


#: Deepest nesting of arrays/objects a JSON input may have (traces need 4; the standard
#: library's parser would otherwise hit RecursionError on ~1000 levels of ``[``).
MAX_JSON_DEPTH = 64

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether the parsed ``value`` nests arrays/objects deeper than ``limit`` (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _StrictJSONError(f"key {key!r} appears twice in one object", field=key)
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise _StrictJSONError(f"{name} is not a number JSON allows; write null for a missing value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _StrictJSONError(f"number {text[:40]} overflows to infinity")
    return value


class _StrictJSONError(ValueError):
    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _find_lone_surrogate(value: Any, where: str = "") -> str | None:
    """Return the field path of the first string holding a lone surrogate, or None."""
    if isinstance(value, str):
        return (where or "(value)") if _LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if _LONE_SURROGATE.search(key):
                return name
            found = _find_lone_surrogate(item, name)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_lone_surrogate(item, f"{where}[{index}]")
            if found:
                return found
    return None


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant, parse_float=_finite_float
)


def _document_hint(text: str, exc: json.JSONDecodeError) -> str:
    """What a malformed JSON document most likely is, for the error message ("" if unsure)."""
    if exc.msg == "Extra data":
        return "; more than one JSON value: a JSONL file? expected one JSON document"
    if text[: exc.pos].rstrip().endswith(",") and text[exc.pos : exc.pos + 1] in ("]", "}"):
        return "; a trailing comma before ] or }? JSON allows none"
    return ""


def _jsonl_hint(text: str, exc: json.JSONDecodeError) -> str:
    """What a malformed JSONL line most likely is, for the error message ("" if unsure)."""
    stripped = text.strip()
    if stripped.startswith("\ufeff"):
        return "; the line starts with a byte-order mark (U+FEFF): files joined with cat?"
    if exc.msg == "Extra data":
        if text[exc.pos :].strip() == ",":
            return "; a comma after the object? JSONL is one object per line, no commas"
        return "; more than one JSON value on the line? JSONL is one object per line"
    if stripped in ("{", "["):
        return "; a JSON document spread over lines? JSONL is one whole object per line"
    if stripped.startswith(("#", "//")):
        return "; JSON has no comments"
    if exc.pos == 0 and "," in stripped:  # (no JSON value at its start, commas in it)
        return "; a CSV line? JSONL is one JSON object per line (a CSV file: name it .csv)"
    return ""


def parse_json(text: str, *, path: str | Path | None = None, line: int | None = None) -> Any:
    """Parse one JSON document or JSONL line strictly; THE JSON parser of every file reader.

    On top of :func:`json.loads` it refuses duplicate keys in an object (JSON leaves them
    undefined; the standard library keeps the last), ``NaN``/``Infinity`` and numbers that
    overflow to infinity, integers over Python's 4300-digit limit, nesting deeper than
    :data:`MAX_JSON_DEPTH` and escaped lone surrogates (not valid Unicode).
    Every problem raises :class:`InputError` with ``path`` and ``line`` (for a whole document,
    the line of a syntax error inside it).
    """
    too_deep = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        at = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at"
        col = f"{at} column {exc.colno}"
        hint = _jsonl_hint(text, exc) if line is not None else _document_hint(text, exc)
        raise InputError(f"malformed JSON ({exc.msg}{col}){hint}", path=path, line=where) from None
    except _StrictJSONError as exc:
        raise InputError(str(exc), path=path, line=line, field=exc.field) from None
    except RecursionError:  # the C scanner stops at the interpreter's recursion limit
        raise InputError(too_deep, path=path, line=line) from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        raise InputError(f"malformed JSON ({exc})", path=path, line=line) from None
    _check_value(value, text, path=path, line=line)
    return value


def _check_value(value: Any, text: str, *, path: str | Path | None, line: int | None) -> None:
    """What :func:`parse_json` refuses in a value the decoder gave (``text``: its JSON)."""
    too_deep = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    nested = isinstance(value, dict | list) and text.count("[") + text.count("{") > MAX_JSON_DEPTH
    if nested and _depth_exceeds(value, MAX_JSON_DEPTH):  # checked on the value: a regex
        raise InputError(too_deep, path=path, line=line)  # over the text took 4 s a 190 MB file
    if _SURROGATE_ESCAPE.search(text):
        field = _find_lone_surrogate(value)
        if field is not None:
            raise InputError(
                "string holds a lone surrogate escape (\\ud800-\\udfff without its pair); "
                "expected valid Unicode",
                path=path,
                line=line,
                field=None if field == "(value)" else field,
            )


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, object)`` for each non-blank line of a JSONL file (for adapters).

    Raises :class:`InputError` with the line for malformed JSON or a non-object line (every
    line goes through :func:`parse_json`).
    """
    src = Path(path)  # (one Path, not one a line: ~40% of reading a labels file)
    for lineno, raw in jsonl_lines(src):
        yield lineno, jsonl_object(raw, src, lineno)


def read_json(path: str | Path) -> Any:
    """Read a whole JSON document (not JSONL) through :func:`parse_json`.

    Raises :class:`InputError` for a missing or unreadable file, text that is not UTF-8 and
    malformed JSON (with the line of the problem).
    """
    src = Path(path)
    return parse_json(_document_text(src), path=src)


def read_json_list(path: str | Path) -> tuple[Any, list[int] | None]:
    """:func:`read_json`, and for a document that is a list the line each element starts on.

    One parse: a top-level list is decoded element by element (each through the strict
    decoder, with the same checks), so each element's start comes with it at no extra cost
    (a second pass over a 200 MB document took about as long as the parse). Anything that is
    not a clean list (an object, a syntax error) is parsed whole by :func:`parse_json`: the
    same value, or the same error. ``None`` lines: the document is not a list.
    """
    src = Path(path)
    text = _document_text(src)
    found = _list_elements(text)
    if found is None:
        value = parse_json(text, path=src)
        assert not isinstance(value, list), "every list parse_json reads, element by element"
        return value, None
    items, lines = found
    _check_value(items, text, path=src, line=None)
    return items, lines


_JSON_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace (\s would take more)


def _skip_space(text: str, pos: int) -> int:
    match = _JSON_SPACE.match(text, pos)
    return match.end() if match else pos


def _list_elements(text: str) -> tuple[list[Any], list[int]] | None:
    """A top-level JSON list decoded element by element, with the line each starts on.

    ``None`` when ``text`` is not a list, or not one the decoder reads cleanly (the caller
    then parses it whole, for the value or the exact error). Keys are shared across the
    elements, as one parse of the whole document shares them.
    """
    keys: dict[str, str] = {}

    def shared_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return _no_duplicate_keys([(keys.setdefault(k, k), v) for k, v in pairs])

    decode = json.JSONDecoder(
        object_pairs_hook=shared_keys, parse_constant=_no_constant, parse_float=_finite_float
    ).raw_decode
    pos = _skip_space(text, 0)
    if not text.startswith("[", pos):
        return None
    pos = _skip_space(text, pos + 1)
    items: list[Any] = []
    lines: list[int] = []
    line, last = 1, 0
    if not text.startswith("]", pos):  # not an empty list
        while True:
            line += text.count("\n", last, pos)
            last = pos
            try:
                item, pos = decode(text, pos)
            except (ValueError, RecursionError):
                return None
            items.append(item)
            lines.append(line)
            pos = _skip_space(text, pos)
            if not text.startswith(",", pos):
                break
            pos = _skip_space(text, pos + 1)
        if not text.startswith("]", pos):
            return None
    return (items, lines) if _skip_space(text, pos + 1) == len(text) else None


#: The largest JSON document read (it is read whole: 170 MB of 1,000,000 records took
#: ``ingest`` 776 MB, 4.5x; a 4 GB one would take 18 GB). JSONL is read line by line.
MAX_DOCUMENT = 1 << 30


def _document_text(path: Path) -> str:
    """:func:`read_text` of a JSON document no larger than :data:`MAX_DOCUMENT` bytes."""
    size = check_regular_file(path).stat().st_size
    if size > MAX_DOCUMENT:
        raise InputError(
            f"a JSON document of {size:,} bytes, over the {MAX_DOCUMENT:,}-byte limit of a "
            "document read whole (in memory it takes about 4.5 times its size): write it as "
            "JSONL, one record a line (jq -c '.[]' FILE), which is read line by line",
            path=path,
        )
    return read_text(path)


#: The largest element :func:`iter_json_list` reads (a Label Studio task with its passages
#: and annotations: kilobytes; the longest JSONL line any reader takes, :data:`MAX_LINE`).
MAX_ELEMENT = 64 << 20


def _cut_short(buf: str, exc: json.JSONDecodeError) -> bool:
    """Whether a decode error of ``buf`` may be its text ending inside a value (read more)."""
    # at the end (a value, a delimiter, a property name or ':' expected), in a \uXXXX escape
    # cut short, or a string not closed (the decoder names the string's start)
    return exc.pos >= len(buf) - 6 or exc.msg.startswith("Unterminated string")


def _long_element(path: Path, line: int) -> InputError:
    return InputError(
        f"an element of the list over {MAX_ELEMENT:,} characters (no Label Studio task is "
        "that long: a JSON syntax error?)",
        path=path,
        line=line,
    )


def iter_json_list(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, element)`` of a JSON document that is one list, an element at a time.

    The way through :data:`MAX_DOCUMENT` for a list whose elements are read one by one (a
    Label Studio export): memory holds one element and a read of 1 M characters, not the
    document (about 4.5 times its size). Each element is read as :func:`parse_json` reads a
    document (duplicate keys, ``NaN``, depth past :data:`MAX_JSON_DEPTH`, lone surrogates:
    one line naming the file and the element's line); an element past :data:`MAX_ELEMENT`
    bytes, a document that is not a list, or text after its ``]``, likewise. A file written
    while read is refused at its end (:func:`check_unchanged`).
    """
    src = Path(path)
    decode = _DECODER.raw_decode
    with open_text(src) as fh:
        opened = file_state(fh)
        buf, eof = "", False
        line, mark = 1, 0  # the line buf[mark] is on

        def more(pos: int) -> int:
            """Read on (about as much again as buf holds from ``pos``); ``pos`` in the new buf."""
            nonlocal buf, eof, line, mark
            line += buf.count("\n", mark, pos)
            try:
                read = "" if eof else fh.read(max(_PIECE, len(buf) - pos))
            except UnicodeDecodeError as exc:
                raise decode_error(src, exc) from None
            buf, mark, eof = buf[pos:] + read, 0, not read
            return 0

        def at(pos: int) -> tuple[int, str]:
            """The first character from ``pos`` that is not JSON space ("" at the end)."""
            pos = _skip_space(buf, pos)
            while pos == len(buf) and not eof:
                pos = more(pos)  # (then buf: more rebinds it)
                pos = _skip_space(buf, pos)
            return pos, buf[pos : pos + 1]

        def where(pos: int) -> int:
            nonlocal line, mark
            line += buf.count("\n", mark, pos)
            mark = pos
            return line

        pos, char = at(0)
        if char != "[":
            raise InputError("expected a JSON list ([...]) read element by element", path=src)
        pos, char = at(pos + 1)
        if char != "]":  # (the empty list: straight to what follows its ])
            while True:
                try:
                    item, end = decode(buf, pos)
                    # a number or literal ends where the text read does: cut short? (-0. of
                    # -0.5 reads as -0); an object, array or string ends in its own ] } "
                    follows = buf[_skip_space(buf, end) : _skip_space(buf, end) + 1]
                    if not (isinstance(item, dict | list | str) or eof or follows in (",", "]")):
                        raise json.JSONDecodeError("read on", buf, len(buf))
                except json.JSONDecodeError as exc:
                    if not eof and _cut_short(buf, exc):
                        if len(buf) - pos > MAX_ELEMENT:
                            raise _long_element(src, where(pos)) from None
                        pos = more(pos)
                        continue
                    raise InputError(
                        f"malformed JSON ({exc.msg})",
                        path=src,
                        line=where(pos) + buf.count("\n", pos, exc.pos),
                    ) from None
                except _StrictJSONError as exc:
                    raise InputError(str(exc), path=src, line=where(pos), field=exc.field) from None
                except RecursionError:
                    raise InputError(
                        f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
                        path=src,
                        line=where(pos),
                    ) from None
                except ValueError as exc:  # e.g. an integer with more than 4300 digits
                    raise InputError(f"malformed JSON ({exc})", path=src, line=where(pos)) from None
                first = where(pos)
                if end - pos > MAX_ELEMENT:
                    raise _long_element(src, first)
                _check_value(item, buf[pos:end], path=src, line=first)
                yield first, item
                pos, char = at(end)
                if char != ",":
                    break
                pos, _ = at(pos + 1)
        if char != "]":
            raise InputError(
                f"malformed JSON (expected ',' or ']' after an element of the list, found "
                f"{char or 'the end of the file'!r})",
                path=src,
                line=where(pos),
            )
        pos, char = at(pos + 1)
        if char:
            raise InputError(
                "malformed JSON (text after the list's closing ]); more than one JSON value?",
                path=src,
                line=where(pos),
            )
        check_unchanged(fh, src, opened)


def read_text(path: str | Path) -> str:
    """A whole text file (UTF-8, a BOM tolerated); absent, a folder, not UTF-8: one line."""
    src = check_regular_file(path)
    try:
        return src.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise decode_error(src, exc) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path=src) from None


def peek_jsonl(path: str | Path) -> dict[str, Any] | None:
    """Return the first non-blank line of a JSONL file as an object, or None.

    None when the file cannot be read, the line is not JSON or not an object, or it is past
    :data:`MAX_LINE` (read so far only: a 400 MB first line took ``attribute --from`` and
    ``judge --dry-run`` 0.9 GB before the reader's one line): for sniffing what a file holds;
    the real reader then reports the problem with its location.
    """
    try:
        with Path(path).open(encoding="utf-8-sig") as fh:  # a BOM, as the readers allow
            while (first := fh.readline(MAX_LINE + 1)) and not first.strip():
                pass
        if len(first) > MAX_LINE:
            return None
        obj = parse_json(first) if first else None
    except (OSError, UnicodeDecodeError, InputError):
        return None
    return obj if isinstance(obj, dict) else None


_FIELD_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def json_field_line(path: str | Path, field: str) -> int | None:
    """Return the 1-based line where ``field`` (e.g. ``results[1].claims[0].raw``) starts.

    For errors in whole-document JSON files (not JSONL): walks the text to the value the field
    path names. Returns None when the path cannot be followed (the error then has no line).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    parts: list[int | str] = [
        int(m.group(1)) if m.group(1) is not None else m.group(2)
        for m in _FIELD_PART.finditer(field)
    ]
    decoder = json.JSONDecoder()
    try:
        pos = _skip_space(text, 0)
        for part in parts:
            if isinstance(part, int):
                if text[pos] != "[":
                    return None
                pos = _skip_space(text, pos + 1)
                for _ in range(part):
                    _, pos = decoder.raw_decode(text, pos)
                    pos = _skip_space(text, pos)
                    if text[pos] != ",":
                        return None
                    pos = _skip_space(text, pos + 1)
            else:
                if text[pos] != "{":
                    return None
                pos = _skip_space(text, pos + 1)
                while True:
                    key, pos = decoder.raw_decode(text, pos)
                    pos = _skip_space(text, pos)
                    if text[pos] != ":":
                        return None
                    pos = _skip_space(text, pos + 1)
                    if key == part:
                        break
                    _, pos = decoder.raw_decode(text, pos)
                    pos = _skip_space(text, pos)
                    if text[pos] != ",":
                        return None
                    pos = _skip_space(text, pos + 1)
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, pos) + 1


def with_json_line(exc: InputError) -> InputError:
    """Return ``exc`` with its line filled in from its JSON field path when it has none."""
    if exc.line is not None or exc.path is None or exc.field is None:
        return exc
    line = json_field_line(exc.path, exc.field)
    if line is None:
        return exc
    return InputError(exc.reason, path=exc.path, line=line, field=exc.field)


#: Characters read at once while a line has no ``\n`` yet (a ``\r`` in them ends the fast read).
_PIECE = 1 << 20
#: The longest JSONL line read, in bytes of UTF-8 with its line end, by every reader (the text
#: readers counted characters: a line of 40 M 'é', 80 MB, was read by ``ingest`` and refused
#: by ``metrics``): a 200 MB line took 1.4 GB to ingest (7x), so 1 GB would take 7; no trace
#: or label record comes near (a whole answer with its passages: kilobytes).
MAX_LINE = 64 << 20
#: Bytes :func:`byte_blocks` reads at once (1 MB lines and their read held at once: more
#: cache misses; 0.26 CPU-s per 112 MB at 64 kB, 0.28 at 1 MB).
_BLOCK = 1 << 16


def file_state(fh: IO[Any]) -> int:
    """The size of an open file (what a writer still at work changes)."""
    return os.fstat(fh.fileno()).st_size


def check_unchanged(fh: IO[Any], path: Path, opened: int) -> None:
    """Refuse a file read to its end whose content may not be what was read.

    Its size now must be its size when opened (``opened``, its :func:`file_state` then) and
    the bytes read to the end: a pipeline still writing its JSONL had 217,801 of its 260,000
    traces read, exit 0; a file cut while read (rewritten by its writer) ends the read early.
    The modification time is not asked (it was, with the size): a file only touched, or
    copied over with the same bytes, while it was read was refused as changed. A rewrite to
    the same size in place, within one read, is not seen (the bytes read are not hashed:
    CRC-32 at 1.9 GB/s would add 0.5 s a GB to every read).
    """
    now = file_state(fh)
    read = os.lseek(fh.fileno(), 0, os.SEEK_CUR)  # what the file gave (buffered reads too)
    if now != opened:
        raise InputError(
            f"the file changed while it was read ({opened:,} bytes when opened, {now:,} "
            "at the end: still being written?): read it once its writer is done",
            path=path,
        )
    if read != now:
        raise InputError(
            f"the file changed while it was read ({now:,} bytes, but its read ended at byte "
            f"{read:,}: rewritten while read?): read it once its writer is done",
            path=path,
        )


def _utf8_size(text: str) -> int:
    """The bytes of ``text`` in UTF-8, as the byte readers count a line."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class _LongLineError(Exception):
    """A JSONL line past :data:`MAX_LINE` bytes (before it is held whole)."""


def _long_line(path: Path, line: int) -> InputError:
    return InputError(
        f"a line of over {MAX_LINE >> 20} MB (no trace or label record is that long: a JSON "
        "document? name it .json)",
        path=path,
        line=line,
    )


def byte_lines(fh: IO[bytes], path: Path) -> Iterator[tuple[int, bytes]]:
    r"""``(line, bytes)`` of each ``\n``-ended line of a file opened ``"rb"`` (blank ones too).

    The fast readers' lines: one past :data:`MAX_LINE` bytes is refused as the text reader
    refuses it, once that much of it is read, in :data:`_PIECE` pieces never joined (a 200 MB
    line took ``metrics`` 506 MB).
    """
    read, lineno, opened = fh.readline, 0, file_state(fh)
    while raw := read(_PIECE):
        lineno += 1
        if raw[-1] != 10:  # b"\n": a long line (or the last one, without a line end)
            parts, size = [raw], len(raw)
            while parts[-1][-1] != 10 and (raw := read(_PIECE)):
                parts.append(raw)
                size += len(raw)
                if size > MAX_LINE:
                    raise _long_line(path, lineno)
            raw = b"".join(parts)
        yield lineno, raw
    check_unchanged(fh, path, opened)


def byte_blocks(fh: IO[bytes], path: Path) -> Iterator[tuple[list[bytes], int]]:
    r"""The lines of :func:`byte_lines`, those ending in one read of the file at a time.

    Each list comes with the number of ``"`` in its lines, counted over the read by numpy
    (the lines' ``bytes.count``: 0.21 CPU-s per 675 MB, this 0.05). A line past
    :data:`MAX_LINE` bytes is refused as :func:`byte_lines` refuses it, after the lines
    before it are given, its pieces never joined. ``fh`` is best unbuffered.
    """
    import numpy as np

    pending: list[bytes] = []  # the pieces of a line not ended yet
    size = quoted = given = 0  # the pieces' bytes and quotes; lines given
    # (a new array each read was mapped and faulted anew by malloc: +0.1 CPU-s at 1 MB reads)
    equal = np.empty(_BLOCK, dtype=bool)
    opened = file_state(fh)
    while chunk := fh.read(_BLOCK):
        found = equal[: len(chunk)]
        np.equal(np.frombuffer(chunk, np.uint8), 34, out=found)  # b'"'
        quotes = int(np.count_nonzero(found))
        lines = io.BytesIO(chunk).readlines()
        if pending:
            size += len(lines[0])
            if size > MAX_LINE:
                raise _long_line(path, given + 1)
            if lines[0][-1] != 10:  # b"\n": the line goes on past this read
                pending.append(chunk)
                quoted += quotes
                continue
            lines[0] = b"".join([*pending, lines[0]])
            quotes += quoted
            pending = []
        if lines[-1][-1] != 10:
            rest = lines.pop()
            pending, size, quoted = [rest], len(rest), rest.count(b'"')
            quotes -= quoted
        if lines:
            given += len(lines)
            yield lines, quotes
    check_unchanged(fh, path, opened)
    if pending:
        yield [b"".join(pending)], quoted


def jsonl_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    r"""Yield ``(line, text)`` for each non-blank line of a JSONL file, unparsed.

    The lines :func:`iter_jsonl` parses (a BOM tolerated; lines end at ``\r``, ``\n`` or
    ``\r\n``; text that is not UTF-8 is one :class:`InputError`); :func:`jsonl_object` parses
    one as it does. Lines are first split at ``\n`` alone (a byte search, where universal
    newlines look at every character: 1.2 of 9.6 CPU-s of a paper-scale ``ingest``). At the
    first ``\r``, or text that is not UTF-8, the file is read again from its start as universal
    newlines and the lines already given are skipped: they are that reader's first lines (no
    ``\r`` in them, the same bytes decoded), so every line and error is the universal reader's.
    """
    src = Path(path)
    given = 0
    with open_text(src, newline="\n") as fh:
        opened = file_state(fh)
        try:
            for raw in _newline_lines(fh):
                if raw is None:
                    break
                given += 1
                if not raw.isspace():  # (a line is never empty) what ``not raw.strip()`` tells
                    yield given, raw
            else:
                check_unchanged(fh, src, opened)
                return
        except UnicodeDecodeError:
            pass
        except _LongLineError:
            raise _long_line(src, given + 1) from None
    with open_text(src) as fh:
        try:
            lineno = 0
            while raw := fh.readline(MAX_LINE + 1):
                lineno += 1
                if len(raw) > MAX_LINE or (len(raw) << 2 > MAX_LINE and _utf8_size(raw) > MAX_LINE):
                    raise _long_line(src, lineno)
                if lineno > given and not raw.isspace():
                    yield lineno, raw
        except UnicodeDecodeError as exc:
            raise decode_error(src, exc) from None
        check_unchanged(fh, src, opened)


def _newline_lines(fh: IO[str]) -> Iterator[str | None]:
    r"""The lines of ``fh`` (opened with ``newline="\n"``); None where a ``\r`` is read.

    Read :data:`_PIECE` characters at most at a time, so a file of ``\r`` line ends is
    never held whole while the ``\n`` that would end its first line is looked for.
    """
    read = fh.readline
    while piece := read(_PIECE):
        if "\r" in piece:
            yield None
            return
        if piece[-1] != "\n":  # a long line (or the last one, without a line end)
            parts, size = [piece], _utf8_size(piece)
            while parts[-1][-1] != "\n" and (piece := read(_PIECE)):
                if "\r" in piece:
                    yield None
                    return
                parts.append(piece)
                size += _utf8_size(piece)
                if size > MAX_LINE:
                    raise _LongLineError
            piece = "".join(parts)
        yield piece


def jsonl_object(text: str, path: str | Path, line: int) -> dict[str, Any]:
    """One JSONL line through :func:`parse_json`; anything but an object is an error."""
    obj = parse_json(text.rstrip("\r\n"), path=path, line=line)
    if not isinstance(obj, dict):
        records = isinstance(obj, list) and obj and isinstance(obj[0], dict)
        hint = "; a JSON array of the records? JSONL is one object per line" if records else ""
        raise InputError(
            f"expected a JSON object, got {type(obj).__name__}{hint}", path=path, line=line
        )
    return obj


#: JSON's whitespace between a key and its colon: blanks, and line breaks (a journal row is
#: SQL text, not a line: '"codes"\n:' given twice slipped past a blanks-only count)
_KEY_COLON = re.compile(rb'"[ \t\n\r]*:')
_SPACED_KEY = re.compile(rb'"[ \t\n\r]+:')
_ESCAPED_QUOTE_COLON = re.compile(rb'\\"[ \t\n\r]*:')


def keys_vouched(line: bytes | str, keys: int, strings: int | None = None) -> bool:
    r"""True if the JSON text ``line`` has exactly ``keys`` keys (``strings``: string values).

    A fast reader (msgspec, pydantic's JSON parser) keeps the last of two equal keys where
    :func:`parse_json` refuses them: a line whose decoded record shows fewer keys than the
    text holds had a duplicate. Without a backslash in the line a quote only delimits a key or
    a string value, so given ``strings`` the line has ``2 * (keys + strings)`` quotes (one
    ``count``). Otherwise a key is a quote, blanks and ``:`` (regex), minus escaped quotes
    followed by ``:`` (a string value ending in a backslash is followed by ``,`` or ``}``; a
    key ending in one is the caller's to refuse).
    """
    if isinstance(line, str):  # counted as text where it can be: encoding costs more
        if strings is not None and "\\" not in line:
            return line.count('"') == 2 * (keys + strings)
        line = line.encode("utf-8")
    backslash = b"\\" in line
    if strings is not None and not backslash:
        return line.count(b'"') == 2 * (keys + strings)
    # a quote, blanks, colon: one ``count`` where no key has blanks (~2.5x faster than the regex)
    found = len(_KEY_COLON.findall(line)) if _SPACED_KEY.search(line) else line.count(b'":')
    if backslash:
        found -= len(_ESCAPED_QUOTE_COLON.findall(line))
    return found == keys


def struct_fields(value: Any) -> dict[str, Any]:
    """``json.dumps``' fallback for msgspec structs (decoded passages): their fields."""
    import msgspec

    if isinstance(value, msgspec.Struct):
        return msgspec.structs.asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: msgspec writes a float as ``repr`` does when it is 0 or its magnitude is in this range
#: (outside it msgspec writes ``0.00001`` and ``1e16`` where repr writes ``1e-05``, ``1e+16``).
REPR_RANGE = (1e-4, 1e16)


def repr_scores(passages: Sequence[Any]) -> bool:
    """True if every score of these decoded passages is printed alike by msgspec and repr."""
    low, high = REPR_RANGE
    for p in passages:
        score = p.score
        if score is not None and score != 0 and not low <= abs(score) < high:
            return False
    return True
