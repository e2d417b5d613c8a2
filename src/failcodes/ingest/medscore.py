"""The ``medscore`` adapter: MedScore ``medscore_output.jsonl`` -> traces.

Input: one JSON object per line, ``{id, score, claims: [{claim, sentence, evidence, raw,
score}]}`` (MedScore's combined output: its ``medscore.py`` drops ``sentence_id`` and
``claim_id`` from each claim). ``raw`` is the verifier's answer text, ``score`` MedScore's own
parse of it (1.0 / 0.0). ``evidence`` depends on the verifier (MedScore ``verifier.py``):
``null`` for ``internal``; the provided text (a string) for ``provided``; for ``medrag`` a list
of retrieved passages ``{id, title, text, score}`` (``MedRAGRetriever._format_retrieved``).

Also read: MedScore's intermediate ``verifications.jsonl`` (one line per claim: ``{id,
sentence_id, sentence, claim, claim_id, evidence, raw, score}``, written by ``medscore.py``
before combining), which keeps the sentence and claim indices: ``question_id`` = ``id``,
``sentence_id`` = ``'{id}:s{sentence_id}'``, ``claim_id`` = ``'{id}:s{sentence_id}:c{claim_id}'``
(a line with ``claim: null`` is a sentence without claims). The form is detected from the
first line (``claims`` list -> combined, ``claim`` -> verifications).

The rules (verdicts, the id schemes, passages, evidence sources, notes) are docs/trace-format.md's
``medscore`` section.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict, normalize_verdict

DEFAULT_SYSTEM = "medscore"
_SENTENCE_ID = re.compile(r"^(?P<question>.+)_(?P<index>\d+)$")


def _text(value: object, path: Path, line: int, field: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        problem = "missing required field" if value is None else f"expected a string, got {value!r}"
        raise InputError(problem, path=path, line=line, field=field)
    return value


def _passages(
    evidence: object, claim_id: str, question_id: str, path: Path, line: int, field: str
) -> tuple[Passage, ...]:
    if evidence is None:
        return ()
    if isinstance(evidence, str):
        return (
            Passage(passage_id=f"{question_id}:provided", rank=1, text=evidence, source="provided"),
        )
    if not isinstance(evidence, list):
        raise InputError(
            f"expected null, a string or a list of passages, got {type(evidence).__name__}",
            path=path,
            line=line,
            field=field,
        )
    out: list[Passage] = []
    for r, item in enumerate(evidence, start=1):
        pw = f"{field}[{r - 1}]"
        if not isinstance(item, dict):
            raise InputError("expected a {title, text} object", path=path, line=line, field=pw)
        text = _text(item.get("text"), path, line, f"{pw}.text")
        title = _text(item.get("title"), path, line, f"{pw}.title", required=False)
        pid = item.get("id")
        score = item.get("score")
        if score is not None and (not isinstance(score, int | float) or isinstance(score, bool)):
            raise InputError(
                f"expected a number, got {score!r}", path=path, line=line, field=f"{pw}.score"
            )
        assert text is not None
        out.append(
            Passage(
                passage_id=str(pid) if pid is not None else f"{claim_id}:p{r}",
                rank=r,
                text=text,
                title=title,
                score=float(score) if score is not None else None,
                source="MedRAG",
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class _Settings:
    system: str
    verifier: str | None
    verdict_from: str
    aliases: Mapping[str, Verdict]


def _verdict(claim: dict[str, Any], cfg: _Settings, path: Path, line: int, cw: str) -> Verdict:
    if cfg.verdict_from == "score":
        score = claim.get("score")
        if score not in (0, 1) or isinstance(score, bool):
            raise InputError(
                f"expected score 1.0 or 0.0, got {score!r}",
                path=path,
                line=line,
                field=f"{cw}score",
            )
        return Verdict.SUPPORTED if score == 1 else Verdict.REFUTED
    raw = claim.get("raw")
    if raw is None:
        raise InputError("missing required field", path=path, line=line, field=f"{cw}raw")
    return normalize_verdict(raw, cfg.aliases, path=path, line=line, field=f"{cw}raw")


def _trace(
    claim: dict[str, Any],
    cfg: _Settings,
    ids: tuple[str, str, str],
    sentence: str | None,
    path: Path,
    line: int,
    cw: str,
) -> Trace:
    """Build one trace; ``cw`` is the field prefix of the claim (``'claims[3].'`` or ``''``)."""
    question_id, sentence_id, claim_id = ids
    text = _text(claim.get("claim"), path, line, f"{cw}claim")
    assert text is not None
    verdict = _verdict(claim, cfg, path, line, cw)
    evidence = claim.get("evidence")
    raw = claim.get("raw")
    return Trace(
        system=cfg.system,
        question_id=question_id,
        sentence_id=sentence_id,
        claim_id=claim_id,
        claim=text,
        sentence=sentence,
        verdict=verdict,
        raw_verdict=str(raw) if raw is not None else None,
        verifier=cfg.verifier,
        retriever="MedRAG" if isinstance(evidence, list) else None,
        passages=_passages(evidence, claim_id, question_id, path, line, f"{cw}evidence"),
        evidence_source=_evidence_source(evidence),
    )


def _evidence_source(evidence: object) -> EvidenceSource:
    """MedScore's verifier kinds: internal (null) / provided (a string) / medrag (a list)."""
    if evidence is None:
        return EvidenceSource.NONE
    return EvidenceSource.PROVIDED if isinstance(evidence, str) else EvidenceSource.RETRIEVED


