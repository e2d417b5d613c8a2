"""Clinical reference labels for answer sentences (or single claims)."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import eq
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failcodes.errors import ConfigError, InputError, clip
from failcodes.idzeros import DATED_PART, date_variants, without_leading_zeros
from failcodes.labelcols import (
    TOTAL_ID_FIELDS,
    LabelColumns,
    LabelProblem,
    first_total_id,
    label_column,
    label_scope_problem,
    total_id_problem,
)
from failcodes.labelmodel import Label as Label  # (where it has always been imported from)
from failcodes.labelscope import LabelScope
from failcodes.mapping import SentenceKey
from failcodes.spelling import first_unseen_difference, lookalike, two_ways
from failcodes.traces import Trace

if TYPE_CHECKING:  # numpy and the trace columns are imported where used (start-up)
    import numpy as np
    import numpy.typing as npt

    from failcodes.tracecols import SentenceColumns, TraceColumns

    IntArray = npt.NDArray[np.int64]


def _two_labels(
    kind: str, key: str, annotators: tuple[str | None, str | None], system: str | None = None
) -> str:
    who = ", ".join(repr(a) for a in annotators)
    of = f" of system {system!r}" if system is not None else ""
    return (
        f"two labels for {kind} {key!r}{of} (annotators {who}): the comparison needs one "
        "reference per target; several clinicians' labels become one with `failcodes ingest "
        "generic-labels FILE -o OUT --option consensus=majority` (or any, all)"
    )


def labels_at(labels: Sequence[Label], positions: Sequence[int]) -> Sequence[Label]:
    """The labels at ``positions``, held as the input holds them (columns stay columns)."""
    if isinstance(labels, LabelColumns):
        return labels.subset(positions)
    return [labels[i] for i in positions]


def label_systems(labels: Sequence[Label]) -> dict[str, list[int]] | None:
    """Per-system labels: each system's label positions (systems sorted); None if shared.

    Either every label names its system or none does (:func:`label_scope_problem`); call
    that first (a mixed input is read here as per-system, its labels without one left out).
    """
    systems = label_column(labels, "system")
    if not len(systems) or systems[0] is None:
        return None
    out: dict[str, list[int]] = {}
    for pos, system in enumerate(systems):
        if system is not None:
            out.setdefault(system, []).append(pos)
    return dict(sorted(out.items()))


def traces_of_system(
    traces: Iterable[Trace] | TraceColumns | SentenceColumns, system: str
) -> Sequence[Trace] | TraceColumns | SentenceColumns:
    """The traces of one system, held as the input holds them."""
    from failcodes.tracecols import SentenceColumns, TraceColumns

    if isinstance(traces, TraceColumns | SentenceColumns):
        return traces.of_system(system)
    return [t for t in traces if t.system == system]


def trace_system_names(traces: Iterable[Trace] | TraceColumns | SentenceColumns) -> list[str]:
    """The systems of the traces, sorted."""
    from failcodes.tracecols import SentenceColumns, TraceColumns

    if isinstance(traces, SentenceColumns):
        return list(traces.systems)
    if isinstance(traces, TraceColumns):
        return list(traces.small_codes("system")[1])
    return sorted({t.system for t in traces})


def system_written_two_ways(
    traces: Iterable[Trace] | TraceColumns | SentenceColumns,
) -> tuple[str, str] | None:
    """Two systems of the traces named alike but for case, spacing or Unicode form.

    ``(later, first)`` in sorted order, or None: ``gpt-4`` in one file (or one list of trace
    objects) and ``GPT-4`` in another would be scored as two systems.
    """
    from failcodes.spelling import name_key

    seen: dict[str, str] = {}
    for name in trace_system_names(traces):
        first = seen.setdefault(name_key(name), name)
        if first != name:
            return name, first
    return None


#: What :func:`system_written_two_ways` found, said: name, the first name, how they differ
#: (:func:`failcodes.spelling.two_ways`).
SYSTEM_TWO_WAYS = (
    "system {!r} is {!r} written another way ({}): they would be "
    "scored as two systems; write it one way"
)


class _LabelLookup(Mapping[str, Label]):
    """Target id -> label over a label sequence by position (labels built on access).

    A label is built once, when first asked for, and then shared: callers keep them (each
    disagreement holds its label), and one model per label asked for is at most what a
    list of labels holds. Metrics ask for few (their flags come from :meth:`flags`).
    """

    def __init__(self, labels: Sequence[Label], positions: Mapping[str, int]) -> None:
        self._labels = labels
        self._positions = positions
        self._built: dict[int, Label] = {}

    def __getitem__(self, key: str) -> Label:
        pos = self._positions[key]
        label = self._built.get(pos)
        if label is None:
            label = self._built[pos] = self._labels[pos]
        return label

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)

    def __contains__(self, key: object) -> bool:
        return key in self._positions

    def built(self, key: str) -> Label:
        """``key``'s label built anew and not kept (a stream's labels, one at a time)."""
        return self._labels[self._positions[key]]

    def field(self, key: str, name: str) -> Any:
        """One field of ``key``'s label (no label built)."""
        return label_column(self._labels, name)[self._positions[key]]

    def fields(self, key: str, names: Sequence[str]) -> tuple[Any, ...]:
        """Several fields of ``key``'s label (no label built)."""
        pos = self._positions[key]
        return tuple(label_column(self._labels, name)[pos] for name in names)

    def flags(self, keys: Sequence[str]) -> npt.NDArray[np.int8]:
        """Per key: 1 (has error), 0 (no error) or -1 (no label)."""
        import numpy as np

        has_error = label_column(self._labels, "has_error")
        out = np.full(len(keys), -1, dtype=np.int8)
        for i, key in enumerate(keys):
            pos = self._positions.get(key)
            if pos is not None:
                out[i] = 1 if has_error[pos] else 0
        return out


class _NamesNoSystem(Mapping[str, Label]):
    """``LabelIndex.sentence``/``claim`` of per-system labels: a lookup must name the system."""

    def _refuse(self) -> TypeError:
        return TypeError("per-system labels: look a label up through LabelIndex.of(system)")

    def __getitem__(self, key: str) -> Label:
        raise self._refuse()

    def __iter__(self) -> Iterator[str]:
        raise self._refuse()

    def __len__(self) -> int:
        raise self._refuse()


class _SortedPositions(Mapping[str, int]):
    """Sentence id -> label position by bisection of sorted ids (no dict, no int per id).

    ``keys`` are sorted distinct ids and ``positions`` their labels' positions (-1: none);
    ``others`` the positions of ids not in ``keys``; ``order`` every labelled id in label
    order (the iteration order of a dict built label by label). The last id asked for is
    remembered: a disagreement's claims ask for their sentence one after another.
    """

    def __init__(
        self,
        keys: Sequence[str],
        positions: npt.NDArray[np.int32],
        others: dict[str, int],
        order: Sequence[str],
    ) -> None:
        self._keys = keys
        self._at = positions
        self._others = others
        self._order = order
        self._last: tuple[str, int] | None = None

    def __getitem__(self, key: str) -> int:
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        keys = self._keys
        at = bisect.bisect_left(keys, key)
        pos = int(self._at[at]) if at < len(keys) and keys[at] == key else -1
        if pos < 0:
            pos = self._others[key]
        self._last = (key, pos)
        return pos

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def label_flags(keys: Sequence[str], table: Mapping[str, Label]) -> npt.NDArray[np.int8]:
    """Per key: 1 (its label has an error), 0 (no error) or -1 (no label in ``table``)."""
    import numpy as np

    if isinstance(table, _LabelLookup):
        return table.flags(keys)
    out = np.full(len(keys), -1, dtype=np.int8)
    for i, key in enumerate(keys):
        lab = table.get(key)
        if lab is not None:
            out[i] = 1 if lab.has_error else 0
    return out


# --------------------------------------------------------------------------------------------
# Label resolution (pure functions; no I/O). Used by metrics, disagreements and io validation.
# --------------------------------------------------------------------------------------------

#: Key of one trace: ``(system, claim_id)``; claim ids are unique within a system.
ClaimKey = tuple[str, str]


