"""Which labelled sentences count for which system, and the one line that says so (issue 25).

Shared labels (one label per sentence for every system's claims) or per-system labels (a
label names its ``system``), and with shared labels the questions each system answered
(*common*, *disjoint*, *partial*) decide each system's scope (:class:`QuestionScope`): the rules
are docs/statistics.md's "Labels per system and the shape of the data".

Everything here is pure: codes and counts in, a :class:`DataShape` and :class:`Coverage`
rows out. :func:`assumptions_line` is the first line of ``metrics`` and ``disagreements``
and the report's run box (docs/statistics.md, "Labels per system").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.idzeros import question_twins_clause

if TYPE_CHECKING:  # numpy is imported where used (start-up)
    import numpy as np
    import numpy.typing as npt

    IntArray = npt.NDArray[np.int64]


class LabelScope(StrEnum):
    """Whom a label applies to."""

    SHARED = "shared"  # every system's traces of the sentence (one answer, several verifiers)
    PER_SYSTEM = "per_system"  # the named system's traces only (each system its own answer)


class QuestionShape(StrEnum):
    """How the systems' answered questions relate, over the labelled questions."""

    COMMON = "common"  # every system answered every labelled question
    DISJOINT = "disjoint"  # every labelled question was answered by one system only
    PARTIAL = "partial"  # anything in between


class QuestionScope(StrEnum):
    """Which labelled sentences count for a system under shared labels."""

    AUTO = "auto"  # answered when the questions are disjoint, else all
    ANSWERED = "answered"  # those of the questions the system answered (made a claim in)
    ALL = "all"  # every labelled sentence (the seed's rule: one answer for every system)


def resolve_scope(requested: QuestionScope | str, shape: QuestionShape | None) -> QuestionScope:
    """The scope applied: ``auto`` is ``answered`` for disjoint questions, else ``all``."""
    scope = QuestionScope(requested)
    if scope is not QuestionScope.AUTO:
        return scope
    return QuestionScope.ANSWERED if shape is QuestionShape.DISJOINT else QuestionScope.ALL


