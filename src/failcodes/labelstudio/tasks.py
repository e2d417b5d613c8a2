"""Label Studio tasks from failcodes units, with the judge's codes as predictions.

Each task's ``data`` carries the failcodes unit id, the unit kind and the codebook reference,
so annotations can be mapped back without a server (see :mod:`failcodes.labelstudio.results`).
Pure: no SDK, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.codebook import Codebook, Part
from failcodes.errors import InputError
from failcodes.labelstudio import config as cfg
from failcodes.units import Unit, UnitKind
from failcodes.verdicts import ASSERTED

if TYPE_CHECKING:
    from failcodes.annotationio import AnnotationView

    #: An annotation as a task shows it (:meth:`~failcodes.annotationio.AnnotationIndex.shown`).
    Shown = Annotation | AnnotationView

HEURISTIC_NOTE = "heuristic baseline, not an LLM"


def judge_label(annotation: Shown) -> str:
    """The judge as shown to reviewers; the offline heuristic judge is labelled as such."""
    if annotation.coder_kind is CoderKind.HEURISTIC:
        return f"{annotation.coder} ({HEURISTIC_NOTE})"
    return annotation.coder


def model_version(codebook: Codebook, judge: Shown | str) -> str:
    """Prediction model version: ``name@version+hashprefix`` of the codebook and the judge."""
    label = judge if isinstance(judge, str) else judge_label(judge)
    return f"{codebook.ref()} {label}"


def format_passages(unit: Unit) -> str:
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

    def proposal_text(self, annotation: Shown | None) -> str:
        """See :func:`proposal_text`."""
        if annotation is None:
            return "No judge proposal for this unit."
        lines = [f"Judge: {judge_label(annotation)}"]
        if annotation.status is Status.UNSCORED:
            reason = annotation.reason or "no reason given"
            lines.append(f"The judge gave no usable answer: {reason}")
            return "\n".join(lines)
        for dim_id, labels in self.labels:
            codes = annotation.code_set(dim_id)
            if not codes:
                lines.append(f"{dim_id}: (no code)")
                continue
            shown = []
            for code in codes:
                label = labels.get(code, "not in this codebook")
                if code == NOT_ASSESSABLE:
                    label = "not assessable from this unit"
                shown.append(f"{code} ({label})")
            evidence = annotation.evidence.get(dim_id)
            doubt = " [judge uncertain]" if evidence is not None and evidence.uncertain else ""
            lines.append(f"{dim_id}: {', '.join(shown)}{doubt}")
            if evidence is not None:
                lines.append(f"  why: {evidence.rationale}")
                if evidence.quote:
                    found = "" if evidence.quote_found is not False else " (not found in the text)"
                    lines.append(f'  quote{found}: "{evidence.quote}"')
        if annotation.rationale:
            lines.append(f"Rationale: {annotation.rationale}")
        if annotation.quote:
            lines.append(f"Quote: {annotation.quote}")
        return "\n".join(lines)

    def result(self, annotation: Shown) -> list[dict[str, Any]]:
        """The judge's codes of this part as Label Studio result items (other codes left out)."""
        result = []
        for dim_id, labels in self.labels:
            codes = [c for c in annotation.code_set(dim_id) if c in labels]
            if codes:
                result.append(choice_result(dim_id, *codes))
        return result


def proposal_text(annotation: Shown | None, part: Part) -> str:
    """The judge's proposal in words: codes with labels, rationale and quote."""
    return PartLabels(part).proposal_text(annotation)


def choice_result(dimension: str, *codes: str) -> dict[str, Any]:
    """One Label Studio result item selecting ``codes`` in the ``dimension`` choice group."""
    return {
        "from_name": dimension,
        "to_name": cfg.CLAIM,
        "type": "choices",
        "value": {"choices": list(codes)},
    }


def prediction(annotation: Shown, codebook: Codebook, part: Part | PartLabels) -> dict[str, Any]:
    """The judge's codes as one Label Studio prediction (only codes of this codebook part)."""
    labels = part if isinstance(part, PartLabels) else PartLabels(part)
    version = model_version(codebook, annotation)
    return {"model_version": version, "result": labels.result(annotation)}