class LabelIndex:
    """Labels indexed by target: ``sentence`` maps sentence_id -> label, ``claim`` claim_id.

    The one label lookup of metrics, disagreements and the statistics tables. Two labels for
    one target raise :class:`InputError`. A claim's label is its own claim-level label if one
    exists, else its parent sentence's.

    Per-system labels (every label names its ``system``) are indexed per system:
    :meth:`of` gives a system's own index (its labels as shared ones), and ``sentence`` /
    ``claim`` of the whole index refuse to be read (a lookup must name the system). A mix
    of labels with and without a system raises :class:`InputError`
    (:func:`label_scope_problem`).
    """

    #: Per-system labels: each system's own index (sorted by system); None: shared labels.
    per_system: dict[str, LabelIndex] | None = None
    #: The labels indexed (in input order).
    labels: Sequence[Label]
    #: sentence_id -> its label; claim_id -> its claim-level label.
    sentence: Mapping[str, Label]
    claim: Mapping[str, Label]

    def __init__(self, labels: Iterable[Label]) -> None:
        held = labels if isinstance(labels, LabelColumns) else list(labels)
        problem = label_scope_problem(held)
        if problem is not None:
            lines = getattr(held, "lines", None)
            raise InputError(
                problem.message,
                path=getattr(held, "path", None),
                line=lines[problem.position] if lines else None,
                field=problem.field,
            )
        by_system = label_systems(held)
        if by_system is None:
            self._index_shared(held)
            return
        self.labels = held
        self.per_system = {}
        for system, positions in by_system.items():
            own = self.per_system[system] = LabelIndex.__new__(LabelIndex)
            own._index_shared(labels_at(held, positions))
        self.sentence = _NamesNoSystem()
        self.claim = _NamesNoSystem()

    def _index_shared(self, held: Sequence[Label]) -> None:
        """Index labels that apply to every trace given (shared, or one system's own)."""
        if isinstance(held, LabelColumns):
            self._index_columns(held)
            return
        self.labels = held
        by_sentence: dict[str, Label] = {}
        by_claim: dict[str, Label] = {}
        for label in self.labels:
            kind, key = label_target(label)
            table = by_claim if kind == "claim" else by_sentence
            if key in table:
                raise InputError(
                    _two_labels(kind, key, (table[key].annotator, label.annotator), label.system),
                    field=f"{kind}_id",
                )
            table[key] = label
        self.sentence = by_sentence
        self.claim = by_claim

    @classmethod
    def of_sorted_sentences(
        cls,
        labels: Sequence[Label],
        sentences: Sequence[str],
        positions: npt.NDArray[np.int32],
        others: dict[str, int],
    ) -> LabelIndex:
        """The index of sentence labels, one per sentence, found by bisection (issue 18).

        For labels already matched to sorted sentence ids (sentence groups): ``positions``
        gives the label of each of ``sentences`` (-1: none), ``others`` those of labelled
        sentences not among them. The same lookups as an index built from the labels, in
        ~0.4 MB where its dict of positions costs ~7 MB (100,000 labels, 10x paper scale).
        """
        index = cls.__new__(cls)
        index.per_system = None
        index.labels = labels
        order = label_column(labels, "sentence_id")
        index.sentence = _LabelLookup(labels, _SortedPositions(sentences, positions, others, order))
        index.claim = _LabelLookup(labels, {})
        return index

    def _index_columns(self, labels: LabelColumns) -> None:
        """The index of labels held as columns: positions, not labels, per target."""
        self.labels = labels
        annotators = labels.column("annotator")
        by_sentence: dict[str, int] = {}
        by_claim: dict[str, int] = {}
        for pos, (sid, cid) in enumerate(
            zip(labels.column("sentence_id"), labels.column("claim_id"), strict=True)
        ):
            kind, key, table = (
                ("claim", cid, by_claim) if cid is not None else ("sentence", sid, by_sentence)
            )
            first = table.setdefault(key, pos)
            if first != pos:
                lines = labels.lines if len(labels.lines) == len(labels) else None
                raise InputError(
                    _two_labels(
                        kind,
                        key,
                        (annotators[first], annotators[pos]),
                        labels.column("system")[pos],
                    )
                    + (f" (first at line {lines[first]})" if lines else ""),
                    path=labels.path,
                    line=lines[pos] if lines else None,
                    field=f"{kind}_id",
                )
        self.sentence = _LabelLookup(labels, by_sentence)
        self.claim = _LabelLookup(labels, by_claim)

    @property
    def scope(self) -> LabelScope:
        """Shared labels, or per-system ones."""
        return LabelScope.SHARED if self.per_system is None else LabelScope.PER_SYSTEM

    def of(self, system: str) -> LabelIndex:
        """The labels that apply to ``system``'s traces: the whole index when shared."""
        if self.per_system is None:
            return self
        found = self.per_system.get(system)
        return found if found is not None else LabelIndex(())

    def for_sentence(self, question_id: str, sentence_id: str) -> Label | None:
        """Return the sentence's label, or None (``question_id`` is not part of the key)."""
        del question_id
        return self.sentence.get(sentence_id)

    def for_claim(self, question_id: str, sentence_id: str, claim_id: str) -> Label | None:
        """Return the claim's own label, else its parent sentence's, else None."""
        del question_id
        return self.claim.get(claim_id) or self.sentence.get(sentence_id)

    def sentence_fields(self, sentence_id: str, names: Sequence[str]) -> tuple[Any, ...]:
        """Fields of the sentence's label (labels held as columns: no label built)."""
        table = self.sentence
        if isinstance(table, _LabelLookup):
            return table.fields(sentence_id, names)
        label = table[sentence_id]
        return tuple(getattr(label, name) for name in names)

    def sentence_label(self, sentence_id: str) -> Label:
        """The sentence's label; labels held as columns build it anew and do not keep it.

        For a stream of disagreements: kept, the labels of 100,000 sentences cost ~50 MB
        (10x paper scale). Raises ``KeyError`` for an unlabelled sentence.
        """
        table = self.sentence
        return table.built(sentence_id) if isinstance(table, _LabelLookup) else table[sentence_id]

    def claim_has_error(self, sentence_id: str, claim_id: str) -> bool | None:
        """``has_error`` of :meth:`for_claim`'s label (None: unlabelled), no label built."""
        for table, key in ((self.claim, claim_id), (self.sentence, sentence_id)):
            if key in table:
                if isinstance(table, _LabelLookup):
                    return bool(table.field(key, "has_error"))
                return table[key].has_error
        return None

    def labelled_sentences(self, traces: Sequence[Trace] | TraceColumns) -> list[SentenceKey]:
        """Return every labelled sentence as a key, checking each label matches the traces.

        Uses :func:`check_labels_against_traces`: a sentence label whose sentence_id is in no
        trace but whose question_id is (a sentence the systems extracted no claim from)
        becomes a known sentence, reported as *without claims*. A label that matches nothing
        raises :class:`InputError` (the first one, with a count of the rest).
        """
        return [SentenceKey(question_id=q, sentence_id=s) for q, s in self.labelled_pairs(traces)]

    def labelled_pairs(
        self, traces: Sequence[Trace] | TraceColumns | SentenceColumns
    ) -> list[tuple[str, str]]:
        """:meth:`labelled_sentences` as ``(question_id, sentence_id)`` tuples, same order.

        What the columnar aggregation needs: a tuple of two shared strings costs ~56 bytes
        where a key model costs ~450 (100,000 labelled sentences at 10x paper scale).
        """
        if self.per_system is not None:
            raise TypeError("per-system labels: their units are labelled_units(traces)")
        problems = _check_as_shared(self.labels, traces)
        if problems:
            first = problems[0]
            extra = f" ({len(problems) - 1} more such labels)" if len(problems) > 1 else ""
            raise InputError(first.message + extra, field=first.field)
        table = self.sentence
        wanted = sorted(table)
        keys: list[tuple[str, str]] = []
        for sid, qids in zip(wanted, _questions_of_sentences(traces, wanted), strict=True):
            if not qids:
                given = (
                    table.field(sid, "question_id")
                    if isinstance(table, _LabelLookup)
                    else table[sid].question_id
                )
                qids = [given] if given else []
            keys.extend((q, sid) for q in qids)
        return keys

    def labelled_units(
        self, traces: Sequence[Trace] | TraceColumns | SentenceColumns
    ) -> list[tuple[str | None, str, str]]:
        """Every labelled sentence as ``(system, question_id, sentence_id)``.

        Shared labels: :meth:`labelled_pairs` with system None (each applies to every
        system). Per-system labels: each system's own, found in that system's traces (a
        sentence id another system has is another sentence), systems in sorted order.
        """
        if self.per_system is None:
            return [(None, q, s) for q, s in self.labelled_pairs(traces)]
        out: list[tuple[str | None, str, str]] = []
        for system, index in self.per_system.items():
            mine = traces_of_system(traces, system)
            out.extend((system, q, s) for q, s in index.labelled_pairs(mine))
        return out


def _questions_of_sentences(
    traces: Sequence[Trace] | TraceColumns | SentenceColumns, wanted: Sequence[str]
) -> Iterator[list[str]]:
    """For each of the ``wanted`` sentence ids, the question ids it occurs under, sorted.

    One list at a time (no table of them: 100,000 labelled sentences at 10x paper scale);
    an id in no trace gets an empty list.
    """
    import numpy as np

    from failcodes.tracecols import SentenceColumns, TraceColumns

    if not isinstance(traces, SentenceColumns | TraceColumns):
        found: dict[str, set[str]] = {}
        targets = set(wanted)
        for t in traces:
            if t.sentence_id in targets:
                found.setdefault(t.sentence_id, set()).add(t.question_id)
        for sid in wanted:
            yield sorted(found.get(sid, ()))
        return
    s_codes: npt.NDArray[np.integer[Any]]
    q_codes: npt.NDArray[np.integer[Any]]
    if isinstance(traces, SentenceColumns):
        s_codes, sentences = traces.sentence, traces.sentences
        q_codes, questions = traces.question, traces.questions
    else:
        s_codes, sentences = traces.small_codes("sentence_id")
        q_codes, questions = traces.small_codes("question_id")
    width = max(1, len(questions))
    key = s_codes.astype(np.int64)
    key *= width
    key += q_codes
    pairs = np.unique(key)  # sorted: by sentence, then question
    del key
    pair_sentence = pairs // width
    pair_question = pairs % width
    del pairs
    code = np.full(len(wanted), -1, dtype=np.int64)  # each wanted id's code (-1: none)
    for i, sid in enumerate(wanted):
        at = bisect.bisect_left(sentences, sid)
        if at < len(sentences) and sentences[at] == sid:
            code[i] = at
    low = np.searchsorted(pair_sentence, code, side="left").tolist()
    high = np.searchsorted(pair_sentence, code, side="right").tolist()
    del code
    for lo, hi in zip(low, high, strict=True):
        yield [questions[q] for q in pair_question[lo:hi].tolist()]


