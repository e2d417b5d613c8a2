"""The labels a label rule gives a table's rows: one per target, kept as the rows come.

Rows of several systems (or several claims of one sentence) name one target; they must
agree. With ``--option label_scope=system`` each label is its row's system's: a target is
one per system. Rows of two systems that name one target with different texts (the sentence,
or the claim where it is its own sentence) are two sentences, not one: each system wrote its
own answer, so one shared label cannot be both's; that is refused like a disagreement unless
``--option label_scope=shared`` was given. A table's labels are per claim when claim and
sentence ids differ on any row, else per sentence (``--option label_level=auto``), which is
known only at the end: until a row settles it, both levels are kept, so memory follows the
targets (claims and sentences), not the rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from failcodes.errors import InputError, clip
from failcodes.labels import Label
from failcodes.spelling import spelling_key

LEVELS: tuple[str, ...] = ("claim", "sentence")


class RuleLabels:
    """The first label of each target, per level still possible; the first disagreement.

    ``level`` is the level of the labels so far (``auto``: sentence until a row says claim).
    """

    def __init__(self, label_level: str, *, same_text: bool = True) -> None:
        """``label_level``: ``claim``, ``sentence`` or ``auto`` (claim once a row says so).

        ``same_text``: refuse a shared target whose rows of two systems carry different texts
        (False when ``--option label_scope=shared`` says the labels are shared anyway).
        """
        kept = LEVELS if label_level == "auto" else (label_level,)
        self._auto = label_level == "auto"
        self.rows = 0
        self.level = "claim" if label_level == "claim" else "sentence"
        self._targets: dict[str, dict[tuple[str | None, str], tuple[Label, Path, int]]] = {
            lv: {} for lv in kept
        }
        #: the system of the row each kept label came from (shared labels name none)
        self._row_system: dict[tuple[str, str | None, str], str | None] = {}
        self._same_text = same_text
        #: the folded text's hash of the first row of each shared target, per level
        self._text: dict[tuple[str, str | None, str], int] = {}
        self._conflict: dict[str, InputError] = {}

    def claim_level(self) -> None:
        """A row's claim and sentence ids differ: with ``auto``, the labels are per claim."""
        if len(self._targets) > 1:
            self.level = "claim"
            del self._targets["sentence"]
            self._conflict.pop("sentence", None)

    def add(
        self,
        label: Label,
        path: Path,
        line: int,
        *,
        system: str | None = None,
        claim: str | None = None,
    ) -> None:
        """The label the rule gives the row at ``path:line`` (of ``system``, if known).

        ``claim``: the row's claim text, the sentence's text where the claim is its own
        sentence (its id is the sentence's) and the row gives no sentence text.
        """
        self.rows += 1
        for level, out in self._targets.items():
            target = (label.claim_id if level == "claim" else label.sentence_id) or ""
            key = (label.system, target)  # per-system labels: one target per system
            text = _text_of(label, level, claim)
            folded = None if text is None else spelling_key(text)
            if key not in out:
                kept = label if level == "claim" else label.model_copy(update={"claim_id": None})
                out[key] = (kept, path, line)
                self._row_system[(level, *key)] = system
                if folded is not None and label.system is None and self._same_text:
                    self._text[(level, *key)] = hash(folded)
                continue
            first, first_path, first_line = out[key]
            other = self._row_system.get((level, *key))
            if level in self._conflict:
                continue
            where = f"line {first_line}" if first_path == path else f"{first_path}:{first_line}"
            question, first_question = label.question_id, first.question_id
            # one label would stand for two answers' sentences (ids numbered per answer)
            if level == "sentence" and first_question not in (None, question) and question:
                self._conflict[level] = InputError(
                    f"sentence {target!r} is under question {question!r} here but "
                    f"{first_question!r} at {where}: a sentence id names one answer's "
                    "sentence (numbered per answer? --option sentence_ids=question makes "
                    f"it '{question}:{target}')",
                    path=path,
                    line=line,
                    field="sentence_id",
                )
                continue
            if first.has_error == label.has_error:
                first_text = self._text.get((level, *key))
                if (
                    folded is None
                    or first_text is None
                    or first_text == hash(folded)
                    or None in (other, system)
                    or other == system
                ):
                    continue
                self._conflict[level] = InputError(
                    f"{level} {target!r} reads {clip(text or '')!r} in this row of system "
                    f"{system!r} but otherwise in the row of system {other!r} at {where}: one "
                    "shared label cannot be both's (if each system's answer was labelled on its "
                    "own, --option label_scope=system keeps each system's labels; if the texts "
                    "are one sentence, --option label_scope=shared keeps one label per id)",
                    path=path,
                    line=line,
                    field=f"{level}_id",
                )
                continue
            of = f" of system {label.system!r}" if label.system is not None else ""
            hint = (
                f" (a row of system {other!r} there, of {system!r} here: if each system's "
                "answer was labelled on its own, --option label_scope=system keeps each "
                "system's labels)"
                if label.system is None and None not in (other, system) and other != system
                else ""
            )
            self._conflict[level] = InputError(
                f"the label rule gives {level} {target!r}{of} has_error="
                f"{str(label.has_error).lower()} here but {str(first.has_error).lower()} at "
                f"{where}{hint}",
                path=path,
                line=line,
                field=f"{level}_id",
            )

    def add_sentence(self, label: Label, path: Path, line: int) -> bool:
        """A sentence's label that no claim row carries (its claims list is empty).

        Kept where the labels are per sentence (False: they are per claim, and a sentence
        without claims has no claim to label). Not counted in :attr:`rows` (no row of a trace).
        """
        if "sentence" not in self._targets or self.level != "sentence":
            return False
        rows = self.rows
        self.add(label, path, line)
        self.rows = rows
        return True

    def settle(self, column: str | None = None) -> list[Label]:
        """One label per target of :attr:`level`, in the order first read.

        The first two rows of that level that disagree are an :class:`InputError` (raised
        here, once every row was read, as when the labels were settled from all the rows).
        ``column``: the rule's column, whose name may say its label is the answer's
        (:func:`refuse_answer_labels`).
        """
        if self.level in self._conflict:
            raise self._conflict[self.level]
        if self._auto and self.level == "claim":
            _refuse_repeated_sentence_labels(self._targets["claim"].values())
        if self._auto and self.level == "sentence" and column is not None:
            refuse_answer_labels(self._targets["sentence"].values(), column, LABEL_LEVEL_WAY)
        return [label for label, _, _ in self._targets[self.level].values()]


