"""Dry run from columns: a run's estimate without a :class:`~failcodes.units.Unit` per pair.

The same :class:`~failcodes.judge.estimate.CostEstimate` as the object path
(:func:`~failcodes.judge.estimate.estimate_units`), to the last digit, from three numbers per
distinct unit kept in numpy arrays (its 64-bit id, the length of its user message, how many
(trace, passage) rows it stands for), so memory follows the distinct units. What it leaves
to the object path (:func:`columnar_mode` / :func:`estimate_columns` return ``None``) and
how: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import itertools
import json
import operator
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from failcodes.fileio import made_dir
from failcodes.judge.estimate import CallShape, CostEstimate, Counted, answer_tokens, priced
from failcodes.judge.grouping import group_schema
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import Journal
from failcodes.judge.modes import Batch, Cascade, Mode, PerUnit, grouping
from failcodes.judge.pricing import estimate_tokens
from failcodes.judge.prompts import UserSkeleton, escaped_length, group_skeleton, user_skeleton
from failcodes.judge.unitjudge import Coder, UnitJudge
from failcodes.runlock import folder_lock
from failcodes.traces import CITING_SOURCES
from failcodes.units import UnitKind, retrieval_unit_digests, unit_id
from failcodes.verdicts import Verdict

#: Occurrences buffered before they are merged into the distinct-unit arrays.
CHUNK = 1 << 18
_MASK64 = (1 << 64) - 1


#: Distinct keys are held in this many sorted arrays, by their top byte: a merge copies one
#: of them, so a merge's extra memory is 1/256 of what is held.
_PARTS = 256
_TOP = np.uint64(56)
_UINT32 = 0xFFFFFFFF
_UINT16 = 0xFFFF

Ids = np.ndarray[Any, np.dtype[np.uint64]]
Lengths = np.ndarray[Any, np.dtype[np.unsignedinteger[Any]]]
Parts = tuple[tuple[Ids, Lengths], ...]
#: The further columns a grouped run needs per unit (:attr:`UnitSizes.groups`).
GROUP_COLUMNS = np.dtype(
    [("seq", "<u8"), ("claim", "<u8"), ("claim_chars", "<u4"), ("piece", "<u4")]
)


@dataclass(frozen=True)
class UnitSizes:
    """The distinct units of a set of traces, as columns: 9-12 bytes per unit."""

    kind: UnitKind
    #: Traces read (after dropping repeated ones).
    traces: int
    #: Traces without reasoning (no verification unit).
    without_reasoning: int
    #: Rows: (trace, passage) pairs for retrieval, traces with reasoning for verification
    #: (the units' provenance entries, all units together).
    rows: int
    #: The user-message tokens of each row's unit, summed over the rows (the naive run's).
    row_tokens: int
    #: (ids, tokens) per id range, ids ascending: unit ids as unsigned 64-bit integers and
    #: the user-message tokens (``ceil(chars / 4)``) of each unit's first occurrence.
    parts: Parts
    #: Per part, aligned with ``parts`` (grouped runs only, else None): each unit's first
    #: occurrence number, claim (64-bit hash of its text), escaped claim length and its
    #: passage's length in a grouped message (without the key).
    groups: tuple[np.ndarray[Any, Any], ...] | None = None

    @property
    def units(self) -> int:
        """How many distinct units."""
        return sum(len(ids) for ids, _ in self.parts)

    def ids(self) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """All unit ids, ascending (a copy)."""
        return np.concatenate([ids for ids, _ in self.parts])

    def tokens(self) -> np.ndarray[Any, np.dtype[np.unsignedinteger[Any]]]:
        """The user-message tokens of each unit, in :meth:`ids` order (a copy)."""
        return np.concatenate([tokens.astype(np.uint32) for _, tokens in self.parts])


def tokens_of(chars: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """``ceil(chars / 4)`` per element, as :func:`~failcodes.judge.pricing.length_tokens`."""
    return (chars.astype(np.int64) + 3) // 4


def _sorted_member(sorted_keys: np.ndarray[Any, Any], keys: np.ndarray[Any, Any]) -> Any:
    """Which of ``keys`` are in ``sorted_keys`` (and where)."""
    pos = np.searchsorted(sorted_keys, keys)
    inside = pos < len(sorted_keys)
    found = np.zeros(len(keys), dtype=bool)
    found[inside] = sorted_keys[pos[inside]] == keys[inside]
    return found, pos


class _KeySet:
    """Distinct uint64 keys in sorted arrays, one per top byte, each with a length value.

    Values are held in the narrowest unsigned type their part needs: a part starts with
    8 bits and is widened (16, then 32 bits) when a larger value arrives. A unit's value is
    its message's tokens (~150 for a retrieved passage of 400 characters): 9 bytes a unit.
    """

    def __init__(self, extra: np.dtype[Any] | None = None) -> None:
        self.keys: list[Ids] = [np.empty(0, dtype=np.uint64) for _ in range(_PARTS)]
        self.values: list[Lengths] = [np.empty(0, dtype=np.uint8) for _ in range(_PARTS)]
        #: Further columns per key (grouped runs), a structured array per part.
        self.extra = None if extra is None else [np.empty(0, dtype=extra) for _ in range(_PARTS)]

    @staticmethod
    def _slices(sorted_keys: np.ndarray[Any, Any]) -> list[tuple[int, int, int]]:
        tops = (sorted_keys >> _TOP).astype(np.intp)
        bounds = np.searchsorted(tops, np.arange(_PARTS + 1))
        pairs = enumerate(itertools.pairwise(bounds.tolist()))
        return [(p, lo, hi) for p, (lo, hi) in pairs if hi > lo]

    def holds(self, key: int) -> bool:
        """Whether one key is held."""
        keys = self.keys[key >> 56]
        if not len(keys):
            return False
        at = int(keys.searchsorted(np.uint64(key)))
        return at < len(keys) and int(keys[at]) == key

    def lookup(self, sorted_keys: np.ndarray[Any, Any]) -> tuple[Any, Any]:
        """(found, stored value or 0) for each of ``sorted_keys`` (ascending, distinct)."""
        found = np.zeros(len(sorted_keys), dtype=bool)
        values = np.zeros(len(sorted_keys), dtype=np.uint32)
        for p, lo, hi in self._slices(sorted_keys):
            hit, pos = _sorted_member(self.keys[p], sorted_keys[lo:hi])
            found[lo:hi] = hit
            values[lo:hi][hit] = self.values[p][pos[hit]]
        return found, values

    def insert(
        self,
        sorted_keys: np.ndarray[Any, Any],
        values: np.ndarray[Any, Any],
        extra: np.ndarray[Any, Any] | None = None,
    ) -> None:
        """Add ``sorted_keys`` (ascending, none held yet) with their ``values`` (and extra)."""
        for p, lo, hi in self._slices(sorted_keys):
            pos = np.searchsorted(self.keys[p], sorted_keys[lo:hi])
            self.keys[p] = np.insert(self.keys[p], pos, sorted_keys[lo:hi])
            held = self.values[p]
            largest = int(values[lo:hi].max())
            if largest > np.iinfo(held.dtype).max:  # a larger value: this part widens
                held = held.astype(np.uint16 if largest <= _UINT16 else np.uint32)
            self.values[p] = np.insert(held, pos, values[lo:hi].astype(held.dtype))
            if self.extra is not None and extra is not None:
                self.extra[p] = np.insert(self.extra[p], pos, extra[lo:hi])

    def parts(self) -> Parts:
        """The held (keys, values) arrays, keys ascending across them."""
        return tuple(zip(self.keys, self.values, strict=True))


class _Accumulator:
    """Streams occurrences in; keeps distinct units and trace keys in :class:`_KeySet`."""

    def __init__(self, chunk: int, *, grouped: bool = False) -> None:
        self.chunk = chunk
        self.grouped = grouped
        self.units = _KeySet(GROUP_COLUMNS if grouped else None)
        self.seq = 0
        self.trace_keys = _KeySet()
        self.traces = 0
        self.without_reasoning = 0
        self.rows = 0
        self.row_tokens = 0
        self._reset()

    def _reset(self) -> None:
        self._seen: set[int] = set()  # this chunk's trace keys
        self._occ_ids = bytearray()  # 8 raw (big-endian) bytes per occurrence
        self._occ_chars: array[int] = array("q")
        self._occ_claim: array[int] = array("Q")
        self._occ_claim_chars: array[int] = array("q")
        self._occ_piece: array[int] = array("q")

    def trace(self, key: tuple[str, str, str, str], reasoning: bool) -> bool:
        """Start a trace; False if it repeats one already seen (this chunk or an earlier one).

        A repeat is skipped before its passages are hashed (a claim under two mappings is
        written twice, usually a chunk or more apart).
        """
        h = hash(key) & _MASK64
        if h in self._seen or self.trace_keys.holds(h):
            return False
        self._seen.add(h)
        self.traces += 1
        self.without_reasoning += not reasoning
        return True

    def occurrences(
        self, digests: bytes, chars: list[int], group: tuple[str, int, list[int]] | None = None
    ) -> None:
        """Rows of the current trace: their unit ids (8 bytes each) and user lengths.

        ``group`` (grouped runs): the claim, its escaped length and each row's passage
        length in the grouped message (without its key).
        """
        self._occ_ids += digests
        self._occ_chars.extend(chars)
        if self.grouped and group is not None:
            claim, claim_chars, pieces = group
            self._occ_claim.extend([hash(claim) & _MASK64] * len(pieces))
            self._occ_claim_chars.extend([claim_chars] * len(pieces))
            self._occ_piece.extend(pieces)
        if len(self._occ_chars) >= self.chunk:
            self.flush()

    def flush(self) -> None:
        """Merge the buffered traces and occurrences into the key sets."""
        # the chunk's traces: none repeats another or one held (trace() skipped those)
        keys = np.sort(np.fromiter(self._seen, dtype=np.uint64, count=len(self._seen)))
        self.trace_keys.insert(keys, np.zeros(len(keys), dtype=np.uint8))
        ids = np.frombuffer(self._occ_ids, dtype=">u8").astype(np.uint64)
        chars = np.array(self._occ_chars, dtype=np.int64)
        extra = None
        if self.grouped:
            extra = np.zeros(len(ids), dtype=GROUP_COLUMNS)
            extra["seq"] = np.arange(self.seq, self.seq + len(ids), dtype=np.uint64)
            extra["claim"] = np.array(self._occ_claim, dtype=np.uint64)
            extra["claim_chars"] = np.array(self._occ_claim_chars, dtype=np.int64)
            extra["piece"] = np.array(self._occ_piece, dtype=np.int64)
        self.seq += len(ids)
        self._reset()
        if not len(ids):
            return
        tokens = tokens_of(chars)
        if int(tokens.max()) > _UINT32:
            raise OverflowError("a user message of more than 2**32 tokens")
        # the first occurrence of each id in this chunk (np.unique's index is the first one)
        uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
        chunk_tokens = tokens[first].astype(np.uint32)
        held, stored = self.units.lookup(uniq)
        first_tokens = np.where(held, stored, chunk_tokens)  # a unit keeps its first length
        self.rows += len(ids)
        self.row_tokens += int((counts * first_tokens.astype(np.int64)).sum())
        new = ~held
        self.units.insert(
            uniq[new], chunk_tokens[new], None if extra is None else extra[first][new]
        )

    def result(self, kind: UnitKind) -> UnitSizes:
        """The distinct units seen."""
        self.flush()
        return UnitSizes(
            kind,
            self.traces,
            self.without_reasoning,
            self.rows,
            self.row_tokens,
            self.units.parts(),
            None if self.units.extra is None else tuple(self.units.extra),
        )


_SPECIAL = ("&", '"', "'", "<", ">")


_TEXT = operator.attrgetter("text")
_RANK = operator.attrgetter("rank")
#: Evidence sources (as stored) whose passages are citations (failcodes.traces.CITING_SOURCES).
_CITING = frozenset(s.value for s in CITING_SOURCES)
_SOURCE = operator.attrgetter("source")
_TITLE = operator.attrgetter("title")
_ID = operator.attrgetter("passage_id")


def _passage_lengths(skeleton: UserSkeleton, passages: list[Any], texts: list[str]) -> list[int]:
    """Characters each passage adds to its user message (``UserSkeleton.passage``).

    When no text, source, title or shown id of the record holds a character HTML escaping
    changes, nor any but ASCII (one scan of them joined), escaped lengths are plain lengths.
    """
    sources = list(map(_SOURCE, passages))
    titles = list(map(_TITLE, passages))
    ids = list(map(_ID, passages)) if skeleton.id is not None else []
    joined = "".join(texts) + "".join(filter(None, sources)) + "".join(filter(None, titles))
    joined += "".join(ids)
    if not joined.isascii() or any(ch in joined for ch in _SPECIAL):  # CJK counts 4 a character
        return [skeleton.passage(p.rank, p.text, p.source, p.title, p.passage_id) for p in passages]
    per, source, title = skeleton.per_passage, skeleton.source, skeleton.title
    digits = map(len, map(str, map(_RANK, passages)))
    lengths = [per + n + d for n, d in zip(map(len, texts), digits, strict=True)]
    if any(sources):
        lengths = [n + (source + len(s) if s else 0) for n, s in zip(lengths, sources, strict=True)]
    if any(titles):
        lengths = [n + (title + len(t) if t else 0) for n, t in zip(lengths, titles, strict=True)]
    if skeleton.id is not None and any(ids):
        shown_id = skeleton.id
        lengths = [n + (shown_id + len(i) if i else 0) for n, i in zip(lengths, ids, strict=True)]
    return lengths


def unit_sizes(
    records: Iterable[tuple[Any, Any]],
    kind: UnitKind,
    *,
    top_k: int | None = None,
    chunk: int = CHUNK,
    grouped: bool = False,
) -> UnitSizes:
    """The distinct units of ``kind`` behind ``(disagreement, claim)`` records, as columns.

    Equal, unit for unit, to :func:`~failcodes.units.build_units` over
    :func:`~failcodes.units.disagreement_traces` of the same records: same ids, the user
    length of each unit's first occurrence, one row per provenance entry.
    """
    grouped = grouped and kind is UnitKind.RETRIEVAL  # grouping is for retrieval units
    acc = _Accumulator(chunk, grouped=grouped)
    skeleton = user_skeleton(kind)
    in_group = group_skeleton() if grouped else None
    retrieval = kind is UnitKind.RETRIEVAL
    for rec, c in records:
        reasoning = c.reasoning
        has_reasoning = reasoning is not None and bool(reasoning.strip())
        if not acc.trace((rec.system, rec.question_id, rec.sentence_id, c.claim_id), has_reasoning):
            continue
        passages = c.passages if top_k is None else [p for p in c.passages if p.rank <= top_k]
        if retrieval and c.evidence_source in _CITING:  # citations: no retrieval unit
            passages = []
        texts = list(map(_TEXT, passages))
        base = skeleton.base + escaped_length(c.claim)
        lengths = _passage_lengths(skeleton, passages, texts)
        if retrieval:
            group = None
            if in_group is not None:  # the grouped template differs only in its fixed text
                extra = in_group.per_passage - skeleton.per_passage
                extra_src, extra_title = (
                    in_group.source - skeleton.source,
                    in_group.title - skeleton.title,
                )
                group = (
                    c.claim,
                    base - skeleton.base,
                    [
                        n + extra + (extra_src if p.source else 0) + (extra_title if p.title else 0)
                        for n, p in zip(lengths, passages, strict=True)
                    ],
                )
            acc.occurrences(
                retrieval_unit_digests(c.claim, passages), [base + n for n in lengths], group
            )
        elif has_reasoning:
            verdict = Verdict(c.verdict)
            uid = unit_id(kind, c.claim, passages, reasoning, verdict)
            chars = base + escaped_length(reasoning) + len(verdict.value) + sum(lengths)
            acc.occurrences(bytes.fromhex(uid), [chars])
    return acc.result(kind)


def read_unit_sizes(
    path: str | Path,
    kind: UnitKind,
    *,
    top_k: int | None = None,
    grouped: bool = False,
    traces: bool = False,
) -> UnitSizes | None:
    """:func:`unit_sizes` of a disagreements or traces file (JSONL, Parquet).

    ``traces``: ``path`` is a traces file.
    None, for the object path, when the file is not one its fast reader vouches for
    (:func:`~failcodes.disagreementio.iter_disagreement_claims`,
    :func:`~failcodes.disagreementio.iter_parquet_disagreement_claims`,
    :func:`~failcodes.columnar.iter_trace_claims`,
    :func:`~failcodes.columnar.iter_parquet_trace_claims`): the object reader then accepts it or
    names the bad line (or row).
    """
    from failcodes.columnar import (
        ExactReaderNeededError,
        iter_parquet_trace_claims,
        iter_trace_claims,
    )
    from failcodes.disagreementio import iter_disagreement_claims, iter_parquet_disagreement_claims

    parquet = Path(path).suffix.lower() in (".parquet", ".pq")
    if traces:
        records = iter_parquet_trace_claims(path) if parquet else iter_trace_claims(path)
    elif parquet:
        records = iter_parquet_disagreement_claims(path)
    else:
        records = iter_disagreement_claims(path)
    try:
        return unit_sizes(records, kind, top_k=top_k, grouped=grouped)
    except (ExactReaderNeededError, OverflowError):
        return None


def columnar_mode(mode: Mode, kind: UnitKind = UnitKind.RETRIEVAL) -> bool:
    """Whether :func:`estimate_sizes` can price ``mode`` for ``kind``.

    One call per unit or batch mode, for any kind; grouped by claim (direct or as batch
    items) for retrieval units. Not a cascade.
    """
    return not isinstance(mode, Cascade) and (grouping(mode) is None or kind is UnitKind.RETRIEVAL)


def needs_groups(mode: Mode) -> bool:
    """Whether pricing ``mode`` needs :attr:`UnitSizes.groups` (read with ``grouped=True``)."""
    return grouping(mode) is not None


def _key_chars(positions: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Length of the passage key ``p{j}`` for 1-based positions ``j``."""
    digits = np.ones(len(positions), dtype=np.int64)
    bound = 10
    while len(positions) and bound <= int(positions.max()):
        digits += positions >= bound
        bound *= 10
    return 1 + digits


