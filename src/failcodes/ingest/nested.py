"""Rows of nested pipeline output: a whole-JSON document, and lists exploded into rows.

Many pipelines write one record per answer, with its sentences and each sentence's claims
nested inside (FActScore, VeriScore and SAFE dumps: ``{"id": ..., "sentences": [{"text": ...,
"claims": [{"claim": ..., "verdict": ..., "evidence": [...]}]}]}``). ``--option
rows=PATH`` names the lists that hold the rows, e.g. ``rows=sentences[].claims[]``: every
claim object becomes one row of the table the generic adapter reads (docs/trace-format.md).
A row's columns (its own keys, the enclosing objects' by dotted path, ``<list path>#`` and
``#``), ``*`` on a path, lists of plain values and missing lists are docs/trace-format.md's
"Nested output" (``*``: docs/your-own-data.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failcodes import jsonio, tableio
from failcodes.errors import ConfigError, InputError

if TYPE_CHECKING:
    from failcodes.ingest.label_rule import LabelRule

_LEVEL = re.compile(r"^(?:[^.\[\]#*]+|\*)(?:\.(?:[^.\[\]#*]+|\*))*\[\]$")
INDEX_MARK = "#"
#: A key on the rows path that stands for every key of the object there (``answers.*``).
EVERY_KEY = "*"


@dataclass(frozen=True)
class RowsPath:
    """The lists that hold the rows: one tuple of keys per exploded level."""

    text: str
    levels: tuple[tuple[str, ...], ...]
    #: the path ends in ``*`` (``rows=systems.*``): each key's object is a row (a record
    #: holding every system's answer, ``{"systems": {"A": {"verdict": ...}, ...}}``)
    objects: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """The dotted path of each exploded list from the record (``sentences.claims``)."""
        return tuple(
            ".".join(k for lv in self.levels[: i + 1] for k in lv) for i in range(len(self.levels))
        )


def parse_rows_path(text: str) -> RowsPath:
    """Parse ``--option rows=`` (``a.b[].c[]``, ``systems.*``); malformed is a ConfigError."""
    objects = text.endswith(EVERY_KEY)  # `systems.*`: a row per key, no list at the end
    body = text + "[]" if objects else text
    parts = body.split("[].") if body.endswith("[]") else []
    if parts:
        parts[-1] = parts[-1].removesuffix("[]")
    levels = tuple(tuple(p.split(".")) for p in parts)
    if not levels or not all(_LEVEL.match(".".join(lv) + "[]") for lv in levels):
        raise ConfigError(
            f"--option rows={text!r}: expected the keys down to each list of rows, every list "
            "marked with [] and the path ending in one, * for every key of an object, e.g. "
            "rows=sentences[].claims[] or rows=answers.*.claims[] (or ending in * for an "
            "object per key, e.g. rows=systems.*)"
        )
    return RowsPath(text, levels, objects)


def _flatten(prefix: str, value: Mapping[str, Any], out: dict[str, Any]) -> None:
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(item, dict):
            _flatten(name, item, out)
        else:
            out[name] = item


@dataclass
class Exploded:
    """Rows of one record, and how many of its lists on the path were missing or empty."""

    rows: list[tuple[str, dict[str, Any]]]
    empty: int
    #: the enclosing values of each missing or empty last list (a sentence without claims),
    #: with its JSON path: a label of that sentence may be made from them
    hollow: list[tuple[str, dict[str, Any]]]
    #: the record's own keys (flattened, outside the path's lists): a label of the answer
    top: frozenset[str] = frozenset()


def _step(where: str, key: str) -> str:
    """``where`` extended by one object key, as a JSON path (``answers.gpt4``, ``a["b c"]``)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key)}]"


