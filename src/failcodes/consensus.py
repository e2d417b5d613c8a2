"""One clinical label per target from several clinicians' labels of it.

Studies often have two or three clinicians label every sentence. The metrics need one
reference per sentence (or claim); their agreement is a separate question (``failcodes agree
LABELS --long annotator,has_error --unit-column sentence_id``). :func:`combine` turns the
labels of several annotators into one label per target by a stated rule (``majority`` with
its ``ties``, ``any``, ``all``: docs/trace-format.md, ``consensus=``). Each combined label
names the rule and the annotators in ``annotator`` (``majority of 3: dr_a, dr_b, dr_c``), keeps
the rationales of the annotators who voted with the outcome (distinct, joined by `` | ``) and
the first severity among them. A target an annotator labels twice, or labelled twice without
annotator names, is an error naming the line.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from failcodes.errors import InputError
from failcodes.labels import Label, label_target


class Rule(StrEnum):
    """How several annotators' labels of one target make one."""

    MAJORITY = "majority"
    ANY = "any"
    ALL = "all"


class Ties(StrEnum):
    """What a ``majority`` tie becomes."""

    REFUSE = "refuse"
    ERROR = "error"
    NO_ERROR = "no_error"
    SKIP = "skip"


@dataclass(frozen=True)
class Summary:
    """What :func:`combine` did, for the note printed beside its output."""

    rule: Rule
    targets: int
    annotators: int
    unanimous: int
    split: int
    ties: int
    skipped: int
    #: Of the ``unanimous``, the targets one annotator labelled alone (kept as they are).
    single: int = 0

    def note(self) -> str:
        """One line: the rule, how many targets were unanimous, split, tied, skipped.

        A target one annotator labelled alone is no consensus: counted among the unanimous
        and unsaid, two of five targets labelled by one clinician of two read as "4
        unanimous" (t25red); the note says how many such labels were kept as they are.
        """
        tied = f", {self.ties:,} tied" if self.ties else ""
        skipped = f" ({self.skipped:,} skipped)" if self.skipped else ""
        alone = (
            f" ({self.single:,} of them labelled by one annotator alone, that label kept: "
            "no consensus)"
            if self.single
            else ""
        )
        return (
            f"consensus ({self.rule.value}) of {self.annotators:,} annotators over "
            f"{self.targets:,} targets: {self.unanimous:,} unanimous{alone}, "
            f"{self.split:,} split{tied}{skipped}"
        )


Located = tuple[Label, Path, int]


def _check_names(labels: Sequence[Located]) -> None:
    """Refuse annotator names a vote count would split: padded, or differing by case only.

    ``'dr_a '`` beside ``'dr_a'`` (or ``'Dr_A'``) was a second annotator: one clinician's two
    labels of one target were two votes.
    """
    first: dict[str, tuple[str, Path, int]] = {}
    for label, path, line in labels:
        name = label.annotator
        if name is None:
            continue
        if not name.strip() or name != name.strip():
            raise InputError(
                f"annotator name {name!r}: expected the name alone, without spaces around it "
                "(consensus counts one vote per annotator name)",
                path=path,
                line=line,
                field="annotator",
            )
        key = unicodedata.normalize("NFC", name).casefold()  # case and Unicode form ignored
        other = first.setdefault(key, (name, path, line))
        if other[0] != name:
            where = f"line {other[2]}" if other[1] == path else f"{other[1]}:{other[2]}"
            raise InputError(
                f"annotator {name!r} and {other[0]!r} ({where}) differ only by case or Unicode "
                "form: the same clinician? write one spelling (consensus counts one vote per "
                "annotator name)",
                path=path,
                line=line,
                field="annotator",
            )


def _check_summaries(labels: Sequence[Located]) -> None:
    """Refuse an annotator named like a consensus (``adjudicated``, ``majority``, ``gold``).

    Its labels are already a combined label, not one more clinician's vote: two clinicians
    split on a sentence and their ``adjudicated`` row made a 2-1 majority with no word
    ("majority of 3: adjudicated, dr_a, dr_b"), and where the adjudicator overruled a 2-1
    majority the vote made a 2-2 tie, decided by ``ties``, not by the adjudicator. The
    consensus words are ``agree``'s (:data:`failcodes.stats.summaries.CONSENSUS_WORDS`).
    """
    from failcodes.stats.summaries import consensus_word

    for label, path, line in labels:
        name = label.annotator
        word = None if name is None else consensus_word(name)
        if word is None:
            continue
        raise InputError(
            f"annotator {name!r} is named like a consensus ({word!r}): its labels are a "
            "combined label, not one more vote; to use them as the reference, give a file of "
            "its rows alone (without --option consensus); if it is a clinician, rename it",
            path=path,
            line=line,
            field="annotator",
        )


