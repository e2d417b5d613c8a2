"""Label Studio tasks from failcodes units, with the judge's codes as predictions.

Each task's ``data`` carries the failcodes unit id, the unit kind and the codebook reference,
so annotations can be mapped back without a server (see :mod:`failcodes.labelstudio.results`).
Pure: no SDK, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

import msgspec

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status, judge_label
from failcodes.codebook import Codebook, Part
from failcodes.errors import InputError
from failcodes.labelstudio import config as cfg
from failcodes.units import Unit, UnitKind
from failcodes.verdicts import ASSERTED

if TYPE_CHECKING:
    from failcodes.annotationlines import AnnotationRead
    from failcodes.unitstream import TaskUnit

    #: An annotation as a task shows it (:meth:`~failcodes.annotationio.AnnotationIndex.get`).
    Shown = AnnotationRead

#: JSON as msgspec writes it: the standard library's bytes for strings (every code point)
_ENCODE = msgspec.json.Encoder().encode
#: Between two items of a task's ``data`` (as the indented list writer spaces them).
_ITEM = b",\n      "


def model_version(codebook: Codebook, judge: Shown | str) -> str:
    """Prediction model version: ``name@version+hashprefix`` of the codebook and the judge.

    What a review pulled records as ``shown_judge`` (:meth:`Annotation.shown_as`).
    """
    label = judge if isinstance(judge, str) else judge_label(judge.coder, judge.coder_kind)
    return f"{codebook.ref()} {label}"


def format_passages(unit: TaskUnit) -> str:
    """All passages of a unit as one text, numbered in rank order."""
    blocks = []
    for p in unit.passages:
        head = f"[{p.rank}] {p.passage_id}"
        if p.title:
            head += f" ({p.title})"
        blocks.append(f"{head}\n{p.text}")
    return "\n\n".join(blocks)


class PartLabels:
    """A codebook part's subcode labels by dimension, looked up once per part, not per unit."""

    def __init__(self, part: Part) -> None:
        self.part = part
        self.labels: list[tuple[str, dict[str, str]]] = []
        for dim in part.dimensions:
            labels: dict[str, str] = {}
            for sub in dim.subcodes:
                labels.setdefault(sub.id, sub.label)  # the first of an id, as a search finds
            self.labels.append((dim.id, labels))
        # "dim: code (label), ..." of each set of codes a dimension was given (worded once)
        self._heads: list[tuple[str, dict[str, str], dict[tuple[str, ...], str]]] = [
            (dim_id, labels, {}) for dim_id, labels in self.labels
        ]
        self._judges: dict[tuple[str, CoderKind], str] = {}  # "Judge: ..." of each coder

    @staticmethod
    def _head(dim_id: str, labels: dict[str, str], codes: tuple[str, ...]) -> str:
        """``dim: code (label), ...``: a dimension's codes in words."""
        shown = []
        for code in codes:
            label = labels.get(code, "not in this codebook")
            if code == NOT_ASSESSABLE:
                label = "not assessable from this unit"
            shown.append(f"{code} ({label})")
        return f"{dim_id}: {', '.join(shown)}"

    def proposal_text(self, annotation: Shown | None) -> str:
        """The judge's proposal in words: codes with labels, rationale and quote.

        A dimension's lines are one text each (its codes worded once per set of codes);
        issue 30: a paper-scale export words 210k proposals.
        """
        if annotation is None:
            return "No judge proposal for this unit."
        coder = (annotation.coder, annotation.coder_kind)
        judge = self._judges.get(coder)
        if judge is None:
            judge = self._judges[coder] = f"Judge: {judge_label(*coder)}"
        if annotation.status is Status.UNSCORED:
            reason = annotation.reason or "no reason given"
            return f"{judge}\nThe judge gave no usable answer: {reason}"
        codes, sets, evidence_of = annotation.codes, annotation.code_sets, annotation.evidence
        lines = [judge]
        add = lines.append
        for dim_id, labels, heads in self._heads:
            if sets and dim_id in sets:
                dim_codes: tuple[str, ...] = tuple(sets[dim_id])
            else:
                code = codes.get(dim_id)
                dim_codes = (code,) if code is not None else ()
            if not dim_codes:
                add(f"{dim_id}: (no code)")
                continue
            head = heads.get(dim_codes)
            if head is None:
                head = heads[dim_codes] = self._head(dim_id, labels, dim_codes)
            evidence = evidence_of.get(dim_id)
            if evidence is None:
                add(head)
                continue
            if evidence.uncertain:
                head += " [judge uncertain]"
            quote = evidence.quote
            if quote:
                found = "" if evidence.quote_found is not False else " (not found in the text)"
                add(f'{head}\n  why: {evidence.rationale}\n  quote{found}: "{quote}"')
            else:
                add(f"{head}\n  why: {evidence.rationale}")
        if annotation.rationale:
            add(f"Rationale: {annotation.rationale}")
        if annotation.quote:
            add(f"Quote: {annotation.quote}")
        return "\n".join(lines)

    def result(self, annotation: Shown) -> list[dict[str, Any]]:
        """The judge's codes of this part as Label Studio result items (other codes left out)."""
        result = []
        for dim_id, labels in self.labels:
            codes = [c for c in annotation.code_set(dim_id) if c in labels]
            if codes:
                result.append(choice_result(dim_id, *codes))
        return result