def _record_id(rec: dict[str, Any], path: Path, line: int) -> str:
    rid = rec.get("id")
    if not isinstance(rid, str | int) or isinstance(rid, bool) or str(rid) == "":
        raise InputError(f"expected a string id, got {rid!r}", path=path, line=line, field="id")
    return str(rid)


def _read_once(
    seen: dict[tuple[str, ...], tuple[Path, int]],
    key: tuple[str, ...],
    what: str,
    path: Path,
    line: int,
    field: str,
) -> None:
    """Record ``key`` as read at ``path:line``; a key read before is ``what (first at P:L)``.

    In another file it names the way through for one file per system (each system's output of
    the same questions: the ids recur by design).
    """
    if key in seen:
        first_path, first_line = seen[key]
        apart = (
            "; one file per system? ingest each apart with --system NAME and give the traces "
            "together (--traces A --traces B)"
            if first_path != path
            else ""
        )
        raise InputError(
            f"{what} (first at {first_path}:{first_line}){apart}",
            path=path,
            line=line,
            field=field,
        )
    seen[key] = (path, line)


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """MedScore medscore_output.jsonl / verifications.jsonl (internal, provided, MedRAG).

    Reads every file (each in one of the two forms); ids must be unique across files.
    """
    scheme = options.option("ids", ("auto", "sentence", "response"), "auto")
    cfg = _Settings(
        system=options.system or DEFAULT_SYSTEM,
        verifier=options.extra.get("verifier") or None,
        verdict_from=options.option("verdict_from", ("raw", "score"), "raw"),
        aliases=options.aliases,
    )
    result = IngestResult()
    seen: dict[tuple[str, ...], tuple[Path, int]] = {}
    empty = 0
    for path in paths:
        records = list(jsonio.iter_jsonl(path))
        if records and "claims" not in records[0][1] and "claim" in records[0][1]:
            empty += _read_verifications(records, cfg, path, seen, result)
        else:
            empty += _read_combined(records, cfg, scheme, path, seen, result)
    if empty:
        result.notes.append(
            f"{empty:,} record(s) have no claims and produce no trace "
            "(sentences without verifiable claims)"
        )
    return result


