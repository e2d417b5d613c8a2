"""The units of a disagreements file, one at a time: what ``labelstudio export`` turns into tasks.

``build_units(disagreement_traces(read_disagreements(path)), kind)`` holds every trace and
every unit at once: a paper-scale study's 210k retrieval units took over a gigabyte.
:func:`iter_disagreement_units` gives the same units, in the same order, one at a time. The
file is read a line at a time through the disagreement reader's msgspec path
(:func:`~failcodes.disagreementio.iter_disagreement_claims`), and what has been seen is kept
as 8 bytes per trace and per unit (:class:`~failcodes.ingest.repeats.KeyHashes`, checked a
batch of traces at a time): a unit's id is the first 64 bits of its content hash
(:func:`~failcodes.units.unit_id`), so its 8 bytes are the id itself, and a unit seen before is
not given again.

Units come as :class:`TaskUnit` records built from the reader's own records (no model), without
their provenance (every (system, question, sentence, claim, rank) they occur at: as much
memory as the traces). What a task shows of it, the pipelines' own verdict words of a
verification unit, comes with each unit.

A file the fast path cannot vouch for (written by hand or another tool; a line with an
escaped key, a trace key that may repeat) is read by the exact reader instead, which holds it
whole or names the bad line: the units already given are not given again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from failcodes.codebook import UnitKind
from failcodes.columnar import ExactReaderNeededError
from failcodes.disagreementio import (
    disagreement_lines,
    iter_disagreement_claims,
    vouched_disagreement_line,
)
from failcodes.ingest.repeats import KeyHashes
from failcodes.traces import CITING_SOURCES
from failcodes.units import Unit, build_units, disagreement_traces, retrieval_unit_digests, unit_id
from failcodes.verdicts import ASSERTED, Verdict

#: Traces whose units are checked against those seen before at once (their units wait that
#: long: a few MB of text).
BATCH = 2048


class TaskUnit(msgspec.Struct, frozen=True, gc=False):
    """A unit as a task shows it: :class:`~failcodes.units.Unit`'s content, no provenance.

    Streamed units are built straight from the disagreement reader's records (no model: a
    paper-scale export built 620k of them); ``passages`` are then the reader's passage
    records (``passage_id``, ``rank``, ``text``, ``title``... as a
    :class:`~failcodes.traces.Passage` has them, an empty title as written, not None).

    ``raw_verdicts``: for a verification unit, the distinct verdicts as its traces wrote them
    that :func:`failcodes.labelstudio.tasks.verdict_text` shows (those other than the
    canonical verdict, and the mark of a verdict the system asserted), first seen first;
    empty for retrieval units.
    """

    id: str
    kind: UnitKind
    claim: str
    passages: tuple[Any, ...]
    reasoning: str | None = None
    verdict: Verdict | None = None
    raw_verdicts: tuple[str, ...] = ()


def _key(digest: bytes) -> int:
    """A unit id's 8 bytes as the signed 64-bit key KeyHashes holds."""
    return int.from_bytes(digest, "big", signed=True)


def _trace_key(system: str, question_id: str, sentence_id: str, claim_id: str) -> int:
    """The key of a trace's identity (system, question, sentence, claim): its 64-bit hash.

    Python's own (keyed per process: the keys are compared within one read only); two
    identities sharing it look like a repeat, which sends the file to the exact reader. A
    BLAKE2b digest of the joined text cost 12x more (4.6 vs 0.4 us; a verification export
    takes two keys a claim: 59k at paper scale).
    """
    return hash((system, question_id, sentence_id, claim_id))


def _shown(raw: str | None, canonical: str) -> bool:
    """Whether :func:`~failcodes.labelstudio.tasks.verdict_text` shows this verdict word."""
    if not raw:
        return False
    return raw == ASSERTED or raw.strip().casefold() != canonical


def _shown_raw(words: list[str], raw: str | None, canonical: str) -> None:
    """Add ``raw`` to ``words`` (distinct, first seen first) if it is shown."""
    if raw is not None and _shown(raw, canonical) and raw not in words:
        words.append(raw)


def _verification_unit(
    claim: Any, top_k: int | None, words: dict[str, list[str]] | None = None
) -> TaskUnit | None:
    """The verification unit of a claim record (None: no reasoning, nothing to code).

    ``words``: the verdict words of each unit id (see :func:`_raw_verdict_words`).
    """
    reasoning = claim.reasoning
    if not reasoning or not reasoning.strip():
        return None
    shown = tuple(p for p in claim.passages if top_k is None or p.rank <= top_k)
    verdict = Verdict(claim.verdict)
    uid = unit_id(UnitKind.VERIFICATION, claim.claim, shown, reasoning, verdict)
    raw = tuple(words.get(uid, ())) if words else ()
    return TaskUnit(uid, UnitKind.VERIFICATION, claim.claim, shown, reasoning, verdict, raw)


class _WordsClaim(msgspec.Struct, frozen=True, gc=False):
    """What the first pass reads of a claim record (other fields are skipped unread)."""

    claim_id: str
    verdict: Literal[tuple(v.value for v in Verdict)]  # type: ignore[valid-type]
    raw_verdict: str | None = None


class _WordsLine(msgspec.Struct, frozen=True, gc=False):
    """What the first pass reads of a disagreement line: its claims' trace keys and words."""

    system: str
    question_id: str
    sentence_id: str
    claims: list[_WordsClaim]


_decode_words = msgspec.json.Decoder(_WordsLine).decode


