"""Attribution of disagreements to retrieval, provided evidence or verification.

Seed 001 (Figure 1) splits errors into retrieval and verification but states no rule; the
rule here is failcodes' own, written out with its assumptions in docs/attribution.md.

The evidence source (:class:`~failcodes.traces.EvidenceSource`, declared on the trace or
derived from it) decides which stages exist; the ``gold-evidence`` and ``codebook`` strategies
(``auto``: gold flags where the trace has them) and the claims-to-disagreement step (**mixed**
when its claims split) are docs/attribution.md's steps 1-3.

Also here: the per-passage and per-trace code tables, the all-high rate per retriever, the
all-correct rate per verifier and the dominant error subcodes (pandas adapters over the
annotations). Dedup-aware: a passage judged once counts once per retriever that returned it.

The rule and the tables read slim inputs (issue 30): a claim as :class:`ClaimUnits` (its ids,
pipeline, evidence source and the unit ids of its top-k passages, no text) and the codes of a
run as a :class:`CodeIndex` (per unit id, a small shared :class:`UnitCodes` record, not the
annotation). :func:`attribute`, :func:`per_passage_codes` and :func:`per_trace_steps` take
traces, disagreements and annotations and make those records first; ``failcodes attribute``
makes them while it streams its files.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from itertools import repeat
from operator import contains, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import Field

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status, includes_heuristic
from failcodes.codebook import Codebook
from failcodes.contract import FrozenModel
from failcodes.disagreements import Disagreement, DisagreementKind
from failcodes.errors import InputError
from failcodes.traces import CITING_SOURCES, EvidenceSource, Trace
from failcodes.units import UnitKind, claim_trace, claim_unit_ids, retrieval_unit_digests
from failcodes.verdicts import ASSERTED

if TYPE_CHECKING:  # pandas (~0.2 s to import) is imported by the table functions that use it
    import numpy as np  # (numpy too, by the index's lookups: `attribute --help` needs neither)
    import pandas as pd

    from failcodes.annotationlines import AnnotationRead
    from failcodes.unitrepeats import FirstUnits


class Strategy(StrEnum):
    """How an item is attributed."""

    AUTO = "auto"
    GOLD_EVIDENCE = "gold-evidence"
    CODEBOOK = "codebook"


class Stage(StrEnum):
    """Where a disagreement is attributed."""

    RETRIEVAL = "retrieval"
    VERIFICATION = "verification"
    EVIDENCE = "evidence"  # evidence provided with the item judged insufficient (no retriever)
    MIXED = "mixed"
    UNDETERMINED = "undetermined"


class ClaimAttribution(FrozenModel):
    """The attribution of one claim (one trace)."""

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    retriever: str | None = None
    verifier: str | None = None
    evidence_source: EvidenceSource = EvidenceSource.RETRIEVED
    strategy: Strategy
    stage: Stage
    reason: str
    high_quality_ranks: tuple[int, ...] = Field(
        default=(), description="Ranks of the top-k passages that are all-high (or gold)."
    )


class ItemAttribution(FrozenModel):
    """The attribution of one disagreement (or one trace, when no disagreements are given)."""

    item_id: str
    system: str
    question_id: str
    sentence_id: str
    claim_id: str | None = None
    kind: DisagreementKind | None = None
    stage: Stage
    strategy: str
    evidence_source: str = Field(
        default=EvidenceSource.RETRIEVED.value,
        description="The claims' evidence source(s) (retrieved, provided, none, post-hoc; "
        "'+'-joined if they differ).",
    )
    reason: str
    claims: tuple[ClaimAttribution, ...]


#: Joins the codes of a multi-label dimension in one cell of the wide tables
#: (``overreach|conflict_synthesis_failure``); a single-label cell holds one code.
CODE_SEPARATOR = "|"


def code_cell(ann: AnnotationRead | None, dimension: str) -> str | None:
    """The wide-table cell of ``dimension``: its code(s), joined by :data:`CODE_SEPARATOR`."""
    if ann is None:
        return None
    codes = ann.code_set(dimension)
    return CODE_SEPARATOR.join(codes) if codes else None


def cell_codes(cell: object) -> list[str]:
    """The codes of one wide-table cell (empty for a missing cell)."""
    if not isinstance(cell, str) or not cell:
        return []
    return cell.split(CODE_SEPARATOR)


def is_all_high(ann: AnnotationRead | None, high: Mapping[str, str]) -> bool | None:
    """True if every assessed dimension got its high-quality code; None if not (validly) coded.

    False as soon as one dimension has a low code; None when the coded ones are all high but a
    dimension has no code at all (nothing to tell by).

    A dimension coded :data:`~failcodes.annotations.NOT_ASSESSABLE` is left out (neither high
    nor low); an annotation with no assessed dimension at all is None (nothing to go by).
    """
    if ann is None or ann.status is not Status.SCORED:
        return None
    assessed = {dim: code for dim, code in high.items() if ann.codes.get(dim) != NOT_ASSESSABLE}
    if not assessed:
        return None
    # a multi-label step (codebook v2) is high only when its whole set is the high code: a
    # set [complete_selection, wrong_evidence] read by its first code counted as all correct
    if any(dim in ann.codes and ann.code_set(dim) != (code,) for dim, code in assessed.items()):
        return False  # a dimension coded low: not all high, whatever the others are
    # every coded dimension high but one left without a code (a reviewer's empty choice): it
    # cannot be told; read as "not high" it sent the passage's disagreement to retrieval
    return True if all(dim in ann.codes for dim in assessed) else None


def assessed_dimensions(ann: AnnotationRead | None, dims: Iterable[str]) -> int | None:
    """How many of ``dims`` were assessed (not coded not_assessable); None if not coded."""
    if ann is None or ann.status is not Status.SCORED:
        return None
    return sum(1 for dim in dims if ann.codes.get(dim) != NOT_ASSESSABLE)


class UnitCodes(NamedTuple):
    """What attribution reads of one unit's annotation (one shared record per distinct value)."""

    status: str
    coder: str
    coder_kind: str
    #: The wide-table cell of each high-quality dimension, in the codebook's order.
    cells: tuple[str | None, ...]
    #: :func:`assessed_dimensions` over those dimensions.
    assessed: int | None
    #: :func:`is_all_high` over those dimensions.
    flag: bool | None


def unit_codes(ann: AnnotationRead, high: Mapping[str, str]) -> UnitCodes:
    """The :class:`UnitCodes` of ``ann`` for the high-quality codes ``high`` of its kind.

    A panel of the offline judge and a model is coded ``llm`` (its ties broken, its votes
    cast by the heuristic too): its kind in the tables is ``llm+heuristic``.
    """
    kind = ann.coder_kind.value
    if ann.coder_kind is CoderKind.LLM and includes_heuristic(ann.coder):
        kind += "+" + CoderKind.HEURISTIC.value
    return UnitCodes(
        ann.status.value,
        ann.coder,
        kind,
        tuple(code_cell(ann, dim) for dim in high),
        assessed_dimensions(ann, high),
        is_all_high(ann, high),
    )


