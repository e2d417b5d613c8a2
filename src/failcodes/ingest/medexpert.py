"""The ``medexpert`` adapter: MedExpert (John Snow Labs) export -> sentence labels + sentences.

Input: a JSON list of tasks ``{id, data: {question, response, title}, completions: [{result:
[...], created_username}]}``. In a completion's ``result``:

- ``from_name == "factuality_label"``: a clinician's error span ``value = {start, end, text,
  labels: [severity]}`` over ``data.response`` (severity Mild / Moderate / Severe /
  Life-threatening);
- ``from_name == "answer_factuality"``: the rationale for the span with the same ``id``
  (``value.text`` is a list of strings).

The rules (ids, spans onto sentences, annotators, skipped completions) are docs/trace-format.md's
``medexpert`` section. The sentences (with offsets and the question) are also returned, so a
pipeline can be run on exactly the labelled units (``--sentences-out``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output, check_unique
from failcodes.labels import Label
from failcodes.sentences import Sentence, answer_sentences

#: MedExpert severities from least to most severe (the most severe span wins).
SEVERITY_ORDER = ("Mild", "Moderate", "Severe", "Life-threatening")
#: At most this many letters or digits of a sentence a span's edge may cover and be a slip.
SLIP_LETTERS = 2


def _load(path: Path) -> list[Any]:
    data = jsonio.read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list of tasks, got {type(data).__name__}", path=path)
    return data


def _str(obj: dict[str, Any], key: str, path: Path, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        problem = "missing required field" if value is None else f"expected a string, got {value!r}"
        raise InputError(problem, path=path, field=f"{where}.{key}")
    return value


def _completions(task: dict[str, Any]) -> tuple[str, Any]:
    """A task's annotations and the key they are under.

    JSL's export names them ``completions``; a Label Studio export of the same project
    ``annotations`` (it was refused as "no labels found": every task read as without one).
    """
    if "completions" in task or "annotations" not in task:
        return "completions", task.get("completions") or []
    return "annotations", task.get("annotations") or []


def _annotator(completion: dict[str, Any]) -> str | None:
    """Who made a completion: JSL's ``created_username``, else Label Studio's ``completed_by``."""
    name = completion.get("created_username")
    if name:
        return str(name)
    by = completion.get("completed_by")
    if isinstance(by, dict):
        by = by.get("email") or by.get("id")
    return None if by is None or by == "" else str(by)


class _Span:
    def __init__(self, start: int, end: int, severity: str) -> None:
        self.start = start
        self.end = end
        self.severity = severity
        self.rationale: str | None = None


def _spans(result: list[Any], response: str, path: Path, where: str) -> list[_Span]:
    spans: dict[str, _Span] = {}
    rationales: dict[str, str] = {}
    for k, item in enumerate(result):
        iw = f"{where}.result[{k}]"
        if not isinstance(item, dict):
            raise InputError("expected an object", path=path, field=iw)
        kind = item.get("from_name")
        if kind not in ("factuality_label", "answer_factuality"):
            continue
        value = item.get("value")
        if not isinstance(value, dict):
            raise InputError("missing required field", path=path, field=f"{iw}.value")
        span_id = _str(item, "id", path, iw)
        if kind == "factuality_label":
            start, end = value.get("start"), value.get("end")
            if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end:
                raise InputError(
                    f"expected 0 <= start < end character offsets, got {start!r}..{end!r}",
                    path=path,
                    field=f"{iw}.value.start",
                )
            if end > len(response):
                raise InputError(
                    f"span ends at {end} but the response has {len(response)} characters",
                    path=path,
                    field=f"{iw}.value.end",
                )
            text = value.get("text")
            if text is not None and text != response[start:end]:
                raise InputError(
                    f"span text {text!r} is not response[{start}:{end}] ({response[start:end]!r})",
                    path=path,
                    field=f"{iw}.value.text",
                )
            labels = value.get("labels")
            if not isinstance(labels, list) or len(labels) != 1 or labels[0] not in SEVERITY_ORDER:
                raise InputError(
                    f"expected one severity of {', '.join(SEVERITY_ORDER)}, got {labels!r}",
                    path=path,
                    field=f"{iw}.value.labels",
                )
            spans[span_id] = _Span(start, end, labels[0])
        else:
            text = value.get("text")
            parts = text if isinstance(text, list) else [text]
            rationales[span_id] = "\n".join(str(p).strip() for p in parts if p is not None)
    for span_id, span in spans.items():
        span.rationale = rationales.get(span_id) or None
    return list(spans.values())


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """MedExpert JSL export: clinician error spans -> sentence labels (+ sentences).

    Reads every export; question ids must be unique across files.
    """
    wanted = options.extra.get("annotator")
    labels: list[Label] = []  # (the result holds them as a Sequence)
    result = IngestResult(labels=labels)
    seen: dict[str, Path] = {}
    n_spans = 0
    grazed: list[tuple[Sentence, str]] = []  # (sentence, the part a span's edge covered)
    for path in paths:
        for i, task in enumerate(_load(path)):
            where = f"[{i}]"
            if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
                raise InputError("expected a task with a 'data' object", path=path, field=where)
            data = task["data"]
            response = _str(data, "response", path, f"{where}.data")
            question = data.get("question") if isinstance(data.get("question"), str) else None
            title = data.get("title")
            qid = title if isinstance(title, str) and title else str(task.get("id", i))
            check_unique(
                seen,
                qid,
                path,
                what=f"two tasks with question_id {qid!r}",
                field=f"{where}.data.title",
            )
            key, completions = _completions(task)
            if not isinstance(completions, list):
                raise InputError("expected a list", path=path, field=f"{where}.{key}")
            mine = [
                (k, c)
                for k, c in enumerate(completions)
                if isinstance(c, dict) and (wanted is None or _annotator(c) == wanted)
            ]
            chosen = [(k, c) for k, c in mine if c.get("was_cancelled") is not True]
            if len(chosen) > 1:
                names = ", ".join(str(_annotator(c)) for _, c in chosen)
                raise InputError(
                    f"{len(chosen)} completions ({names}); pick one annotator with "
                    "--option annotator=NAME",
                    path=path,
                    field=f"{where}.{key}",
                )
            sentences = answer_sentences(qid, response, question=question)
            result.sentences.extend(sentences)
            by = f" by {wanted!r}" if wanted else ""
            if not chosen:
                skipped = f" ({len(mine)} skipped: was_cancelled)" if mine else ""
                result.notes.append(
                    f"task {qid!r} has no completion{by}{skipped}; its sentences are unlabelled"
                )
                continue
            k, completion = chosen[0]
            cw = f"{where}.{key}[{k}]"
            items = completion.get("result") or []
            if not isinstance(items, list):
                raise InputError("expected a list", path=path, field=f"{cw}.result")
            if not items:  # submitted untouched: every MedExpert review holds its choices
                result.notes.append(
                    f"task {qid!r}: its completion{by} holds no annotation (an empty result); "
                    "its sentences are unlabelled"
                )
                continue
            spans = _spans(items, response, path, cw)
            n_spans += len(spans)
            annotator = _annotator(completion)
            labels.extend(_label(s, spans, annotator, response, grazed) for s in sentences)
    result.notes.append(
        f"{len(result.sentences):,} sentences, {n_spans} error span(s), "
        f"{sum(lb.has_error for lb in result.labels)} sentence(s) with an error"
    )
    if grazed:
        sentence, part = grazed[0]
        result.notes.append(
            f"{len(grazed):,} sentence(s) an error span touched with its edge alone, at most "
            f"{SLIP_LETTERS} letters or digits of theirs (first: {sentence.sentence_id}, "
            f"{part!r} of {sentence.text[:60]!r}): not labelled an error by that span (a "
            "selection begun or ended a character or two past a sentence's edge)"
        )
    return result


def _grazes(sentence: Sentence, span: _Span, response: str) -> str | None:
    """The part of ``sentence`` a span's edge covers when it is a boundary slip, else None.

    A clinician's selection begun at the sentence before's full stop (``'. Aspirin cures
    cancer.'``) or its last letter (``'n. Aspirin cures cancer.'``) labelled that sentence an
    error too, with the span's severity and rationale: 2 error sentences for 1, exit 0. A slip:
    the span reaches past the sentence's edge, covers no letter or digit of it, or at most
    ``SLIP_LETTERS`` that are under a quarter of the sentence's while the span holds more
    elsewhere. A span covering a whole sentence, or lying inside it, is read.
    """
    part = response[max(sentence.start, span.start) : min(sentence.end, span.end)]
    if part == sentence.text:
        return None
    mine = sum(ch.isalnum() for ch in part)
    if mine == 0:
        return part
    beyond = span.start < sentence.start or span.end > sentence.end
    elsewhere = sum(ch.isalnum() for ch in response[span.start : span.end]) - mine
    whole = sum(ch.isalnum() for ch in sentence.text)
    if beyond and mine <= SLIP_LETTERS and 4 * mine < whole and elsewhere > mine:
        return part
    return None


def _label(
    sentence: Sentence,
    spans: Sequence[_Span],
    annotator: str | None,
    response: str,
    grazed: list[tuple[Sentence, str]],
) -> Label:
    touched = [sp for sp in spans if sentence.start < sp.end and sp.start < sentence.end]
    hits = []
    for sp in touched:
        part = _grazes(sentence, sp, response)
        if part is None:
            hits.append(sp)
        else:
            grazed.append((sentence, part))
    severity = max((sp.severity for sp in hits), key=SEVERITY_ORDER.index) if hits else None
    rationale = "\n\n".join(sp.rationale for sp in hits if sp.rationale) or None
    return Label(
        sentence_id=sentence.sentence_id,
        question_id=sentence.question_id,
        has_error=bool(hits),
        severity=severity,
        rationale=rationale,
        annotator=annotator,
        sentence=sentence.text,
    )


ADAPTER = FileAdapter(
    "medexpert", Output.LABELS, _ingest, options=("annotator",), json_document=True
)
