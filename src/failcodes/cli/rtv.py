"""``failcodes rtv``: the reference retrieve-then-verify evaluator (seed 000)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from failcodes.cli.main import app
from failcodes.cli.options import int_list
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.errors import ConfigError
from failcodes.rtv.documents import load_documents
from failcodes.rtv.evaluate import RtvConfig
from failcodes.rtv.items import SCALES, read_items
from failcodes.rtv.judge import OfflineHeuristicJudge, VerdictJudge
from failcodes.rtv.report import as_rows, evaluate_all, write_outputs

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


KOpt = Annotated[int, typer.Option("--k", min=1, max=MAX_K, help="Chunks retrieved per item.")]
SensitivityOpt = Annotated[
    str,
    typer.Option(
        "--sensitivity-k",
        help=f"Comma-separated k values to compare (at most {MAX_SENSITIVITY_KS}, each 1 to "
        f"{MAX_K}).",
    ),
]
ChunkOpt = Annotated[
    int,
    typer.Option(
        "--chunk-size",
        min=MIN_CHUNK,
        max=MAX_CHUNK,
        help="Chunk size (characters; a few words at least).",
    ),
]
OverlapOpt = Annotated[
    int, typer.Option("--overlap", min=0, help="Chunk overlap (characters; at most half a chunk).")
]


def _checked(overlap: int, chunk_size: int, scale: str, sensitivity_k: str) -> tuple[int, ...]:
    """Refuse options that do not fit together; the k values of the sensitivity table."""
    if 2 * overlap > chunk_size:  # a step under half a chunk: a chunk per few characters
        raise ConfigError(
            f"--overlap {overlap}: at most half of --chunk-size {chunk_size} ({chunk_size // 2})"
        )
    if scale != "none" and scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r} (one of {', '.join(SCALES)}, none)")
    return int_list(sensitivity_k, "--sensitivity-k", high=MAX_K, most=MAX_SENSITIVITY_KS)


def _fmt(x: object) -> str:
    return f"{x:.3f}" if isinstance(x, float) else ("-" if x is None else str(x))


@app.command("rtv")
def rtv(
    items: Annotated[Path, typer.Argument(help="Items JSONL (see docs/rtv.md).")],
    docs: Annotated[Path, typer.Option("--docs", help="Folder of source .txt/.md/.pdf files.")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Output folder.")] = Path("reports/rtv"),
    k: KOpt = 5,
    sensitivity_k: SensitivityOpt = "1,3,5",
    chunk_size: ChunkOpt = 1400,
    overlap: OverlapOpt = 200,
    bm25_method: Annotated[str, typer.Option(help="bm25s scoring variant.")] = "lucene",
    judge: Annotated[
        str,
        typer.Option(
            help="Verdict judge: offline (heuristic baseline), anthropic:MODEL or openai:MODEL."
        ),
    ] = "offline",
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible / Anthropic endpoint for the judge.")
    ] = None,
    scale: Annotated[
        str, typer.Option(help=f"Answer scale: {', '.join(SCALES)} or none.")
    ] = "rob2-item",
    semantic_model: Annotated[
        Path | None, typer.Option(help="Local sentence-transformers model (optional).")
    ] = None,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Chunk, BM25-retrieve and verify model outputs against their source documents."""
    ks = _checked(overlap, chunk_size, scale, sensitivity_k)
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="rtv")
    from failcodes.rtv.retrieval import BM25_METHODS

    if bm25_method not in BM25_METHODS:
        raise ConfigError(f"unknown --bm25-method (one of {', '.join(BM25_METHODS)})")
    the_scale = SCALES.get(scale)
    config = RtvConfig(chunk_size=chunk_size, overlap=overlap, k=k, bm25_method=bm25_method)
    the_items = read_items(items)
    documents = load_documents(docs)
    verdict_judge = _judge(judge, base_url)
    try:
        run_result, results = evaluate_all(
            the_items, documents, verdict_judge, config, the_scale, ks, semantic_model
        )
    finally:
        close = getattr(verdict_judge, "close", None)
        if callable(close):
            close()
    written = write_outputs(out, run_result, results, the_scale)
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps(run_result.model_dump(mode="json"), indent=2))
        return
    _print(run_result)
    typer.echo("wrote " + ", ".join(str(p) for p in written.values()))


def _print(run_result: Any) -> None:
    """The run's rows, k sensitivity, Fleiss kappas and notes, tab-separated."""
    if run_result.note:
        typer.echo(f"NOTE: {run_result.note}")
    rows = as_rows(run_result)
    if rows:
        cols = list(rows[0])
        typer.echo("\t".join(cols))
        for row in rows:
            typer.echo("\t".join(_fmt(row[c]) for c in cols))
    for r in run_result.k_sensitivity:
        typer.echo(
            f"k={r.k} {r.model}: support {_fmt(r.evidence_support_rate)}, "
            f"conservative {_fmt(r.conservative_hallucination_rate)}, "
            f"strict {_fmt(r.strict_hallucination_rate)}"
        )
    for f in run_result.fleiss:
        typer.echo(
            f"Fleiss kappa ({f.group}, {f.n_models} models, {f.n_items} items): {_fmt(f.kappa)}"
        )
    if run_result.semantic_skipped:
        typer.echo(f"semantic diagnostic skipped: {run_result.semantic_skipped}")
