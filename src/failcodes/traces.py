"""Traces: one claim as judged by one system (retriever x verifier x corpus).

This is failcodes' interchange format; every ingest adapter produces it. See
docs/trace-format.md and the JSON Schema from ``failcodes schema trace``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from failcodes.contract import FrozenModel, first_repeat
from failcodes.errors import InputError, UndeclaredSystemError
from failcodes.numbertext import number_id
from failcodes.verdicts import Verdict, per_system


class EvidenceSource(StrEnum):
    """Where the evidence the verifier saw came from (which stages the pipeline has).

    - ``retrieved``: passages returned by a retriever (optionally with gold flags); a
      disagreement can be the retriever's fault.
    - ``provided``: evidence given to the verifier with the item (a cited abstract, a
      fact-check article); there is no retrieval stage to blame.
    - ``none``: closed-book; the verifier answered from its own knowledge.
    - ``post-hoc``: the answer was written first and evidence retrieved afterwards to cite
      (post-hoc citation); the claim did not depend on that evidence, so retrieval cannot
      have caused it.

    A trace that does not declare it gets :func:`derived_evidence_source`. Under ``none`` and
    ``post-hoc`` a trace's passages are the system's citations (:data:`CITING_SOURCES`): kept,
    but never judged as retrieved passages.
    """

    RETRIEVED = "retrieved"
    PROVIDED = "provided"
    NONE = "none"
    POST_HOC = "post-hoc"


#: Evidence sources whose passages are the system's citations, not evidence the verifier was
#: given: no retrieval unit, no Table 8 row, no review stratum is made of them.
CITING_SOURCES = frozenset({EvidenceSource.NONE, EvidenceSource.POST_HOC})


def derived_evidence_source(passages: tuple[object, ...], retriever: str | None) -> EvidenceSource:
    """The evidence source of a trace that does not declare one.

    Passages or a named retriever -> ``retrieved`` (a retriever that returned nothing is still
    a retrieval stage); neither -> ``none`` (closed-book).
    """
    return EvidenceSource.RETRIEVED if passages or retriever else EvidenceSource.NONE


def empty_as_none(value: object) -> object:
    """An empty optional text is a missing one (CSV cannot tell them apart; JSONL agrees)."""
    return None if value == "" else value


class Passage(FrozenModel):
    """One retrieved passage shown to the verifier for a claim."""

    # NaN/Infinity scores are refused (a CSV "nan" cell or a Parquet NaN), not stored as null.
    model_config = ConfigDict(allow_inf_nan=False)

    passage_id: str = Field(description="Identifier of the passage in its corpus.")
    rank: int = Field(
        ge=1,
        le=2**63 - 1,  # stored as a 64-bit integer (Parquet): a larger one is no rank
        description="1-based rank in the retriever's list.",
    )
    text: str = Field(description="The passage text as the verifier saw it.")
    source: str | None = Field(default=None, description="Corpus or URL the passage came from.")
    title: str | None = Field(default=None, description="Title of the source document.")
    score: float | None = Field(default=None, description="The retriever's score, if any.")
    gold: bool | None = Field(
        default=None,
        description="True if the passage is gold evidence for the claim (closed benchmarks only).",
    )

    @field_validator("source", "title", mode="before")
    @classmethod
    def _empty_is_missing(cls, value: object) -> object:
        return empty_as_none(value)

    @field_validator("rank", "score", mode="before")
    @classmethod
    def _no_yes_no(cls, value: object, info: ValidationInfo) -> object:
        """Refuse true/false for a rank or a score (pydantic's lax mode read them as 1 and 0).

        A reranker's yes/no relevance written as ``"score": true`` was kept as the retriever's
        score 1.0 (0.0 for false) in every trace, disagreement and unit the tool wrote, exit 0;
        ``"rank": true`` was rank 1. Gold flags are the passage's ``gold`` (which reads
        true/false, 1/0, yes/no). So is a text with ``_`` in it: Python's number syntax read
        ``"1_0"`` (a chunk id?) as rank 10 and ``"1_000"`` as score 1000.0.
        """
        if isinstance(value, str) and "_" in value:
            rank = info.field_name == "rank"
            try:
                read = f" (it was read as {int(value) if rank else float(value)})"
            except ValueError:
                read = ""
            what = "rank (a whole number)" if rank else "score (a number)"
            raise ValueError(
                f"expected the passage's {what}, got {value[:40]!r}: an underscore is no part "
                f"of a number{read}"
            )
        if isinstance(value, bool):
            said = str(value).lower()
            if info.field_name == "rank":
                raise ValueError(
                    f"expected the passage's rank (a whole number, 1 for the top hit), got "
                    f"the boolean {said}: a yes/no is no rank"
                )
            raise ValueError(
                f"expected the retriever's score (a number), got the boolean {said}: a yes/no "
                f"is no score (it was read as {float(value)}); a relevance flag is the "
                "passage's gold (true/false)"
            )
        return value

    gold_verdict: Verdict | None = Field(
        default=None,
        description="Gold polarity of the passage towards the claim (closed benchmarks only, "
        "e.g. HealthVer Supports/Refutes/Neutral -> supported/refuted/no_evidence).",
    )


def unique_ranks(passages: tuple[Passage, ...]) -> tuple[Passage, ...]:
    """``passages`` unchanged, or a ValueError naming the first rank given twice."""
    rank = first_repeat(p.rank for p in passages)
    if rank is not None:
        raise ValueError(  # two retrievers' top-k lists in one: no way through was named
            f"rank {rank} appears twice; ranks must be unique (two retrievers' rankings in one "
            "list? rank them as one list, or give each retriever's traces a system of its own)"
        )
    return passages


#: The canonical verdicts' values (``Trace(verdict=...)`` written another way: see below).
_VERDICTS = frozenset(v.value for v in Verdict)


class Trace(FrozenModel):
    """One claim as judged by one system."""

    system: str = Field(description="The retriever x verifier x corpus configuration.")
    question_id: str = Field(description="The question (or document) the answer responds to.")
    sentence_id: str = Field(description="The answer sentence the claim was decomposed from.")
    claim_id: str = Field(
        description="Unique within a system (files join on system + claim_id); same across systems."
    )
    claim: str = Field(description="The atomic claim text.")
    sentence: str | None = Field(default=None, description="The parent sentence text.")
    verdict: Verdict = Field(description="The verifier's canonical verdict.")
    raw_verdict: str | None = Field(
        default=None, description="The verdict exactly as the pipeline wrote it."
    )
    reasoning: str | None = Field(default=None, description="The verifier's reasoning trace.")
    verifier: str | None = Field(default=None, description="The verifier model name.")
    retriever: str | None = Field(default=None, description="The retriever name.")
    passages: tuple[Passage, ...] = Field(
        default=(), description="Retrieved passages in rank order."
    )
    evidence_source: EvidenceSource | None = Field(
        default=None,
        description="retrieved (passages from a retriever), provided (evidence given with the "
        "item: no retrieval stage), none (closed-book) or post-hoc (evidence retrieved after "
        "the answer was written, to cite it); under none and post-hoc the passages are the "
        "system's citations, never judged as retrieved passages. Unset: retrieved if the trace "
        "has passages or a retriever, else none.",
    )

    @field_validator("sentence", "raw_verdict", "reasoning", "verifier", "retriever", mode="before")
    @classmethod
    def _empty_is_missing(cls, value: object) -> object:
        return empty_as_none(value)

    @model_validator(mode="before")
    @classmethod
    def _verdict_as_written(cls, data: object) -> object:
        """``Trace(verdict="Supported")`` from Python reads as a file's verdict cell does.

        A notebook's ``Trace(**row)`` over the pipeline's "Supported" / "No Evidence" was
        refused ("Input should be 'supported', ...") where the same rows in a file read as
        supported / no_evidence, the text kept in ``raw_verdict``. Only the five verdicts
        written in another case or with spaces or dashes: an alias (true, SUPPORTS) is the
        readers' (``--alias``), which say what they read it as.
        """
        if not isinstance(data, dict):
            return data
        raw = data.get("verdict")
        if not isinstance(raw, str) or raw in _VERDICTS:
            return data
        spelled = "_".join(raw.strip().lower().replace("-", " ").split())
        if spelled not in _VERDICTS:
            return data
        return {**data, "verdict": spelled, "raw_verdict": data.get("raw_verdict") or raw}

    @field_validator("claim", mode="before")
    @classmethod
    def _claim_has_text(cls, value: object) -> object:
        """Refuse a claim with no text (``""`` or spaces alone), as a blank CSV cell is refused.

        A record's ``"claim": ""`` was read as a claim and counted: its verdict flagged its
        sentence (an FP of a claim no one can read), and ``judge`` coded its passages and
        reasoning against no claim at all (a dry run counted them), exit 0.
        """
        if isinstance(value, str) and not value.strip():
            said = "spaces alone" if value else "empty"
            raise ValueError(
                f"the claim has no text ({said}); the verdict and the judge's codes are of a "
                "claim's text: give it, or leave the row out (a sentence the decomposer found "
                "no claim in has no trace)"
            )
        return value

    @field_validator("system", "question_id", "sentence_id", "claim_id", mode="before")
    @classmethod
    def _number_as_text(cls, value: object) -> object:
        """An id given as a number from Python is its text, as the readers read it."""
        return number_id(value)

    @field_validator("passages")
    @classmethod
    def _unique_ranks(cls, passages: tuple[Passage, ...]) -> tuple[Passage, ...]:
        return unique_ranks(passages)

    @property
    def evidence(self) -> EvidenceSource:
        """The declared evidence source, or the one derived from passages and retriever."""
        if self.evidence_source is not None:
            return self.evidence_source
        return derived_evidence_source(self.passages, self.retriever)

    @property
    def evidence_passages(self) -> tuple[Passage, ...]:
        """The passages that were evidence for the verifier (none when they are citations)."""
        return () if self.evidence_source in CITING_SOURCES else self.passages


EVERY_SYSTEM = "*"
"""Key of an evidence-source declaration that applies to every system."""


def parse_evidence_declarations(values: Sequence[str]) -> dict[str, EvidenceSource]:
    """Parse ``--evidence`` values: ``provided`` (every system) or ``SYSTEM=provided``.

    Returns system -> source, with :data:`EVERY_SYSTEM` for the plain form. A value that is
    not an evidence source, or a system declared twice, is a :class:`ConfigError`.
    """
    return per_system(values, EvidenceSource, ("--evidence", "SOURCE", "an evidence source"))


def declared_source(declared: Mapping[str, EvidenceSource], system: str) -> EvidenceSource | None:
    """The source declared for ``system`` (its own entry first, then the every-system one)."""
    return declared.get(system, declared.get(EVERY_SYSTEM))


def check_declared_systems(declared: Mapping[str, EvidenceSource], systems: Iterable[str]) -> None:
    """Raise :class:`ConfigError` when a declaration names a system the input does not hold."""
    from failcodes.spelling import spelling_key

    present = set(systems)
    for name in declared:
        if name != EVERY_SYSTEM and name not in present:
            # 'b' for 'B' (a study's [[datasets.pipelines]] system): names are compared exactly
            near = [s for s in sorted(present) if spelling_key(s) == spelling_key(name)]
            hint = (
                f"; the input writes it {near[0]!r} (names are compared exactly: case, spacing)"
                if near
                else ""
            )
            raise UndeclaredSystemError(name, sorted(present), hint)


#: The Parquet footer key of an ingest's :func:`tally_undeclared` counts (JSON, per system):
#: the tool's own Parquet is not read again for them, and without them no command said its
#: systems read closed-book (:func:`closed_book_line`), as it says them of the same JSONL.
UNDECLARED_KEY = b"failcodes.undeclared_evidence"


def tally_undeclared(
    tally: dict[str, list[int]],
    system: str,
    declared: str | None,
    passages: object,
    retriever: str | None,
) -> None:
    """Count a trace of no declared evidence source in ``tally``: per system [bare, retrieving].

    Bare: neither passages nor a retriever (derived ``none``); retrieving: either
    (:func:`derived_evidence_source`). A declared source (``declared``) is not counted.
    """
    if declared is None:
        seen = tally.setdefault(system, [0, 0])
        seen[bool(passages or retriever)] += 1


def closed_book_line(derived: Mapping[str, Sequence[int]], *, via: str = "") -> str | None:
    """The systems read closed-book for want of passages, said (None: none was).

    A system none of whose undeclared traces has passages or a retriever is closed-book
    (:func:`derived_evidence_source`), and attribution blames its every disagreement on
    verification: a retrieval pipeline whose passages were not kept read so with no word.
    ``derived``: :func:`tally_undeclared`'s counts; ``via``: as :func:`refuse_mixed_evidence`.
    """
    bare = [name for name, (n, retrieving) in sorted(derived.items()) if n and not retrieving]
    if not bare:
        return None
    return (
        f"evidence not declared for {', '.join(bare)}: read as closed-book (no passages or "
        f"retriever on any trace), {'its' if len(bare) == 1 else 'their'} disagreements "
        "blamed on verification, never on "
        f"retrieval; a retrieval pipeline whose passages were not kept? declare it{via}: "
        f"--evidence {bare[0]}=retrieved"
    )


def refuse_mixed_evidence(
    derived: Mapping[str, Sequence[int]], path: str | Path, *, via: str = ""
) -> None:
    """Refuse a system some of whose undeclared traces have passages and some have none.

    Each trace's evidence source is derived on its own: a retrieval pipeline's claims for
    which the retriever returned nothing read as closed-book, and attribution blamed their
    disagreements on verification ("closed-book pipeline: no retrieval stage"), not on the
    retrieval (B's FP on a refuted claim without passages, beside claims with passages).
    ``derived``: :func:`tally_undeclared`'s counts. ``path``: the traces' file (files). ``via``:
    where the declaration is made, for a command that takes none (``disagreements``: the
    traces ingested with it).
    """
    for name, (bare, retrieving) in sorted(derived.items()):
        if bare and retrieving:
            raise InputError(
                f"system {name!r}: {bare:,} of its {bare + retrieving:,} traces have neither "
                "passages nor a retriever, the others passages: read trace by trace, those "
                "would be closed-book (evidence source none) and their disagreements blamed on "
                f"verification, not on a retrieval that found nothing; declare the pipeline's "
                f"evidence{via}: --evidence {name}=retrieved (or provided, none; a study: its "
                "[[datasets.pipelines]] evidence), or --retriever NAME; a pipeline that "
                "retrieves for some claims only: each trace's evidence_source (a field or column)",
                path=path,
                field="passages",
            )


@dataclass
class Marks:
    """Trace records whose reasoning or passage texts were missing marks, read as none.

    The readers of the trace format (``ingest`` of a line already in it, and ``metrics``,
    ``disagreements``, ``judge`` and ``attribute`` reading a traces file themselves) read
    ``"reasoning": "N/A"`` as no reasoning and a passage whose ``text`` is ``"None"`` as no
    passage (:func:`~failcodes.tracelines.missing_mark`), and say so in
    :meth:`lines`.
    """

    #: passages read as none, and the file and line of the first
    passages: int = 0
    first_passage: tuple[Path, int] | None = None
    #: reasonings read as none, and the first's file and line
    reasonings: int = 0
    first_reasoning: tuple[Path, int] | None = None

    def add(self, path: Path, line: int, *, passages: int = 0, reasoning: bool = False) -> None:
        """Count a record's marked passages and reasoning."""
        if passages:
            self.passages += passages
            self.first_passage = self.first_passage or (path, line)
        if reasoning:
            self.reasonings += 1
            self.first_reasoning = self.first_reasoning or (path, line)

    def lines(self) -> list[str]:
        """The notes: passages, then reasonings read as none (none when there were none)."""
        out = []
        if self.first_passage is not None:
            path, line = self.first_passage
            out.append(
                f"{self.passages:,} passage(s) whose text is blank or a missing mark (NA, "
                f"N/A, #N/A, nan, null, None or -; first at {path}:{line}) read as no "
                "passage: the retriever found nothing there"
            )
        if self.first_reasoning is not None:
            path, line = self.first_reasoning
            out.append(
                f"{self.reasonings:,} reasoning(s) that are a missing mark (first at "
                f"{path}:{line}) read as no reasoning: judge reasoning has none of theirs to "
                "code"
            )
        return out