def _votes(group: Sequence[Located]) -> None:
    """Refuse a target labelled twice by one annotator (or twice by nobody named).

    And one whose labels name two questions: two answers' sentences numbered alike (``s1`` of q1
    and of q2) had their votes pooled into one label.
    """
    seen: dict[str | None, tuple[Path, int]] = {}
    asked = next(((lb.question_id, p, n) for lb, p, n in group if lb.question_id), None)
    for label, path, line in group:
        if asked is not None and label.question_id not in (None, asked[0]):
            kind, target = label_target(label)
            where = f"line {asked[2]}" if asked[1] == path else f"{asked[1]}:{asked[2]}"
            hint = (
                f" (numbered per answer? --option sentence_ids=question makes it "
                f"'{label.question_id}:{target}')"
                if kind == "sentence"
                else ""
            )
            raise InputError(
                f"{kind} {target!r} is under question {label.question_id!r} here but "
                f"{asked[0]!r} at {where}: its labels are two answers' {kind}s, not votes on "
                f"one{hint}",
                path=path,
                line=line,
                field="question_id",
            )
        if label.annotator in seen:
            kind, target = label_target(label)
            who = (
                f"annotator {label.annotator!r} labels"
                if label.annotator is not None
                else "two labels without an annotator name label"
            )
            first_path, first_line = seen[label.annotator]
            where = f"line {first_line}" if first_path == path else f"{first_path}:{first_line}"
            raise InputError(
                f"{who} {kind} {target!r} twice (first at {where}); "
                "consensus counts one vote per annotator",
                path=path,
                line=line,
                field="annotator",
            )
        seen[label.annotator] = (path, line)


def _outcome(errors: int, n: int, rule: Rule, ties: Ties) -> bool | None:
    """The combined has_error; None for a tie left to ``ties`` (refuse or skip)."""
    if rule is Rule.ANY:
        return errors > 0
    if rule is Rule.ALL:
        return errors == n
    if 2 * errors != n:
        return 2 * errors > n
    return {Ties.ERROR: True, Ties.NO_ERROR: False}.get(ties)


def _merged(group: Sequence[Located], has_error: bool, rule: Rule) -> Label:
    labels = [lb for lb, _, _ in group]
    agreeing = [lb for lb in labels if lb.has_error == has_error] or labels
    rationales = list(dict.fromkeys(lb.rationale for lb in agreeing if lb.rationale))
    names = sorted({lb.annotator for lb in labels if lb.annotator is not None})
    first = labels[0]
    return first.model_copy(
        update={
            "has_error": has_error,
            "rationale": " | ".join(rationales) or None,
            "severity": next((lb.severity for lb in agreeing if lb.severity), None),
            "annotator": f"{rule.value} of {len(labels)}: {', '.join(names)}",
            "question_id": next((lb.question_id for lb in labels if lb.question_id), None),
            "sentence": next((lb.sentence for lb in labels if lb.sentence), None),
        }
    )


def combine(
    labels: Sequence[Located], rule: Rule, ties: Ties = Ties.REFUSE
) -> tuple[list[Label], Summary]:
    """One label per target (in order of first appearance) by ``rule``; see the module doc.

    ``labels`` come with the file and line they were read from (for errors). A target with a
    single label keeps it unchanged.
    """
    _check_names(labels)
    _check_summaries(labels)
    # per-system labels: one target per system (each system's answer has its own sentence)
    groups: dict[tuple[str, str, str | None], list[Located]] = {}
    for item in labels:
        groups.setdefault((*label_target(item[0]), item[0].system), []).append(item)
    out: list[Label] = []
    unanimous = split = tied = skipped = single = 0
    first_tie: Located | None = None
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0][0])
            unanimous += 1
            single += 1
            continue
        _votes(group)
        errors = sum(lb.has_error for lb, _, _ in group)
        if errors in (0, len(group)):
            unanimous += 1
        else:
            split += 1
        if rule is Rule.MAJORITY and 2 * errors == len(group):
            tied += 1
            first_tie = first_tie or group[-1]
        has_error = _outcome(errors, len(group), rule, ties)
        if has_error is None:
            skipped += 1
            continue
        out.append(_merged(group, has_error, rule))
    if first_tie is not None and ties is Ties.REFUSE:
        label, path, line = first_tie
        kind, target = label_target(label)
        half = len(groups[(kind, target, label.system)]) // 2
        of = f" of system {label.system!r}" if label.system is not None else ""
        raise InputError(
            f"{tied:,} target(s) tie under the majority rule (first: {kind} {target!r}{of}, "
            f"{half} error / {half} no error); say what a tie is: --option "
            "ties=error|no_error|skip",
            path=path,
            line=line,
            field="has_error",
        )
    names = {lb.annotator for lb, _, _ in labels if lb.annotator is not None}
    summary = Summary(rule, len(groups), len(names), unanimous, split, tied, skipped, single)
    return out, summary