def _refuse_repeated_sentence_labels(claims: Iterable[tuple[Label, Path, int]]) -> None:
    """Refuse claim labels that are a sentence's label repeated on its claim rows.

    A long table (a row per claim) or a record of claims nested in sentences carries the
    clinician's sentence label on every claim row; ``label_level=auto`` read it per claim
    (claim ids differ from the sentence's), so each correct claim of a wrong sentence became
    an error: sentence-level metrics refused the claim labels and ``--level claim`` scored
    TP 1, FP 1, FN 4, TN 1 for the sentences' TP 1, FP 1, FN 1, TN 1, exit 0. Said when
    two or more sentences have several labelled claims, each sentence's claims share one
    label, and one such sentence is an error.
    """
    error: dict[tuple[str | None, str | None], bool] = {}
    count: dict[tuple[str | None, str | None], int] = {}
    first: dict[tuple[str | None, str | None], tuple[Path, int]] = {}
    for label, path, line in claims:
        key = (label.system, label.sentence_id)
        if error.setdefault(key, label.has_error) != label.has_error:
            return  # a sentence whose claims differ: labelled claim by claim
        count[key] = count.get(key, 0) + 1
        first.setdefault(key, (path, line))
    several = [key for key, n in count.items() if n > 1]
    wrong = [key for key in several if error[key]]
    if len(several) < 2 or not wrong:
        return
    path, line = first[wrong[0]]
    raise InputError(
        f"the label rule gives each sentence's claims one label ({len(several):,} sentences "
        f"of several claims, none split; sentence {wrong[0][1]!r}: all {count[wrong[0]]} "
        "claims an error): a sentence's label on each claim row? read per claim, its correct "
        "claims counted as errors; --option label_level=sentence writes one label per sentence, "
        "--option label_level=claim keeps them per claim (the clinicians labelled each claim)",
        path=path,
        line=line,
        field="claim_id",
    )


#: Words of a column's name that say its value is the whole answer's (``answer_has_error``,
#: ``response_label``, ``overall_correct``), unless a word names a part of it (a sentence).
_ANSWER_WORDS = frozenset(
    {"answer", "answers", "response", "responses", "overall", "reply", "completion"}
    | {"generation", "document", "whole", "question", "output"}
)
_PART_WORDS = frozenset(
    {"sentence", "sentences", "sent", "claim", "claims", "statement", "fact", "facts", "span"}
    | {"atomic", "item", "unit", "segment", "line"}
)

#: The way past :func:`refuse_answer_labels` in a traces table (``ingest generic``).
LABEL_LEVEL_WAY = "--option label_level=sentence reads them as the sentences' own"


def _names_answer(column: str) -> bool:
    """Whether ``column``'s name says its value is the answer's (a word of it, no part's)."""
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", column)}
    return bool(words & _ANSWER_WORDS) and not words & _PART_WORDS