def _read_combined(
    records: list[tuple[int, dict[str, Any]]],
    cfg: _Settings,
    scheme: str,
    path: Path,
    seen: dict[tuple[str, ...], tuple[Path, int]],
    result: IngestResult,
) -> int:
    ids: list[str] = []
    for line, rec in records:
        rid = _record_id(rec, path, line)
        _read_once(seen, (rid,), f"duplicate id {rid!r}", path, line, "id")
        if "claims" not in rec:
            raise InputError(
                "missing required field (records of medscore_output.jsonl carry 'claims')",
                path=path,
                line=line,
                field="claims",
            )
        ids.append(rid)
    use_sentence = scheme == "sentence" or (
        scheme == "auto" and all(_SENTENCE_ID.match(i) for i in ids)
    )
    if scheme == "auto" and use_sentence:
        # a record whose claims come from two sentences is an answer, whatever its id says
        # (`case_1`, `case_2`: three answers read as sentences of one question 'case', each
        # of two sentences one: one cluster for the bootstrap, its claims pooled, exit 0)
        answer = next(((line, rec) for line, rec in records if len(_sentence_texts(rec)) > 1), None)
        use_sentence = answer is None
        if answer is not None:
            line, rec = answer
            result.notes.append(
                f"{path}: ids read as one answer per record (--option ids=response), though "
                f"every id ends in _<digits>: the claims of record {rec.get('id')!r} (line "
                f"{line}) come from {len(_sentence_texts(rec))} sentences"
            )
        elif ids:
            first = ids[0]
            question = _SENTENCE_ID.match(first)
            assert question is not None  # every id matched
            result.notes.append(
                f"{path}: ids read as QUESTION_N, one sentence per record (--option "
                f"ids=sentence: every id ends in _<digits>, no record's claims come from two "
                f"sentences): {first!r} is sentence {question.group('index')} of question "
                f"{question.group('question')!r}; if a record is a whole answer, give "
                "--option ids=response"
            )
    empty = 0
    for (line, rec), rid in zip(records, ids, strict=True):
        claims = rec.get("claims")
        if claims is None:
            claims = []
        if not isinstance(claims, list):
            raise InputError(
                f"expected a list, got {type(claims).__name__}",
                path=path,
                line=line,
                field="claims",
            )
        if not claims:
            empty += 1
            continue
        question_id = rid
        if use_sentence:
            match = _SENTENCE_ID.match(rid)
            if match is None:
                raise InputError(
                    f"id {rid!r} is not QUESTION_N (use --option ids=response)",
                    path=path,
                    line=line,
                    field="id",
                )
            question_id = match.group("question")
        sentence_ids: dict[str, str] = {}
        for j, claim in enumerate(claims):
            cw = f"claims[{j}]."
            if not isinstance(claim, dict):
                raise InputError("expected an object", path=path, line=line, field=cw[:-1])
            claim_id = f"{rid}:c{j}"
            sentence = _text(claim.get("sentence"), path, line, f"{cw}sentence", required=False)
            if use_sentence:
                sid = rid
            elif sentence is None:
                sid = claim_id
            else:
                sid = sentence_ids.setdefault(sentence, f"{rid}:s{len(sentence_ids)}")
            result.traces.append(
                _trace(claim, cfg, (question_id, sid, claim_id), sentence, path, line, cw)
            )
    return empty


def _sentence_texts(rec: dict[str, Any]) -> set[str]:
    """The distinct ``sentence`` texts of a combined record's claims (strings alone)."""
    claims = rec.get("claims")
    if not isinstance(claims, list):
        return set()
    return {
        c["sentence"] for c in claims if isinstance(c, dict) and isinstance(c.get("sentence"), str)
    }


def _read_verifications(
    records: list[tuple[int, dict[str, Any]]],
    cfg: _Settings,
    path: Path,
    seen: dict[tuple[str, ...], tuple[Path, int]],
    result: IngestResult,
) -> int:
    empty = 0
    for line, rec in records:
        rid = _record_id(rec, path, line)
        keys = []
        for name in ("sentence_id", "claim_id"):
            value = rec.get(name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise InputError(
                    f"expected an integer index, got {value!r}", path=path, line=line, field=name
                )
            keys.append(value)
        s_idx, c_idx = keys
        if s_idx is None:
            raise InputError("missing required field", path=path, line=line, field="sentence_id")
        sentence_id = f"{rid}:s{s_idx}"
        if rec.get("claim") is None:  # a sentence the decomposer found no claim in
            empty += 1
            continue
        if c_idx is None:
            raise InputError("missing required field", path=path, line=line, field="claim_id")
        _read_once(
            seen,
            (rid, str(s_idx), str(c_idx)),
            f"duplicate (id, sentence_id, claim_id) = ({rid!r}, {s_idx}, {c_idx})",
            path,
            line,
            "claim_id",
        )
        sentence = _text(rec.get("sentence"), path, line, "sentence", required=False)
        ids = (rid, sentence_id, f"{sentence_id}:c{c_idx}")
        result.traces.append(_trace(rec, cfg, ids, sentence, path, line, ""))
    return empty


ADAPTER = FileAdapter(
    "medscore", Output.TRACES, _ingest, options=("ids", "verdict_from", "verifier")
)