def choice_result(dimension: str, *codes: str) -> dict[str, Any]:
    """One Label Studio result item selecting ``codes`` in the ``dimension`` choice group."""
    return {
        "from_name": dimension,
        "to_name": cfg.CLAIM,
        "type": "choices",
        "value": {"choices": list(codes)},
    }


def verdict_text(unit: Unit | TaskUnit) -> str:
    """The canonical verdict, and the pipeline's own word(s) for it when they differ.

    E.g. ``refuted (the pipeline wrote: False)``: reviewers see what the verifier said, not
    only what failcodes made of it. The words are those of the unit's provenance (a streamed
    unit's, :mod:`failcodes.unitstream`, may leave out the canonical word).
    """
    if unit.verdict is None:
        return "(none)"
    canonical = unit.verdict.value
    if isinstance(unit, Unit):
        raw = list(dict.fromkeys(p.raw_verdict for p in unit.provenance if p.raw_verdict))
    else:
        raw = list(unit.raw_verdicts)
    asserted = ASSERTED in raw
    shown = [r for r in raw if r.strip().casefold() != canonical and r != ASSERTED]
    words = [f"the pipeline wrote: {' / '.join(shown)}"] if shown else []
    if asserted:  # declared by the pipeline (ingest --verdict), no verifier said it
        words.insert(0, f"{ASSERTED}, no verifier")
    return f"{canonical} ({'; '.join(words)})" if words else canonical


def predicted(judged: Shown | None) -> TypeGuard[Shown]:
    """Whether a task shows ``judged``'s codes as a prediction (a scored annotation)."""
    return judged is not None and judged.status is Status.SCORED


class TaskMaker:
    """Label Studio tasks of one codebook part, with the judge's codes as predictions.

    A task is written as JSON text straight away (:meth:`task_json`: a paper-scale export
    writes ~1 GB of it); the codebook's reference and labels are looked up once, and the
    prediction of units coded alike (the same judge, the same codes) is written once.
    """

    def __init__(self, codebook: Codebook, kind: UnitKind) -> None:
        self.kind = kind
        self.codebook = codebook
        self.labels = PartLabels(cfg.check_label_studio_ids(codebook, kind))
        self.ref = str(codebook.ref())
        keys = [cfg.UNIT_ID, cfg.UNIT_KIND, cfg.CODEBOOK, cfg.CLAIM, cfg.PROPOSAL]
        if kind is UnitKind.RETRIEVAL:
            keys.append(cfg.PASSAGE)
        else:
            keys += [cfg.PASSAGES, cfg.VERDICT, cfg.REASONING]
        # each value's lead: the item separator and its key; the kind and the codebook are
        # the same in every task (written once here)
        lead = [_ENCODE(key) + b": " for key in keys]
        lead[1:] = [_ITEM + key for key in lead[1:]]
        self._opening = b'{\n    "data": {\n      ' + lead[0]
        self._fixed = lead[1] + _ENCODE(kind.value) + lead[2] + _ENCODE(self.ref) + lead[3]
        self._leads = lead[4:]
        self._predictions: dict[Any, bytes] = {}

    def _predicted(self, judged: Shown) -> bytes:
        """The task's ``predictions`` entry: the judge's codes of this part (one per coding)."""
        sets = judged.code_sets
        key = (
            judged.coder,
            judged.coder_kind,
            tuple(judged.codes.items()),
            tuple((k, tuple(v)) for k, v in sets.items()) if sets else (),
        )
        found = self._predictions.get(key)
        if found is None:
            version = model_version(self.codebook, judged)
            predictions = [{"model_version": version, "result": self.labels.result(judged)}]
            text = msgspec.json.format(_ENCODE(predictions), indent=2)
            found = b',\n    "predictions": ' + text.replace(b"\n", b"\n    ")
            self._predictions[key] = found
        return found

    def task_json(self, unit: TaskUnit, judged: Shown | None) -> bytes:
        """One unit's task (a unit of this part), with a prediction if the judge scored it.

        As :func:`~failcodes.fileio.write_json` writes the task in a list (msgspec's
        indented JSON, 2 more spaces a line: see :func:`~failcodes.fileio.write_json_items`);
        its ``data`` holds strings only.
        """
        leads = self._leads
        parts = [self._opening, _ENCODE(unit.id), self._fixed, _ENCODE(unit.claim)]
        parts += [leads[0], _ENCODE(self.labels.proposal_text(judged))]
        parts += [leads[1], _ENCODE(format_passages(unit))]
        if self.kind is UnitKind.VERIFICATION:
            parts += [leads[2], _ENCODE(verdict_text(unit))]
            parts += [leads[3], _ENCODE(unit.reasoning or "(no reasoning trace)")]
        parts.append(b"\n    }")
        if predicted(judged):
            parts.append(self._predicted(judged))
        parts.append(b"\n  }")
        return b"".join(parts)