def vocabulary_codes(vocabulary: Sequence[str], ids: Sequence[str | None], n: int) -> IntArray:
    """Each of the ``n`` ids' position in the sorted ``vocabulary``; -1 if absent (or None).

    Found by hash: the ids' hashes, sorted, searched among the vocabulary's, sorted (numpy),
    and the string found compared to be sure (another string of the same hash: a binary
    search then); an id whose hash no string of the vocabulary has is none of them. Memory:
    ~24 bytes an id of the vocabulary and of ``ids`` while it runs (no dict of the
    vocabulary: 100,000 sentence ids at 10x paper scale cost ~8 MB as one). A binary search
    per id (~20 string comparisons, each a cache miss at a million ids) took 1.7-2.5 CPU-s a
    call at 100x paper scale (1M labels in an order not the vocabulary's, five calls: a
    quarter of ``metrics``), 0.7 by hash (issue 30).
    """
    import numpy as np

    size = len(vocabulary)
    if not size or not n:
        return np.full(n, -1, dtype=np.int64)
    hashes = np.fromiter(map(_id_hash, vocabulary), dtype=np.int64, count=size)
    order = np.argsort(hashes, kind="stable")  # (equal hashes: the first string first)
    hashes = hashes[order]
    wanted = np.fromiter(map(_id_hash, ids), dtype=np.int64, count=n)
    asked = np.argsort(wanted)  # searched in order: 0.15 CPU-s at 1M ids, 0.3-0.45 not
    at = np.empty(n, dtype=np.int64)
    at[asked] = np.searchsorted(hashes, wanted[asked])
    del asked
    np.minimum(at, size - 1, out=at)
    found = np.where(hashes[at] == wanted, order[at], -1)
    del hashes, order, wanted, at
    # the string at each guess (at -1 the last: not the id, whose hash would have matched)
    guesses = map(vocabulary.__getitem__, found.tolist())
    same = np.fromiter(map(eq, ids, guesses), dtype=bool, count=n)
    codes: IntArray = np.where(same, found, -1)
    for i in np.flatnonzero(~same & (found >= 0)).tolist():  # another string of its hash
        key = ids[i]
        at_key = bisect.bisect_left(vocabulary, key) if key is not None else size
        codes[i] = at_key if at_key < size and vocabulary[at_key] == key else -1
    return codes


#: The hash :func:`vocabulary_codes` sorts ids by (a name of its own: a test collides them).
_id_hash = hash


def first_questions(traces: SentenceColumns) -> IntArray:
    """Per sentence code: the question code of its group with the earliest first row.

    What :func:`_first_parents` reads as "the sentence's question" (one sentence id may
    occur under several questions: the first one in the traces is its question).
    """
    import numpy as np

    kind = traces.first.dtype
    earliest = np.full(len(traces.sentences), np.iinfo(kind).max, dtype=kind)
    np.minimum.at(earliest, traces.sentence, traces.first)
    chosen = traces.first == earliest[traces.sentence]
    del earliest
    out = np.full(len(traces.sentences), -1, dtype=np.int64)
    out[traces.sentence[chosen]] = traces.question[chosen]
    return out


@dataclass(frozen=True)
class SentenceLabelCodes:
    """Sentence labels matched to :class:`SentenceColumns` by code (no dict, no string copy).

    ``sentence``: each label's sentence code in ``traces.sentences`` (-1: in no trace);
    ``question``: its ``question_id``'s code in ``traces.questions`` (-1: none given,
    -2: given but in no trace); ``first``: each sentence code's question code
    (:func:`first_questions`).
    """

    sentence: IntArray
    question: IntArray
    first: IntArray
    #: Per sentence code: its groups name more than one question (the id is ambiguous).
    several: npt.NDArray[np.bool_]

    @classmethod
    def match(cls, labels: Sequence[Label], traces: SentenceColumns) -> SentenceLabelCodes:
        """Match sentence labels (no claim labels: see :func:`_first_parents`)."""
        import numpy as np

        n = len(labels)
        qids = label_column(labels, "question_id")
        question = vocabulary_codes(traces.questions, qids, n)
        given = np.fromiter((q is not None for q in qids), dtype=bool, count=n)
        # likewise a question of the vocabulary no group has (one system's groups: a question
        # only another answered): gpt's label of claude's q3 is no sentence of gpt's
        answered = np.zeros(len(traces.questions), dtype=bool)
        answered[traces.question] = True
        question[given & ((question < 0) | ~answered[np.maximum(question, 0)])] = -2
        first = first_questions(traces)
        sentence = vocabulary_codes(traces.sentences, label_column(labels, "sentence_id"), n)
        # an id of the vocabulary no group has (one system's groups: another's sentence) is
        # in no trace given
        sentence[(sentence >= 0) & (first[np.maximum(sentence, 0)] < 0)] = -1
        return cls(sentence, question, first, several_questions(traces))

    def problem_mask(self) -> npt.NDArray[np.bool_]:
        """Labels :func:`check_labels_against_traces` reports (see its rules)."""
        import numpy as np

        present = self.sentence >= 0
        traced = np.where(present, self.first[np.maximum(self.sentence, 0)], -1)
        wrong_question = present & (self.question != -1) & (self.question != traced)
        unknown = ~present & (self.question < 0)
        several = present & self.several[np.maximum(self.sentence, 0)]
        out: npt.NDArray[np.bool_] = wrong_question | unknown | several
        return out


