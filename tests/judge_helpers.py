"""Small codebook and traces for the judge tests (built in code, independent of taxonomy/)."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from failcodes.codebook import Codebook, Dimension, Part, Subcode
from failcodes.disagreementio import write_disagreement_records
from failcodes.judge import PriceTable, make_coder
from failcodes.judge.pricing import Price
from failcodes.judge.providers import LLMProvider
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind
from failcodes.verdicts import Verdict
from tests.fakeserver import FakeServer


def _dim(dim_id: str, label: str, high: str, *lows: str) -> Dimension:
    subs = [
        Subcode(id=high, label=high.replace("_", " "), definition=f"{label} ok.", high_quality=True)
    ]
    subs += [Subcode(id=c, label=c.replace("_", " "), definition=f"{label}: {c}.") for c in lows]
    return Dimension(
        id=dim_id, label=label, definition=f"How the unit fares on {label}.", subcodes=tuple(subs)
    )


def make_codebook(version: int = 1, *, multi_label: tuple[str, ...] = ()) -> Codebook:
    """The test codebook; dimensions named in ``multi_label`` are declared multi-label."""
    cb = _make_codebook(version)
    if not multi_label:
        return cb
    parts = tuple(
        part.model_copy(
            update={
                "dimensions": tuple(
                    d.model_copy(update={"multi_label": True}) if d.id in multi_label else d
                    for d in part.dimensions
                )
            }
        )
        for part in cb.parts
    )
    return cb.model_copy(update={"parts": parts})


def _make_codebook(version: int) -> Codebook:
    retrieval = Part(
        id=UnitKind.RETRIEVAL,
        label="Evidence quality",
        dimensions=(
            _dim("entity_match", "Entity match", "exact_entity", "partial_entity", "irrelevant"),
            _dim("scope", "Scope", "exact_scope", "broader_scope", "narrower_scope"),
            _dim("trustworthy", "Trustworthy source", "reliable", "unreliable", "unknown_source"),
            _dim("polarity", "Evidence polarity", "direct", "indirect", "no_polarity"),
            _dim("chunking", "Chunking", "complete_chunk", "incomplete_chunk"),
        ),
    )
    verification = Part(
        id=UnitKind.VERIFICATION,
        label="Reasoning steps",
        dimensions=(
            _dim(
                "evidence_selection",
                "Evidence selection",
                "complete_selection",
                "selective_coverage",
            ),
            _dim("comprehension", "Evidence comprehension", "understood", "misread"),
            _dim(
                "inference",
                "Inference",
                "valid_inference",
                "overreach",
                "conflict_synthesis_failure",
            ),
            _dim(
                "confidence", "Verbal confidence", "calibrated", "overconfident", "underconfident"
            ),
            _dim("label_consistency", "Label consistency", "consistent", "inconsistent"),
            _dim("grounding", "Grounding", "grounded", "ungrounded"),
        ),
    )
    return Codebook(name="test-codebook", version=version, parts=(retrieval, verification))


def write_codebook(path: Path, codebook: Codebook | None = None) -> Path:
    cb = codebook or make_codebook()
    path.write_text(yaml.safe_dump(cb.model_dump(mode="json"), sort_keys=False), "utf-8")
    return path


P_GOOD = Passage(
    passage_id="pm1",
    rank=1,
    text="Metformin lowers HbA1c in adults with type 2 diabetes by about 1 percentage point.",
    source="pubmed",
)
P_FRAGMENT = Passage(
    passage_id="pm2",
    rank=2,
    text="and the dose was titrated weekly in the cohort without",
    source="pubmed",
)
P_WEB = Passage(
    passage_id="w1",
    rank=3,
    text="Cinnamon tea is a popular drink in winter.",
    source="healthblog.example",
)


def make_traces(n_claims: int = 3) -> list[Trace]:
    """Two systems sharing passages; claim i gets a distinct number so units differ."""
    traces: list[Trace] = []
    for i in range(n_claims):
        claim = f"Metformin lowers HbA1c in adults with type 2 diabetes (claim {i})."
        for system in ("sysA", "sysB"):
            passages = (P_GOOD, P_FRAGMENT) if system == "sysA" else (P_GOOD, P_WEB)
            passages = tuple(p.model_copy(update={"rank": r}) for r, p in enumerate(passages, 1))
            traces.append(
                Trace(
                    system=system,
                    question_id=f"q{i}",
                    sentence_id=f"q{i}-s1",
                    claim_id=f"q{i}-c1",
                    claim=claim,
                    verdict=Verdict.SUPPORTED if system == "sysA" else Verdict.REFUTED,
                    reasoning=f"The passage says metformin lowers HbA1c in adults ({system}).",
                    retriever=system.replace("sys", "ret"),
                    verifier=system.replace("sys", "ver"),
                    passages=passages,
                )
            )
    return traces


def fn_disagreements(traces: list[Trace]) -> list[Any]:
    """One FN disagreement (refuted mapping, sentence level) per trace, its claim the trace's."""
    from failcodes.disagreements import ClaimRecord, Disagreement, DisagreementKind
    from failcodes.metrics import Level

    return [
        Disagreement(
            id=f"d-{t.system}-{t.claim_id}",
            kind=DisagreementKind.FN,
            level=Level.SENTENCE,
            system=t.system,
            mapping="refuted",
            error_verdicts=("refuted",),
            question_id=t.question_id,
            sentence_id=t.sentence_id,
            label_has_error=True,
            predicted_error=False,
            claims=(
                ClaimRecord(
                    claim_id=t.claim_id,
                    claim=t.claim,
                    verdict=t.verdict,
                    maps_to_error=False,
                    reasoning=t.reasoning,
                    passages=t.passages,
                    retriever=t.retriever,
                ),
            ),
        )
        for t in traces
    ]