def _group_shapes(
    judge: UnitJudge, sizes: UnitSizes, dones: list[Any], size: int, every: int | None
) -> list[CallShape]:
    """The calls of a grouped run over the units not done, as ``chunked_groups`` forms them.

    Units in first-seen order, grouped by claim (claims in the order of their first unit to
    judge) within each chunk of ``every`` units of the stream (a batch run's chunks; None:
    one chunk), at most ``size`` a group; a group of one is an ordinary call, a larger one a
    grouped message of ``group_skeleton`` + claim + keyed passages.
    """
    if sizes.groups is None:
        raise ValueError("grouped pricing needs unit sizes read with grouped=True")
    cols = np.concatenate(sizes.groups)
    toks = np.concatenate([t.astype(np.int64) for _, t in sizes.parts])
    done = np.concatenate(dones)
    order = np.argsort(cols["seq"], kind="stable")
    cols, toks, done = cols[order], toks[order], done[order]
    # a unit's chunk: its place among every unit (done ones too) as the run streams them
    chunk = np.arange(len(cols), dtype=np.uint64) // np.uint64(every or max(1, len(cols)))
    cols, toks, chunk = cols[~done], toks[~done], chunk[~done]
    keys = np.stack([chunk, cols["claim"]], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    claim_rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")[inverse]
    by_claim = np.argsort(claim_rank, kind="stable")
    cols, toks, claim_rank = cols[by_claim], toks[by_claim], claim_rank[by_claim]
    n = len(claim_rank)
    run_starts = np.flatnonzero(np.r_[True, claim_rank[1:] != claim_rank[:-1]])
    within = np.arange(n) - np.repeat(run_starts, np.diff(np.r_[run_starts, n]))
    group_no = within // size
    starts = np.flatnonzero(
        np.r_[True, (claim_rank[1:] != claim_rank[:-1]) | (group_no[1:] != group_no[:-1])]
    )
    members = np.diff(np.r_[starts, n])
    keys = _key_chars(within % size + 1)
    chars = (
        group_skeleton().base
        + cols["claim_chars"][starts].astype(np.int64)
        + np.add.reduceat(cols["piece"].astype(np.int64) + keys, starts)
    )
    prefix = judge.prefix_tokens
    group_prefix = estimate_tokens(judge.system) + estimate_tokens(
        json.dumps(group_schema(judge.schema))
    )
    single = members == 1
    shapes = [
        CallShape(group_prefix, int(t), int(m))
        for t, m in zip(tokens_of(chars[~single]), members[~single], strict=True)
    ]
    alone = int(single.sum())
    if alone:  # a group of one is an ordinary call (summed tokens on one shape)
        shapes.append(CallShape(prefix, int(toks[starts[single]].sum())))
        if alone > 1:
            shapes.append(CallShape(prefix, 0, repeat=alone - 1))
    return shapes


def _journal_ids(done: set[str]) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """The journal's unit ids as sorted integers (an id that is no 16-hex id matches none)."""
    hexdigits = set("0123456789abcdef")
    return np.array(
        sorted(int(d, 16) for d in done if len(d) == 16 and set(d) <= hexdigits), dtype=np.uint64
    )


def estimate_sizes(
    judge: UnitJudge, journal: Journal, sizes: UnitSizes, mode: Mode | None = None
) -> CostEstimate:
    """:func:`~failcodes.judge.estimate.estimate_units` of the units ``sizes`` describes.

    Same figures to the last digit for the modes :func:`columnar_mode` accepts, with no
    response cache or an empty one (the caller checks; :func:`estimate_columns` does).
    """
    mode = mode or PerUnit()
    if not columnar_mode(mode, sizes.kind) or (needs_groups(mode) and sizes.groups is None):
        raise ValueError(f"the columnar dry run cannot price mode {mode.name}")
    answer = answer_tokens(judge, journal)
    journal.check(judge.meta())  # another run's units are not done for this one
    prefix = judge.prefix_tokens
    journal_ids = _journal_ids(journal.done_ids())
    already = todo = todo_tokens = 0
    dones = []
    for ids, unit_tokens in sizes.parts:
        done, _ = _sorted_member(journal_ids, ids)
        dones.append(done)
        already += int(done.sum())
        if judge.is_llm:
            todo += len(ids) - int(done.sum())
            todo_tokens += int(unit_tokens[~done].astype(np.int64).sum())
    group = grouping(mode)
    shapes: Iterable[CallShape] = ()
    if judge.is_llm and todo and group is not None:
        every = mode.commit_every if isinstance(mode, Batch) else None
        shapes = _group_shapes(judge, sizes, dones, group.size, every)
    elif judge.is_llm and todo:
        # call_tokens sums user tokens and counts calls per prefix: one call carries the
        # user tokens of all, the others (one repeated shape) none: same totals
        shapes = [CallShape(prefix, todo_tokens)]
        if todo > 1:
            shapes.append(CallShape(prefix, 0, repeat=todo - 1))
    counted = Counted(
        rows=sizes.rows,
        units=sizes.units,
        already_done=already,
        to_call=todo,
        naive_calls=sizes.rows if judge.is_llm else 0,
        naive_input_tokens=sizes.rows * prefix + sizes.row_tokens if judge.is_llm else 0,
    )
    return priced(judge, mode, counted, shapes, answer, grouped=group is not None, journal=journal)


def estimate_columns(sizes: UnitSizes, coder: Coder, job: JudgeJob) -> CostEstimate | None:
    """:func:`~failcodes.judge.run.estimate_run` over ``sizes``; None for the object path.

    Opens (and so creates) the run folder's journal and the response cache exactly as the
    object path does; returns None when the cache holds entries (a hit can only be found
    by rendering each unit's message) or the job's mode is not :func:`columnar_mode`.
    """
    if not columnar_mode(job.mode, sizes.kind) or (needs_groups(job.mode) and sizes.groups is None):
        return None
    with (
        folder_lock(made_dir(job.run_dir), what="judge run"),
        job.opened(coder) as (journal, judge),
    ):
        if judge.cache is not None and judge.cache.stats().entries:
            return None
        return estimate_sizes(judge, journal, sizes, job.mode)