@dataclass(frozen=True)
class Answered:
    """The (system, question) pairs in which a system made at least one claim.

    Held as sorted distinct ``system * n_questions + question`` keys (memory follows the
    pairs, not systems x questions).
    """

    keys: IntArray
    n_systems: int
    n_questions: int

    @classmethod
    def of(
        cls,
        system: npt.NDArray[np.integer],
        question: npt.NDArray[np.integer],
        n_systems: int,
        n_questions: int,
    ) -> Answered:
        """The pairs of groups (or trace rows) given by their system and question codes."""
        import numpy as np

        key = system.astype(np.int64)  # built and sorted in place (one 8-byte array)
        key *= max(1, n_questions)
        key += question
        key.sort()
        keep = np.ones(len(key), dtype=bool)
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        return cls(key[keep], n_systems, n_questions)

    def has(self, system: npt.ArrayLike, question: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether each (system, question) pair was answered (codes; -1 is never)."""
        import numpy as np

        s = np.asarray(system, dtype=np.int64)
        q = np.asarray(question, dtype=np.int64)
        key = s * max(1, self.n_questions) + q
        at = np.searchsorted(self.keys, key)
        found = at < len(self.keys)
        found[found] = self.keys[at[found]] == key[found]
        out: npt.NDArray[np.bool_] = found & (s >= 0) & (q >= 0)
        return out

    def systems_per_question(self) -> IntArray:
        """How many systems answered each question (by question code)."""
        import numpy as np

        return np.bincount(self.keys % max(1, self.n_questions), minlength=self.n_questions)

    def questions_of(self, system: int) -> npt.NDArray[np.bool_]:
        """Per question code: whether ``system`` answered it."""
        import numpy as np

        width = max(1, self.n_questions)
        out = np.zeros(self.n_questions, dtype=bool)
        mine = self.keys[(self.keys // width) == system]
        out[mine % width] = True
        return out


def question_shape(answered: Answered, labelled_questions: IntArray) -> QuestionShape:
    """The shape of the labelled questions (codes, distinct) over the systems' answers."""
    import numpy as np

    per = answered.systems_per_question()[labelled_questions]
    if answered.n_systems < 2 or bool(np.all(per >= answered.n_systems)):
        return QuestionShape.COMMON
    if bool(np.all(per <= 1)):
        return QuestionShape.DISJOINT
    return QuestionShape.PARTIAL


class Coverage(FrozenModel):
    """One system's labelled questions and sentences, and how many of them were counted."""

    system: str
    labelled_questions: int = Field(description="Questions with a label that applies to it.")
    answered_questions: int = Field(description="Of those, the questions it made a claim in.")
    labelled_sentences: int = Field(
        description="Labelled (question, sentence) units that apply to it."
    )
    unanswered_sentences: int = Field(
        description="Of those, the ones in questions it never answered (counted only under "
        "question scope 'all')."
    )


def coverage(
    systems: Sequence[str],
    answered: Answered,
    pair_system: npt.NDArray[np.integer] | None,
    pair_question: npt.NDArray[np.integer],
) -> list[Coverage]:
    """Per system: the labelled units that apply to it and those in questions it answered.

    ``pair_question`` gives each labelled (question, sentence) unit's question code;
    ``pair_system`` its system code for per-system labels (None: shared, every unit applies
    to every system).
    """
    import numpy as np

    out = []
    n_q = answered.n_questions
    for s, name in enumerate(systems):
        q = pair_question if pair_system is None else pair_question[pair_system == s]
        per_q = np.bincount(np.asarray(q, dtype=np.int64), minlength=n_q)
        labelled = per_q > 0
        mine = answered.questions_of(s)
        out.append(
            Coverage(
                system=name,
                labelled_questions=int(labelled.sum()),
                answered_questions=int((labelled & mine).sum()),
                labelled_sentences=int(per_q.sum()),
                unanswered_sentences=int(per_q[~mine].sum()),
            )
        )
    return out


class DataShape(FrozenModel):
    """What ``metrics``/``disagreements`` assumed about the data (the first line's facts)."""

    labels: LabelScope
    level: str = Field(description="sentence or claim")
    systems: int = Field(description="Systems in the traces.")
    questions: QuestionShape | None = Field(
        default=None, description="Shape of the labelled questions (shared labels, sentences)."
    )
    question_scope: QuestionScope | None = Field(
        default=None, description="The scope applied (answered or all; sentence level)."
    )
    scope_given: bool = Field(
        default=False, description="The scope was chosen with --question-scope (not auto)."
    )
    without_claims: str | None = Field(
        default=None, description="The rule for labelled sentences without claims."
    )
    claims_by_sentence: tuple[int, int] | None = Field(
        default=None,
        description="Claim level: (labelled claims that took their sentence's label, labelled "
        "claims), when some did: every one of them with sentence labels alone.",
    )
    question_zeros: tuple[tuple[str, str], ...] = Field(
        default=(),
        description="Question ids of the traces that differ only in leading zeros, case, "
        "spacing or Unicode form ('01', "
        "'1'): read as different questions (failcodes.idzeros), said on the first line.",
    )


_NO_CLAIMS = {
    "no_error": "a labelled sentence it made no claim for counts as no error flagged "
    "(--without-claims no_error)",
    "exclude": "a labelled sentence it made no claim for is left out (--without-claims exclude)",
}


def assumptions_line(shape: DataShape) -> str:
    """One line naming the label design, the question scope and the no-claims rule.

    A reader of this line alone can tell whether the tool understood the data: whom each
    label applies to, which labelled sentences count for a system and what a labelled
    sentence without claims counts as.
    """
    zeros = question_twins_clause(shape.question_zeros)
    line = _assumptions(shape)
    return f"{line}; {zeros}" if zeros else line


def claim_rule(taken: tuple[int, int] | None) -> str:
    """How the claims took their labels: their own, else their sentence's (counted)."""
    rule = "claim level: a claim's own label, else its sentence's"
    if taken is None:
        return rule
    by_sentence, labelled = taken
    if by_sentence == labelled:  # sentence labels alone
        return (
            "claim level: no label names a claim, so each claim takes its sentence's label (a "
            "sentence labelled an error makes each of its claims one)"
        )
    return f"{rule} ({by_sentence} of the {labelled} labelled claims took their sentence's)"


def _assumptions(shape: DataShape) -> str:
    """:func:`assumptions_line` less the words on question ids."""
    n = shape.systems
    if shape.labels is LabelScope.PER_SYSTEM:
        head = (
            f"Assumed: per-system labels (each label applies to its own system's traces; "
            f"{n} system{'s' if n != 1 else ''}, each scored on its own labelled "
            f"{shape.level}s)"
        )
    else:
        head = (
            "Assumed: shared labels (each label applies to every system's traces of its "
            f"{shape.level})"
        )
    if shape.level != "sentence":
        return head + "; " + claim_rule(shape.claims_by_sentence)
    parts = [head]
    if shape.labels is LabelScope.SHARED:
        scope, given = shape.question_scope, shape.scope_given
        flag = f" (--question-scope {scope.value if scope else 'auto'})"
        if shape.questions is QuestionShape.DISJOINT and scope is QuestionScope.ANSWERED:
            parts.append(
                f"the {n} systems answered disjoint questions: each is scored on the questions "
                f"it answered, a question it never answered is not its miss{flag}"
            )
        elif shape.questions is QuestionShape.DISJOINT:
            parts.append(
                f"the {n} systems answered disjoint questions, yet every labelled sentence "
                f"counts for every system: another system's sentences are misses{flag}"
            )
        elif shape.questions is QuestionShape.PARTIAL and scope is QuestionScope.ALL:
            parts.append(
                "not every system answered every labelled question: a labelled sentence of a "
                f"question a system never answered counts for it as well{flag}"
                + ("" if given else "; --question-scope answered scores each on its own")
            )
        elif shape.questions is QuestionShape.PARTIAL:
            parts.append(
                "not every system answered every labelled question: each is scored on the "
                f"questions it answered{flag}"
            )
        elif n > 1:
            parts.append(f"every system answered every labelled question ({n} systems)")
    if shape.without_claims in _NO_CLAIMS:
        parts.append(_NO_CLAIMS[shape.without_claims])
    return "; ".join(parts)


#: What a coverage table's questions are: a flat claim table (traces) has no row for a
#: question whose answer holds no claim, so no count can hold it (a label of it is refused).
QUESTIONS_COUNTED = (
    "questions: those some system made a claim in (an answer without claims has no trace row, "
    "so its question is in no count)"
)


#: The coverage columns of a metric row (``MetricResult.flat``) and their headings.
COVERAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n_labelled_questions", "questions"),
    ("n_answered_questions", "answered"),
    ("n_labelled_sentences", "sentences"),
    ("n", "counted"),
)