def _raw_verdict_words(path: Path, top_k: int | None) -> dict[str, list[str]]:
    """Each verification unit's verdict words other than the canonical one (a first pass).

    Only units with such a word are kept (a file whose pipelines wrote the canonical words,
    or none, gives an empty dict). A trace key that may repeat raises ExactReaderNeededError
    here, before any unit is given (the exact reader keeps a repeated trace's first record
    only, and so its words).

    A line is decoded for its trace keys and verdict words only (:class:`_WordsLine`: the
    passages and texts skipped unread); a line with a word to show, whose unit id needs its
    texts, is read whole by the fast reader's check. A line the words decoder cannot read
    (a missing or mistyped field, a verdict not canonical) raises ExactReaderNeededError: the
    exact reader then reads the file.
    """
    words: dict[str, list[str]] = {}
    seen = KeyHashes(batch=1 << 62)
    whole = vouched_disagreement_line()
    for body in disagreement_lines(path):
        try:
            line = _decode_words(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if not body.strip():
                continue
            raise ExactReaderNeededError from None
        shown = False
        for c in line.claims:
            seen.add(_trace_key(line.system, line.question_id, line.sentence_id, c.claim_id))
            shown = shown or _shown(c.raw_verdict, c.verdict)
        if not shown:
            continue  # no word to show: no unit id computed
        for c in whole(body).claims:
            raw = c.raw_verdict
            if not _shown(raw, c.verdict):
                continue
            unit = _verification_unit(c, top_k)
            if unit is not None:
                _shown_raw(words.setdefault(unit.id, []), raw, c.verdict)
    if seen.settle():
        raise ExactReaderNeededError
    return words


def _units_of(
    claims: list[Any], kind: UnitKind, top_k: int | None, words: dict[str, list[str]]
) -> dict[int, TaskUnit]:
    """The first unit of each id among ``claims``' units, in order (keyed by its 8 bytes)."""
    out: dict[int, TaskUnit] = {}
    retrieval = kind is UnitKind.RETRIEVAL
    for c in claims:
        if retrieval:
            if c.evidence_source in CITING_SOURCES:  # citations, not retrieved passages
                continue
            shown = [p for p in c.passages if top_k is None or p.rank <= top_k]
            digests = retrieval_unit_digests(c.claim, shown)
            for i, passage in enumerate(shown):
                digest = digests[8 * i : 8 * i + 8]
                key = _key(digest)
                if key not in out:
                    out[key] = TaskUnit(digest.hex(), kind, c.claim, (passage,))
            continue
        found = _verification_unit(c, top_k, words)
        if found is not None:
            out.setdefault(_key(bytes.fromhex(found.id)), found)
    return out


def _streamed(
    path: Path, kind: UnitKind, top_k: int | None, with_words: bool
) -> Iterator[TaskUnit]:
    """The units through the fast path (ExactReaderNeededError when it cannot vouch)."""
    words = {}
    if with_words and kind is UnitKind.VERIFICATION:
        words = _raw_verdict_words(path, top_k)
    traces_seen = KeyHashes(batch=1 << 62)  # settled by hand, a batch of claims at a time
    units_seen = KeyHashes(batch=1 << 62)
    pending: list[Any] = []

    def settled() -> Iterator[TaskUnit]:
        if traces_seen.settle():  # a trace key that may repeat: the exact reader keeps the first
            raise ExactReaderNeededError
        batch = _units_of(pending, kind, top_k, words)
        pending.clear()
        for key in batch:
            units_seen.add(key)
        earlier = units_seen.settle()
        for key, item in batch.items():
            if key not in earlier:
                yield item

    for rec, c in iter_disagreement_claims(path):
        traces_seen.add(_trace_key(rec.system, rec.question_id, rec.sentence_id, c.claim_id))
        pending.append(c)
        if len(pending) >= BATCH:
            yield from settled()
    yield from settled()


def iter_disagreement_units(
    path: str | Path, kind: UnitKind, *, top_k: int | None = None, words: bool = True
) -> Iterator[TaskUnit]:
    """The units of ``kind`` behind a disagreements file, in ``build_units``' order, streamed.

    The same units (ids, claims, passages, reasoning, verdicts) as ``build_units(
    disagreement_traces(read_disagreements(path)), kind, top_k=top_k)``, without provenance;
    the same one-line errors for a bad file (from the exact reader, which then holds the file).
    ``words=False``: no verdict words (``raw_verdicts`` stay empty and the first pass that
    finds them is not made; the judge does not show them).
    """
    source = Path(path)
    given = 0
    fast = _streamed(source, kind, top_k, words)
    while True:
        try:
            item = next(fast)
        except StopIteration:
            return
        except ExactReaderNeededError:
            break
        yield item
        given += 1
    from failcodes.disagreementio import read_disagreements

    units = build_units(disagreement_traces(read_disagreements(source)), kind, top_k=top_k)
    yield from units_with_words(units[given:], kind)


def units_with_words(units: Iterable[Unit], kind: UnitKind) -> Iterator[TaskUnit]:
    """Built units as streamed ones: each unit of ``kind`` once, with its verdict words.

    The words come from the unit's provenance (which it keeps).
    """
    seen: set[str] = set()
    for unit in units:
        if unit.kind is not kind or unit.id in seen:
            continue
        seen.add(unit.id)
        words: list[str] = []
        if kind is UnitKind.VERIFICATION and unit.verdict is not None:
            for p in unit.provenance:
                _shown_raw(words, p.raw_verdict, unit.verdict.value)
        yield TaskUnit(
            unit.id, kind, unit.claim, unit.passages, unit.reasoning, unit.verdict, tuple(words)
        )
