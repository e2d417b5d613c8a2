"""Labels held as columns (:class:`LabelColumns`) and the checks of a labels file's ids.

No pydantic here, nor in :mod:`failcodes.labelio`'s reading and writing of a JSONL labels
file: ``failcodes ingest generic-labels FILE -o OUT`` (cli/direct.py) imports no model, which
took ~0.1 of its 0.19 CPU-s (issue 30). A :class:`~failcodes.labelmodel.Label` is built only
where one is asked for.
"""

from __future__ import annotations

import array
import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from failcodes.spelling import TOTAL_WORDS, names_a_total

if TYPE_CHECKING:
    from failcodes.labelmodel import Label

#: :class:`~failcodes.labelmodel.Label`'s fields, in order: each text or None but ``has_error``,
#: a bool (tests/test_s20_t20fast.py holds them equal to the model's).
LABEL_FIELDS = (
    "sentence_id",
    "claim_id",
    "question_id",
    "has_error",
    "rationale",
    "severity",
    "annotator",
    "sentence",
    "system",
)


class _Repeated(Sequence[Any]):
    """One object ``n`` times: a label column whose values are all the same.

    8 bytes a label less than a list; most columns of a labels file are such (no claim,
    one annotator, one rationale).
    """

    __slots__ = ("_n", "_value")

    def __init__(self, value: Any, n: int) -> None:
        self._value = value
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._value] * len(range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError("label column index out of range")
        return self._value

    def __iter__(self) -> Iterator[Any]:
        return itertools.repeat(self._value, self._n)


class _Flags(Sequence[bool]):
    """Booleans held as one byte each (a list holds 8 bytes a label): ``has_error``."""

    __slots__ = ("_bytes",)

    def __init__(self, values: Iterable[bool]) -> None:
        self._bytes = bytes(bytearray(map(bool, values)))

    def __len__(self) -> int:
        return len(self._bytes)

    @overload
    def __getitem__(self, index: int) -> bool: ...

    @overload
    def __getitem__(self, index: slice) -> list[bool]: ...

    def __getitem__(self, index: int | slice) -> bool | list[bool]:
        if isinstance(index, slice):
            return [bool(b) for b in self._bytes[index]]
        try:
            return bool(self._bytes[index])
        except IndexError:
            raise IndexError("label column index out of range") from None

    def __iter__(self) -> Iterator[bool]:
        return map(bool, self._bytes)


class _Coded(Sequence[Any]):
    """A column of few distinct values (question ids) as 4-byte codes into those values."""

    __slots__ = ("_codes", "_values")

    def __init__(self, values: list[Any], codes: array.array[int]) -> None:
        self._values = values
        self._codes = codes

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._values[c] for c in self._codes[index]]
        try:
            return self._values[self._codes[index]]
        except IndexError:
            raise IndexError("label column index out of range") from None

    def __iter__(self) -> Iterator[Any]:
        return map(self._values.__getitem__, self._codes)


def _coded(column: Sequence[Any]) -> _Coded | None:
    """The column as codes when it has at most a quarter as many distinct values, else None."""
    distinct: dict[Any, None] = {}  # (each value first seen kept)
    values = iter(column)
    while block := list(itertools.islice(values, 4096)):  # in C, a block at a time
        distinct.update(dict.fromkeys(block))
        if len(distinct) > len(column) // 4:
            return None
    codes = {value: code for code, value in enumerate(distinct)}
    return _Coded(list(codes), array.array("i", map(codes.__getitem__, column)))


