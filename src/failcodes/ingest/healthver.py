"""HealthVer (Sarrouti et al. 2021): retrieved evidence passages with per-passage gold polarity.

Input: ``healthver_dev.csv`` / ``healthver_test.csv``, one row per (retrieved passage, claim).
One trace per claim (``claim_id`` = ``sentence_id`` = ``hv-<topic_ip>-<id>``, id = the pair id
of the claim's first row), its rows as passages in file order with their gold polarity, and a
*retrieval-bounded oracle* verdict; no labels (HealthVer has no claim-level truth). The
columns and rules: docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from failcodes.errors import ConfigError, InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output
from failcodes.tableio import csv_rows
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict

COLUMNS = ("id", "evidence", "claim", "label", "topic_ip", "question")
POLARITY = {
    "supports": Verdict.SUPPORTED,
    "refutes": Verdict.REFUTED,
    "neutral": Verdict.NO_EVIDENCE,
}


def oracle_verdict(polarities: Sequence[Verdict]) -> Verdict:
    """The retrieval-bounded oracle verdict over passage polarities (module docstring)."""
    sup = Verdict.SUPPORTED in polarities
    ref = Verdict.REFUTED in polarities
    if sup and ref:
        return Verdict.AMBIGUOUS
    if sup:
        return Verdict.SUPPORTED
    if ref:
        return Verdict.REFUTED
    return Verdict.NO_EVIDENCE


def read_healthver(path: str | Path, system: str = "healthver-t5") -> list[Trace]:
    """Read one HealthVer CSV into one trace per claim.

    A claim's id holds its first pair id, not its place among its topic's claims: numbered
    on across the files given, test's claims took other ids beside dev (210 of 230), and
    labels made on test alone fell on dev's claims (TP 11, FP 27, FN 28 for TP 39, TN 191).
    """
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    groups: dict[tuple[str, str], list[tuple[str, str, Verdict]]] = {}
    questions: dict[tuple[str, str], str] = {}
    for lineno, row in csv_rows(p, COLUMNS):
        raw = row["label"].strip()
        if raw.lower() not in POLARITY:
            raise InputError(
                f"unknown label {raw!r} (Supports, Refutes, Neutral)",
                path=p,
                line=lineno,
                field="label",
            )
        key = (row["topic_ip"].strip(), row["claim"].strip())
        groups.setdefault(key, []).append(
            (row["id"].strip(), row["evidence"].strip(), POLARITY[raw.lower()])
        )
        questions.setdefault(key, row["question"].strip())
    if not groups:
        raise InputError("no rows after the header (expected one per claim and passage)", path=p)
    traces: list[Trace] = []
    for (topic, claim), rows in groups.items():
        cid = f"hv-{topic}-{rows[0][0]}"
        pols = [v for _, _, v in rows]
        counts = {
            v.value: pols.count(v)
            for v in (Verdict.SUPPORTED, Verdict.REFUTED, Verdict.NO_EVIDENCE)
        }
        traces.append(
            Trace(
                system=system,
                question_id=topic,
                sentence_id=cid,
                claim_id=cid,
                claim=claim,
                sentence=claim,
                verdict=oracle_verdict(pols),
                raw_verdict="; ".join(f"{k}={n}" for k, n in counts.items()),
                reasoning=f"Retrieval-bounded oracle over gold passage polarities; search "
                f"question: {questions[(topic, claim)]}",
                verifier="oracle (gold passage polarity)",
                retriever="HealthVer T5 retrieval + re-ranking",
                evidence_source=EvidenceSource.RETRIEVED,
                passages=tuple(
                    Passage(
                        passage_id=pid,
                        rank=i,
                        text=text,
                        source=f"healthver:{p.name}",
                        gold=pol != Verdict.NO_EVIDENCE,
                        gold_verdict=pol,
                    )
                    for i, (pid, text, pol) in enumerate(rows, start=1)
                ),
            )
        )
    return traces


def _ingest(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """HealthVer CSV -> one trace per claim, passages with gold polarity (no labels).

    ``--system`` names the system (default healthver-t5).
    """
    if not paths:
        raise ConfigError("the healthver adapter needs a healthver_*.csv file")
    traces: list[Trace] = []
    for path in paths:
        traces.extend(read_healthver(path, options.system or "healthver-t5"))
    notes = [
        f"{len(traces)} claims; verdict = retrieval-bounded oracle over gold passage "
        "polarities; gold = Supports/Refutes passage; HealthVer has no claim-level labels"
    ]
    return IngestResult(traces=traces, notes=notes)


ADAPTER = FileAdapter("healthver", Output.TRACES, _ingest)
