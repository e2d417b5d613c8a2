"""``rtv`` as a use case: the reference retrieve-then-verify evaluator (seed 000).

:class:`RtvRequest` chunks the source documents, BM25-retrieves and verifies each model
output, writes the run's files under ``out`` and returns an :class:`RtvResult`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import field_validator, model_validator

from failcodes.commands.base import Note, Request, ignore_note, int_list, option
from failcodes.contract import FrozenModel
from failcodes.errors import ConfigError
from failcodes.rtv.evaluate import RtvConfig
from failcodes.rtv.items import SCALES, read_items
from failcodes.rtv.judge import OfflineHeuristicJudge, VerdictJudge
from failcodes.rtv.report import RtvRun, as_rows, evaluate_all, write_outputs
from failcodes.rtv.retrieval import BM25_METHODS

#: Bounds of the retrieval options: each sensitivity k is one more retrieval and judging pass;
#: a chunk must hold a few words (BM25 indexes words of 2+ letters).
MAX_K = 100
MAX_SENSITIVITY_KS = 10
MIN_CHUNK = 20
MAX_CHUNK = 1_000_000


def _judge(spec: str, base_url: str | None) -> VerdictJudge:
    """``offline`` -> the heuristic baseline; ``anthropic:MODEL`` / ``openai:MODEL`` -> LLM."""
    if spec.strip().lower() == "offline":
        return OfflineHeuristicJudge()
    from failcodes.judge.providers import LLMProvider, make_coder
    from failcodes.rtv.llm_judge import LLMVerdictJudge

    coder = make_coder(spec, base_url=base_url)
    if not isinstance(coder, LLMProvider):  # pragma: no cover - only offline is direct
        raise ConfigError(f"judge {spec!r} is not an LLM provider")
    return LLMVerdictJudge(coder)


def _fmt(x: object) -> str:
    return f"{x:.3f}" if isinstance(x, float) else ("-" if x is None else str(x))


class RtvResult(FrozenModel):
    """The run's summary (``run``: what ``--format json`` prints) and the files written."""

    run: RtvRun
    written: dict[str, Path]

    def json_text(self) -> str:
        """What ``--format json`` prints: the run."""
        return json.dumps(self.run.model_dump(mode="json"), indent=2)

    def lines(self) -> list[str]:
        """The run's rows, k sensitivity, Fleiss kappas and notes, tab-separated."""
        run = self.run
        lines = [f"NOTE: {run.note}"] if run.note else []
        rows = as_rows(run)
        if rows:
            cols = list(rows[0])
            lines.append("\t".join(cols))
            lines += ["\t".join(_fmt(row[c]) for c in cols) for row in rows]
        lines += [
            f"k={r.k} {r.model}: support {_fmt(r.evidence_support_rate)}, "
            f"conservative {_fmt(r.conservative_hallucination_rate)}, "
            f"strict {_fmt(r.strict_hallucination_rate)}"
            for r in run.k_sensitivity
        ]
        lines += [
            f"Fleiss kappa ({f.group}, {f.n_models} models, {f.n_items} items): {_fmt(f.kappa)}"
            for f in run.fleiss
        ]
        if run.semantic_skipped:
            lines.append(f"semantic diagnostic skipped: {run.semantic_skipped}")
        return [*lines, "wrote " + ", ".join(str(p) for p in self.written.values())]


class RtvRequest(Request):
    """Chunk, BM25-retrieve and verify model outputs against their source documents."""

    command: ClassVar[tuple[str, ...]] = ("rtv",)

    items: Path = option(argument=True, help="Items JSONL (see docs/rtv.md).")
    docs: Path = option(help="Folder of source .txt/.md/.pdf files.")
    out: Path = option(Path("reports/rtv"), flags=("-o", "--out"), help="Output folder.")
    k: int = option(5, help="Chunks retrieved per item.", ge=1, le=MAX_K)
    sensitivity_k: str = option(
        "1,3,5",
        help=f"Comma-separated k values to compare (at most {MAX_SENSITIVITY_KS}, each 1 to "
        f"{MAX_K}).",
    )
    chunk_size: int = option(
        1400, help="Chunk size (characters; a few words at least).", ge=MIN_CHUNK, le=MAX_CHUNK
    )
    overlap: int = option(200, help="Chunk overlap (characters; at most half a chunk).", ge=0)
    bm25_method: str = option("lucene", help="bm25s scoring variant.")
    judge: str = option(
        "offline",
        help="Verdict judge: offline (heuristic baseline), anthropic:MODEL or openai:MODEL.",
    )
    base_url: str | None = option(
        None, help="OpenAI-compatible / Anthropic endpoint for the judge."
    )
    scale: str = option("rob2-item", help=f"Answer scale: {', '.join(SCALES)} or none.")
    semantic_model: Path | None = option(None, help="Local sentence-transformers model (optional).")

    @field_validator("sensitivity_k")
    @classmethod
    def _ks(cls, value: str) -> str:
        int_list(value, "--sensitivity-k", high=MAX_K, most=MAX_SENSITIVITY_KS)
        return value

    @model_validator(mode="after")
    def _fit_together(self) -> Self:
        """Refuse options that do not fit together (ConfigError: the CLI's one line)."""
        if 2 * self.overlap > self.chunk_size:  # a step under half a chunk: tiny steps
            raise ConfigError(
                f"--overlap {self.overlap}: at most half of --chunk-size {self.chunk_size} "
                f"({self.chunk_size // 2})"
            )
        if self.scale != "none" and self.scale not in SCALES:
            raise ConfigError(f"unknown scale {self.scale!r} (one of {', '.join(SCALES)}, none)")
        return self

    def run(self, *, note: Note = ignore_note) -> RtvResult:
        """Evaluate every item and write the run's files under ``out``."""
        from failcodes.rtv.documents import load_documents

        del note
        if self.bm25_method not in BM25_METHODS:
            raise ConfigError(f"unknown --bm25-method (one of {', '.join(BM25_METHODS)})")
        ks = int_list(self.sensitivity_k, "--sensitivity-k", high=MAX_K, most=MAX_SENSITIVITY_KS)
        scale = SCALES.get(self.scale)
        config = RtvConfig(
            chunk_size=self.chunk_size, overlap=self.overlap, k=self.k, bm25_method=self.bm25_method
        )
        items = read_items(self.items)
        documents = load_documents(self.docs)
        verdict_judge = _judge(self.judge, self.base_url)
        try:
            run_result, results = evaluate_all(
                items, documents, verdict_judge, config, scale, ks, self.semantic_model
            )
        finally:
            close: Any = getattr(verdict_judge, "close", None)
            if callable(close):
                close()
        written = write_outputs(self.out, run_result, results, scale)
        return RtvResult(run=run_result, written=written)
