"""Error mappings and sentence-level any-error aggregation (seed 001, Table 2).

A verifier gives each claim one canonical :class:`~failcodes.verdicts.Verdict`; clinicians
label sentences *has error* / *no error*. An :class:`ErrorMapping` says which verdicts count
as "the system flags an error": one of :data:`NAMED_MAPPINGS` (each with its verdicts and its
source; README.md, "Error mappings") or a comma-separated list of verdicts (canonical names or
any alias :func:`~failcodes.verdicts.normalize_verdict` knows), e.g. ``"refuted,ambiguous"``.

Aggregation (*any-error*): a sentence of one system has an error if **any** of its claims
maps to an error. A sentence that is known (labelled, or seen for another system) but has no
claim for a system cannot be aggregated; it is listed in
:meth:`SentenceGroups.without_claims`, never dropped silently.

Everything here is pure: traces (or their columns) in, pydantic models or arrays out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError, InputError
from failcodes.labelscope import Answered
from failcodes.spelling import unseen_note
from failcodes.verdicts import Verdict, normalize_verdict

if TYPE_CHECKING:  # numpy and the trace columns are imported where used (start-up)
    import numpy as np
    import numpy.typing as npt

    from failcodes.tracecols import SentenceColumns, TraceColumns


class ErrorMapping(FrozenModel):
    """Which canonical verdicts count as "the system flags an error"."""

    name: str = Field(description="Named mapping, or the sorted verdict list if user-defined.")
    error_verdicts: frozenset[Verdict] = Field(
        description="Verdicts mapped to has-error; all others map to no-error."
    )
    description: str = Field(default="", description="What the mapping means and its source.")

    def verdict_names(self) -> list[str]:
        """Return the error verdicts as sorted canonical strings (stable for output)."""
        return sorted(v.value for v in self.error_verdicts)


_R, _NE, _A, _OOS = (Verdict.REFUTED, Verdict.NO_EVIDENCE, Verdict.AMBIGUOUS, Verdict.OUT_OF_SCOPE)

#: The named mappings, in the order they are reported by default.
NAMED_MAPPINGS: dict[str, ErrorMapping] = {
    name: ErrorMapping(name=name, error_verdicts=frozenset(verdicts), description=description)
    for name, verdicts, description in (
        ("refuted", {_R}, "Only Refuted is an error (seed 001, Section 5 on)."),
        (
            "refuted+no_evidence",
            {_R, _NE},
            "Refuted or No Evidence is an error (seed 001, Table 2).",
        ),
        (
            "non_supported",
            {_R, _NE, _A, _OOS},
            "Every verdict but Supported is an error (seed 001, Table 2).",
        ),
        ("conservative", {_R, _NE}, "RtV conservative: contradicted or not found (seed 000)."),
        (
            "strict",
            {_R, _NE, _OOS},
            "RtV strict: contradicted, not found or out of scope (seed 000).",
        ),
    )
}

DEFAULT_MAPPING = "refuted"


def resolve_mapping(spec: str) -> ErrorMapping:
    """Return the named mapping ``spec``, or build a user-defined one from a verdict list.

    ``spec`` is a name from :data:`NAMED_MAPPINGS` or comma-separated verdicts
    (``"refuted,ambiguous"``). A user-defined mapping is named by its sorted canonical
    verdicts joined with ``,``. Raises :class:`~failcodes.errors.ConfigError` listing the valid
    names when ``spec`` is neither.
    """
    if not isinstance(spec, str):  # find_disagreements(..., ["refuted"]): one mapping a call
        raise ConfigError(f"mapping: {spec!r}; give one name or comma-separated verdicts")
    key = spec.strip()
    if key in NAMED_MAPPINGS:
        return NAMED_MAPPINGS[key]
    parts = [p for p in (s.strip() for s in key.split(",")) if p]
    names = ", ".join(NAMED_MAPPINGS)
    if not parts:
        raise ConfigError(f"empty error mapping {spec!r} (named mappings: {names})")
    verdicts: set[Verdict] = set()
    for part in parts:
        try:
            verdicts.add(normalize_verdict(part))
        except InputError:
            canon = ", ".join(v.value for v in Verdict)
            raise ConfigError(
                f"unknown error mapping or verdict {part!r} in {spec!r}{unseen_note(part)} "
                f"(named mappings: {names}; or a comma-separated list of verdicts: {canon})"
            ) from None
    if Verdict.SUPPORTED in verdicts:
        raise ConfigError(f"error mapping {spec!r} counts 'supported' as an error")
    name = ",".join(sorted(v.value for v in verdicts))
    return ErrorMapping(
        name=name, error_verdicts=frozenset(verdicts), description="User-defined mapping."
    )


def resolve_mappings(specs: Iterable[str]) -> list[ErrorMapping]:
    """Resolve several mapping specs, dropping repeats of the same name (order kept).

    Two different spellings of one set of error verdicts (``refuted+no_evidence`` and
    ``refuted,no_evidence``, or ``conservative``) are refused with a
    :class:`~failcodes.errors.ConfigError` naming both: each would give the same rows twice,
    and a correction over the mappings would count one test as two.
    """
    out: dict[str, ErrorMapping] = {}
    spelled: dict[frozenset[Verdict], tuple[str, str]] = {}
    for spec in specs:
        mapping = resolve_mapping(spec)
        first = spelled.setdefault(mapping.error_verdicts, (spec.strip(), mapping.name))
        if first[1] != mapping.name:
            verdicts = ", ".join(mapping.verdict_names())
            raise ConfigError(
                f"mappings {first[0]!r} and {spec.strip()!r} are the same mapping (errors: "
                f"{verdicts}); give it once"
            )
        out.setdefault(mapping.name, mapping)
    return list(out.values())


class SentenceKey(FrozenModel):
    """Identifies one answer sentence: ``sentence_id`` within ``question_id``."""

    question_id: str
    sentence_id: str


class SentenceWithoutClaims(FrozenModel):
    """A known sentence for which a system produced no claim (cannot be aggregated)."""

    system: str
    question_id: str
    sentence_id: str


def check_unique_claims(cols: TraceColumns) -> None:
    """Raise :class:`InputError` if a (system, question, claim) occurs twice or in two sentences."""
    import numpy as np

    sys_codes, _ = cols.small_codes("system")
    q_codes, questions = cols.small_codes("question_id")
    c_codes, claims = cols.small_codes("claim_id")
    # one int64 key, built in place (memory: one 8-byte array and its sorted copy)
    key = sys_codes.astype(np.int64)
    key *= max(1, len(questions))
    key += q_codes
    key *= max(1, len(claims))
    key += c_codes
    ordered = np.sort(key)
    if not len(ordered) or not (ordered[1:] == ordered[:-1]).any():
        return
    del ordered
    order = np.argsort(key, kind="stable")
    sorted_keys = key[order]
    repeats = order[1:][sorted_keys[1:] == sorted_keys[:-1]]
    row = int(repeats.min())
    earlier = int(np.flatnonzero(key == key[row])[0])
    system, question, claim, sentence = (
        cols.value(name, row) for name in ("system", "question_id", "claim_id", "sentence_id")
    )
    first_sentence = cols.value("sentence_id", earlier)
    raise InputError(
        f"duplicate claim {claim!r} for system {system!r} in question "
        f"{question!r} (sentences {first_sentence!r} and {sentence!r})",
        field="claim_id",
    )


@dataclass(frozen=True)
class SentenceGroups:
    """The claims of each (system, question, sentence), as codes (the columnar aggregation).

    ``questions`` and ``sentences`` are sorted vocabularies (trace ids plus the known
    sentences' ids); ``system``/``question``/``sentence`` give each group's codes, groups
    sorted by (system, question, sentence); ``group`` maps each trace row to its group.
    """

    systems: list[str]
    questions: list[str]
    sentences: list[str]
    system: npt.NDArray[np.int64]
    question: npt.NDArray[np.int64]
    sentence: npt.NDArray[np.int64]
    group: npt.NDArray[np.int64]
    known: npt.NDArray[np.int64]  # (question, sentence) code pairs of the known sentences
    #: Per known pair, the system code it is known for (per-system labels); None: every system.
    known_system: npt.NDArray[np.int64] | None = None

    def flags(self, error_rows: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Any-error per group, given whether each trace row maps to an error."""
        import numpy as np

        hits = np.bincount(self.group, weights=error_rows, minlength=len(self.system))
        out: npt.NDArray[np.bool_] = hits > 0
        return out

    def answered(self) -> Answered:
        """The (system, question) pairs in which a system made a claim."""
        return Answered.of(self.system, self.question, len(self.systems), len(self.questions))

    def without_claims(self, answered: Answered | None = None) -> list[SentenceWithoutClaims]:
        """Known sentences (seen for any system, or given) a system has no claim for; sorted.

        Known for one system (per-system labels): only those of that system. ``answered``:
        only the sentences of questions the system made a claim in (:meth:`answered`).
        """
        import numpy as np

        width = max(1, len(self.sentences))
        pair = self.question * width + self.sentence
        known = self.known[:, 0] * width + self.known[:, 1]
        expected = np.union1d(pair, known)
        out: list[SentenceWithoutClaims] = []
        for s, system in enumerate(self.systems):
            have = pair[self.system == s]
            if self.known_system is not None:
                expected = np.unique(known[self.known_system == s])
            gone = np.setdiff1d(expected, have)
            if answered is not None:
                gone = gone[answered.has(np.full(len(gone), s), gone // width)]
            for code in gone:
                out.append(
                    SentenceWithoutClaims(
                        system=system,
                        question_id=self.questions[int(code) // width],
                        sentence_id=self.sentences[int(code) % width],
                    )
                )
        return out


def sentence_groups(
    cols: TraceColumns | SentenceColumns,
    known_sentences: Iterable[SentenceKey | tuple[str, str] | tuple[str | None, str, str]] = (),
) -> SentenceGroups:
    """Group trace rows by (system, question, sentence) for the any-error aggregation.

    Known sentences are keys, ``(question_id, sentence_id)`` tuples, or ``(system,
    question_id, sentence_id)`` tuples: with a system (per-system labels, every one names
    its system) a sentence is known for that system only. Raises :class:`InputError` on a
    duplicate (system, question, claim). Traces already reduced to groups
    (:class:`SentenceColumns`, claims unique by construction) give the same groups in the
    same order, with no row map (``group`` is empty).
    """
    from failcodes.tracecols import SentenceColumns

    known: list[tuple[str, str]] = []
    owners: list[str | None] = []
    for k in known_sentences:
        if isinstance(k, SentenceKey):
            known.append((k.question_id, k.sentence_id))
            owners.append(None)
        elif len(k) == 3:
            owners.append(k[0])
            known.append((k[1], k[2]))
        else:
            known.append((k[0], k[1]))
            owners.append(None)
    if isinstance(cols, SentenceColumns):
        return _with_owners(_known_groups(cols, known), owners)
    return _with_owners(_trace_groups(cols, known), owners)


def _with_owners(groups: SentenceGroups, owners: Sequence[str | None]) -> SentenceGroups:
    """The groups with the system each known sentence is known for (if any is given)."""
    import numpy as np

    if not any(o is not None for o in owners):
        return groups
    if any(o is None for o in owners):
        raise ValueError("known sentences are all per system or none is")
    code = {name: i for i, name in enumerate(groups.systems)}
    # a system no trace has: known for no system (its labels were refused before)
    owner = np.array([code.get(o, -1) for o in owners if o is not None], dtype=np.int64)
    return replace(groups, known_system=owner)


def _trace_groups(cols: TraceColumns, known: list[tuple[str, str]]) -> SentenceGroups:
    """:func:`sentence_groups` of trace columns."""
    import numpy as np

    check_unique_claims(cols)
    sys_codes, systems = cols.small_codes("system")
    q_raw, q_uniques = cols.small_codes("question_id")
    s_raw, s_uniques = cols.small_codes("sentence_id")
    questions = sorted(set(q_uniques).union(q for q, _ in known))
    sentences = sorted(set(s_uniques).union(s for _, s in known))
    q_pos = {q: i for i, q in enumerate(questions)}
    s_pos = {s: i for i, s in enumerate(sentences)}
    q_lookup = np.array([q_pos[q] for q in q_uniques], dtype=np.int32)
    s_lookup = np.array([s_pos[s] for s in s_uniques], dtype=np.int32)
    nq, ns = max(1, len(questions)), max(1, len(sentences))
    # (system, question, sentence) as one int64 key, built in place
    key = sys_codes.astype(np.int64)
    key *= nq
    key += q_lookup[q_raw]
    key *= ns
    key += s_lookup[s_raw]
    keys, group = np.unique(key, return_inverse=True)
    del key
    known_pairs = np.array([(q_pos[q], s_pos[s]) for q, s in known], dtype=np.int64).reshape(-1, 2)
    del known
    return SentenceGroups(
        systems=systems,
        questions=questions,
        sentences=sentences,
        system=keys // (nq * ns),
        question=(keys // ns) % nq,
        sentence=keys % ns,
        group=group.reshape(-1).astype(np.int64, copy=False),
        known=known_pairs,
    )


def _known_groups(cols: SentenceColumns, known: list[tuple[str, str]]) -> SentenceGroups:
    """:func:`sentence_groups` of reduced traces: their groups re-coded with the known ids."""
    import numpy as np

    questions = sorted(set(cols.questions).union(q for q, _ in known))
    sentences = sorted(set(cols.sentences).union(s for _, s in known))
    q_pos = {q: i for i, q in enumerate(questions)}
    s_pos = {s: i for i, s in enumerate(sentences)}
    q_lookup = np.array([q_pos[q] for q in cols.questions], dtype=np.int64)
    s_lookup = np.array([s_pos[s] for s in cols.sentences], dtype=np.int64)
    known_pairs = np.array([(q_pos[q], s_pos[s]) for q, s in known], dtype=np.int64).reshape(-1, 2)
    # the codes only gain gaps (sorted vocabularies grown): the groups stay in key order
    return SentenceGroups(
        systems=cols.systems,
        questions=questions,
        sentences=sentences,
        system=cols.system.astype(np.int64),
        question=q_lookup[cols.question],
        sentence=s_lookup[cols.sentence],
        group=np.zeros(0, dtype=np.int64),
        known=known_pairs,
    )