def not_counted(row: Mapping[str, Any]) -> str:
    """Why some of a system's labelled sentences were not counted (a metric row's fields)."""
    parts = []
    if row.get("question_scope") == QuestionScope.ANSWERED and row.get("n_unanswered"):
        parts.append(f"{row['n_unanswered']} in questions it never answered")
    if row.get("without_claims_policy") == "exclude" and row.get("n_without_claims"):
        parts.append(f"{row['n_without_claims']} without claims (--without-claims exclude)")
    return "; ".join(parts)


def coverage_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The coverage table of metric rows: one row per system of the first sentence mapping.

    Rows written before the coverage was recorded give none.
    """
    sentence = [r for r in rows if r.get("level") == "sentence"]
    if not sentence or sentence[0].get("n_labelled_sentences") is None:
        return []
    first = sentence[0].get("mapping")
    out = []
    for r in sentence:
        if r.get("mapping") != first:
            continue
        row: dict[str, Any] = {"system": r["system"]}
        row |= {heading: r.get(name) for name, heading in COVERAGE_COLUMNS}
        row["not counted"] = not_counted(r)
        out.append(row)
    return out


def shape_of_rows(rows: Sequence[Mapping[str, Any]]) -> DataShape | None:
    """What a metrics file's rows assumed (None for rows written before it was recorded)."""
    if not rows or rows[0].get("labels") is None:
        return None
    first = next((r for r in rows if r.get("level") == "sentence"), rows[0])
    level = str(first.get("level"))
    questions, scope = first.get("question_shape"), first.get("question_scope")
    return DataShape(
        labels=LabelScope(str(first["labels"])),
        level=level,
        systems=len({r.get("system") for r in rows if r.get("level") == level}),
        questions=QuestionShape(questions) if questions else None,
        question_scope=QuestionScope(scope) if scope else None,
        without_claims=str(first.get("without_claims_policy")) if level == "sentence" else None,
        question_zeros=tuple((str(a), str(b)) for a, b in first.get("question_zeros") or ()),
        claims_by_sentence=_pair(first.get("claims_by_sentence")),
    )


def _pair(value: object) -> tuple[int, int] | None:
    """A metrics row's ``claims_by_sentence`` (two counts), else None (an older row)."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return (int(value[0]), int(value[1]))
    return None
