"""``attribute`` as a use case: the pipeline stage behind each disagreement (docs/attribution.md).

:class:`AttributeRequest` reads the disagreements (or traces) and the judge runs, attributes
every item, writes the tables under ``output`` and returns them (:class:`AttributeResult`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from failcodes.attribution import Strategy
from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.csvcells import safe_frame
from failcodes.errors import InputError
from failcodes.study import layout

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


@dataclass
class AttributeResult:
    """The attributed items, the tables written, who coded the units."""

    items: list[Any]
    tables: dict[str, pd.DataFrame]
    output: Path
    heuristic: bool
    coded_by: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        out = [f"{len(self.items)} items attributed; tables in {self.output}"]
        if len(self.coded_by) > 1:
            by = ", ".join(f"{coder}: {n}" for coder, n in sorted(self.coded_by.items()))
            out.append(f"units coded by: {by}")
        return out


class AttributeRequest(Request):
    """Attribute each disagreement to retrieval, provided evidence or verification.

    The rule is failcodes' own (docs/attribution.md): closed-book pipelines are never blamed on
    retrieval, nor are pipelines whose evidence came with the item. --evidence overrides the
    traces' own evidence_source.
    """

    command: ClassVar[tuple[str, ...]] = ("attribute",)

    source: Path = option(
        flags=("--from",), help="Traces or disagreements (JSONL): the judge's input."
    )
    codebook: Path | None = option(
        None, help="Codebook file (YAML/JSON; default: the bundled codebook)."
    )
    retrieval: Path | None = option(None, help="Run dir of `judge retrieval`.")
    reasoning: Path | None = option(None, help="Run dir of `judge reasoning`.")
    strategy: Strategy = option(
        Strategy.AUTO, help="auto, codebook or verdict (docs/attribution.md)."
    )
    top_k: int | None = option(
        None,
        help="Only passages ranked <= K (units built from traces or disagreements).",
        ge=1,
    )
    top: int = option(3, help="Dominant subcodes per group.", ge=1)
    output: Path = option(Path("reports") / "attribution", flags=("-o", "--output"))
    evidence: list[str] = option(
        default_factory=list,
        help="Declare the pipeline's evidence source on every trace: retrieved, provided or "
        "none (closed-book); SYSTEM=SOURCE for one system (repeatable). See "
        "docs/attribution.md.",
    )

    def run(self, *, note: Note = ignore_note) -> AttributeResult:
        """Attribute every item, write the tables and the items under ``output``."""
        from failcodes.attribution import (
            attribute,
            attribution_summary,
            attribution_table,
            heuristic_coded,
        )
        from failcodes.commands.inputs import codebook_note, load_codebook, load_inputs
        from failcodes.disagreements import with_evidence_source as declare_disagreements
        from failcodes.fileio import atomic_write_text, check_output_dir, write_jsonl
        from failcodes.traces import parse_evidence_declarations, with_evidence_source

        codebook = load_codebook(self.codebook)
        declared = parse_evidence_declarations(self.evidence)
        traces, disagreements = load_inputs(self.source)
        if declared:
            traces = with_evidence_source(traces, declared)
            if disagreements is not None:
                disagreements = declare_disagreements(disagreements, declared)
        r_ann = _annotations(self.retrieval, codebook)
        v_ann = _annotations(self.reasoning, codebook)
        if self.strategy is Strategy.CODEBOOK and self.retrieval is None:
            raise InputError("the codebook strategy needs --retrieval RUN_DIR (judge retrieval)")
        check_output_dir(self.output)  # before the codebook note: a bad -o is the only line
        said = codebook_note(self.codebook, codebook)
        if said:
            note(said)
        items = attribute(
            disagreements if disagreements is not None else traces,
            r_ann,
            codebook,
            strategy=self.strategy,
            top_k=self.top_k,
        )
        tables = {
            "attribution": attribution_table(items),
            "attribution_summary": attribution_summary(items),
            **self._part_tables(traces, r_ann, v_ann, codebook),
        }
        for name, df in tables.items():
            path = self.output / OUTPUT_FILES.get(name, f"{name}.csv")
            atomic_write_text(path, safe_frame(df, path).to_csv(index=False))
        write_jsonl(self.output / layout.ATTRIBUTION_ITEMS, items)
        heuristic = heuristic_coded([*r_ann, *v_ann])
        coded_by = Counter(
            f"{a.coder}{' (heuristic baseline)' if a.coder_kind.value == 'heuristic' else ''}"
            for a in [*r_ann, *v_ann]
        )  # a cascade mixes coders: say who coded how many units
        if heuristic:
            note(HEURISTIC_NOTE)
        return AttributeResult(items, tables, self.output, heuristic, coded_by)

    def _part_tables(
        self, traces: Any, r_ann: Any, v_ann: Any, codebook: Any
    ) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from failcodes.attribution import (
            all_correct_rate,
            all_high_rate,
            dominant_errors,
            per_passage_codes,
            per_trace_steps,
        )
        from failcodes.judge.panelrun import read_panel
        from failcodes.units import UnitKind

        tables: dict[str, pd.DataFrame] = {}
        if self.retrieval is not None:
            pp = per_passage_codes(traces, r_ann, codebook, top_k=self.top_k)
            tables["per_passage_codes"] = pp
            tables["retriever_all_high"] = all_high_rate(pp)
            tables["retrieval_dominant_errors"] = dominant_errors(
                pp, codebook, UnitKind.RETRIEVAL, by="retriever", top=self.top
            )
        if self.reasoning is not None:
            pt = per_trace_steps(traces, v_ann, codebook, top_k=self.top_k)
            tables["per_trace_steps"] = pt
            tables["verifier_all_correct"] = all_correct_rate(pt)
            tables["verification_dominant_errors"] = dominant_errors(
                pt, codebook, UnitKind.VERIFICATION, by="verifier", top=self.top
            )
        for kind_name, run_dir in (("retrieval", self.retrieval), ("reasoning", self.reasoning)):
            panel = read_panel(run_dir) if run_dir is not None else None
            if panel is not None:  # inter-judge agreement beside the tables on its consensus
                tables[f"{kind_name}_panel_agreement"] = pd.DataFrame(
                    [r.model_dump() for r in panel.agreement]
                )
        return tables


def _annotations(run_dir: Path | None, codebook: Any) -> list[Any]:
    """The run's codes (a panel's consensus), without the rationales and quotes.

    Attribution reads codes only; a judge annotation is mostly its per-dimension rationale
    and quote (a paper-scale study's 240k annotations held whole took gigabytes).
    """
    if run_dir is None:
        return []
    from failcodes.judge.panelrun import iter_run_codes

    return [a.model_copy(update=_WITHOUT_TEXT) for a in iter_run_codes(run_dir, codebook)]


#: What attribution never reads of an annotation.
_WITHOUT_TEXT: dict[str, Any] = {"evidence": {}, "rationale": None, "quote": None}


__all__ = ["HEURISTIC_NOTE", "OUTPUT_FILES", "AttributeRequest", "AttributeResult"]
