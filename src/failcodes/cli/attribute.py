"""``failcodes attribute``: the pipeline stage behind each disagreement (docs/attribution.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from failcodes.annotations import Annotation
from failcodes.attribution import (
    Strategy,
    all_correct_rate,
    all_high_rate,
    attribute,
    attribution_summary,
    attribution_table,
    dominant_errors,
    heuristic_coded,
    per_passage_codes,
    per_trace_steps,
)
from failcodes.cli._judge_inputs import load_codebook, load_inputs, note_codebook
from failcodes.cli.main import app
from failcodes.cli.options import CodebookFileOpt, EvidenceOpt, FromOpt, TopKOpt, data_console
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.codebook import Codebook
from failcodes.disagreements import with_evidence_source as declare_disagreements
from failcodes.errors import InputError
from failcodes.fileio import atomic_write_text, check_output_dir, write_jsonl
from failcodes.study import layout
from failcodes.traces import (
    parse_evidence_declarations,
    with_evidence_source,
)
from failcodes.units import UnitKind

if TYPE_CHECKING:  # pandas (~0.2 s) is imported where used, so --help does not pay for it
    import pandas as pd

HEURISTIC_NOTE = (
    "note: codes from the offline judge are a heuristic baseline (rule-based, no model), "
    "not LLM or human judgements"
)


#: Tables written under the study layout's names (what ``failcodes report`` reads); the
#: others are written as ``<name>.csv``.
OUTPUT_FILES = {
    "per_passage_codes": layout.PER_PASSAGE,
    "per_trace_steps": layout.PER_TRACE,
    "attribution": layout.ATTRIBUTION_TABLE,
}


def _annotations(run_dir: Path | None, codebook: Codebook) -> list[Annotation]:
    if run_dir is None:
        return []
    from failcodes.judge.panelrun import run_codes

    return run_codes(run_dir, codebook)


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    atomic_write_text(path, df.to_csv(index=False))


def _rich(df: pd.DataFrame, title: str) -> Table:
    table = Table(title=title)
    for col in df.columns:
        table.add_column(str(col))
    for row in df.itertuples(index=False):
        table.add_row(
            *[f"{v:.3f}" if isinstance(v, float) else ("" if v is None else str(v)) for v in row]
        )
    return table


@app.command("attribute")
def attribute_cmd(
    source: FromOpt,
    codebook_path: CodebookFileOpt = None,
    retrieval: Annotated[
        Path | None, typer.Option("--retrieval", help="Run dir of `judge retrieval`.")
    ] = None,
    reasoning: Annotated[
        Path | None, typer.Option("--reasoning", help="Run dir of `judge reasoning`.")
    ] = None,
    strategy: Annotated[Strategy, typer.Option("--strategy")] = Strategy.AUTO,
    top_k: TopKOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Dominant subcodes per group.")] = 3,
    output: Annotated[Path, typer.Option("-o", "--output")] = Path("reports") / "attribution",
    fmt: FormatOpt = OutputFormat.TABLE,
    evidence: EvidenceOpt = None,
) -> None:
    """Attribute each disagreement to retrieval, provided evidence or verification.

    The rule is failcodes' own (docs/attribution.md): closed-book pipelines are never blamed on
    retrieval, nor are pipelines whose evidence came with the item. --evidence overrides the
    traces' own evidence_source.
    """
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="attribute")
    import pandas as pd

    out = data_console(soft_wrap=True)
    err = data_console(stderr=True, soft_wrap=True)
    codebook = load_codebook(codebook_path)
    declared = parse_evidence_declarations(evidence or [])
    traces, disagreements = load_inputs(source)
    if declared:
        traces = with_evidence_source(traces, declared)
        if disagreements is not None:
            disagreements = declare_disagreements(disagreements, declared)
    r_ann = _annotations(retrieval, codebook)
    v_ann = _annotations(reasoning, codebook)
    if strategy is Strategy.CODEBOOK and retrieval is None:
        raise InputError("the codebook strategy needs --retrieval RUN_DIR (judge retrieval)")
    check_output_dir(output)  # before the codebook note: a bad -o is the only line
    note_codebook(codebook_path, codebook)
    items = attribute(
        disagreements if disagreements is not None else traces,
        r_ann,
        codebook,
        strategy=strategy,
        top_k=top_k,
    )
    tables: dict[str, pd.DataFrame] = {
        "attribution": attribution_table(items),
        "attribution_summary": attribution_summary(items),
    }
    if retrieval is not None:
        pp = per_passage_codes(traces, r_ann, codebook, top_k=top_k)
        tables["per_passage_codes"] = pp
        tables["retriever_all_high"] = all_high_rate(pp)
        tables["retrieval_dominant_errors"] = dominant_errors(
            pp, codebook, UnitKind.RETRIEVAL, by="retriever", top=top
        )
    if reasoning is not None:
        pt = per_trace_steps(traces, v_ann, codebook, top_k=top_k)
        tables["per_trace_steps"] = pt
        tables["verifier_all_correct"] = all_correct_rate(pt)
        tables["verification_dominant_errors"] = dominant_errors(
            pt, codebook, UnitKind.VERIFICATION, by="verifier", top=top
        )
    from failcodes.judge.panelrun import read_panel

    for kind_name, run_dir in (("retrieval", retrieval), ("reasoning", reasoning)):
        panel = read_panel(run_dir) if run_dir is not None else None
        if panel is not None:  # inter-judge agreement beside the tables built on its consensus
            tables[f"{kind_name}_panel_agreement"] = pd.DataFrame(
                [r.model_dump() for r in panel.agreement]
            )
    for name, df in tables.items():
        _write_csv(df, output / OUTPUT_FILES.get(name, f"{name}.csv"))
    write_jsonl(output / layout.ATTRIBUTION_ITEMS, items)
    heuristic = heuristic_coded([*r_ann, *v_ann])
    coded_by = Counter(
        f"{a.coder}{' (heuristic baseline)' if a.coder_kind.value == 'heuristic' else ''}"
        for a in [*r_ann, *v_ann]
    )  # a cascade mixes coders: say who coded how many units
    if fmt is OutputFormat.JSON:
        summary = {
            "items": len(items),
            "heuristic_baseline": heuristic,
            "coded_by": dict(coded_by),
            "stages": tables["attribution_summary"].to_dict(orient="records"),
            "retriever_all_high": tables.get("retriever_all_high", pd.DataFrame()).to_dict(
                orient="records"
            ),
            "verifier_all_correct": tables.get("verifier_all_correct", pd.DataFrame()).to_dict(
                orient="records"
            ),
            "output": str(output),
        }
        out.print_json(json.dumps(summary, default=str))
    else:
        label = " (codes: heuristic baseline)" if heuristic else ""
        out.print(_rich(tables["attribution_summary"], f"Attribution{label}"))
        for name in ("retriever_all_high", "verifier_all_correct"):
            if name in tables:
                out.print(_rich(tables[name], name.replace("_", " ") + label))
        out.print(f"{len(items)} items attributed; tables in {output}", highlight=False)
        if len(coded_by) > 1:
            by = ", ".join(f"{coder}: {n}" for coder, n in sorted(coded_by.items()))
            out.print(f"units coded by: {by}", highlight=False)
    if heuristic:
        err.print(HEURISTIC_NOTE, highlight=False)