def explode(record: Mapping[str, Any], rows: RowsPath, wanted_index: frozenset[str]) -> Exploded:
    """The rows of one record, each with its JSON path inside it (``sentences[0].claims[2]``).

    ``wanted_index`` names the ``<list path>#`` columns to add (those ``--map`` names). A
    ``*`` on the path goes through every key of the object there, the key kept in the column
    ``<path>.*`` (``answers.*``) of every row under it.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    hollow: list[tuple[str, dict[str, Any]]] = []
    top: set[str] = set()
    empty = 0
    names = rows.names

    def down(node: Any, depth: int, i: int, name: str, own: dict[str, Any], where: str) -> None:
        """Follow the keys of level ``depth`` from its ``i``-th, at ``node`` (path ``name``)."""
        nonlocal empty
        keys = rows.levels[depth]
        if i == len(keys):
            rows_of_list(node, depth, own, where)
            return
        key = keys[i]
        if node is None:  # a missing key on the way: no rows from here (counted)
            empty += 1
            return
        if not isinstance(node, dict):
            what = "an object" if key != EVERY_KEY else "an object (its keys go through *)"
            raise InputError(
                f"expected {what} at {where or 'the record'} for --option rows={rows.text}, "
                f"got {type(node).__name__}",
                field=where,
            )
        if key == EVERY_KEY:
            column = f"{name}.{EVERY_KEY}" if name else EVERY_KEY
            if not node:
                empty += 1
                return
            for sub, value in node.items():
                values = {**own, column: sub}
                down(value, depth, i + 1, column, values, _step(where, sub))
            return
        sibling = dict(own)
        _flatten(name, {k: v for k, v in node.items() if k != key}, sibling)
        if depth == 0 and i == 0:
            top.update(sibling)
        here = f"{name}.{key}" if name else key
        down(node.get(key), depth, i + 1, here, sibling, _step(where, key))

    def leaf_row(element: Any, values: dict[str, Any], list_name: str, row_path: str) -> None:
        leaf: dict[str, Any] = {}
        if isinstance(element, dict):
            _flatten("", element, leaf)
        else:
            leaf[list_name] = element
        for key, value in leaf.items():
            values[f"{list_name}.{key}" if key in values else key] = value
        out.append((row_path, values))

    def rows_of_list(node: Any, depth: int, own: dict[str, Any], here: str) -> None:
        nonlocal empty
        if rows.objects and depth == len(rows.levels) - 1:  # `systems.*`: this key's object
            leaf_row(node, dict(own), names[depth], here)
            return
        if node is None or node == []:
            empty += 1
            if depth == len(rows.levels) - 1:
                hollow.append((here, dict(own)))
            return
        if not isinstance(node, list):
            raise InputError(
                f"expected a list of rows (--option rows={rows.text}), got {type(node).__name__}",
                field=here,
            )
        list_name = names[depth]
        for place, element in enumerate(node, start=1):
            row_path = f"{here}[{place - 1}]"
            values = dict(own)
            index = list_name + INDEX_MARK
            if index in wanted_index:
                values[index] = place
            if depth + 1 < len(rows.levels):
                if not isinstance(element, dict):
                    raise InputError(
                        f"expected an object in the list (--option rows={rows.text}), got "
                        f"{type(element).__name__}",
                        field=row_path,
                    )
                down(element, depth + 1, 0, list_name, values, row_path)
                continue
            leaf_row(element, values, list_name, row_path)

    down(record, 0, 0, "", {}, "")
    return Exploded(out, empty, hollow, frozenset(top))


def _pandas_orient(doc: dict[str, Any]) -> str | None:
    """The ``orient`` of pandas' ``DataFrame.to_json`` that wrote ``doc``, if not records.

    ``split``: ``{"columns": [...], "index": [...], "data": [[...]]}``; ``columns`` (the
    default): each column an object keyed by the row index, ``{"verdict": {"0": ...}}``;
    ``index``: each row an object keyed by its index, ``{"0": {"verdict": ...}}``; ``table``:
    ``{"schema": {...}, "data": [...]}``. Read as one record, each was refused with a way that
    cannot read it (flatten, or --option rows; ``table``: "no verdict (this row's columns:
    schema, data)").
    """
    if set(doc) in ({"columns", "index", "data"}, {"columns", "data"}) and isinstance(
        doc.get("data"), list
    ):
        return "split"
    if set(doc) == {"schema", "data"} and isinstance(doc.get("data"), list):
        return "table"  # {"schema": {"fields": ...}, "data": [{...}, ...]}
    inner = [v for v in doc.values() if isinstance(v, dict)]
    if not doc or len(inner) != len(doc) or any(set(v) != set(inner[0]) for v in inner):
        return None
    if inner[0] and all(k.isdigit() for k in inner[0]):
        return "columns"
    return "index" if all(k.isdigit() for k in doc) else None


def _json_records(path: Path, nested: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` of a ``.json`` file: its one object, or each object of its list.

    ``nested``: the rows are inside the records (``--option rows``), so one object is read
    as given; else a table pandas wrote column by column (:func:`_pandas_orient`) is refused.
    """
    doc, lines = jsonio.read_json_list(path)
    if isinstance(doc, dict):
        orient = None if nested else _pandas_orient(doc)
        if orient is not None:
            raise InputError(
                f"a table as pandas' DataFrame.to_json writes it with orient='{orient}' (not "
                "a row per object): write the rows with df.to_json(PATH, orient='records'), "
                "or a .jsonl file with df.to_json(PATH, orient='records', lines=True)",
                path=path,
                line=1,
            )
        yield 1, doc
        return
    if lines is None:
        raise InputError(
            f"expected a JSON object or a list of objects, got {type(doc).__name__}",
            path=path,
            line=1,
        )
    for line, record in zip(lines, doc, strict=True):
        if not isinstance(record, dict):
            raise InputError(
                f"expected a JSON object, got {type(record).__name__}", path=path, line=line
            )
        yield line, record


