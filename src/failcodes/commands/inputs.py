"""Reading the inputs of ``judge`` and ``attribute``: traces or disagreements, and a codebook.

A ``--from`` file is either a disagreements table (``failcodes disagreements`` output, JSONL
or Parquet) or a traces file in any format :func:`failcodes.traceio.read_traces` reads.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import numpy as np

from failcodes import codebook as codebook_mod
from failcodes.codebook import Codebook
from failcodes.columnar import ExactReaderNeededError, construct_passages
from failcodes.disagreementio import (
    is_disagreements_file,
    iter_claim_ranks,
    iter_disagreement_records,
    read_disagreement_traces,
    read_disagreements,
    record_line,
)
from failcodes.disagreements import Disagreement, DisagreementKind
from failcodes.errors import InputError, MissingPartError
from failcodes.fileio import check_regular_file
from failcodes.judge.cache import check_cache
from failcodes.judge.journal import check_run_dir
from failcodes.traceio import read_traces
from failcodes.traces import (
    EvidenceSource,
    Marks,
    Passage,
    Trace,
    check_declared_systems,
    closed_book_line,
    declared_source,
    derived_evidence_source,
    refuse_mixed_evidence,
    tally_undeclared,
)
from failcodes.units import Unit, UnitKind, build_units, claim_trace, disagreement_traces
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.attribution import ClaimUnits, ItemClaims, RankGaps
    from failcodes.judge.colestimate import UnitSizes  # (the judge's: imported by its uses)


def load_inputs(
    path: str | Path, marks: Marks | None = None
) -> tuple[list[Trace], list[Disagreement] | None]:
    """Read ``--from``: the traces to judge, and the disagreements when the file holds them.

    ``marks``: a traces file's reasonings and passages read as none (a missing mark).
    """
    p = check_regular_file(path)
    if is_disagreements_file(p):
        items = read_disagreements(p)
        traces = disagreement_traces(items)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces, items
    traces = read_traces(p, marks=marks)
    if not traces:
        raise InputError("no traces found", path=p)
    return traces, None


class ItemSource:
    """``attribute --from`` as slim records, read once.

    A traces file (or anything the exact reader takes) is read and checked here, as
    :func:`load_inputs` checks it, and held. A disagreements JSONL file is streamed: iterating
    reads it one disagreement at a time as ``(item, new claims)``: the item's
    :class:`~failcodes.attribution.ItemClaims` (``--evidence`` declared on its claims) and the
    claims seen there first (:func:`~failcodes.units.disagreement_traces`' order: first of
    each system, question, sentence, claim), each kept as ids and passage unit ids, no text.
    What a first read used to check is raised at the end of the stream (no claims, an
    ``--evidence`` system not in the input), and a line the fast reader cannot vouch for
    sends the rest of the file to the exact reader, which reads the whole file (its one-line
    error) and gives the records from that line on: the caller writes inside an
    :class:`~failcodes.fileio.AtomicBatch`, so an error anywhere leaves nothing written.
    """

    def __init__(
        self, path: str | Path, declared: Mapping[str, EvidenceSource], *, top_k: int | None
    ) -> None:
        p = check_regular_file(path)
        self.path, self.declared, self.top_k = p, declared, top_k
        self._held: Sequence[Any] | None = None
        #: per system, claims read closed-book and retrieved without --evidence
        self._sources: dict[str, list[int]] = {}
        self._traces = not is_disagreements_file(p)
        #: a traces file's systems read closed-book for want of passages (said first)
        self._bare: str | None = None
        #: a traces file's reasonings and passages read as none (a missing mark: said first)
        self._marks = Marks()
        if self._traces:
            self._held = read_traces(p, marks=self._marks)
            if not self._held:
                raise InputError("no traces found", path=p)
            if declared:
                check_declared_systems(declared, {t.system for t in self._held})
            # a system partly retrieved, partly bare, undeclared: refused as ingest refuses it
            # (its bare claims were attributed to verification, not to the retrieval)
            undeclared: dict[str, list[int]] = {}
            for t in self._held:
                if declared_source(declared, t.system) is None:
                    tally_undeclared(
                        undeclared, t.system, t.evidence_source, t.passages, t.retriever
                    )
            refuse_mixed_evidence(undeclared, p)
            self._bare = closed_book_line(undeclared)

    def _declare(self, trace: Any) -> Any:
        source = declared_source(self.declared, trace.system) if self.declared else None
        if source is None:
            if trace.evidence in _READ:  # (see mixed_notes)
                seen = self._sources.setdefault(trace.system, [0, 0])
                seen[_READ.index(trace.evidence)] += 1
            return trace
        if isinstance(trace, _ClaimView):
            return trace._replace(evidence_source=source)
        return trace.model_copy(update={"evidence_source": source})

    def __iter__(self) -> Iterator[tuple[ItemClaims, list[ClaimUnits]]]:
        """Each item to attribute and the claims first seen in it (see the class)."""
        from failcodes.attribution import ItemClaims, claim_units

        if self._traces:
            for t in self._held or ():
                u = claim_units(self._declare(t), self.top_k)
                item_id = f"{u.system}/{u.claim_id}"
                ids = (u.system, u.question_id, u.sentence_id, u.claim_id)
                yield ItemClaims(item_id, *ids, None, (u,)), [u]
            return
        systems: set[str] = set()
        yield from self._slim(self._records(), systems)
        if not systems:
            raise InputError("the disagreements carry no claims to judge", path=self.path)
        if self.declared:
            check_declared_systems(self.declared, systems)

    def mixed_notes(self) -> list[str]:
        """For the first line: systems read partly closed-book, partly retrieved (once read).

        ``ingest`` refuses such a system unless declared (b6ab2b6), but traces written in
        failcodes' format, or ingested before, reach ``disagreements``, which writes each
        claim's derived source: a retrieval pipeline's claims its retriever found nothing for
        were attributed as closed-book (verification), not to the retrieval (docs/
        attribution.md step 4), with no word. A declared per-claim source (a pipeline that
        retrieves for some claims only) reads alike there, so this is said, not refused.
        """
        return (
            ([self._bare] if self._bare else [])
            + self._marks.lines()
            + [
                f"system {name!r}: {bare:,} of its {bare + got:,} claims here are closed-book "
                "(evidence source none), the others retrieved: attributed so, the closed-book ones "
                "to verification; if its retriever found nothing for them (a source derived from "
                f"no passages), --evidence {name}=retrieved attributes them to retrieval "
                "(docs/attribution.md step 4)"
                for name, (bare, got) in sorted(self._sources.items())
                if bare and got
            ]
        )

    def _at(self, number: int) -> str:
        """Where the ``number``-th disagreement is: 'line N' (JSONL) or 'row N' (Parquet)."""
        line, word = record_line(self.path, number)
        return f"{word} {line}"

    def _records(self) -> Iterator[Any]:
        """The disagreements: the fast reader's structs, then the exact reader's models.

        The exact reader takes over from the first line the fast one cannot vouch for.
        """
        done = 0
        try:
            for rec in iter_disagreement_records(self.path):
                yield rec
                done += 1
        except ExactReaderNeededError:
            yield from read_disagreements(self.path)[done:]

    def _slim(
        self, records: Iterable[Any], systems: set[str]
    ) -> Iterator[tuple[ItemClaims, list[ClaimUnits]]]:
        """Slim records of disagreements (models or the fast reader's structs).

        ``systems`` gets the system of each disagreement with a claim.
        """
        from failcodes.attribution import ItemClaims, claim_units
        from failcodes.unitrepeats import SeenDigests

        encode = msgspec.json.encode
        seen = SeenDigests()  # 16-byte digests of (system, question, sentence, claim)
        numbers = SeenDigests()  # each disagreement's id's digest -> its number
        mapping: str | None = None
        first_level = ""
        for number, d in enumerate(records, start=1):
            first_at = numbers.setdefault(
                hashlib.blake2b(encode(d.id), digest_size=16).digest(), number
            )
            if first_at != number:
                # a file holding its disagreements twice (appended again) attributed and
                # counted each twice: verification 2, mixed 2 for 1 and 1, exit 0
                raise InputError(
                    f"the disagreement here has the id of the one at {self._at(first_at)} "
                    f"({d.id}: system {d.system!r}, question {d.question_id!r}, sentence "
                    f"{d.sentence_id!r}): it would be attributed (and counted) twice; a file "
                    "holding its disagreements twice (appended again?), or two data sets' "
                    "files joined whose systems and ids coincide: attribute each file apart",
                    path=self.path,
                    line=record_line(self.path, number)[0],
                    field="id",
                )
            level = str(getattr(d.level, "value", d.level))
            if mapping is None:
                mapping, first_level = d.mapping, level
            elif level != first_level:
                # a sentence's error attributed once as the sentence and again per claim:
                # 2 sentence and 3 claim disagreements of one system summed to 5 items
                raise InputError(
                    f"the disagreement here is at level {level!r}, the first ({self._at(1)}) "
                    f"at {first_level!r}: an error would be attributed (and counted) as its "
                    "sentence and again as its claims; attribute one level's disagreements at "
                    "a time (failcodes disagreements --level LEVEL -o FILE)",
                    path=self.path,
                    line=record_line(self.path, number)[0],
                    field="level",
                )
            elif d.mapping != mapping:
                # each sentence would be attributed once per mapping: the summary counted a
                # system's 3 disagreements as 6 (refuted and non_supported) with no word
                raise InputError(
                    f"the disagreement here is under mapping {d.mapping!r}, the first "
                    f"({self._at(1)}) under {mapping!r}: a sentence found under both would be "
                    "attributed (and counted) once per mapping; attribute one mapping's "
                    "disagreements at a time (failcodes disagreements -m MAPPING -o FILE)",
                    path=self.path,
                    line=record_line(self.path, number)[0],
                    field="mapping",
                )
            trace_of = claim_trace if isinstance(d, Disagreement) else _ClaimView.of
            kind = DisagreementKind(d.kind)
            causes = set(d.error_claim_ids) if kind is DisagreementKind.FP else None
            if d.claims:
                systems.add(d.system)
            mine = []
            new = []
            for c in d.claims:
                key = (d.system, d.question_id, d.sentence_id, c.claim_id)
                digest = hashlib.blake2b(encode(key), digest_size=16).digest()
                first = seen.add(digest)
                cause = causes is None or c.claim_id in causes
                if not (first or cause):
                    continue
                unit = claim_units(self._declare(trace_of(d, c)), self.top_k)
                if first:
                    new.append(unit)
                if cause:
                    mine.append(unit)
            ids = (d.id, d.system, d.question_id, d.sentence_id, d.claim_id)
            yield ItemClaims(*ids, kind, tuple(mine)), new


class _ClaimView(NamedTuple):
    """A claim record of the fast disagreement reader as a trace (what attribution reads).

    What :func:`~failcodes.disagreementio.claim_trace_of` makes of it, without building the
    trace and passage models.
    """

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    claim: str
    retriever: str | None
    verifier: str | None
    reasoning: str | None
    verdict: Verdict
    evidence_source: EvidenceSource | None
    passages: Sequence[Any]
    raw_verdict: str | None  # 'asserted by the system': a pipeline without a verifier

    @classmethod
    def of(cls, rec: Any, c: Any) -> _ClaimView:
        source = c.evidence_source
        return cls(
            rec.system,
            rec.question_id,
            rec.sentence_id,
            c.claim_id,
            c.claim,
            c.retriever or None,  # empty as missing, as the model's validators make them
            c.verifier or None,
            c.reasoning or None,
            Verdict(c.verdict),
            EvidenceSource(source) if source is not None else None,
            c.passages,
            c.raw_verdict or None,
        )

    @property
    def evidence(self) -> EvidenceSource:
        """The declared evidence source, or the one derived (as :attr:`Trace.evidence`)."""
        if self.evidence_source is not None:
            return self.evidence_source
        return derived_evidence_source(tuple(self.passages), self.retriever)


#: The evidence sources :meth:`ItemSource.mixed_notes` counts: closed-book, retrieved.
_READ = (EvidenceSource.NONE, EvidenceSource.RETRIEVED)


def load_traces(path: str | Path, marks: Marks | None = None) -> list[Trace]:
    """Read the traces of ``--from`` (from disagreements or a traces file).

    ``marks``: as :func:`load_inputs`'.
    """
    p = Path(path)
    if p.is_file() and is_disagreements_file(p):
        traces = read_disagreement_traces(p)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces
    return load_inputs(path, marks)[0]


def rank_gaps(
    paths: Sequence[Path], top_k: int | None, traces: Sequence[Any] | None = None
) -> RankGaps:
    """The claims of ``paths`` (traces or disagreements) whose ranks skip within ``top_k``.

    ``traces``: the claims, read already (``paths`` is not read again). Nothing is read
    without a ``top_k``. A disagreements file is read by the fast reader (the exact one from
    the first line it cannot vouch for), one record at a time.
    """
    from failcodes.attribution import RankGaps

    gaps = RankGaps(top_k)
    if top_k is None:
        return gaps
    if traces is not None:
        gaps.add_traces(traces)
        return gaps
    for path in paths:
        if not is_disagreements_file(path):
            gaps.add_traces(load_traces(path))
            continue
        for claim, ranks in iter_claim_ranks(path):
            gaps.add_ranks(claim, ranks)
    return gaps


def source_units(source: str | Path, kind: UnitKind, top_k: int | None) -> list[Unit]:
    """The units of ``kind`` ``--from`` makes (read whole)."""
    return build_units(load_traces(source), kind, top_k=top_k)


def load_unit_sizes(
    path: str | Path, kind: UnitKind, *, top_k: int | None, grouped: bool = False
) -> UnitSizes | None:
    """The units of ``--from`` as columns (the dry run's fast path), or None.

    None unless ``path`` is a disagreements or traces file (JSONL or Parquet) its fast reader
    vouches for: the caller then reads traces with :func:`load_traces` (same result, or the
    one-line error).
    """
    from failcodes.judge.colestimate import read_unit_sizes

    p = Path(path)
    if not p.is_file():
        return None
    if not is_disagreements_file(p):  # a traces file (every unit of every trace)
        sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped, traces=True)
        return sizes if sizes is not None and sizes.traces else None
    sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped)
    if sizes is not None and not sizes.traces:
        raise InputError("the disagreements carry no claims to judge", path=p)
    return sizes


class FileUnits:
    """The distinct units of a disagreements file, counted once, then read one at a time.

    A :class:`~failcodes.judge.session.CountedUnits` stream: the judge takes its units one
    by one (:func:`~failcodes.unitstream.iter_disagreement_units`, in ``build_units``'
    order, without provenance, which judging does not read) instead of holding every trace
    and unit (1.3 GB at paper scale). The count and the ids come from the dry run's columns
    (:class:`~failcodes.judge.colestimate.UnitSizes`: 8 bytes a unit).
    """

    def __init__(self, path: Path, kind: UnitKind, top_k: int | None, sizes: UnitSizes) -> None:
        self.path, self.kind, self.top_k, self.sizes = path, kind, top_k, sizes

    def __len__(self) -> int:
        return self.sizes.units

    def held(self, unit_ids: Iterable[str]) -> int:
        """How many of ``unit_ids`` (distinct) are ids of this file's units."""
        ids = self.sizes.ids()
        found = 0
        keys = (int(u, 16) for u in unit_ids if _hex64(u))
        while batch := list(itertools.islice(keys, 1 << 16)):
            wanted = np.array(batch, dtype=np.uint64)
            at = np.minimum(np.searchsorted(ids, wanted), max(len(ids) - 1, 0))
            found += int((ids[at] == wanted).sum()) if len(ids) else 0
        return found

    def __iter__(self) -> Iterator[Any]:
        from failcodes.unitstream import iter_disagreement_units

        for item in iter_disagreement_units(self.path, self.kind, top_k=self.top_k, words=False):
            passages = item.passages
            if not all(isinstance(p, Passage) for p in passages):  # the reader's records
                passages = construct_passages(passages)
            yield Unit.model_construct(
                id=item.id,
                kind=item.kind,
                claim=item.claim,
                passages=passages,
                reasoning=item.reasoning,
                verdict=item.verdict,
                provenance=(),
            )


def _hex64(unit_id: str) -> bool:
    """Whether ``unit_id`` is 16 hexadecimal digits (every unit id is)."""
    return len(unit_id) == 16 and all(ch in "0123456789abcdef" for ch in unit_id)


def load_unit_stream(path: str | Path, kind: UnitKind, *, top_k: int | None) -> FileUnits | None:
    """``--from``'s units as a stream to judge, or None (read the traces instead).

    None unless ``path`` is a disagreements JSONL file its fast reader vouches for; the
    caller then reads it with :func:`load_traces` (the same units, or the one-line error).
    """
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq") or not (p.is_file() and is_disagreements_file(p)):
        return None
    sizes = load_unit_sizes(p, kind, top_k=top_k)
    return None if sizes is None else FileUnits(p, kind, top_k, sizes)


def check_run_outputs(run_dir: Path, cache_path: Path | None) -> None:
    """Check the run folder and the cache before anything is created or called."""
    if cache_path is not None:
        check_cache(cache_path)
    check_run_dir(run_dir)


def load_codebook(path: str | Path | None, kind: UnitKind | None = None) -> Codebook:
    """Read and validate a codebook file (errors name file, line and rule).

    ``None``: the bundled codebook (latest version); :func:`note_codebook` says so once the
    inputs are read. With ``kind``, a codebook without that part is refused here, naming the
    file, before any output is touched.
    """
    if path is None:
        return codebook_mod.bundled()
    cb = codebook_mod.load(path)
    if kind is not None:
        try:
            cb.part(kind)
        except MissingPartError as exc:
            raise InputError(exc.reason, path=path, field="parts") from None
    return cb


def codebook_note(path: str | Path | None, cb: Codebook) -> str | None:
    """What to say when the bundled codebook codes the data (``path`` None), else None.

    Said once the inputs are read, so a bad input still gets its error as the only line.
    """
    if path is None:
        return f"codebook: the bundled {cb.name} v{cb.version} (give --codebook for your own)"
    return None
