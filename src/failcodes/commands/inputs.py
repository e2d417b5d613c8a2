"""Reading the inputs of ``judge`` and ``attribute``: traces or disagreements, and a codebook.

A ``--from`` file is either a disagreements table (``failcodes disagreements`` output, JSONL
or Parquet) or a traces file in any format :func:`failcodes.traceio.read_traces` reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from failcodes import codebook as codebook_mod
from failcodes.codebook import Codebook
from failcodes.columnar import ExactReaderNeededError
from failcodes.disagreementio import (
    iter_disagreement_records,
    read_disagreement_traces,
    read_disagreements,
)
from failcodes.disagreements import Disagreement
from failcodes.errors import InputError, MissingPartError
from failcodes.jsonio import peek_jsonl
from failcodes.judge.cache import check_cache
from failcodes.judge.colestimate import UnitSizes, read_unit_sizes
from failcodes.judge.journal import check_run_dir
from failcodes.traceio import read_traces
from failcodes.traces import (
    EvidenceSource,
    Trace,
    check_declared_systems,
    declared_source,
    derived_evidence_source,
)
from failcodes.units import UnitKind, claim_trace, disagreement_traces
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.attribution import ClaimUnits, ItemClaims


def is_disagreements_file(path: Path) -> bool:
    """True if ``path`` holds disagreements (records with ``kind`` and ``claims``)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        rec = peek_jsonl(path)  # None when unreadable: the trace reader reports it
        return rec is not None and "claims" in rec and "kind" in rec
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            names = set(pq.read_schema(path).names)
        except Exception:
            return False
        return {"claims", "kind"} <= names
    return False


def load_inputs(path: str | Path) -> tuple[list[Trace], list[Disagreement] | None]:
    """Read ``--from``: the traces to judge, and the disagreements when the file holds them."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=p)
    if is_disagreements_file(p):
        items = read_disagreements(p)
        traces = disagreement_traces(items)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces, items
    traces = read_traces(p)
    if not traces:
        raise InputError("no traces found", path=p)
    return traces, None


def load_item_claims(
    path: str | Path, declared: Mapping[str, EvidenceSource], *, top_k: int | None
) -> tuple[list[ItemClaims], list[ClaimUnits]]:
    """``attribute --from`` as slim records: the items to attribute and the distinct claims.

    What :func:`load_inputs` reads (with ``--evidence`` declared on every claim), one
    disagreement at a time: each claim kept as its :class:`~failcodes.attribution.ClaimUnits`
    (ids and passage unit ids, no text). The claims are those of
    :func:`~failcodes.units.disagreement_traces` (first of each system, question, sentence,
    claim), or the traces of a traces file; the same errors as :func:`load_inputs`.
    """
    from failcodes.attribution import ItemClaims, claim_units

    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=p)

    def declare(trace: Any) -> Any:
        source = declared_source(declared, trace.system) if declared else None
        if source is None:
            return trace
        if isinstance(trace, _ClaimView):
            return trace._replace(evidence_source=source)
        return trace.model_copy(update={"evidence_source": source})

    if not is_disagreements_file(p):
        traces = read_traces(p)
        if not traces:
            raise InputError("no traces found", path=p)
        if declared:
            check_declared_systems(declared, (t.system for t in traces))
        units = [claim_units(declare(t), top_k) for t in traces]
        items = [
            ItemClaims(
                f"{u.system}/{u.claim_id}",
                u.system,
                u.question_id,
                u.sentence_id,
                u.claim_id,
                None,
                (u,),
            )
            for u in units
        ]
        return items, units
    try:
        items, claims = _slim_disagreements(
            iter_disagreement_records(p), _ClaimView.of, declare, top_k
        )
    except ExactReaderNeededError:
        items, claims = _slim_disagreements(read_disagreements(p), claim_trace, declare, top_k)
    if not claims:
        raise InputError("the disagreements carry no claims to judge", path=p)
    if declared:
        check_declared_systems(declared, (c.system for c in claims))
    return items, claims


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
        )

    @property
    def evidence(self) -> EvidenceSource:
        """The declared evidence source, or the one derived (as :attr:`Trace.evidence`)."""
        if self.evidence_source is not None:
            return self.evidence_source
        return derived_evidence_source(tuple(self.passages), self.retriever)


def _slim_disagreements(
    records: Iterable[Any],
    trace_of: Callable[[Any, Any], Any],
    declare: Callable[[Any], Any],
    top_k: int | None,
) -> tuple[list[ItemClaims], list[ClaimUnits]]:
    """Slim records of disagreements (models or the fast reader's structs)."""
    from failcodes.attribution import ItemClaims, claim_units
    from failcodes.disagreements import DisagreementKind

    seen: set[tuple[str, str, str, str]] = set()
    claims: list[ClaimUnits] = []
    items: list[ItemClaims] = []
    for d in records:
        kind = DisagreementKind(d.kind)
        causes = set(d.error_claim_ids) if kind is DisagreementKind.FP else None
        mine = []
        for c in d.claims:
            key = (d.system, d.question_id, d.sentence_id, c.claim_id)
            new = key not in seen
            cause = causes is None or c.claim_id in causes
            if not (new or cause):
                continue
            unit = claim_units(declare(trace_of(d, c)), top_k)
            if new:
                seen.add(key)
                claims.append(unit)
            if cause:
                mine.append(unit)
        items.append(
            ItemClaims(d.id, d.system, d.question_id, d.sentence_id, d.claim_id, kind, tuple(mine))
        )
    return items, claims


def load_traces(path: str | Path) -> list[Trace]:
    """Read the traces of ``--from`` (from disagreements or a traces file)."""
    p = Path(path)
    if p.is_file() and is_disagreements_file(p):
        traces = read_disagreement_traces(p)
        if not traces:
            raise InputError("the disagreements carry no claims to judge", path=p)
        return traces
    return load_inputs(path)[0]


def load_unit_sizes(
    path: str | Path, kind: UnitKind, *, top_k: int | None, grouped: bool = False
) -> UnitSizes | None:
    """The units of ``--from`` as columns (the dry run's fast path), or None.

    None unless ``path`` is a disagreements or traces JSONL file its fast reader vouches for:
    the caller then reads traces with :func:`load_traces` (same result, or the one-line
    error).
    """
    p = Path(path)
    if not p.is_file():
        return None
    if not is_disagreements_file(p):  # a traces JSONL file (every unit of every trace)
        sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped, traces=True)
        return sizes if sizes is not None and sizes.traces else None
    sizes = read_unit_sizes(p, kind, top_k=top_k, grouped=grouped)
    if sizes is not None and not sizes.traces:
        raise InputError("the disagreements carry no claims to judge", path=p)
    return sizes


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