def refuse_answer_labels(
    sentences: Iterable[tuple[Label, Path, int]], column: str, way: str
) -> None:
    """Refuse sentence labels from a column named as the answer's, one label per answer.

    A flat table (a row per sentence) repeating ``answer_has_error`` on each sentence of
    the answer: ``--label-rule 'answer_has_error = yes -> error'`` gave every sentence of a
    wrong answer the error label, its right sentences counted as misses (TP 1, FP 1, FN 4,
    TN 1 over 7 sentences for the answers' TP 1, FP 1, FN 1, exit 0; the nested form,
    ``rows=sentences[]``, is :func:`failcodes.ingest.nested.rows_of`'s). Only where the name
    says so and the data agree: every question's sentences one label, one question of two
    or more sentences an error. Sentences that are all right (or all wrong) in a column named
    otherwise are left alone. ``way``: how to read them as the sentences' own.
    """
    if not _names_answer(column):
        return
    error: dict[tuple[str | None, str], bool] = {}
    count: dict[tuple[str | None, str], set[str]] = {}
    first: dict[tuple[str | None, str], tuple[Path, int]] = {}
    for label, path, line in sentences:
        if label.question_id is None:
            return
        key = (label.system, label.question_id)
        if error.setdefault(key, label.has_error) != label.has_error:
            return  # an answer whose sentences differ: labelled sentence by sentence
        count.setdefault(key, set()).add(label.sentence_id or "")
        first.setdefault(key, (path, line))
    several = [key for key, ids in count.items() if len(ids) > 1]
    wrong = [key for key in several if error[key]]
    if not wrong:
        return
    path, line = first[wrong[0]]
    raise InputError(
        f"column {column!r} is named as the answer's, and each question's sentences have one "
        f"label ({len(several):,} question(s) of several sentences, none split; question "
        f"{wrong[0][1]!r}: all {len(count[wrong[0]])} sentences an error): the answer's label "
        "on each sentence "
        "row? read per sentence, the right sentences of a wrong answer count as errors "
        "(sentence metrics need each sentence's own label); if the clinicians labelled each "
        f"sentence, {way}",
        path=path,
        line=line,
        field=column,
    )


def _text_of(label: Label, level: str, claim: str | None) -> str | None:
    """The text a row gives its target at ``level`` (None: no text to compare).

    A sentence's is its ``sentence`` text, else the claim's where the claim is the sentence
    (claim id = sentence id); a claim's is the claim text.
    """
    if level == "sentence":
        raw = label.sentence
        if raw is None and label.claim_id in (None, label.sentence_id):
            raw = claim
    else:
        raw = claim
    return raw


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def numbering_gaps(labels: Sequence[Label]) -> str | None:
    """A note when a question's labelled sentences are numbered with gaps (None: none).

    A label rule labels the sentences a table has rows for: a claim table (a row per claim)
    has none for a sentence without claims, nor does a claims table merged with the
    sentences' labels (pandas' merge keeps the rows of both alone). Such a sentence's label
    is then nowhere, so an error in it was no miss: q1's s2 and q2's s3 without claims, both
    errors, gave recall 1/1 for 1/3, exit 0, with no word. Numbers missing between a
    question's labelled sentences (``q1:s1``, ``q1:s3``: ids that hold their question's) are
    said; the start and end of an answer cannot be told.
    """
    numbers: dict[tuple[str | None, str | None, str], dict[int, str]] = {}
    for label in labels:
        found = _NUMBERED.match(label.sentence_id or "")
        # numbered within its question (q1:s3, q1_3): ids numbered over the whole table,
        # its questions interleaved (HealthVer's claim ids), skip numbers of a question
        if found is not None and label.question_id and label.question_id in found.group(1):
            key = (label.system, label.question_id, found.group(1))
            numbers.setdefault(key, {})[int(found.group(2))] = found.group(2)
    missing: list[str] = []
    questions = 0
    for (_, _, prefix), seen in numbers.items():
        if len(seen) < 2:
            continue
        width = len(seen[min(seen)])
        gaps = [n for n in range(min(seen), max(seen)) if n not in seen]
        if gaps:
            questions += 1
            missing.extend(prefix + str(n).zfill(width) for n in gaps)
    if not missing:
        return None
    return (
        f"{len(missing):,} sentence number(s) missing between labelled sentences of "
        f"{questions:,} question(s) (first: {missing[0]!r}): sentences with no row, as a "
        "claim table has none for a sentence without claims (or a merge of claims and labels "
        "dropped it)? their labels are not here, so an error in one counts as no miss; give "
        "every sentence's label apart (failcodes ingest generic-labels) and metrics count "
        "those without claims (--without-claims)"
    )