def verdict_text(unit: Unit, raw_verdicts: Sequence[str] | None = None) -> str:
    """The canonical verdict, and the pipeline's own word(s) for it when they differ.

    E.g. ``refuted (the pipeline wrote: False)``: reviewers see what the verifier said, not
    only what failcodes made of it. The words are those of the unit's provenance, or given
    (``raw_verdicts``, distinct, first seen first: a streamed unit's, which may leave out the
    canonical word; see :mod:`failcodes.unitstream`).
    """
    if unit.verdict is None:
        return "(none)"
    canonical = unit.verdict.value
    raw = (
        list(dict.fromkeys(p.raw_verdict for p in unit.provenance if p.raw_verdict))
        if raw_verdicts is None
        else list(raw_verdicts)
    )
    asserted = ASSERTED in raw
    shown = [r for r in raw if r.strip().casefold() != canonical and r != ASSERTED]
    words = [f"the pipeline wrote: {' / '.join(shown)}"] if shown else []
    if asserted:  # declared by the pipeline (ingest --verdict), no verifier said it
        words.insert(0, f"{ASSERTED}, no verifier")
    return f"{canonical} ({'; '.join(words)})" if words else canonical


def task_data(
    unit: Unit,
    codebook: Codebook,
    judged: Shown | None,
    part: Part | PartLabels,
    raw_verdicts: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ``data`` object of one task (``raw_verdicts``: see :func:`verdict_text`)."""
    labels = part if isinstance(part, PartLabels) else PartLabels(part)
    data: dict[str, Any] = {
        cfg.UNIT_ID: unit.id,
        cfg.UNIT_KIND: unit.kind.value,
        cfg.CODEBOOK: str(codebook.ref()),
        cfg.CLAIM: unit.claim,
        cfg.PROPOSAL: labels.proposal_text(judged),
    }
    if unit.kind is UnitKind.RETRIEVAL:
        data[cfg.PASSAGE] = format_passages(unit)
    else:
        data[cfg.PASSAGES] = format_passages(unit)
        data[cfg.VERDICT] = verdict_text(unit, raw_verdicts)
        data[cfg.REASONING] = unit.reasoning or "(no reasoning trace)"
    return data


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
        self._foreign: dict[str, Annotation] = {}  # each judge's first of another codebook

    def offer(self, annotation: Annotation) -> bool:
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


def unit_task(
    unit: Unit,
    codebook: Codebook,
    part: Part | PartLabels,
    judged: Shown | None,
    raw_verdicts: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One unit's task, with the judge's codes as a prediction when it scored the unit.

    ``part``: what :func:`~failcodes.labelstudio.config.check_label_studio_ids` returned
    (for many tasks, as :class:`PartLabels`: its labels are then looked up once).
    """
    labels = part if isinstance(part, PartLabels) else PartLabels(part)
    task: dict[str, Any] = {"data": task_data(unit, codebook, judged, labels, raw_verdicts)}
    if judged is not None and judged.status is Status.SCORED:
        task["predictions"] = [prediction(judged, codebook, labels)]
    return task


def build_tasks(
    units: Sequence[Unit],
    codebook: Codebook,
    kind: UnitKind,
    judged: Mapping[str, Annotation] | None = None,
) -> list[dict[str, Any]]:
    """Label Studio tasks for the units of ``kind``, with judge predictions where available.

    Units of the other kind are skipped; a unit id appearing twice is one task.
    """
    part = PartLabels(cfg.check_label_studio_ids(codebook, kind))
    judged = judged or {}
    tasks: list[dict[str, Any]] = []
    seen: set[str] = set()
    for unit in units:
        if unit.kind is not kind or unit.id in seen:
            continue
        seen.add(unit.id)
        tasks.append(unit_task(unit, codebook, part, judged.get(unit.id)))
    return tasks