def several_questions(traces: SentenceColumns) -> npt.NDArray[np.bool_]:
    """Per sentence code: whether its groups name two or more questions."""
    import numpy as np

    width = max(1, len(traces.questions))
    key = traces.sentence.astype(np.int64)
    key *= width
    key += traces.question
    pairs = np.unique(key)
    counts = np.bincount(pairs // width, minlength=len(traces.sentences))
    out: npt.NDArray[np.bool_] = counts > 1
    return out


def _sentence_problems(labels: Sequence[Label], traces: SentenceColumns) -> list[LabelProblem]:
    """:func:`check_labels_against_traces` of sentence labels on groups, by code."""
    import numpy as np

    codes = SentenceLabelCodes.match(labels, traces)
    bad = np.flatnonzero(codes.problem_mask()).tolist()
    if not bad:
        return []
    sids = label_column(labels, "sentence_id")
    qids = label_column(labels, "question_id")
    problems: list[LabelProblem] = []
    for pos in bad:
        sentence_id, question_id, code = sids[pos], qids[pos], int(codes.sentence[pos])
        if code < 0:
            problems.append(_unknown_sentence(pos, sentence_id, question_id))
        elif codes.several[code]:
            mine = np.unique(traces.question[traces.sentence == code]).tolist()
            names = [traces.questions[q] for q in mine]
            problems.append(_several_questions(pos, sentence_id, names))
        else:
            question = traces.questions[int(codes.first[code])]
            problems.append(_other_question(pos, sentence_id, question, question_id))
    return problems


def _unknown_sentence(pos: int, sentence_id: str, question_id: str | None) -> LabelProblem:
    """A sentence label whose sentence (and question, if it gives one) no trace has.

    An id written as a float (``1.0``: a CSV of a pandas column made float by a missing
    value) is a text the traces' ``1`` is not: said, with the way through.
    """
    floats = [i for i in (sentence_id, question_id) if i is not None and _FLOAT_ID.fullmatch(i)]
    return LabelProblem(
        pos,
        "sentence_id",
        f"no trace has sentence_id {sentence_id!r}"
        + (f" and no trace has question_id {question_id!r}" if question_id is not None else "")
        + (
            f" ({floats[0]!r}: a whole number written as a float, as pandas writes a column "
            "with a missing value; write the ids as whole numbers)"
            if floats
            else ""
        ),
    )


#: An id that is a whole number written as a float (``12.0``).
_FLOAT_ID = re.compile(r"\d+\.0+")


def _several_questions(pos: int, sentence_id: str, questions: Sequence[str]) -> LabelProblem:
    """A sentence label whose sentence id the traces put under two or more questions.

    A sentence id names one answer's sentence; under several questions (``007`` in one
    system's file, ``7`` in another's; sentences numbered per answer) the one label would
    count once under each.
    """
    shown = ", ".join(repr(q) for q in questions[:3]) + (", ..." if len(questions) > 3 else "")
    return LabelProblem(
        pos,
        "sentence_id",
        f"sentence {sentence_id!r} is under {len(questions)} questions in the traces "
        f"({shown}): a sentence id names one answer's sentence, and this label would count "
        "once under each; write each id one way in every file, or number sentences per "
        "answer with --option sentence_ids=question (traces and labels)",
    )


def _other_question(pos: int, sentence_id: str, question: str, question_id: str) -> LabelProblem:
    """A sentence label whose question is not its sentence's question in the traces."""
    return LabelProblem(
        pos,
        "question_id",
        f"sentence {sentence_id!r} belongs to question {question!r} in the traces, "
        f"not {question_id!r}",
    )


def label_target(label: Label) -> tuple[str, str]:
    """Return ``("claim", claim_id)`` for a claim label, else ``("sentence", sentence_id)``."""
    if label.claim_id is not None:
        return ("claim", label.claim_id)
    assert label.sentence_id is not None  # guaranteed by the model validator
    return ("sentence", label.sentence_id)


def resolve_claim_labels(traces: Iterable[Trace], labels: Iterable[Label]) -> dict[ClaimKey, Label]:
    """Return the clinical label that applies to each trace, keyed by ``(system, claim_id)``.

    Rule (issue 2): a claim inherits its parent sentence's label unless a claim-level label
    (``Label.claim_id == trace.claim_id``) exists, which then wins. A claim-level label applies
    to that claim id in every system (claim ids are stable across systems); a label that
    names its ``system`` applies to that system's traces only. Traces whose claim
    and sentence are both unlabelled are absent from the result (never defaulted to
    ``has_error=False``). Whether the returned label is claim-level: ``label.claim_id is not
    None``. Raises :class:`InputError` if two labels target the same sentence or claim.
    """
    index = LabelIndex(labels)
    resolved: dict[ClaimKey, Label] = {}
    for trace in traces:
        own = index.of(trace.system)  # per-system labels: the trace's system's own
        label = own.claim.get(trace.claim_id) or own.sentence.get(trace.sentence_id)
        if label is not None:
            resolved[(trace.system, trace.claim_id)] = label
    return resolved


def _first_parents(
    traces: Iterable[Trace] | TraceColumns | SentenceColumns, labels: Sequence[Label] = ()
) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """Each sentence's first question, each claim's first sentence, and every question.

    On columns only the sentences and claims ``labels`` name are looked up (memory follows
    the labels, not the traces).
    """
    import numpy as np

    from failcodes.tracecols import SentenceColumns, TraceColumns

    sentence_question: dict[str, str] = {}
    claim_sentence: dict[str, str] = {}
    if isinstance(traces, SentenceColumns):
        if any(cid is not None for cid in label_column(labels, "claim_id")):
            raise ValueError("claim labels need the claims: read_trace_columns, not groups")
        wanted_s = {sid for sid in label_column(labels, "sentence_id") if sid is not None}
        # each sentence's first question: that of its group with the earliest first row
        order = np.lexsort((traces.first, traces.sentence))
        ordered = traces.sentence[order]
        starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
        for g in order[starts].tolist() if len(order) else []:
            sid = traces.sentences[int(traces.sentence[g])]
            if sid in wanted_s:
                sentence_question[sid] = traces.questions[int(traces.question[g])]
        return sentence_question, claim_sentence, set(traces.questions)
    if isinstance(traces, TraceColumns):
        q_codes, questions = traces.small_codes("question_id")
        s_codes, sentences = traces.small_codes("sentence_id")
        c_codes, claims = traces.small_codes("claim_id")
        wanted_s = {sid for sid in label_column(labels, "sentence_id") if sid is not None}
        wanted_c = {cid for cid in label_column(labels, "claim_id") if cid is not None}
        _, first = np.unique(s_codes, return_index=True)
        for i in first:
            sid = sentences[s_codes[i]]
            if sid in wanted_s:
                sentence_question[sid] = questions[q_codes[i]]
        _, first = np.unique(c_codes, return_index=True)
        for i in first:
            cid = claims[c_codes[i]]
            if cid in wanted_c:
                claim_sentence[cid] = sentences[s_codes[i]]
        return sentence_question, claim_sentence, set(questions)
    seen: set[str] = set()
    for trace in traces:
        sentence_question.setdefault(trace.sentence_id, trace.question_id)
        claim_sentence.setdefault(trace.claim_id, trace.sentence_id)
        seen.add(trace.question_id)
    return sentence_question, claim_sentence, seen


def check_labels_against_traces(
    labels: Sequence[Label], traces: Iterable[Trace] | TraceColumns | SentenceColumns
) -> list[LabelProblem]:
    """List the labels whose target does not exist in ``traces`` (empty list: all fine).

    A sentence-level label is valid when its ``sentence_id`` occurs in the traces, or when it
    carries a ``question_id`` that occurs in the traces (a sentence of a known answer from which
    the systems extracted no claims: metrics report it instead of dropping it). If both the
    label and the traces give a ``question_id`` for the sentence, they must agree. A claim-level
    label needs its ``claim_id`` in the traces (and, if it gives one, the same ``sentence_id``).

    Per-system labels are checked against their own system's traces (a system no trace has
    is a problem of its own), and a mix of labels with and without a system is one.
    """
    scope = label_scope_problem(labels)
    if scope is not None:
        return [scope]
    by_system = label_systems(labels)
    if by_system is not None:
        return _per_system(labels, traces, by_system, _check_as_shared)
    return _check_as_shared(labels, traces)


def _check_as_shared(
    labels: Sequence[Label], traces: Iterable[Trace] | TraceColumns | SentenceColumns
) -> list[LabelProblem]:
    """:func:`check_labels_against_traces` of labels applying to all of ``traces``."""
    from failcodes.tracecols import SentenceColumns, TraceColumns

    if (
        isinstance(traces, SentenceColumns)
        and isinstance(labels, Sequence)
        and all(cid is None for cid in label_column(labels, "claim_id"))
    ):
        return _sentence_problems(labels, traces)  # by code: memory follows the labels
    if not isinstance(traces, Sequence | TraceColumns | SentenceColumns):
        traces = list(traces)  # read twice below
    sentence_question, claim_sentence, questions = _first_parents(traces, labels)
    found = sorted(
        {sid for cid, sid in zip(*_target_columns(labels), strict=True) if cid is None}
        & sentence_question.keys()
    )
    several = {
        sid: qids
        for sid, qids in zip(found, _questions_of_sentences(traces, found), strict=True)
        if len(qids) > 1
    }
    problems: list[LabelProblem] = []
    targets = zip(
        label_column(labels, "claim_id"),
        label_column(labels, "sentence_id"),
        label_column(labels, "question_id"),
        strict=True,
    )
    for pos, (claim_id, sentence_id, question_id) in enumerate(targets):
        if claim_id is not None:
            parent = claim_sentence.get(claim_id)
            if parent is None:
                problems.append(
                    LabelProblem(pos, "claim_id", f"no trace has claim_id {claim_id!r}")
                )
            elif sentence_id is not None and sentence_id != parent:
                problems.append(
                    LabelProblem(
                        pos,
                        "sentence_id",
                        f"claim {claim_id!r} belongs to sentence {parent!r} in the "
                        f"traces, not {sentence_id!r}",
                    )
                )
            continue
        assert sentence_id is not None
        question = sentence_question.get(sentence_id)
        if sentence_id in several:
            problems.append(_several_questions(pos, sentence_id, several[sentence_id]))
        elif question is None:
            if question_id is None or question_id not in questions:
                problems.append(_unknown_sentence(pos, sentence_id, question_id))
        elif question_id is not None and question_id != question:
            problems.append(_other_question(pos, sentence_id, question, question_id))
    if claim_sentence and not problems:  # claim labels, each with a trace
        ids = traces.small_codes("claim_id")[1] if isinstance(traces, TraceColumns) else None
        two_ways = _labelled_written_two_ways(labels, ids or claim_sentence, "claim_id")
        if two_ways is not None:
            problems.append(LabelProblem(two_ways[0], "claim_id", two_ways[1]))
    return problems


def _target_columns(labels: Sequence[Label]) -> tuple[Sequence[Any], Sequence[Any]]:
    """The labels' ``claim_id`` and ``sentence_id`` columns."""
    return label_column(labels, "claim_id"), label_column(labels, "sentence_id")


def _per_system(
    labels: Sequence[Label],
    traces: Iterable[Trace] | TraceColumns | SentenceColumns,
    by_system: Mapping[str, list[int]],
    check: Callable[[Sequence[Label], Any], list[LabelProblem]],
) -> list[LabelProblem]:
    """``check`` of each system's labels against its own traces, in label order.

    A label of a system no trace has is a problem (naming the traces' systems); the others'
    messages name their system.
    """
    have = trace_system_names(traces)
    problems: list[LabelProblem] = []
    for system, positions in by_system.items():
        if system not in have:
            shown = ", ".join(repr(s) for s in have[:8]) + (", ..." if len(have) > 8 else "")
            message = f"no trace has system {system!r} (systems: {shown})"
            if any(s in by_system for s in have):  # one system's traces, every system's labels
                message += (
                    "; labels of several systems' answers, scored one system at a time? give "
                    "every system's traces together (--traces A --traces B), or this file's "
                    "rows of the traces' systems alone"
                )
            near = next((s for s in have if _fold(s) == _fold(system)), None)
            if near is not None:  # 'Müller' in NFD beside the traces' NFC looked the same
                message = (
                    f"system {system!r} is written {_how_written(system, near)} than the "
                    f"traces' {near!r}: no trace has it; write it as the traces do"
                )
            problems.extend(LabelProblem(pos, "system", message) for pos in positions)
            continue
        mine = traces_of_system(traces, system)
        for problem in check(labels_at(labels, positions), mine):
            problems.append(
                LabelProblem(
                    positions[problem.position],
                    problem.field,
                    f"system {system!r}: {problem.message}",
                )
            )
    problems.sort(key=lambda p: p.position)
    return problems


def _fold(text: str) -> str:
    """An id as a likely mistake writes it: case, Unicode form, leading zeros of its numbers.

    Unicode form is NFKC with unseen characters and dashes folded (:func:`spelling.lookalike`):
    a label ``q1:s0`` with a zero-width space after it (or a fullwidth ``ｓ``) names the
    trace's ``q1:s0``. Zeros inside an id too: ``s007`` in one system's file and ``s7`` in
    another's; whole numbers only (:mod:`failcodes.idzeros`): ``v1.01`` and ``v1.1`` are two
    ids. A whole number written as a float (``1.0``, a CSV of a pandas column widened by a
    missing cell) is the ``1`` of another system's file. Spacing inside an id too: ``q1 s2``
    labelled, ``q1  s2`` traced (a text-made id, a sheet's double space), read as a sentence
    without claims beside an unlabelled one (recall 1/2 for 2/2, exit 0); and a space where
    the other has none (``q1: s2`` labelled, ``q1:s2`` traced: TP 0, FN 2 for TP 1, FN 1,
    exit 0).
    """
    folded = text.lower() if text.isascii() else lookalike(text).casefold()
    folded = "".join(folded.split()) if _ANY_SPACE.search(folded) else folded  # 'q1: s2'
    return without_leading_zeros(folded.partition(".")[0] if _FLOAT_ID.fullmatch(text) else folded)


#: How an id written with other spacing differs (a one-line message shows runs as one).
_SPACING = "spacing (two spaces in a row, a tab or a line break where the other has one space)"
#: How an id written with a space where the other has none differs.
_GAP = "spacing (a space where the other has none)"
#: Spacing of any kind inside an id.
_ANY_SPACE = re.compile(r"\s")


def _how_written(name: str, theirs: str) -> str:
    """How ``name`` differs from ``theirs`` (same after :func:`_fold`), for a message."""
    if _FLOAT_ID.fullmatch(name) or _FLOAT_ID.fullmatch(theirs):
        return "as a float, as a CSV of a pandas column with a missing value holds it"
    if without_leading_zeros(name) == without_leading_zeros(theirs):
        return "with other leading zeros"
    if name.split() == theirs.split():
        return f"with other {_SPACING}"
    if "".join(name.split()) == "".join(theirs.split()):
        return f"with other {_GAP}"
    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", theirs):
        nfd = unicodedata.is_normalized("NFD", name)
        here = "NFD" if nfd else "NFC" if unicodedata.is_normalized("NFC", name) else "mixed"
        return f"in another Unicode form ({here}: the same letters, composed differently)"
    odd = first_unseen_difference(name, theirs)
    if odd is not None:
        # the character named (U+043E CYRILLIC SMALL LETTER O): a list of kinds ("a
        # zero-width or fullwidth character, another dash") named none a Cyrillic letter is
        return f"with a character that looks like nothing or like another ({odd})"
    return "in another case"


def _trace_sentences(
    traces: Sequence[Trace] | TraceColumns | SentenceColumns,
) -> tuple[Callable[[Sequence[str | None]], list[int]], Iterable[str]]:
    """``(the positions of the ids given that no trace has, the traces' sentence ids)``.

    On groups, memory follows the labels: the vocabulary holds the labels' ids too, so a
    sentence has a trace when a group has its code (every id looked up at once: one numpy
    call a label cost ~12 µs).
    """
    from failcodes.tracecols import SentenceColumns, TraceColumns

    if isinstance(traces, SentenceColumns):
        import numpy as np

        vocab = traces.sentences  # sorted
        grouped = np.zeros(len(vocab) + 1, dtype=bool)  # (the last: the code -1, no id)
        grouped[traces.sentence] = True

        def untraced(sids: Sequence[str | None]) -> list[int]:
            codes = vocabulary_codes(vocab, sids, len(sids))
            found: list[int] = np.flatnonzero(~grouped[codes]).tolist()
            return found

        return untraced, (vocab[c] for c in np.flatnonzero(grouped[:-1]).tolist())
    known = (
        set(traces.small_codes("sentence_id")[1])
        if isinstance(traces, TraceColumns)
        else {t.sentence_id for t in traces}
    )

    def unknown(sids: Sequence[str | None]) -> list[int]:
        return [pos for pos, sid in enumerate(sids) if sid not in known]

    return unknown, known


def _sentence_labels_without_trace(
    labels: Sequence[Label], untraced: Callable[[Sequence[str | None]], list[int]]
) -> tuple[bool, dict[str, int]]:
    """Whether some label has a trace; the sentence labels without one (folded id -> position).

    A claim label has one (claim ids were checked before): claim labels beside sentence labels
    of sentences without claims are a way to label a whole answer.
    """
    sids = label_column(labels, "sentence_id")
    cids = label_column(labels, "claim_id")
    without = untraced(sids)
    matched = len(without) < len(sids)  # a sentence id a trace has
    missing: dict[str, int] = {}
    for pos in without:
        sid = sids[pos]
        if cids[pos] is not None or sid is None:
            matched = True
        else:
            missing.setdefault(_fold(sid), pos)
    return matched, missing


def sentence_label_mismatch(
    labels: Sequence[Label], traces: Sequence[Trace] | TraceColumns | SentenceColumns
) -> tuple[int, str] | None:
    """``(position, message)`` of sentence labels that cannot mean what they say, or None.

    A label whose sentence is in no trace counts as a sentence the systems extracted no claim
    from (ids are compared exactly). Two cases are almost surely mistakes: its id is a
    trace's but for case or Unicode form; or no label at all has a trace (the labels' ids
    follow another scheme than the traces'). Trace ids are folded one at a
    time, and only when some label has no trace. Per-system labels: each system's against
    its own traces (the first such label in label order).
    """
    by_system = label_systems(labels)
    if by_system is not None:

        def one(mine: Sequence[Label], own: Any) -> list[LabelProblem]:
            found = _mismatch_as_shared(mine, own)
            return [] if found is None else [LabelProblem(found[0], "sentence_id", found[1])]

        problems = _per_system(labels, traces, by_system, one)
        return (problems[0].position, problems[0].message) if problems else None
    return _mismatch_as_shared(labels, traces)


def _mismatch_as_shared(
    labels: Sequence[Label], traces: Sequence[Trace] | TraceColumns | SentenceColumns
) -> tuple[int, str] | None:
    """:func:`sentence_label_mismatch` of labels applying to all of ``traces``."""
    untraced, trace_ids = _trace_sentences(traces)
    matched, missing = _sentence_labels_without_trace(labels, untraced)
    if not missing:
        return _labelled_written_two_ways(labels, trace_ids)
    sids = label_column(labels, "sentence_id")
    example: str | None = None
    for sid in trace_ids:
        example = sid if example is None or sid < example else example
        pos = missing.get(_fold(sid), -1)
        if pos >= 0:
            zeros = without_leading_zeros(sid) == without_leading_zeros(sids[pos] or "")
            odd = first_unseen_difference(sids[pos] or "", sid)
            spaced = sid.split() == (sids[pos] or "").split()
            gap = "".join(sid.split()) == "".join((sids[pos] or "").split())
            how = (
                "leading zeros"
                if zeros
                else _SPACING
                if spaced
                else _GAP
                if gap
                else "case, Unicode form"
            )
            return pos, (
                f"no trace has sentence_id {sids[pos]!r}, but one has {sid!r} (ids are "
                f"compared exactly: {how if odd is None else f'{how}: {odd}'}"
                "); write the trace's id"
            )
    dated = _read_as_dates(missing.values(), sids, untraced)
    if dated is not None:
        return dated
    if not matched and example is not None:
        pos = min(missing.values())
        return pos, (
            f"no trace has sentence_id {sids[pos]!r}, nor any other sentence label's: are the "
            f"ids those of the traces (such as {example!r})? (a sentence without a trace "
            "counts as one the systems extracted no claim from)"
        )
    shifted = _numbered_from_zero(
        {sids[p] or "": p for p in missing.values()},
        zip(sids, label_column(labels, "sentence"), strict=True),
        _trace_sentences(traces)[1],
    )
    if shifted is not None:
        return shifted
    crossed = _numbered_otherwise(
        {sids[p] or "": p for p in missing.values()},
        zip(sids, label_column(labels, "sentence"), strict=True),
        _trace_sentences(traces)[1],
    )
    if crossed is not None:
        return crossed
    return _labelled_written_two_ways(labels, _trace_sentences(traces)[1])


def _read_as_dates(
    positions: Iterable[int],
    sids: Sequence[str | None],
    untraced: Callable[[Sequence[str | None]], list[int]],
) -> tuple[int, str] | None:
    """``(position, message)`` of a sentence label whose id a spreadsheet turned into a date.

    Labels kept in Excel: a sentence id ``1-2`` (question 1, sentence 2) was read as the 2nd
    of January and saved as ``2-Jan``; it named no trace's sentence, so under its question
    it counted as a sentence without claims (no error flagged) and the trace's ``1-2`` as
    unlabelled (TP 1, FP 1, FN 1, TN 3 for TP 2, FP 1, TN 3, exit 0, said only as "labels
    cover 6 of 9 sentences"). Refused when an id the date may have been
    (:func:`failcodes.idzeros.date_variants`) is a trace's sentence id.
    """
    for pos in sorted(positions):
        sources = date_variants(sids[pos] or "")
        if not sources:
            continue
        gone = set(untraced(sources))
        found = [sid for i, sid in enumerate(sources) if i not in gone]
        if found:
            typed, shown = _dated_part(found[0], sids[pos] or "")
            return pos, (
                f"no trace has sentence_id {sids[pos]!r}, but one has {found[0]!r}: a "
                f"spreadsheet (Excel) read {typed!r} as a date and saved the date, {shown!r} "
                "(read so, the label counted as a sentence without claims, no error flagged, "
                "and the trace's sentence as unlabelled); write the labels' ids as the traces "
                "do (import the column as Text, not General)"
            )
    return None


def _numbered_from_zero(
    untraced: Mapping[str, int],
    label_texts: Iterable[tuple[str | None, str | None]],
    trace_ids: Iterable[str],
) -> tuple[int, str] | None:
    """``(position, message)`` of sentence labels numbered from 0 where the traces count from 1.

    Labels ``q1:0, q1:1`` (a list's index) for traces ``q1:1, q1:2`` (its place): each label
    would fall on the next sentence, 'q1:0' on a sentence without claims. Refused when two or
    more answers have such a label 0 without a trace beside a trace 1, and no trace is
    numbered 0 (one answer whose sentence 0 gave no claim is no pattern). Ids cannot tell it
    from traces numbered from 0 whose sentence 0 gave no claim in each answer (a preamble; a
    shift whose last sentence gave none looks the same): read as given when those answers'
    other labels give their sentence's text, which :func:`text_mismatch` compares instead.
    """
    zeros = {sid[:-1]: pos for sid, pos in untraced.items() if _ZERO.fullmatch(sid)}
    if len(zeros) < 2:
        return None
    others = [
        text
        for sid, text in label_texts
        if (number := _LAST_NUMBER.fullmatch(sid or "")) is not None
        and number.group(1) in zeros
        and int(number.group(2)) > 0
    ]
    if others and all(others):
        return None  # the texts tell (text_mismatch)
    ones: set[str] = set()
    for sid in trace_ids:
        number = _LAST_NUMBER.fullmatch(sid)
        if number is None:
            continue
        if int(number.group(2)) == 0:
            return None  # the traces number from 0 too
        if number.group(2) == "1":
            ones.add(number.group(1))
    if not all(prefix in ones for prefix in zeros):
        return None
    shown = ", ".join(repr(f"{p}0") for p in sorted(zeros)[:3])
    return min(zeros.values()), (
        f"the labels number sentences from 0 ({shown}{', ...' if len(zeros) > 3 else ''}: "
        f"no trace has them) where the traces of those {len(zeros)} answers number them "
        f"from 1 ({min(zeros) + '1'!r}): each label would fall on the next sentence, and "
        "sentence 0 count as one without claims; number the labels as the traces do (if "
        "both number from 0 and sentence 0 gave no claim, give these answers' labels their "
        "sentence's text, column 'sentence': the traces' texts are then compared instead)"
    )


def _numbered_otherwise(
    untraced: Mapping[str, int],
    label_texts: Iterable[tuple[str | None, str | None]],
    trace_ids: Iterable[str],
) -> tuple[int, str] | None:
    """``(position, message)`` of sentence labels numbered another way than the traces.

    Labels keyed by a sentence's character offset in the answer (``q1:0, q1:22, q1:38``) for
    traces numbered by place (``q1:0, q1:1, q1:2``), or cut by another sentence splitter:
    ``q1:0`` met its trace, ``q1:22`` and ``q1:38`` none, so they counted as labelled
    sentences without claims (no error flagged: recall 1/3 for 3/3, exit 0) and the traces'
    ``q1:1``, ``q1:2`` as unlabelled, said only as a coverage count. Labels numbered from 1
    for traces numbered from 0 (``q1:1..3`` for ``q1:0..2``) show the same way: each fell on
    the sentence before its own, the last on none (TP 0, FP 2, FN 3, TN 1 for TP 3, TN 3,
    exit 0). Refused when two or more
    answers hold as many labels without a trace as sentences with claims but no label, every
    such label numbered past the answer's last sentence with claims (sentences without
    claims labelled beside skipped ones with claims, as many of each, in two answers, is no
    pattern of a subset labelled on purpose). Read as given when those labels give their
    sentence's text (column ``sentence``), which :func:`text_mismatch` compares instead.
    """
    labelled: set[str] = set()
    texts: dict[str, list[str | None]] = {}
    for sid, text in label_texts:
        if sid is None:
            continue
        labelled.add(sid)
        number = _LAST_NUMBER.fullmatch(sid)
        if number is not None:
            texts.setdefault(number.group(1), []).append(text)
    past: dict[str, list[tuple[int, str, int]]] = {}
    for sid, pos in untraced.items():
        number = _LAST_NUMBER.fullmatch(sid)
        if number is not None:
            past.setdefault(number.group(1), []).append((int(number.group(2)), sid, pos))
    if len(past) < 2:
        return None
    last: dict[str, int] = {}
    bare: dict[str, list[str]] = {}
    for sid in trace_ids:
        number = _LAST_NUMBER.fullmatch(sid)
        if number is None or number.group(1) not in past:
            continue
        prefix = number.group(1)
        last[prefix] = max(last.get(prefix, -1), int(number.group(2)))
        if sid not in labelled:
            bare.setdefault(prefix, []).append(sid)
    crossed = sorted(
        prefix
        for prefix, mine in past.items()
        if prefix in last
        and len(bare.get(prefix, ())) == len(mine)
        and min(n for n, _, _ in mine) > last[prefix]
        and not all(texts.get(prefix, [None]))
    )
    if len(crossed) < 2:
        return None
    first = crossed[0]
    mine = sorted(past[first])
    named = ", ".join(repr(sid) for _, sid, _ in mine[:3]) + (", ..." if len(mine) > 3 else "")
    theirs = sorted(bare[first], key=lambda sid: (len(sid), sid))
    shown = ", ".join(repr(sid) for sid in theirs[:3]) + (", ..." if len(theirs) > 3 else "")
    return min(pos for prefix in crossed for _, _, pos in past[prefix]), (
        f"the labels number sentences otherwise than the traces in {len(crossed)} answers "
        f"(labels {named} name no trace's sentence, past the last with claims, "
        f"{first + str(last[first])!r}, while {shown} with claims have no label): character "
        "offsets, numbers from 1 where the traces count from 0, or another sentence "
        "splitter? each label without a trace would count as a sentence without claims (no "
        "error flagged), the traces' sentences unlabelled or under another's label; number "
        "the labels as the traces do (if they are sentences without claims indeed, give "
        "these answers' labels their sentence's text, column 'sentence': the traces' texts "
        "are then compared instead)"
    )


#: A sentence id whose last number is 0 (``q1:0``, ``0``), and any id's last number.
_ZERO = re.compile(r"(?:.*\D)?0")
_LAST_NUMBER = re.compile(r"(.*?)(\d+)")


def written_like_hint(
    sentence_id: str, traces: Sequence[Trace] | TraceColumns | SentenceColumns
) -> str:
    """For an error naming a label's sentence no trace has: a trace's id it matches loosely.

    That is the label's id but for case or Unicode form ("" if none). On the error path
    only: every trace id is folded.

    ``sé0`` composed in the labels and decomposed in the traces read "no trace has
    sentence_id 'sé0'", two ids that look the same.
    """
    key = _fold(sentence_id)
    for sid in _trace_sentences(traces)[1]:
        if sid != sentence_id and _fold(sid) == key:
            same_letters = lookalike(sid) == lookalike(sentence_id)
            return (
                f", but one has {ascii(sid) if same_letters else repr(sid)}, the same id "
                f"{_how_written(sentence_id, sid)} (ids are compared exactly); write the "
                "trace's id"
            )
    return ""


def _labelled_written_two_ways(
    labels: Sequence[Label], trace_ids: Iterable[str], field: str = "sentence_id"
) -> tuple[int, str] | None:
    """A labelled sentence (or claim) whose id the traces also write another way.

    One system's file writes ``sé0`` composed (NFC), another's decomposed (NFD), the label
    the first: the label would apply to the first system's sentence only, the other system's
    claims unlabelled. A claim label (``c0`` in one system, ``C0`` in another) would miss the
    other system's claim the same way. Every trace id is folded (``lower`` for ASCII ids, the cheap
    common case).
    """
    sids = label_column(labels, "sentence_id")
    cids = label_column(labels, "claim_id")
    labelled: dict[str, int] = {}
    for pos, (sid, cid) in enumerate(zip(sids, cids, strict=True)):
        key = cid if field == "claim_id" else None if cid is not None else sid
        if key is not None and key not in labelled:
            labelled[key] = pos
    # a trace id written as a label writes it no other way: only the rest are folded, and
    # the labels' ids only if there is a rest (every trace sentence labelled: no fold;
    # bench_engine's 10,000 labels, 20,000 folds: 26 -> 4 ms)
    others = [tid for tid in trace_ids if tid not in labelled]
    if not labelled or not others:
        return None
    folded: dict[str, str] = {}
    for key in labelled:  # in label order: the first label of a folded id stands for it
        folded.setdefault(_fold(key), key)
    hit = min(
        (
            (labelled[first], first, tid)  # tid is no label's: it differs from first
            for tid in others
            if (first := folded.get(_fold(tid))) is not None
        ),
        default=None,  # the first label in file order: trace ids may come as a set, unordered
    )
    if hit is None:
        return _traced_as_dates(labelled, others, field)
    pos, first, tid = hit
    same_letters = lookalike(tid) == lookalike(first)
    shown = ascii(tid) if same_letters else repr(tid)  # two forms look alike
    written = f"({_how_written(tid, first)}): the label applies to {first!r} only, so "
    if field == "claim_id":
        return pos, (
            f"the traces write claim {first!r} also as {shown} {written}the claim "
            f"under {shown} takes its sentence's label (or none); write the id one way "
            "in every traces file"
        )
    return pos, (
        f"the traces write sentence {first!r} also as {shown} {written}the "
        f"claims under {shown} count unlabelled and a system that wrote only {shown} "
        f"is scored as making no claim for {first!r} (no error flagged); write the id "
        "one way in every traces file"
    )


def _dated_part(typed: str, dated: str) -> tuple[str, str]:
    """The part of ``typed`` a spreadsheet read as a date, and that date as ``dated`` shows it."""
    found = DATED_PART.search(dated)
    if found is None:  # (a caller's pair always has one)
        return typed, dated
    return typed[found.start() : len(typed) - (len(dated) - found.end())], found.group()


def _traced_as_dates(
    labelled: Mapping[str, int], others: Sequence[str], field: str
) -> tuple[int, str] | None:
    """A labelled id a traces file writes as the date a spreadsheet read it as, or the reverse.

    One system's traces opened and saved in Excel: its sentence ``1-2`` became ``2-Jan``, so
    its claims were unlabelled and the labelled ``1-2`` counted as a sentence it made no claim
    for (TP 1, FP 1, FN 1, TN 3 for TP 2, FP 1, TN 3, exit 0, said only as a coverage count);
    labels saved with it (``2-Jan``) missed the other systems' ``1-2`` so.
    """
    hits = [
        (labelled[source], source, tid, tid)
        for tid in filter(DATED_PART.search, others)
        for source in date_variants(tid)
        if source in labelled
    ]
    dated = list(filter(DATED_PART.search, labelled))  # (100,000 ids: ~15 ms)
    rest = set(others) if dated else set()
    hits += [
        (labelled[key], key, source, key)
        for key in dated
        for source in date_variants(key)
        if source in rest
    ]
    if not hits:
        return None
    pos, first, tid, date = min(hits)
    kind = "claim" if field == "claim_id" else "sentence"
    typed, shown = _dated_part(tid if date == first else first, date)
    return pos, (
        f"the traces write {kind} {first!r} also as {tid!r}: a spreadsheet (Excel) read "
        f"{typed!r} as a date and saved the date, {shown!r}, so the label applies to "
        f"{first!r} only and the claims under {tid!r} count unlabelled; write the id one way "
        "in every traces file and the labels (import the column as Text, not General)"
    )


def validate_labels(
    labels: Sequence[Label],
    traces: Sequence[Trace] | TraceColumns | SentenceColumns,
    *,
    path: str | Path | None = None,
    lines: Sequence[int] | None = None,
    texts: Callable[[Sequence[str]], Iterable[TraceTexts]] | None = None,
) -> None:
    """Raise :class:`InputError` for the first label whose sentence or claim is not in traces.

    No labels at all (a file of only a header, or blank) is an error too: every metric would
    be undefined. ``texts`` streams the traces' texts (:func:`text_mismatch`; given the
    sentence ids whose labels give their text, those sentences' rows among them) when
    ``traces`` holds no trace objects (columns read by the engine); without it, and without
    objects, the texts are not compared.
    """
    if not len(labels):
        raise InputError("no labels found (expected at least one labelled row)", path=path)
    problems = check_labels_against_traces(labels, traces)
    if problems:
        first = problems[0]
        line = lines[first.position] if lines is not None else first.position + 1
        extra = f" ({len(problems) - 1} more such labels)" if len(problems) > 1 else ""
        sid = label_column(labels, "sentence_id")[first.position]
        if first.field == "sentence_id" and sid is not None and "no trace has" in first.message:
            # the same id written another way (a float: said by the message itself)
            extra = ("" if _FLOAT_ID.fullmatch(sid) else written_like_hint(sid, traces)) + extra
        raise InputError(first.message + extra, path=path, line=line, field=first.field)
    mismatch = sentence_label_mismatch(labels, traces) or _system_outside_labels(labels, traces)
    if mismatch is not None:
        pos, message = mismatch
        raise InputError(
            message,
            path=path,
            line=lines[pos] if lines is not None else pos + 1,
            field="sentence_id",
        )
    told = labelled_texts(labels)
    several = label_systems(labels) is None and len(trace_system_names(traces)) > 1
    if not (told or several):
        return
    rows: Iterable[TraceTexts]
    if texts is not None:
        rows = texts(told)
    elif (objects := _trace_objects(traces)) is not None:
        rows = ((t.system, t.sentence_id, t.claim_id, t.sentence, t.claim) for t in objects)
    else:
        return
    problem = text_mismatch(labels, rows)
    if problem is not None:
        line = lines[problem.position] if lines is not None else problem.position + 1
        raise InputError(problem.message, path=path, line=line, field=problem.field)


def _trace_objects(traces: Any) -> Sequence[Trace] | None:
    """The trace objects behind ``traces`` (None: columns read by the engine, groups)."""
    from failcodes.tracecols import SentenceColumns, TraceColumns

    if isinstance(traces, SentenceColumns):
        return None
    if isinstance(traces, TraceColumns):
        return traces.objects
    return traces if isinstance(traces, Sequence) else None


#: A trace's texts for :func:`text_mismatch`: system, sentence id, claim id,
#: sentence text, claim text.
TraceTexts = tuple[str, str, str, str | None, str | None]


def text_mismatch(labels: Sequence[Label], rows: Iterable[TraceTexts]) -> LabelProblem | None:
    """A label whose sentence (or claim) is not the text the traces give it.

    Two cases. Each system wrote its own answer and numbered its sentences ``s1, s2, ...``
    (or its claims ``c1, ...``) in its own file: a shared label (no system) would apply to
    each system's ``s1``, two different sentences. A label that gives its sentence's text
    names another sentence than its id does in the traces (labels made on an earlier run's
    answer, numbered alike): the clinician's judgement of one sentence would score another.
    Texts are compared by their letters and digits, case folded; a trace without the text
    is passed over.
    """
    claims = label_column(labels, "claim_id")
    sids = label_column(labels, "sentence_id")
    shared = label_systems(labels) is None
    by_sentence: dict[str, int] = {}
    by_claim: dict[str, int] = {}
    told: dict[tuple[str | None, str], tuple[int, str, str]] = {}  # the labels' own texts
    texts = label_column(labels, "sentence")
    systems = label_column(labels, "system")
    for pos, (sid, cid) in enumerate(zip(sids, claims, strict=True)):
        if cid is not None:
            by_claim.setdefault(cid, pos)
        elif sid is not None:
            by_sentence.setdefault(sid, pos)
            if texts[pos]:
                told.setdefault((systems[pos], sid), (pos, texts[pos], _letters(texts[pos])))
    first: dict[tuple[str, str], tuple[str, str]] = {}  # (field, id) -> system, text
    # a labelled sentence's claim id -> system, claim text, whether its row gave the sentence
    claimed: dict[tuple[str, str], tuple[str, str, bool]] = {}
    found: dict[int, LabelProblem] = {}
    for system, sid, cid, sentence, claim in rows:
        if told and sentence is not None:
            own = told.get((None, sid)) or told.get((system, sid))
            if own and own[0] not in found and own[1] != sentence and own[2] != _letters(sentence):
                found[own[0]] = LabelProblem(
                    own[0],
                    "sentence",
                    f"the label's sentence {clip(own[1])!r} is not sentence {sid!r} of the "
                    f"traces of system {system!r}, {clip(sentence)!r}: the label was made on "
                    "another answer, or its id names another sentence; label the traces' "
                    "sentences by their ids",
                )
        if not shared:
            continue
        if claim is not None and sid in by_sentence:
            seen_claim = claimed.setdefault((sid, cid), (system, claim, sentence is not None))
            pos = by_sentence[sid]
            if (
                seen_claim[0] != system
                and not seen_claim[2]  # a sentence's text: the sentence check's
                and sentence is None
                and pos not in found
                and seen_claim[1] != claim
                and _letters(seen_claim[1]) != _letters(claim)
            ):
                found[pos] = _claims_of_two_answers(pos, sid, cid, seen_claim[:2], system, claim)
        for field, target, text, wanted in (
            ("sentence_id", sid, sentence, by_sentence),
            ("claim_id", cid, claim, by_claim),
        ):
            if text is None or target not in wanted:
                continue
            seen = first.setdefault((field, target), (system, text))
            if text == seen[1]:  # the common case: the same text (no key made)
                continue
            pos = wanted[target]
            if seen[0] != system and _letters(seen[1]) != _letters(text) and pos not in found:
                what = "sentence" if field == "sentence_id" else "claim"
                found[pos] = LabelProblem(
                    pos,
                    field,
                    f"{what} {target!r} reads {clip(seen[1])!r} in the traces of system "
                    f"{seen[0]!r} and {clip(text)!r} in those of {system!r}: this label, "
                    "shared by every system (no system column), would apply to two different "
                    f"{what}s; if each system "
                    "wrote its own answer, give the labels a system column (labels per "
                    f"system), else write the {what} one way in every traces file",
                )
    return found[min(found)] if found else None


def _claims_of_two_answers(
    pos: int, sid: str, cid: str, first: tuple[str, str], system: str, claim: str
) -> LabelProblem:
    """A shared sentence label whose sentence holds one claim id with two systems' texts.

    Each system wrote its own answer, numbered its sentences and claims alike (``q1:1``,
    ``q1c1``) and the traces give no sentence text: the sentence check has nothing to
    compare, and sysB would be scored on the labels of sysA's answer.
    """
    return LabelProblem(
        pos,
        "sentence_id",
        f"claim {cid!r} of sentence {sid!r} reads {clip(first[1])!r} in the traces of system "
        f"{first[0]!r} and {clip(claim)!r} in those of {system!r}, and no sentence text tells "
        "them apart: this label, shared by every system (no system column), would score both "
        "systems' claims as one sentence's; if each system wrote its own answer, give the "
        "labels a system column (labels per system); if the systems checked one answer, "
        "give the traces that sentence's text (field sentence)",
    )


def labelled_texts(labels: Sequence[Label]) -> list[str]:
    """The sentence ids of the labels that give their sentence's text."""
    texts = label_column(labels, "sentence")
    sids = label_column(labels, "sentence_id")
    return [sid for sid, text in zip(sids, texts, strict=True) if text and sid is not None]


def _letters(text: str) -> str:
    """A text as compared with another: its letters and digits, case folded, in one form.

    NFC first: a file written in NFD (macOS) holds ``café``'s accent as a mark of its own,
    which is no letter, so one system's ``cafe`` read as another claim than the other's.
    """
    return "".join(ch for ch in unicodedata.normalize("NFC", text).casefold() if ch.isalnum())


def _system_outside_labels(
    labels: Sequence[Label], traces: Sequence[Trace] | TraceColumns | SentenceColumns
) -> tuple[int, str] | None:
    """Shared sentence labels no sentence of one system has, in labelled questions it answered.

    One system's file numbered its sentences another way (``q1-s0`` beside the labels' and
    the other system's ``q1s0``), or wrote its own answer under the same question ids: each
    labelled sentence would be one it "made no claim for", its own sentences unlabelled. The
    first such system's first labelled question,
    with its sentence and the labels' there, is named.
    """
    import numpy as np

    from failcodes.tracecols import SentenceColumns, TraceColumns

    if label_systems(labels) is not None:
        return None  # per-system labels: each system's own (checked per system)
    claims = label_column(labels, "claim_id")
    sids = label_column(labels, "sentence_id")
    wanted = {sid for sid, cid in zip(sids, claims, strict=True) if cid is None and sid}
    if not wanted:
        return None
    codes: list[tuple[npt.NDArray[np.integer[Any]], Sequence[str]]]
    if isinstance(traces, SentenceColumns):
        codes = [
            (traces.system, traces.systems),
            (traces.question, traces.questions),
            (traces.sentence, traces.sentences),
        ]
    else:
        cols = traces if isinstance(traces, TraceColumns) else TraceColumns.from_traces(traces)
        codes = [cols.small_codes(name) for name in ("system", "question_id", "sentence_id")]
    (system, systems), (question, questions), (sentence, vocab) = codes
    if len(systems) < 2:
        return None
    labelled_sentence = np.fromiter((s in wanted for s in vocab), dtype=bool, count=len(vocab))
    row_labelled = labelled_sentence[sentence]
    if not row_labelled.any():
        return None  # no label has a trace: sentence_label_mismatch's case
    labelled_question = np.zeros(len(questions), dtype=bool)
    labelled_question[question[row_labelled]] = True
    in_labelled = labelled_question[question]
    for code, name in enumerate(systems):
        mine = in_labelled & (system == code)
        if not mine.any() or row_labelled[mine].any():
            continue
        rows = np.flatnonzero(mine)
        first = int(rows[np.argmin(question[rows])])  # its first labelled question
        q = int(question[first])
        theirs = np.flatnonzero(row_labelled & (question == q))
        label_sid = min(vocab[int(sentence[r])] for r in theirs.tolist())
        own = min(vocab[int(sentence[r])] for r in rows.tolist() if int(question[r]) == q)
        n_q = len(np.unique(question[rows]))
        pos = next(
            i
            for i, (s, c) in enumerate(zip(sids, claims, strict=True))
            if s == label_sid and c is None
        )
        return pos, (
            f"no sentence of system {name!r} is labelled in the {n_q} labelled question(s) it "
            f"made claims in (question {questions[q]!r}: its {own!r}, the labels' "
            f"{label_sid!r}): each labelled sentence would count as one it made no claim for "
            "(no error flagged) and its own as unlabelled; write its sentence ids as the "
            "labels do, or, if each system wrote its own answer, give the labels a system "
            "column (labels per system)"
        )
    return None


def check_in_memory(labels: Iterable[Label], traces: Any, sentence_level: bool) -> list[Label]:
    """The label checks the CLI's readers make, for the Python API's in-memory traces.

    A label the traces write with other leading zeros, a system written two ways (``GPT-4``
    and ``gpt-4``), a totals row's label (``Total``, under question q1). No labels stays
    allowed (every metric undefined).
    """
    labels = list(labels)
    twice = system_written_two_ways(traces)
    if twice is not None:  # (read from files, columnar.check_system_spellings refuses it)
        raise InputError(SYSTEM_TWO_WAYS.format(*twice, two_ways(*twice)), field="system")
    for name in TOTAL_ID_FIELDS:  # a totals row's label, as the labels' readers refuse it
        ids = label_column(labels, name)
        at = first_total_id(ids)
        if at is not None:
            raise InputError(str(total_id_problem(name, ids[at])), line=at + 1, field=name)
    if labels:
        validate_labels(labels, traces)
    if sentence_level:
        refuse_claim_labels(labels, "labels", "compare with level='claim'", traces)
    return labels


def refuse_claim_labels(
    labels: Sequence[Label],
    labels_path: str | Path,
    remedy: str = 'compare claims with --level claim (in a study: [metrics] level = "claim"), '
    "or give sentence labels",
    traces: Iterable[Trace] | TraceColumns | SentenceColumns | None = None,
) -> None:
    """Sentence-level comparison against claim labels a sentence has no label beside: exit 2.

    All claim-level: no sentence would have a label, so every metric would be undefined; a
    sentence labelled through its claims alone would count as unlabelled. ``remedy`` says
    what to do instead (the claim labels serve ``--level claim``). A claim label naming no
    sentence is looked up in ``traces``.
    """
    claim_ids = label_column(labels, "claim_id")
    if claim_ids and all(c is not None for c in claim_ids):
        raise ConfigError(
            f"{labels_path}: all {len(claim_ids):,} labels are claim-level (claim_id set), so no "
            f"sentence has a label; {remedy}"
        )
    if not any(c is not None for c in claim_ids):
        return
    # some claim labels: a sentence labelled through its claims alone was left out unlabelled
    sids = label_column(labels, "sentence_id")
    if traces is not None:
        parent = _first_parents(traces, labels)[1]
        sids = [
            parent.get(c) if s is None and c else s for s, c in zip(sids, claim_ids, strict=True)
        ]
    keys = list(zip(label_column(labels, "system"), sids, strict=True))
    errors = label_column(labels, "has_error")
    labelled = {k: e for k, c, e in zip(keys, claim_ids, errors, strict=True) if c is None}
    lines = getattr(labels, "lines", None)  # the label rows' lines, where read from a file
    for pos, (key, cid, error) in enumerate(zip(keys, claim_ids, errors, strict=True)):
        line = lines[pos] if lines is not None and len(lines) == len(labels) else None
        if cid is not None and key[1] is not None and key not in labelled:
            raise InputError(
                f"sentence {key[1]!r} is labelled through its claims only ({cid!r}...), and a "
                f"sentence-level comparison reads sentence labels: it would count unlabelled; "
                f"{remedy}",
                path=labels_path,
                line=line,
                field="claim_id",
            )
        if cid is not None and error and labelled.get(key) is False:
            # read as the sentence's no-error label alone, its flagged error would be a false
            # alarm
            raise InputError(
                f"sentence {key[1]!r} is labelled no error but its claim {cid!r} an error, and "
                "a sentence-level comparison reads the sentence's label alone (label the "
                f"sentence an error); {remedy}",
                path=labels_path,
                line=line,
                field="has_error",
            )


def errors_no_claim_carries(
    labels: Sequence[Label],
    traces: Iterable[Trace] | TraceColumns | SentenceColumns | None = None,
) -> str | None:
    """At claim level: sentences labelled an error whose claims' own labels all say none.

    A clinician's error no claim carries (an omission, a misleading whole) counts at claim
    level only on the sentence's claims without a label of their own: with every claim
    labelled, nowhere (sentence q1:s1 an error, its two claims each no error: recall 1/1 at
    claim level for 1/2 at sentence level, no word). None when there is no such sentence.
    """
    hidden = sentence_errors_no_claim_carries(labels, traces)
    return no_claim_carries_clause(len(hidden), hidden[0][1]) if hidden else None


def no_claim_carries_clause(count: int, first: object) -> str:
    """The words for :func:`errors_no_claim_carries` (the CLI's first line, the report's note)."""
    return (
        f"{count:,} sentence(s) labelled an error whose claim labels all say no error "
        f"(first {first!r}): its error counts only on the sentence's claims without a label "
        "of their own, on none where each has one (an error no claim carries: an omission?); "
        '--level sentence counts it (in a study: [metrics] level = "sentence")'
    )


def sentence_errors_no_claim_carries(
    labels: Sequence[Label],
    traces: Iterable[Trace] | TraceColumns | SentenceColumns | None = None,
) -> list[tuple[Any, Any]]:
    """(label system, sentence id) of each sentence :func:`errors_no_claim_carries` names.

    In label order; the system is None for labels shared by every system.
    """
    claim_ids = label_column(labels, "claim_id")
    if not any(c is not None for c in claim_ids):
        return []
    sids = label_column(labels, "sentence_id")
    if traces is not None and any(s is None and c for s, c in zip(sids, claim_ids, strict=True)):
        parent = _first_parents(traces, labels)[1]
        sids = [
            parent.get(c) if s is None and c else s for s, c in zip(sids, claim_ids, strict=True)
        ]
    keys = list(zip(label_column(labels, "system"), sids, strict=True))
    errors = label_column(labels, "has_error")
    sentence_error: dict[tuple[Any, Any], int] = {}
    claim_error: dict[tuple[Any, Any], bool] = {}
    for pos, (key, cid, error) in enumerate(zip(keys, claim_ids, errors, strict=True)):
        if key[1] is None:
            continue
        if cid is None:
            if error:
                sentence_error.setdefault(key, pos)
        else:
            claim_error[key] = claim_error.get(key, False) or bool(error)
    hidden = sorted(pos for key, pos in sentence_error.items() if claim_error.get(key) is False)
    return [keys[pos] for pos in hidden]