def write_traces(path: Path, traces: list[Trace]) -> Path:
    path.write_text("".join(json.dumps(t.model_dump(mode="json")) + "\n" for t in traces), "utf-8")
    return path


def write_disagreements(path: Path, items: Iterable[Any]) -> Path:
    """Disagreement models written as the commands write their records (JSONL or Parquet)."""
    write_disagreement_records(path, (d.model_dump(mode="json") for d in items))
    return path


#: The fake server's models, priced for the tests (USD per million tokens; batch half price).
FAKE_PRICES = PriceTable(
    prices={
        "openai:fake-model": Price(
            input=1000.0, cached_input=100.0, output=2000.0, batch_discount=0.5
        ),
        "anthropic:fake-claude": Price(
            input=1000.0, cached_input=100.0, cache_write=1250.0, output=2000.0, batch_discount=0.5
        ),
    }
)


def fresh_fake(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch, key: str, *, tiny_cache: bool = True
) -> FakeServer:
    """The module's fake server, reset for one test, with ``key`` as both vendors' API key.

    ``tiny_cache``: cache prefixes of any length (the tiny test codebook's prefix is under the
    APIs' 1,024-token caching minimum); no latency, batches finish at once.
    """
    server.reset()
    if tiny_cache:
        server.control(prompt_cache={"min_tokens": 0, "openai_step": 1})
    server.control(latency=0.0, batch_delay=0.0)
    for name in ("OPENAI", "ANTHROPIC"):
        monkeypatch.setenv(f"{name}_API_KEY", key)
        monkeypatch.delenv(f"{name}_BASE_URL", raising=False)
    return server


def fake_coder(fake: FakeServer, provider: str, **kw: Any) -> LLMProvider:
    """A real SDK provider (``openai`` or ``anthropic``) pointed at the fake server."""
    if provider == "openai":
        return make_coder("openai:fake-model", base_url=fake.openai_base_url, **kw)
    return make_coder("anthropic:fake-claude", base_url=fake.anthropic_base_url, **kw)


def journal_count(journal: Path) -> int:
    """Annotations committed to a journal another process is writing (0 before it exists)."""
    if not journal.exists():
        return 0
    try:
        con = sqlite3.connect(journal, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM annotations").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def judge_command(
    src: Path, codebook: Path, run: Path, base_url: str, concurrency: int
) -> list[str]:
    """``failcodes judge retrieval`` as a subprocess command against the fake OpenAI server."""
    return [
        *(sys.executable, "-m", "failcodes", "judge", "retrieval"),
        *("--from", str(src), "--codebook", str(codebook), "--judge", "openai:fake-model"),
        *("--base-url", base_url, "--concurrency", str(concurrency), "--no-cache"),
        *("-o", str(run)),
    ]