def is_document(path: Path) -> bool:
    """Whether ``path`` is a whole-JSON document (``.json``), read by :func:`rows_of`."""
    return path.suffix.lower() == ".json"


def _the_header(record: dict[str, Any]) -> bool:
    """Whether every cell (two or more) holds its column's name (agree's check, a row's)."""
    cells = [(k, v) for k, v in record.items() if v is not None]
    return len(cells) >= 2 and all(str(v).strip() == k.strip() for k, v in cells)


def rows_of(
    path: Path,
    rows: RowsPath | None,
    wanted_index: frozenset[str],
    empty: list[int],
    columns: set[str] | None = None,
    hollow: list[tuple[int, str, dict[str, Any]]] | None = None,
    rule: LabelRule | None = None,
    sentence_from: frozenset[str] = frozenset(),
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line, where, row)`` of a table or ``.json`` file, exploded along ``rows`` if given.

    ``line`` is where the record starts; ``where`` the row's JSON path inside the record ('' when
    not exploded). ``empty[0]`` counts records whose lists on the path were missing or empty;
    ``hollow``, if given, collects ``(line, where, values)`` of each missing or empty last list:
    the enclosing object's values (a labelled sentence whose claims list is empty).
    ``columns``, if given, collects every column name the rows have (a null value too), so a
    caller can tell a column no row has (JSON and JSONL have no header) from an empty one.
    A sheet's number in ``rule``'s column that Excel shows otherwise (2.6 shown as 3) is refused:
    the rule compares its text. ``sentence_from``: the columns that give the sentence id; a
    ``rule`` on a key of the record where they are keys of its rows is refused
    (:func:`_refuse_answer_label`).
    """
    shown = frozenset({rule.column} if rule is not None else ())
    records = (
        _json_records(path, rows is not None)
        if is_document(path)
        else tableio.table_rows(path, as_shown=shown)
    )
    place = INDEX_MARK in wanted_index
    previous = None
    for number, (line, record) in enumerate(records, start=1):
        # records on one line (a minified list): each row's path starts at its record's place
        at = f"[{number - 1}]." if line == previous else ""
        previous = line
        if rows is None:
            if columns is not None:
                columns.update(record)
            first = next(iter(record), None)
            if first is not None and record[first] == first and _the_header(record):
                # 'cat a.csv b.csv': a label 'sentence_id' written (rule: no_error), exit 0
                raise InputError(
                    "the header again (each cell is its column's name): two files appended? "
                    "delete the row",
                    path=path,
                    line=line,
                )
            row = {k: v for k, v in record.items() if v is not None}
            if place:
                row[INDEX_MARK] = number
            yield line, "", row
            continue
        try:
            exploded = explode(record, rows, wanted_index)
        except InputError as exc:
            raise InputError(exc.reason, path=path, line=line, field=exc.field) from None
        empty[0] += exploded.empty
        if rule is not None and exploded.rows and rule.column in exploded.top:
            _refuse_answer_label(rule, rows, sentence_from, exploded, path, line)
        if hollow is not None:
            for where, values in exploded.hollow:
                kept = {k: v for k, v in values.items() if v is not None}
                if place:
                    kept[INDEX_MARK] = number
                hollow.append((line, where, kept))
        for where, row in exploded.rows:
            if columns is not None:
                columns.update(row)
            row = {k: v for k, v in row.items() if v is not None}
            if place:
                row[INDEX_MARK] = number
            yield line, at + where, row


def _refuse_answer_label(
    rule: LabelRule,
    rows: RowsPath,
    sentence_from: frozenset[str],
    exploded: Exploded,
    path: Path,
    line: int,
) -> None:
    """Refuse a label rule on a key of the record where the sentences are its rows.

    ``{"qid": "q1", "answer_has_error": "yes", "sentences": [...]}`` read with ``rows=sentences[]``
    and the sentence ids from the sentences: the answer's label became each of its sentences'
    (its right sentences errors: TP 1, FP 1, FN 2, TN 1 for the answers' TP 1, FP 1, exit 0).
    A record that is one sentence (its id a key of the record, or ``#``), or whose rows are
    of one sentence (the answer's one sentence with claims: its label is the answer's), is
    left alone.
    """
    own = [c for c in sentence_from if c not in exploded.top and c != INDEX_MARK]
    if not own or len(own) < len(sentence_from):
        return
    if len({tuple(row.get(c) for c in own) for _, row in exploded.rows}) < 2:
        return
    raise InputError(
        f"--label-rule {rule.text!r}: column {rule.column!r} is a key of the record, not of "
        f"the rows --option rows={rows.text} reads (their sentence ids from {own[0]!r}): each "
        "of the record's sentences would take its answer's label, the right ones counted as "
        "errors; give each sentence its own label (a key inside the rows), or read the record "
        "as one sentence (its id from a key of the record)",
        path=path,
        line=line,
        field=rule.column,
    )