class JudgeChoice:
    """Which judge annotations become predictions, offered one at a time (nothing held).

    Human annotations are left out. With several judges in the input, ``judge`` must name
    one; an annotation made under another codebook version is refused. :meth:`check`, once
    every annotation was offered, raises the errors :func:`select_judged` raises, in its order.
    """

    def __init__(self, codebook: Codebook, judge: str | None = None) -> None:
        self.ref = codebook.ref()
        self.judge = judge
        self._coders: set[str] = set()
        self._foreign: dict[str, Shown] = {}  # each judge's first of another codebook

    def offer(self, annotation: Shown) -> bool:
        """Whether ``annotation`` is one of the chosen judge's."""
        if annotation.coder_kind is CoderKind.HUMAN:
            return False
        self._coders.add(annotation.coder)
        if annotation.codebook.hash != self.ref.hash:
            self._foreign.setdefault(annotation.coder, annotation)
        return self.judge is None or annotation.coder == self.judge

    def check(self) -> None:
        """Raise :class:`InputError` if the offered annotations do not name one judge."""
        coders = sorted(self._coders)
        if self.judge is None and len(coders) > 1:
            raise InputError(
                f"annotations come from several judges ({', '.join(coders)}); choose one with "
                "--judge"
            )
        if self.judge is not None and self.judge not in coders and coders:
            raise InputError(f"no annotations by judge {self.judge!r}; found: {', '.join(coders)}")
        chosen = self.judge if self.judge is not None else (coders[0] if coders else None)
        foreign = self._foreign.get(chosen) if chosen is not None else None
        if foreign is not None:
            raise InputError(
                f"annotation of unit {foreign.unit_id} was made under codebook "
                f"{foreign.codebook}, not {self.ref}"
            )


def select_judged(
    annotations: Iterable[Annotation], codebook: Codebook, judge: str | None = None
) -> dict[str, Annotation]:
    """Index judge annotations by unit id, keeping one judge (see :class:`JudgeChoice`).

    A unit annotated twice by the judge gets its last annotation.
    """
    choice = JudgeChoice(codebook, judge)
    out = {a.unit_id: a for a in annotations if choice.offer(a)}
    choice.check()
    return out


def build_tasks(
    units: Iterable[Unit],
    codebook: Codebook,
    kind: UnitKind,
    judged: Mapping[str, Annotation] | None = None,
) -> list[dict[str, Any]]:
    """Label Studio tasks for the units of ``kind``, with judge predictions where available.

    Units of the other kind are skipped; a unit id appearing twice is one task. Tasks of
    units coded alike share their prediction objects (see :class:`TaskMaker`).
    """
    from failcodes.unitstream import units_with_words

    maker = TaskMaker(codebook, kind)
    judged = judged or {}
    tasks = (maker.task_json(unit, judged.get(unit.id)) for unit in units_with_words(units, kind))
    return [msgspec.json.decode(task) for task in tasks]
