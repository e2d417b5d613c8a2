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

Units come without their provenance (every (system, question, sentence, claim, rank) they
occur at: as much memory as the traces). What a task shows of it, the pipelines' own verdict
words of a verification unit, comes beside each unit (:class:`StreamedUnit`).

A file the fast path cannot vouch for (written by hand or another tool; a line with an
escaped key, a trace key that may repeat) is read by the exact reader instead, which holds it
whole or names the bad line: the units already given are not given again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from failcodes.codebook import UnitKind
from failcodes.columnar import ExactReaderNeededError
from failcodes.disagreementio import claim_trace_of, iter_disagreement_claims
from failcodes.ingest.repeats import KeyHashes
from failcodes.traces import Trace
from failcodes.units import Unit, build_units, retrieval_unit_digests, unit_id
from failcodes.verdicts import ASSERTED

#: Traces whose units are checked against those seen before at once (their units wait that
#: long: a few MB of text).
BATCH = 2048


@dataclass(frozen=True)
class StreamedUnit:
    """A unit (without provenance) and the verdict words its pipelines wrote.

    ``raw_verdicts``: for a verification unit, the distinct verdicts as its traces wrote them
    that :func:`failcodes.labelstudio.tasks.verdict_text` shows (those other than the
    canonical verdict, and the mark of a verdict the system asserted), first seen first;
    empty for retrieval units.
    """

    unit: Unit
    raw_verdicts: tuple[str, ...] = ()


def _key(digest: bytes) -> int:
    """A unit id's 8 bytes (or a trace key's hash) as the signed 64-bit key KeyHashes holds."""
    return int.from_bytes(digest, "big", signed=True)


def _trace_key(system: str, question_id: str, sentence_id: str, claim_id: str) -> int:
    """The key of a trace's identity (system, question, sentence, claim)."""
    parts = (system, question_id, sentence_id, claim_id)
    text = "\0".join(parts).encode("utf-8", "surrogatepass")
    return _key(hashlib.blake2b(text, digest_size=8).digest())


def _shown(raw: str | None, canonical: str) -> bool:
    """Whether :func:`~failcodes.labelstudio.tasks.verdict_text` shows this verdict word."""
    if not raw:
        return False
    return raw == ASSERTED or raw.strip().casefold() != canonical


def _shown_raw(words: list[str], raw: str | None, canonical: str) -> None:
    """Add ``raw`` to ``words`` (distinct, first seen first) if it is shown."""
    if raw is not None and _shown(raw, canonical) and raw not in words:
        words.append(raw)


def _verification_id(trace: Trace, top_k: int | None) -> tuple[str, tuple[int, ...]] | None:
    """The trace's verification unit id and the positions of its shown passages (None: none)."""
    if trace.reasoning is None or not trace.reasoning.strip():
        return None
    shown = tuple(i for i, p in enumerate(trace.passages) if top_k is None or p.rank <= top_k)
    uid = unit_id(
        UnitKind.VERIFICATION,
        trace.claim,
        tuple(trace.passages[i].text for i in shown),
        trace.reasoning,
        trace.verdict,
    )
    return uid, shown


def _raw_verdict_words(path: Path, top_k: int | None) -> dict[str, list[str]]:
    """Each verification unit's verdict words other than the canonical one (a first pass).

    Only units with such a word are kept (a file whose pipelines wrote the canonical words,
    or none, gives an empty dict). A trace key that may repeat raises ExactReaderNeededError
    here, before any unit is given (the exact reader keeps a repeated trace's first record
    only, and so its words).
    """
    words: dict[str, list[str]] = {}
    seen = KeyHashes(batch=1 << 62)
    for rec, c in iter_disagreement_claims(path):
        seen.add(_trace_key(rec.system, rec.question_id, rec.sentence_id, c.claim_id))
        raw = c.raw_verdict
        if not _shown(raw, c.verdict):
            continue  # no word to show: its trace is not built
        found = _verification_id(claim_trace_of(rec, c), top_k)
        if found is not None:
            _shown_raw(words.setdefault(found[0], []), raw, c.verdict)
    if seen.settle():
        raise ExactReaderNeededError
    return words


def _units_of(
    traces: list[Trace], kind: UnitKind, top_k: int | None, words: dict[str, list[str]]
) -> dict[int, StreamedUnit]:
    """The first unit of each id among ``traces``' units, in order (keyed by its 8 bytes)."""
    out: dict[int, StreamedUnit] = {}
    for trace in traces:
        if kind is UnitKind.RETRIEVAL:
            shown = [p for p in trace.evidence_passages if top_k is None or p.rank <= top_k]
            digests = retrieval_unit_digests(trace.claim, (p.text for p in shown))
            for i, passage in enumerate(shown):
                digest = digests[8 * i : 8 * i + 8]
                key = _key(digest)
                if key not in out:
                    unit = Unit.model_construct(
                        id=digest.hex(),
                        kind=kind,
                        claim=trace.claim,
                        passages=(passage,),
                        reasoning=None,
                        verdict=None,
                        provenance=(),
                    )
                    out[key] = StreamedUnit(unit)
            continue
        found = _verification_id(trace, top_k)
        if found is None:
            continue
        uid, positions = found
        key = _key(bytes.fromhex(uid))
        if key not in out:
            unit = Unit.model_construct(
                id=uid,
                kind=kind,
                claim=trace.claim,
                passages=tuple(trace.passages[i] for i in positions),
                reasoning=trace.reasoning,
                verdict=trace.verdict,
                provenance=(),
            )
            out[key] = StreamedUnit(unit, tuple(words.get(uid, ())))
    return out


def _streamed(path: Path, kind: UnitKind, top_k: int | None) -> Iterator[StreamedUnit]:
    """The units through the fast path (ExactReaderNeededError when it cannot vouch)."""
    words = _raw_verdict_words(path, top_k) if kind is UnitKind.VERIFICATION else {}
    traces_seen = KeyHashes(batch=1 << 62)  # settled by hand, a batch of traces at a time
    units_seen = KeyHashes(batch=1 << 62)
    pending: list[Trace] = []

    def settled() -> Iterator[StreamedUnit]:
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
        trace = claim_trace_of(rec, c)
        traces_seen.add(
            _trace_key(trace.system, trace.question_id, trace.sentence_id, trace.claim_id)
        )
        pending.append(trace)
        if len(pending) >= BATCH:
            yield from settled()
    yield from settled()


def iter_disagreement_units(
    path: str | Path, kind: UnitKind, *, top_k: int | None = None
) -> Iterator[StreamedUnit]:
    """The units of ``kind`` behind a disagreements file, in ``build_units``' order, streamed.

    The same units (ids, claims, passages, reasoning, verdicts) as ``build_units(
    disagreement_traces(read_disagreements(path)), kind, top_k=top_k)``, without provenance;
    the same one-line errors for a bad file (from the exact reader, which then holds the file).
    """
    source = Path(path)
    given = 0
    fast = _streamed(source, kind, top_k)
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
    from failcodes.units import disagreement_traces

    units = build_units(disagreement_traces(read_disagreements(source)), kind, top_k=top_k)
    yield from units_with_words(units[given:], kind)


def units_with_words(units: Iterable[Unit], kind: UnitKind) -> Iterator[StreamedUnit]:
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
        yield StreamedUnit(unit, tuple(words))


__all__ = ["StreamedUnit", "iter_disagreement_units", "units_with_words"]