_CONTENT_ID = frozenset("0123456789abcdef")
#: Ids added to a :class:`CodeIndex` between moves into its arrays.
_SETTLE = 65_536
#: Buckets of a :class:`CodeIndex`'s content ids (by their top bits), sorted one at a time.
_BUCKETS = 64
_BUCKET_SHIFT = 64 - 6


def _last_of_each(
    keys: np.ndarray[Any, Any], which: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Sorted ``keys`` and their ``which``, each key once with its last ``which``.

    Sorted stably (equal keys in the order added): the last annotation of a unit wins.
    """
    import numpy as np

    last = np.ones(len(keys), dtype=bool)
    last[:-1] = keys[1:] != keys[:-1]
    return (keys, which) if last.all() else (keys[last], which[last])


class CodeIndex:
    """The codes of one unit kind by unit id, slim: 12 bytes a unit and the distinct records.

    Built from annotations in file order (:meth:`add`; the last annotation of a unit wins, as
    in a dict built in file order); a content id (16 hex digits, :func:`~failcodes.units.unit_id`)
    is kept as its 64-bit number in a sorted array, any other id in a dict. An annotation of
    another kind is skipped (but counted in :attr:`coders`); one made under another codebook
    is remembered and raised by :meth:`check` (before any table is made).
    """

    def __init__(self, codebook: Codebook, kind: UnitKind) -> None:
        self.kind = kind
        self.high = codebook.high_quality_codes(kind)
        self._codebook = codebook
        self._hash = codebook.hash
        self._records: list[UnitCodes] = []
        self._number: dict[UnitCodes, int] = {}
        self._raw: dict[tuple[object, ...], int] = {}
        # content ids (64-bit numbers) and their records' numbers added since the last sort,
        # in file order within each of _BUCKETS buckets by the number's top bits (sorted a
        # bucket at a time: see _arrays); how many
        self._keys = [array("q") for _ in range(_BUCKETS)]
        self._which = [array("i") for _ in range(_BUCKETS)]
        self._added = 0
        self._other: dict[str, int] = {}
        # those sorted (the one copy kept once a unit is looked up), None before the first
        self._sorted: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None = None
        # ids added since the last :meth:`_settle`, and their records' numbers
        self._pending: list[str] = []
        self._pending_which = array("i")
        self._coders: dict[tuple[str, CoderKind], int] = {}
        self._mismatch: InputError | None = None

    @classmethod
    def of(
        cls, annotations: Iterable[AnnotationRead], codebook: Codebook, kind: UnitKind
    ) -> CodeIndex:
        """The index of ``annotations`` (checked: see :meth:`check`)."""
        index = cls(codebook, kind)
        for ann in annotations:
            index.add(ann)
        index.check()
        return index

    @property
    def coders(self) -> Counter[tuple[str, str]]:
        """(coder, coder kind) -> annotations seen, of every kind."""
        return Counter({(coder, kind.value): n for (coder, kind), n in self._coders.items()})

    def add(self, ann: AnnotationRead) -> None:
        """Keep ``ann``'s codes (if of this kind and codebook)."""
        coder = (ann.coder, ann.coder_kind)
        self._coders[coder] = self._coders.get(coder, 0) + 1
        if ann.unit_kind is not self.kind or self._mismatch is not None:
            return
        if ann.codebook.hash != self._hash:
            cb = self._codebook
            self._mismatch = InputError(
                f"annotation of unit {ann.unit_id} was made under codebook {ann.codebook}, "
                f"not {cb.name}@{cb.version}; migrate it first (failcodes codebook migrate)"
            )
            return
        sets = ann.code_sets
        raw = (
            ann.status,
            ann.coder,
            ann.coder_kind,
            tuple(map(ann.codes.get, self.high)),
            tuple((d, tuple(v)) for d, v in sets.items()) if sets else (),
        )  # everything unit_codes reads (a cheap key for the shared record)
        number = self._raw.get(raw)
        if number is None:
            record = unit_codes(ann, self.high)
            number = self._number.get(record)
            if number is None:
                number = self._number[record] = len(self._records)
                self._records.append(record)
            self._raw[raw] = number
        self._pending.append(ann.unit_id)
        self._pending_which.append(number)
        if len(self._pending) >= _SETTLE:
            self._settle()

    def _settle(self) -> None:
        """Move the pending ids to the sorted keys' arrays (content ids) or the dict."""
        uids, numbers = self._pending, self._pending_which
        if not uids:
            return
        self._pending, self._pending_which = [], array("i")
        joined = "".join(uids)
        same = len(set(map(len, uids))) == 1
        if same and len(joined) == 16 * len(uids) and _CONTENT_ID.issuperset(joined):
            keys = array("q", bytes.fromhex(joined))  # every id a content id
            if sys.byteorder == "little":  # each id is its 64-bit big-endian number
                keys.byteswap()
            self._bucket(keys, numbers)
            return
        held, held_which = array("q"), array("i")
        for uid, number in zip(uids, numbers, strict=True):
            if len(uid) == 16 and _CONTENT_ID.issuperset(uid):
                held.append(int.from_bytes(bytes.fromhex(uid), "big", signed=True))
                held_which.append(number)
            else:
                self._other[uid] = number
        self._bucket(held, held_which)

    def _bucket(self, keys: array[int], numbers: array[int]) -> None:
        """Add content ids (numbers) and their records' numbers to their buckets, in order."""
        if not keys:
            return
        import numpy as np

        k = np.frombuffer(keys, dtype=np.int64)
        w = np.frombuffer(numbers, dtype=np.int32)
        bucket = (k >> _BUCKET_SHIFT) + _BUCKETS // 2  # the top bits, in the keys' order
        order = np.argsort(bucket, kind="stable")  # (a chunk of ids: 8 bytes an id)
        ends = np.cumsum(np.bincount(bucket, minlength=_BUCKETS)).tolist()
        k, w = k[order], w[order]
        start = 0
        for at, end in enumerate(ends):
            if end > start:
                self._keys[at].frombytes(k[start:end].tobytes())
                self._which[at].frombytes(w[start:end].tobytes())
            start = end
        self._added += len(keys)
        del k, w, bucket, order
        from failcodes.unitrepeats import give_back  # numpy's module: not at import

        give_back()

    def check(self) -> None:
        """Raise the error of an annotation made under another codebook, if one was added."""
        if self._mismatch is not None:
            raise self._mismatch

    def _arrays(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """The content ids sorted, with their records' numbers (the last of a unit's).

        Sorted a bucket (the ids' top bits: a unit's ids are all in its bucket, in file
        order) at a time into arrays made once, each bucket let go when sorted and its pages
        given back (:func:`~failcodes.unitrepeats.give_back`): 12 bytes a unit and one
        bucket's sort. Sorting them all at once took ~20 bytes a unit more at its peak: 35 MB
        for the 2.1M retrieval units of a 10x paper-scale study, whose ``attribute`` peaked
        1.82x its 1x peak (issue 30).
        """
        import numpy as np

        self._settle()
        if self._sorted is not None and not self._added:
            return self._sorted
        if self._sorted is not None:  # units added after a lookup (a unit added later wins)
            keys = np.concatenate(
                [self._sorted[0], *(np.frombuffer(k, dtype=np.int64) for k in self._keys)]
            )
            which = np.concatenate(
                [self._sorted[1], *(np.frombuffer(w, dtype=np.int32) for w in self._which)]
            )
            order = np.argsort(keys, kind="stable")
            keys, which = _last_of_each(keys[order], which[order])
            del order
        else:  # the buckets in the keys' order
            keys = np.empty(self._added, dtype=np.int64)
            which = np.empty(self._added, dtype=np.int32)
            start = 0
            for at in range(_BUCKETS):
                k = np.frombuffer(self._keys[at], dtype=np.int64)
                w = np.frombuffer(self._which[at], dtype=np.int32)
                order = np.argsort(k, kind="stable")
                k, w = _last_of_each(k[order], w[order])
                end = start + len(k)
                keys[start:end], which[start:end] = k, w
                del k, w, order
                self._keys[at], self._which[at] = array("q"), array("i")  # let go
                start = end
                if at % 8 == 7:
                    from failcodes.unitrepeats import give_back

                    give_back()
            keys, which = keys[:start], which[:start]  # (pages past it never written)
        self._keys = [array("q") for _ in range(_BUCKETS)]
        self._which = [array("i") for _ in range(_BUCKETS)]
        self._added = 0
        self._sorted = (keys, which)
        return self._sorted

    def _find(
        self, wanted: np.ndarray[Any, Any]
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """For content ids (int64 numbers): held, their records' numbers, their places.

        A place is the unit's among the content ids held (0 to len - 1); where not held,
        its record and place are those of a neighbour (look at ``held``).
        """
        import numpy as np

        keys, which = self._arrays()
        if not len(keys):
            empty = np.zeros(len(wanted), dtype=np.int64)
            return empty.astype(bool), empty, empty
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return keys[at] == wanted, which[at], at

    def positions(self, uids: Sequence[str]) -> np.ndarray[Any, Any]:
        """Each id's place among the content ids held (0 to len - 1), -1 where not held.

        An id not a content id (kept in a dict) is -1 too: one number a unit held.
        """
        import numpy as np

        out = np.full(len(uids), -1, dtype=np.int64)
        content = [
            i for i, uid in enumerate(uids) if len(uid) == 16 and _CONTENT_ID.issuperset(uid)
        ]
        if not content:
            return out
        joined = "".join(uids[i] for i in content)
        wanted = np.frombuffer(bytes.fromhex(joined), dtype=">i8").astype(np.int64)
        found, _, place = self._find(wanted)
        out[np.asarray(content)[found]] = place[found]
        return out

    def get(self, uid: str) -> UnitCodes | None:
        """The codes of unit ``uid`` (None: not coded)."""
        self._settle()
        if len(uid) != 16 or not _CONTENT_ID.issuperset(uid):
            number = self._other.get(uid)
            return None if number is None else self._records[number]
        import numpy as np

        key = int.from_bytes(bytes.fromhex(uid), "big", signed=True)
        found, which, _ = self._find(np.array([key], dtype=np.int64))
        return self._records[int(which[0])] if found[0] else None

    def flag(self, uid: str) -> bool | None:
        """:func:`is_all_high` of unit ``uid``'s codes (None: not coded)."""
        codes = self.get(uid)
        return None if codes is None else codes.flag

    def get_many(self, uids: Sequence[str]) -> list[UnitCodes | None]:
        """:meth:`get` of each of ``uids`` (content ids looked up together)."""
        joined = "".join(uids)
        if len(joined) != 16 * len(uids) or not _CONTENT_ID.issuperset(joined):
            return [self.get(uid) for uid in uids]
        if any(len(uid) != 16 for uid in uids):
            return [self.get(uid) for uid in uids]
        import numpy as np

        wanted = np.frombuffer(bytes.fromhex(joined), dtype=">i8").astype(np.int64)
        found, which, _ = self._find(wanted)
        records = self._records
        return [
            records[w] if f else None for w, f in zip(which.tolist(), found.tolist(), strict=True)
        ]

    def heuristic(self) -> bool:
        """True if any annotation came from the offline heuristic baseline (or a panel with it)."""
        return any(
            kind == CoderKind.HEURISTIC.value or includes_heuristic(coder)
            for coder, kind in self.coders
        )

    def models(self) -> bool:
        """True if any annotation came from a model (a cascade's or a panel's with the offline)."""
        return any(kind == CoderKind.LLM.value for _, kind in self.coders)

    def __len__(self) -> int:
        return len(self._arrays()[0]) + len(self._other)


class SeenUnits:
    """:class:`~failcodes.unitrepeats.FirstUnits` for rows coded by one :class:`CodeIndex`.

    A unit the index holds is its place there (:meth:`CodeIndex.positions`): a bit per unit
    held and group (``by``) says it was counted; any other (uncoded) unit goes to a
    FirstUnits. Its rows' codes are all the index's record, so a repeat never differs. A
    FirstUnits of every unit held 16 bytes a unit and merged its runs (~47 MB at the 2.1M
    retrieval units of a 10x paper-scale study's ``attribute``; issue 30), here a bit.
    """

    def __init__(self, codes: CodeIndex) -> None:
        self._codes = codes
        self._seen: dict[str, bytearray] = {}
        self._rest: FirstUnits | None = None

    def first_rows(
        self,
        rows: Sequence[Sequence[object]],
        columns: Sequence[str],
        by: str,
        codes: Sequence[str],
    ) -> list[Sequence[object]]:
        """The rows (tuples in ``columns`` order) whose (``by``, unit) no earlier row held."""
        if not rows:
            return []
        at_by, at_uid = columns.index(by), columns.index("unit_id")
        places = self._codes.positions([str(row[at_uid]) for row in rows]).tolist()
        size = (len(self._codes) + 7) // 8
        out: list[Sequence[object]] = []
        rest: list[Sequence[object]] = []
        for row, place in zip(rows, places, strict=True):
            if place < 0:
                rest.append(row)
                continue
            group = str(row[at_by])  # as FirstUnits reads it (a table's text)
            seen = self._seen.get(group)
            if seen is None:
                seen = self._seen[group] = bytearray(size)
            byte, bit = place >> 3, 1 << (place & 7)
            if not seen[byte] & bit:
                seen[byte] |= bit
                out.append(row)
        if rest:
            if self._rest is None:
                from failcodes.unitrepeats import FirstUnits

                self._rest = FirstUnits()
            out.extend(self._rest.first_rows(rest, columns, by, codes))
        return out


class PassageUnit(NamedTuple):
    """One top-k passage of a claim: its rank, id, gold flag and retrieval unit id."""

    rank: int
    passage_id: str
    gold: bool | None
    unit_id: str


class ClaimUnits(NamedTuple):
    """What attribution reads of one claim's trace (no passage, claim or reasoning text)."""

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    retriever: str | None
    verifier: str | None
    evidence: EvidenceSource
    #: The passages are citations (evidence source none or post-hoc, declared): no Table 8 rows.
    cites: bool
    #: All passages of the trace (top-k or not).
    n_passages: int
    has_gold: bool
    #: The top-k passages.
    passages: tuple[PassageUnit, ...]
    verdict: str
    #: The verification unit id (top-k passages), None without a reasoning trace.
    step_unit: str | None
    #: The system asserts its claims (``ingest --verdict``: a long-form answer, no verifier).
    asserted: bool = False


def claim_units(trace: Trace | Any, top_k: int | None = None) -> ClaimUnits:
    """The :class:`ClaimUnits` of ``trace`` with its top-``top_k`` passages.

    ``trace`` is a :class:`~failcodes.traces.Trace` or a reader's record with its fields
    (passages with ``rank``, ``passage_id``, ``text``, ``source``, ``title`` and ``gold``;
    ``evidence``).
    """
    every = trace.passages
    top = [p for p in every if top_k is None or p.rank <= top_k]
    step = None
    if trace.reasoning and trace.reasoning.strip():
        raw, step = claim_unit_ids(trace.claim, top, trace.reasoning, trace.verdict)
    else:
        raw = retrieval_unit_digests(trace.claim, top)
    digests = raw.hex()
    passages = tuple(
        PassageUnit(p.rank, p.passage_id, p.gold, digests[16 * i : 16 * i + 16])
        for i, p in enumerate(top)
    )
    return ClaimUnits(
        trace.system,
        trace.question_id,
        trace.sentence_id,
        trace.claim_id,
        trace.retriever,
        trace.verifier,
        trace.evidence,
        trace.evidence_source in CITING_SOURCES,
        len(every),
        any(p.gold is not None for p in every),
        passages,
        trace.verdict.value,
        step,
        getattr(trace, "raw_verdict", None) == ASSERTED,
    )


class ItemClaims(NamedTuple):
    """One disagreement (or trace) to attribute and the claims that caused it."""

    item_id: str
    system: str
    question_id: str
    sentence_id: str
    claim_id: str | None
    kind: DisagreementKind | None
    claims: tuple[ClaimUnits, ...]


def item_claims(item: Disagreement | Trace, top_k: int | None = None) -> ItemClaims:
    """The :class:`ItemClaims` of a disagreement or of a trace (its own claim).

    A disagreement's claims are its causes: an FP's error claims, all claims of an FN.
    """
    if isinstance(item, Trace):
        claims: tuple[ClaimUnits, ...] = (claim_units(item, top_k),)
        return ItemClaims(
            f"{item.system}/{item.claim_id}",
            item.system,
            item.question_id,
            item.sentence_id,
            item.claim_id,
            None,
            claims,
        )
    causes = set(item.error_claim_ids) if item.kind is DisagreementKind.FP else None
    claims = tuple(
        claim_units(claim_trace(item, rec), top_k)
        for rec in item.claims
        if causes is None or rec.claim_id in causes
    )
    return ItemClaims(
        item.id, item.system, item.question_id, item.sentence_id, item.claim_id, item.kind, claims
    )


def codebook_stage(flags: Sequence[bool | None], source: EvidenceSource) -> Stage:
    """The codebook rule on one claim's top-k passages, from their all-high decisions.

    A passage all-high on every assessed dimension -> verification; else a passage not coded
    (None) -> undetermined; else the stage that chose the evidence: retrieval, or (evidence
    provided with the item) evidence. The judge's codes and a reviewer's go through this same
    rule (:func:`attribute_claim`, :func:`human_attributions`).
    """
    if any(f is True for f in flags):
        return Stage.VERIFICATION
    if any(f is None for f in flags):
        return Stage.UNDETERMINED
    return Stage.RETRIEVAL if source is EvidenceSource.RETRIEVED else Stage.EVIDENCE


def combined_stage(stages: Sequence[Stage]) -> Stage:
    """An item's stage from its claims': the common one, or mixed (undetermined if none)."""
    distinct = set(stages)
    if not distinct:
        return Stage.UNDETERMINED
    return distinct.pop() if len(distinct) == 1 else Stage.MIXED


def attribute_claim(
    claim: ClaimUnits,
    retrieval: CodeIndex,
    *,
    strategy: Strategy = Strategy.AUTO,
    top_k: int | None = None,
) -> ClaimAttribution:
    """Attribute one claim's outcome to a stage of its pipeline (with the reason).

    The rule (docs/attribution.md): closed-book -> verification; provided evidence judged
    insufficient -> evidence, else verification; retrieved passages -> retrieval when no
    top-k passage is usable evidence (gold, or all-high under the codebook), else verification.
    ``claim.passages`` are the top-``top_k`` passages (``top_k`` only names them in reasons).
    """
    passages = claim.passages
    source = claim.evidence
    k = f"top {top_k}" if top_k is not None else source.value
    use = strategy
    if strategy is Strategy.AUTO:
        use = Strategy.GOLD_EVIDENCE if claim.has_gold else Strategy.CODEBOOK
    base = {
        "system": claim.system,
        "question_id": claim.question_id,
        "sentence_id": claim.sentence_id,
        "claim_id": claim.claim_id,
        "retriever": claim.retriever,
        "verifier": claim.verifier,
        "evidence_source": source,
        "strategy": use,
    }
    cited = f"; its {claim.n_passages} citation(s) are not judged" if claim.n_passages else ""
    # a system asserting its claims has no verifier: the generator is the stage after retrieval
    # (its reasons said "the verifier had usable evidence" of a pipeline without one)
    verifier = "the verifier"
    if claim.asserted:
        verifier = "the system (it asserts its claims: no verifier)"
    if source is EvidenceSource.NONE:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason="closed-book pipeline (evidence source none): no retrieval stage, "
            f"{verifier} answered from its own knowledge{cited}",
        )
    if source is EvidenceSource.POST_HOC:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason="post-hoc citation (evidence source post-hoc): the answer was written "
            "before its evidence was retrieved, so retrieval did not cause the claim; a poor "
            f"citation is a citation failure, not this error's cause{cited}",
        )
    # Where no passage is usable evidence, the blame goes to the stage that chose the evidence:
    # the retriever, or (provided evidence) the evidence given with the item.
    weak = Stage.RETRIEVAL if source is EvidenceSource.RETRIEVED else Stage.EVIDENCE
    if not passages:
        if source is EvidenceSource.PROVIDED:
            return ClaimAttribution(
                **base,
                stage=Stage.VERIFICATION,
                reason=f"{NO_PASSAGE_REASONS[1]} "
                f"{'in the top ' + str(top_k) if top_k is not None else 'given'} to "
                f"assess; {verifier} worked with what it was given",
            )
        return ClaimAttribution(**base, stage=Stage.RETRIEVAL, reason=f"{NO_PASSAGE_REASONS[0]}{k}")
    what = "provided evidence" if source is EvidenceSource.PROVIDED else f"the {k} passages"
    if use is Strategy.GOLD_EVIDENCE:
        if not claim.has_gold:
            return ClaimAttribution(
                **base,
                stage=Stage.UNDETERMINED,
                reason="gold-evidence strategy, but no passage carries a gold flag",
            )
        gold = tuple(p.rank for p in passages if p.gold)
        if gold:
            found = "provided" if source is EvidenceSource.PROVIDED else "retrieved"
            return ClaimAttribution(
                **base,
                stage=Stage.VERIFICATION,
                reason=f"gold evidence {found} at rank {', '.join(map(str, gold))}; "
                f"{verifier} had it",
                high_quality_ranks=gold,
            )
        return ClaimAttribution(**base, stage=weak, reason=f"no gold passage among {what}")
    n_dims = len(retrieval.high)
    coded = retrieval.get_many([p.unit_id for p in passages])
    verdicts = [
        (p.rank, None if f is None else f.flag) for p, f in zip(passages, coded, strict=True)
    ]
    good = tuple(r for r, v in verdicts if v)
    uncoded = [r for r, v in verdicts if v is None]
    stage = codebook_stage([v for _, v in verdicts], source)
    if stage is Stage.VERIFICATION:
        return ClaimAttribution(
            **base,
            stage=Stage.VERIFICATION,
            reason=f"passage rank {', '.join(map(str, good))} is high quality on every assessed "
            f"retrieval dimension (of {n_dims}); {verifier} had usable evidence",
            high_quality_ranks=good,
        )
    if stage is Stage.UNDETERMINED:
        return ClaimAttribution(
            **base,
            stage=stage,
            reason=f"{len(uncoded)} of {len(verdicts)} {k} passages not coded (missing or "
            "unscored) and none of the coded ones is all-high",
        )
    if source is EvidenceSource.PROVIDED:
        reason = (
            f"none of the {len(verdicts)} passages of the provided evidence is high quality on "
            f"every assessed retrieval dimension (of {n_dims}); no retrieval stage, the "
            "evidence given with the item was insufficient"
        )
    else:
        reason = (
            f"none of the {len(verdicts)} {k} passages is high quality on every assessed "
            f"retrieval dimension (of {n_dims})"
        )
    return ClaimAttribution(**base, stage=stage, reason=reason)


#: The reason of a disagreement with no claim behind it (a sentence the system made none for).
NO_CLAIMS = "no claims behind this disagreement"


def _combine(claims: Sequence[ClaimAttribution]) -> tuple[Stage, str]:
    if not claims:
        return Stage.UNDETERMINED, NO_CLAIMS
    stage = combined_stage([c.stage for c in claims])
    if len(claims) == 1:
        return stage, claims[0].reason
    if stage is not Stage.MIXED:
        reasons = list(dict.fromkeys(c.reason for c in claims))
        if len(reasons) == 1:  # say why, not only where
            return stage, f"all {len(claims)} claims: {stage.value}; {reasons[0]}"
        shown = "; ".join(f"{c.claim_id}: {c.reason}" for c in claims[:3])
        more = f"; and {len(claims) - 3} more" if len(claims) > 3 else ""
        return stage, f"all {len(claims)} claims: {stage.value} ({shown}{more})"
    parts = "; ".join(f"{c.claim_id}: {c.stage.value}" for c in claims)
    return Stage.MIXED, f"claims split ({parts})"


def attribute(
    items: Sequence[Disagreement] | Sequence[Trace],
    retrieval_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    strategy: Strategy = Strategy.AUTO,
    top_k: int | None = None,
) -> list[ItemAttribution]:
    """Attribute every disagreement (or trace) to retrieval, verification, or mixed."""
    codes = CodeIndex.of(retrieval_annotations, codebook, UnitKind.RETRIEVAL)
    return [
        attribute_item(item_claims(item, top_k), codes, strategy=strategy, top_k=top_k)
        for item in items
    ]


def attribute_item(
    item: ItemClaims,
    retrieval: CodeIndex,
    *,
    strategy: Strategy = Strategy.AUTO,
    top_k: int | None = None,
) -> ItemAttribution:
    """Attribute one disagreement (or trace) through the claims that caused it."""
    claims = [
        attribute_claim(claim, retrieval, strategy=strategy, top_k=top_k) for claim in item.claims
    ]
    stage, reason = _combine(claims)
    used = sorted({c.strategy.value for c in claims}) or [strategy.value]
    sources = sorted({c.evidence_source.value for c in claims})
    return ItemAttribution(
        item_id=item.item_id,
        system=item.system,
        question_id=item.question_id,
        sentence_id=item.sentence_id,
        claim_id=item.claim_id,
        kind=item.kind,
        stage=stage,
        strategy="+".join(used),
        evidence_source="+".join(sources) or EvidenceSource.RETRIEVED.value,
        reason=reason,
        claims=tuple(claims),
    )


#: How the reason of a claim without passages (retrieved, provided) begins: no strategy decided it.
NO_PASSAGE_REASONS = (
    "no passage ",
    "evidence provided with the item (no retrieval stage), but no passage text",
)


class GoldFlags:
    """Per system, its claims whose passages carry gold flags and those whose carry none.

    ``auto`` picks the strategy claim by claim (:func:`attribute_claim`). A data set that flags
    its gold passages alone (``gold: true``, the others without the field: a spreadsheet
    column marking the positives) had each claim whose gold passage was retrieved attributed by
    gold evidence (verification) and each claim whose gold passage was not, the retrieval
    failures by that rule, by the judge's codes of the passages it did retrieve (verification
    wherever the judge found one all-high, undetermined unjudged): 2 verification, 2
    undetermined where gold evidence gives 2 verification, 2 retrieval, with no word. Claims
    without passages in the top k ("no passage ...": all of a claim's ranked past ``--top-k``
    too), and closed-book or post-hoc ones, take no strategy and are not counted (the claims
    of a study whose passages all lay past its ``top_k`` were counted here: "1 of its 3
    claims", where the report's reading of the items said "1 of its 2").
    """

    def __init__(self) -> None:
        #: system -> [claims with a gold flag on a passage, claims with passages but no flag]
        self.counts: dict[str, list[int]] = {}

    def add(self, claims: Iterable[ClaimUnits]) -> None:
        """Count ``claims`` (each once: the claims first seen in an item)."""
        for c in claims:
            if c.passages and c.evidence in (EvidenceSource.RETRIEVED, EvidenceSource.PROVIDED):
                self.counts.setdefault(c.system, [0, 0])[0 if c.has_gold else 1] += 1

    def add_attributed(self, claims: Iterable[ClaimAttribution]) -> None:
        """Count attributed ``claims`` (a report's reading of ``attribution.jsonl``).

        A claim counts as flagged when gold evidence decided it, as without flags when the
        codebook did and it had passages (its reason is not a no-passage one): under ``auto``
        that is :meth:`add`'s count; under a strategy given for every claim, one kind alone.
        """
        for c in claims:
            if c.evidence_source not in (EvidenceSource.RETRIEVED, EvidenceSource.PROVIDED):
                continue
            if c.reason.startswith(NO_PASSAGE_REASONS):
                continue
            flagged = c.strategy is Strategy.GOLD_EVIDENCE
            self.counts.setdefault(c.system, [0, 0])[0 if flagged else 1] += 1

    def lines(self) -> list[str]:
        """For the first line: each system whose claims were attributed both ways."""
        return [
            f"system {system!r}: the passages of {flagged:,} of its {flagged + bare:,} claims "
            f"with passages carry gold flags, those of the other {bare:,} none: auto "
            "attributed the first by gold evidence (a gold passage retrieved -> verification) "
            "and the others by the judge's codes of their passages (codebook: verification "
            "where one is all-high, undetermined where none was judged), not as claims "
            "without a gold passage (retrieval); if a passage without a flag is not gold, "
            "write gold: false on it, or give --strategy codebook to attribute every claim by "
            "the judge's codes (docs/attribution.md step 2)"
            for system, (flagged, bare) in sorted(self.counts.items())
            if flagged and bare
        ]


class RankGaps:
    """Claims whose top-k holds fewer passages than k though they hold more (ranks skip).

    A passage's rank is its place in the retriever's list (the trace format), so top-k keeps
    the passages ranked k or better: a pipeline that kept ranks 1, 3 and 5 had one passage
    judged and attributed under ``--top-k 2``, with no word.
    """

    def __init__(self, top_k: int | None) -> None:
        self.top_k = top_k
        self.claims = 0
        self.first: tuple[str, str, int, int] | None = None
        self._seen: set[tuple[str, str, str, str]] = set()  # claims counted by add_ranks

    def add(self, claims: Iterable[ClaimUnits]) -> None:
        """Count ``claims`` (each once) with fewer than k passages ranked k or better."""
        if self.top_k is None:
            return
        for c in claims:
            self._count(c.system, c.claim_id, len(c.passages), c.n_passages)

    def add_traces(self, traces: Iterable[Any]) -> None:
        """Count the claims of ``traces`` (traces, or a reader's claim records), each claim once.

        What ``judge`` and the Label Studio export cut at ``--top-k`` too: their per-rank
        units and tasks held fewer than k passages of a claim whose ranks skip, with no word.
        """
        for t in traces:
            ids = (t.system, t.question_id, t.sentence_id, t.claim_id)
            self.add_ranks(ids, [p.rank for p in t.passages])

    def add_ranks(self, claim: tuple[str, str, str, str], ranks: Sequence[int]) -> None:
        """Count one claim (system, question, sentence and claim ids) by its passages' ranks.

        A claim counted before (a disagreements file repeats a claim under each of its
        sentence's disagreements) is not counted again.
        """
        if self.top_k is None or claim in self._seen:
            return
        self._seen.add(claim)
        k = self.top_k
        self._count(claim[0], claim[3], sum(r <= k for r in ranks), len(ranks))

    def _count(self, system: str, claim: str, kept: int, held: int) -> None:
        assert self.top_k is not None
        if kept < min(self.top_k, held):
            self.claims += 1
            if self.first is None:
                self.first = (system, claim, kept, held)

    def line(self) -> str | None:
        """For the first line (None: no claim's ranks skip within the top k)."""
        if self.first is None:
            return None
        k = self.top_k
        system, claim, kept, held = self.first
        return (
            f"--top-k {k}: {self.claims:,} claim(s) hold fewer than {k} passages ranked {k} or "
            f"better though they hold more (first: system {system!r}, claim {claim!r}: {kept} "
            f"of its {held}): a rank is the retriever's, so ranks that skip (a reranker's or a "
            f"filter's kept passages) leave fewer than {k} in the top {k}; number the ranks "
            f"1, 2, 3... to take each claim's first {k} passages"
        )


class AttributeNotes(FrozenModel):
    """What ``attribute`` said first of its tables, written beside them (``notes.json``).

    The report reads it back: its rank-gap line was counted again from the whole
    disagreements file (each claim's ranks) where ``attribute`` had counted it in its own pass.
    ``source`` is the file attributed, relative to the output folder; ``top_k`` the cut.
    """

    source: str = Field(description="The --from file, relative to the output folder.")
    top_k: int | None = Field(description="The --top-k of the passages attributed.")
    strategy: Strategy
    rank_gaps: str | None = Field(description=":class:`RankGaps`' line (None: no gap).")
    gold_mix: list[str] = Field(description=":class:`GoldFlags`' lines (auto only).")
    mixed_evidence: list[str] = Field(description="Systems read closed-book and retrieved.")


class ReviewedAttribution(FrozenModel):
    """One attributed item with the judge's stage and, if its passages were reviewed, a human's."""

    item_id: str
    system: str
    judge: Stage = Field(description="The stage from the judge's codes (as attributed).")
    human: Stage | None = Field(
        description="The stage from the reviewer's codes by the same rule; None when a passage "
        "the item's stage rests on was not reviewed."
    )
    units: tuple[str, ...] = Field(
        description="Retrieval units (passages) the item's stage rests on; empty when no judge "
        "code enters it (closed-book, gold evidence, no passage)."
    )


def judged_by_codebook(claim: ClaimAttribution) -> bool:
    """Whether the claim's stage rests on the judge's codes of its passages (codebook rule)."""
    return claim.strategy is Strategy.CODEBOOK and claim.evidence_source in (
        EvidenceSource.RETRIEVED,
        EvidenceSource.PROVIDED,
    )


def human_attributions(
    items: Iterable[ItemAttribution],
    claim_units: Mapping[tuple[str, str], Sequence[str]],
    human_flags: Mapping[str, bool | None],
) -> list[ReviewedAttribution]:
    """Each item's stage again, from a reviewer's all-high decisions, by the same rule.

    ``claim_units`` maps (system, claim id) to the unit ids of the claim's top-k passages (the
    rows of :func:`per_passage_codes`); ``human_flags`` maps a reviewed unit to the reviewer's
    all-high decision (:func:`is_all_high` of the reviewer's codes: None when the reviewer
    assessed no dimension). A claim whose stage rests on its passages' codes
    (:func:`judged_by_codebook`) gets the human stage :func:`codebook_stage` gives with the
    reviewer's decisions, when every one of its passages was reviewed; other claims keep
    their stage (no judge code enters it). The item's human stage combines its claims'
    (:func:`combined_stage`), or is None when a claim's passages were not all reviewed.
    """
    out: list[ReviewedAttribution] = []
    for item in items:
        units: list[str] = []
        human: list[Stage] | None = []
        for claim in item.claims:
            passages = claim_units.get((claim.system, claim.claim_id), ())
            if not judged_by_codebook(claim) or not passages:
                if human is not None:
                    human.append(claim.stage)
                continue
            units.extend(passages)
            if human is not None and all(u in human_flags for u in passages):
                human.append(
                    codebook_stage([human_flags[u] for u in passages], claim.evidence_source)
                )
            else:
                human = None
        out.append(
            ReviewedAttribution(
                item_id=item.item_id,
                system=item.system,
                judge=item.stage,
                human=None if human is None else combined_stage(human),
                units=tuple(dict.fromkeys(units)),
            )
        )
    return out


# -- tables -----------------------------------------------------------------------------


def _group(value: str | None, system: str) -> str:
    return str(value) if value else system


def per_passage_codes(
    traces: Iterable[Trace],
    retrieval_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    top_k: int | None = None,
) -> pd.DataFrame:
    """One row per (trace, top-k passage) with its codes and ``all_high`` (None if uncoded).

    ``assessed_dimensions`` counts the dimensions not coded ``not_assessable``; ``all_high``
    is over those (see :func:`is_all_high`).
    """
    codes = CodeIndex.of(retrieval_annotations, codebook, UnitKind.RETRIEVAL)
    return coded_frame(*passage_heads(claim_units(t, top_k) for t in traces), codes, passage=True)


#: The trace columns of the rows of a wide table and the units they show.
Heads = tuple[list[tuple[object, ...]], list[str]]


def passage_heads(claims: Iterable[ClaimUnits]) -> Heads:
    """The per-passage table's trace columns (one per top-k passage) and unit ids."""
    heads: list[tuple[object, ...]] = []
    uids: list[str] = []
    for c in claims:
        if c.cites:  # citations (none, post-hoc) are no Table 8 row
            continue
        group = _group(c.retriever, c.system)
        head = (c.system, group, c.question_id, c.sentence_id, c.claim_id)
        for p in c.passages:
            heads.append((*head, p.rank, p.passage_id, p.gold))
            uids.append(p.unit_id)
    return heads, uids


def per_trace_steps(
    traces: Iterable[Trace],
    verification_annotations: Iterable[Annotation],
    codebook: Codebook,
    *,
    top_k: int | None = None,
) -> pd.DataFrame:
    """One row per trace with its step codes and ``all_correct`` (None if uncoded)."""
    codes = CodeIndex.of(verification_annotations, codebook, UnitKind.VERIFICATION)
    return coded_frame(*step_heads(claim_units(t, top_k) for t in traces), codes, passage=False)


def step_heads(claims: Iterable[ClaimUnits]) -> Heads:
    """The per-trace table's trace columns (one per claim with reasoning) and unit ids."""
    heads: list[tuple[object, ...]] = []
    uids: list[str] = []
    for c in claims:
        if c.step_unit is None:  # no reasoning trace
            continue
        group = _group(c.verifier, c.system)
        heads.append((c.system, group, c.question_id, c.sentence_id, c.claim_id, c.verdict))
        uids.append(c.step_unit)
    return heads, uids


def coded_rows(
    heads: list[tuple[object, ...]], uids: list[str], codes: CodeIndex
) -> list[tuple[object, ...]]:
    """The rows of a wide table: ``heads`` (trace columns) + unit id, coding, codes, flag."""
    missing = ("missing", None, None, *(None,) * len(codes.high), None, None)
    return [
        (*head, uid, *(missing if found is None else (*found[:3], *found.cells, *found[4:])))
        for head, uid, found in zip(heads, uids, codes.get_many(uids), strict=True)
    ]


def coded_columns(codes: CodeIndex, *, passage: bool) -> list[str]:
    """The columns of :func:`coded_rows`' rows (per passage, or per trace)."""
    return _columns(list(codes.high), "all_high" if passage else "all_correct", passage=passage)


def coded_frame(
    heads: list[tuple[object, ...]], uids: list[str], codes: CodeIndex, *, passage: bool
) -> pd.DataFrame:
    """The wide table of :func:`coded_rows`.

    Its flag is ``all_high`` for passages, ``all_correct`` for steps
    (:func:`per_passage_codes`, :func:`per_trace_steps`).
    """
    return rows_frame(coded_rows(heads, uids, codes), coded_columns(codes, passage=passage))


def rows_frame(rows: list[tuple[object, ...]], columns: list[str]) -> pd.DataFrame:
    """A table of ``rows`` (built by column: a row's dict would cost ~1 KB)."""
    import pandas as pd

    cols = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return pd.DataFrame(
        {name: list(col) for name, col in zip(columns, cols, strict=True)}, columns=columns
    )


def count_rows(
    rows: Iterable[Sequence[object]],
    columns: Sequence[str],
    codebook: Codebook,
    kind: UnitKind,
    *,
    by: str,
    flag: str,
    rates: QualityCounts,
    errors: ErrorCounts,
    once: FirstUnits | SeenUnits | None = None,
) -> None:
    """:func:`quality_counts` and :func:`error_counts` of a table's rows, added in place.

    ``once``: the (``by``, unit) keys of the chunks counted before; a row repeating one (a
    passage retrieved for several systems' claims) is not counted again (Table 8,
    :mod:`failcodes.unitrepeats`).

    The rows are tallied by what the counts read (group, flag, status, the dimensions' cells
    and whether a cell is not_assessable: a few distinct keys; ``Counter`` and ``itemgetter``
    loop in C), then each distinct key is counted with its number of rows. The flag is
    True, False or None (:func:`is_all_high`).
    """
    group_at, flag_at, status_at = columns.index(by), columns.index(flag), columns.index("status")
    dims = [dim.id for dim in codebook.part(kind).dimensions]
    key_of = itemgetter(group_at, flag_at, status_at, *(columns.index(d) for d in dims))
    rows = rows if isinstance(rows, list | tuple) else list(rows)
    if once is not None:
        rows = once.first_rows(rows, columns, by, ["status", flag, *dims])
    partials = map(contains, rows, repeat(NOT_ASSESSABLE))
    tally = Counter(zip(map(key_of, rows), partials, strict=True))
    scored = Status.SCORED.value
    cells: dict[str, Counter[tuple[str, object]]] = {}  # per group: (dimension, cell) -> rows
    for (key, partial), times in tally.items():
        group = str(key[0])
        total = rates.get(group)
        if total is None:
            total = rates[group] = [0, 0, 0, 0]
            errors.setdefault(group, ([0], {dim_id: Counter() for dim_id in dims}))
        total[0] += times
        value = key[1]
        if value is not None:
            total[1] += times
            total[2] += times if value is True else 0
            total[3] += times if partial else 0
        if key[2] == scored:
            errors[group][0][0] += times
            seen = cells.setdefault(group, Counter())
            for dim_id, cell in zip(dims, key[3:], strict=True):
                seen[(dim_id, cell)] += times
    for group, seen in cells.items():  # each distinct cell once
        counts = errors[group][1]
        for (dim_id, cell), times in seen.items():
            for code in cell_codes(cell):
                counts.setdefault(dim_id, Counter())[code] += times


def _columns(dims: list[str], flag: str, *, passage: bool) -> list[str]:
    head = ["system", "retriever" if passage else "verifier", "question_id", "sentence_id"]
    head += ["claim_id"]
    head += ["rank", "passage_id", "gold"] if passage else ["verdict"]
    return [*head, "unit_id", "status", "coder", "coder_kind", *dims, "assessed_dimensions", flag]


#: The columns of a wide table (:func:`coded_columns`) that hold no dimension's codes.
_NOT_CODES = frozenset(
    [*_columns([], "all_high", passage=True), *_columns([], "all_correct", passage=False)]
)


def code_columns(columns: Iterable[object]) -> list[str]:
    """The dimension columns of a wide table (:func:`coded_columns`): every other is named."""
    return [str(c) for c in columns if str(c) not in _NOT_CODES]


def quality_rate(table: pd.DataFrame, *, by: str, flag: str) -> pd.DataFrame:
    """Share of coded rows with ``flag`` true, per ``by`` group (uncoded rows excluded).

    Columns: ``by``, rows, coded, ``flag`` (count), rate (``flag`` / coded; NaN-free: a
    group with nothing coded gets rate None), not_fully_assessed (coded rows with at least one
    dimension coded ``not_assessable``: their flag is over the assessed dimensions only).
    """
    return rate_frame(quality_counts(table, by=by, flag=flag), by=by, flag=flag)


#: Per group of a table: [rows, coded, flag true, coded with a not_assessable cell].
QualityCounts = dict[str, list[int]]


def quality_counts(table: pd.DataFrame, *, by: str, flag: str) -> QualityCounts:
    """The counts behind :func:`quality_rate`."""
    from failcodes.tally import partial_rows, row_weights

    out: QualityCounts = {}
    for group, sub in table.groupby(by, sort=True):  # the table or its tally
        rows = row_weights(sub)
        coded = sub[flag].notna()
        n_coded = int(rows[coded].sum())
        n_true = int(rows[coded & (sub[flag] == True)].sum())  # noqa: E712 - object column
        partial = int(rows[coded & partial_rows(sub)].sum())
        total = out.setdefault(str(group), [0, 0, 0, 0])
        for i, n in enumerate((int(rows.sum()), n_coded, n_true, partial)):
            total[i] += n
    return out


def rate_frame(counts: QualityCounts, *, by: str, flag: str) -> pd.DataFrame:
    """:func:`quality_rate`'s table of :func:`quality_counts` (groups in sorted order)."""
    import pandas as pd

    out = []
    for group in sorted(counts):
        rows, n_coded, n_true, partial = counts[group]
        out.append(
            {
                by: group,
                "rows": rows,
                "coded": n_coded,
                flag: n_true,
                "rate": (n_true / n_coded) if n_coded else None,
                "not_fully_assessed": partial,
            }
        )
    return pd.DataFrame(out, columns=[by, "rows", "coded", flag, "rate", "not_fully_assessed"])


def dominant_errors(
    table: pd.DataFrame, codebook: Codebook, kind: UnitKind, *, by: str, top: int = 3
) -> pd.DataFrame:
    """The most frequent low-quality subcodes per group, as shares of the coded rows.

    Several subcodes of one row count separately (one per dimension, and each code of a
    multi-label dimension), as in seed 001's Table 9 where error cells of one step co-occur.
    Retrieval rows count each (``by``, unit) once (:mod:`failcodes.unitrepeats`).
    """
    if kind is UnitKind.RETRIEVAL:
        from failcodes.unitrepeats import marked

        dims = [d.id for d in codebook.part(kind).dimensions]
        table = marked(table, by, ["status", "all_high", *dims])[0]
    counts = error_counts(table, codebook, kind, by=by)
    return dominant_frame(counts, codebook, kind, by=by, top=top)


#: Per group: [scored rows, {dimension: {code: rows}}].
ErrorCounts = dict[str, tuple[list[int], dict[str, Counter[str]]]]


def error_counts(
    table: pd.DataFrame, codebook: Codebook, kind: UnitKind, *, by: str
) -> ErrorCounts:
    """The counts behind :func:`dominant_errors`."""
    from failcodes.tally import REPEAT, is_tally, row_weights, value_counts

    out: ErrorCounts = {}
    part = codebook.part(kind)
    for group, sub in table.groupby(by, sort=True):  # the table or its tally
        coded = sub[sub["status"] == Status.SCORED.value]
        n, dims = out.setdefault(str(group), ([0], {}))
        # a tally's row counts, and a unit's repeated rows (several systems') count for none
        weights = row_weights(coded) if is_tally(coded) or REPEAT in coded else None
        n[0] += len(coded) if weights is None else int(weights.sum())
        for dim in part.dimensions:
            counts = dims.setdefault(dim.id, Counter())
            for cell, times in value_counts(coded[dim.id], weights).items():  # each cell once
                for code in cell_codes(cell):
                    counts[code] += int(times)
    return out


def dominant_frame(
    counts: ErrorCounts, codebook: Codebook, kind: UnitKind, *, by: str, top: int = 3
) -> pd.DataFrame:
    """:func:`dominant_errors`' table of :func:`error_counts` (groups in sorted order)."""
    import pandas as pd

    part = codebook.part(kind)
    rows = []
    for group in sorted(counts):
        (n,), dims = counts[group]
        if n == 0:
            continue
        found = []
        for dim in part.dimensions:
            got = dims.get(dim.id, Counter())
            for sc in dim.subcodes:
                if sc.high_quality:
                    continue
                c = int(got.get(sc.id, 0))
                if c:
                    found.append((c, dim.id, sc.id, sc.label))
        found.sort(key=lambda x: (-x[0], x[1], x[2]))
        for c, dim_id, sc_id, label in found[:top]:
            rows.append(
                {
                    by: group,
                    "dimension": dim_id,
                    "subcode": sc_id,
                    "label": label,
                    "count": c,
                    "coded": n,
                    "share": c / n,
                }
            )
    return pd.DataFrame(
        rows, columns=[by, "dimension", "subcode", "label", "count", "coded", "share"]
    )


#: The columns of :func:`attribution_table`.
ATTRIBUTION_COLUMNS = (
    "item_id",
    "system",
    "question_id",
    "sentence_id",
    "claim_id",
    "kind",
    "stage",
    "strategy",
    "evidence_source",
    "reason",
)


def attribution_row(a: ItemAttribution) -> tuple[object, ...]:
    """One row of :func:`attribution_table` (its :data:`ATTRIBUTION_COLUMNS`)."""
    kind = a.kind.value if a.kind else None
    ids = (a.item_id, a.system, a.question_id, a.sentence_id, a.claim_id)
    return (*ids, kind, a.stage.value, a.strategy, a.evidence_source, a.reason)


def attribution_table(items: Iterable[ItemAttribution]) -> pd.DataFrame:
    """One row per attributed item: id, system, kind, stage, strategy, evidence source, reason."""
    import pandas as pd

    rows = [dict(zip(ATTRIBUTION_COLUMNS, attribution_row(a), strict=True)) for a in items]
    return pd.DataFrame(rows, columns=list(ATTRIBUTION_COLUMNS))


def attribution_summary(items: Iterable[ItemAttribution]) -> pd.DataFrame:
    """Counts of items per system and stage (the attribution table of Figure 1)."""
    return stage_counts(attribution_table(items))


def stage_counts(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`attribution_summary` of the :func:`attribution_table` ``table``."""
    import pandas as pd

    stages = [s.value for s in Stage]
    if table.empty:
        return pd.DataFrame(columns=["system", *stages, "total"])
    counts = pd.crosstab(table["system"], table["stage"]).reindex(columns=stages, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index().rename_axis(None, axis=1)