class LabelColumns(Sequence["Label"]):
    """Labels held as one list per field, a :class:`Label` built on access (no model kept).

    What :func:`failcodes.labelio.read_labels` gives with ``columns=True`` (the metrics and
    disagreements commands): ~80 bytes a label plus its own strings, where a model costs
    ~700 (100,000 labels at 10x paper scale: ~10 MB instead of ~120 MB). Items are equal to
    the labels appended (same values, same fields set).
    """

    def __init__(self) -> None:
        #: Where each label was read (1-based line or row), when read from a file.
        self.lines: array.array[int] = array.array("q")
        #: The file the labels were read from, if any (for errors found later).
        self.path: Path | None = None
        # lists while labels are appended; after compact() some are _Repeated
        self._columns: dict[str, Any] = {name: [] for name in LABEL_FIELDS}
        # one set object per distinct set of given fields, shared by the labels built (a
        # frozen model never adds to it; a copy gets its own set first): ~220 bytes a label
        self._fields_set: list[set[str]] | _Repeated = []
        self._shared: dict[frozenset[str], set[str]] = {}
        self._compacted = False

    @classmethod
    def from_columns(
        cls, columns: dict[str, list[Any]], fields_set: list[set[str]]
    ) -> LabelColumns:
        """Labels given as one list per field and each label's fields set.

        Columns in :class:`Label`'s field order, holding the values of valid labels; one
        set object per distinct set of fields (shared, as :meth:`append_row` shares them).
        """
        out = cls()
        out._columns = columns
        out._fields_set = fields_set
        out._shared = {frozenset(s): s for s in {id(s): s for s in fields_set}.values()}
        return out

    def append(self, label: Label) -> None:
        """Add one (validated) label."""
        self.append_row([getattr(label, name) for name in self._columns], label.model_fields_set)

    def append_row(self, values: Sequence[Any], given: Set[str]) -> None:
        """Add one label given as its field values (in field order) and its fields set.

        The values must be those of a valid label (a fast reader that vouched for them).
        """
        if self._compacted:  # lists again
            self._fields_set = list(self._fields_set)
            self._columns = {name: list(column) for name, column in self._columns.items()}
            self._compacted = False
        for column, value in zip(self._columns.values(), values, strict=True):
            column.append(value)
        key = given if isinstance(given, frozenset) else frozenset(given)
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = set(key)
        fields_set = self._fields_set
        assert isinstance(fields_set, list)  # (a list until compact(), and again after)
        fields_set.append(shared)

    def compact(self) -> None:
        """Hold each column whose values are all one object as that object and a count.

        At 100,000 labels each such column costs 0.8 MB as a list (issue 18). Other columns
        of few distinct values (question ids) are held as 4-byte codes, ``has_error`` as a
        byte a label. Values and labels are unchanged (a coded value is the first of its
        equal values); a later :meth:`append_row` turns the columns back into lists.
        """
        n = len(self._fields_set)
        if not n or self._compacted:
            return
        self._compacted = True
        for name, column in self._columns.items():
            first = column[0]
            if all(map(operator.is_, column, itertools.repeat(first))):
                self._columns[name] = _Repeated(first, n)
            elif name == "has_error":
                self._columns[name] = _Flags(column)
            elif set(map(type, column)) <= {str, type(None)}:
                self._columns[name] = _coded(column) or column
        first_set = self._fields_set[0]
        if all(map(operator.is_, self._fields_set, itertools.repeat(first_set))):
            self._fields_set = _Repeated(first_set, n)

    def subset(self, positions: Sequence[int]) -> LabelColumns:
        """The labels at ``positions`` (in that order) as columns of their own, lines kept."""
        out = LabelColumns()
        out.path = self.path
        columns = list(self._columns.values())
        lines = self.lines if len(self.lines) == len(self) else None
        for pos in positions:
            out.append_row([column[pos] for column in columns], self._fields_set[pos])
            if lines is not None:
                out.lines.append(lines[pos])
        out.compact()
        return out

    def column(self, name: str) -> Sequence[Any]:
        """One field of every label, in order (the sequence held: do not change it)."""
        column: Sequence[Any] = self._columns[name]
        return column

    def __len__(self) -> int:
        """Number of labels."""
        return len(self._fields_set)

    @overload
    def __getitem__(self, index: int) -> Label: ...

    @overload
    def __getitem__(self, index: slice) -> list[Label]: ...

    def __getitem__(self, index: int | slice) -> Label | list[Label]:
        """The label at ``index`` (a list of them for a slice)."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        from failcodes.labelmodel import Label

        values = {name: column[index] for name, column in self._columns.items()}
        return Label.model_construct(self._fields_set[index], **values)


def label_column(labels: Sequence[Label], name: str) -> Sequence[Any]:
    """One field of every label (the column itself for :class:`LabelColumns`)."""
    if isinstance(labels, LabelColumns):
        return labels.column(name)
    return [getattr(label, name) for label in labels]


#: The label ids a row of totals under the labels fills (``Total``, sums beside it).
TOTAL_ID_FIELDS = ("sentence_id", "claim_id", "question_id")
_TOTAL_FORMS = frozenset([*TOTAL_WORDS, *(f"{w}:" for w in TOTAL_WORDS)])


def total_id_problem(name: str, value: object) -> str | None:
    """Why a label id ``value`` of field ``name`` is a totals row's, or None.

    A labels table's ``Total`` row (sums in the has_error or rule column) was written as the
    label 'Total' at exit 0; metrics then refused "no trace has sentence_id 'Total'", naming
    the labels written, not the table's row.
    """
    if not isinstance(value, str) or not names_a_total(value):
        return None
    return f"a row of totals? its {name} {value!r} names a total, not a label: delete the row"


def first_total_id(ids: Sequence[str | None]) -> int | None:
    """The position of the first id :func:`total_id_problem` refuses, or None.

    The ids lowercased are looked up at once, in C (200,000 ids: ~0.06 s, half the padded-id
    check's time; ``casefold`` took twice as long and differs for no total word); only a hit
    is looked for a row at a time, by the full rule.
    """
    held: Iterable[Any] = ids if isinstance(ids, list) else set(ids)
    if _TOTAL_FORMS.isdisjoint(map(str.lower, filter(None, held))):
        return None
    return next((i for i, v in enumerate(ids) if total_id_problem("", v)), None)


def label_scope_problem(labels: Sequence[Label]) -> LabelProblem | None:
    """The first label that names a system when the first does not, or the other way round.

    A labels input is either per-system (every label names its system: each applies to that
    system's traces only) or shared (none does). Mixed, a label without a system would
    apply to every system beside others that apply to one: a blank cell of a system column
    read that way counts a sentence for every system, silently; so it is refused.
    """
    systems = label_column(labels, "system")
    if not len(systems):
        return None
    first = systems[0]
    for pos, system in enumerate(systems):
        if (system is None) != (first is None):
            if system is None:
                message = (
                    f"this label names no system, but the first names {first!r}: either every "
                    "label names the system whose answer it labels (per-system labels) or none "
                    "does (one label per sentence, shared by every system)"
                )
            else:
                message = (
                    f"this label names system {system!r}, but the first names none: either "
                    "every label names the system whose answer it labels (per-system labels) "
                    "or none does (one label per sentence, shared by every system)"
                )
            return LabelProblem(pos, "system", message)
    return None


@dataclass(frozen=True)
class LabelProblem:
    """A label that does not fit the traces: ``position`` is its 0-based index in the input."""

    position: int
    field: str
    message: str
