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
        from failcodes.attribution import attribute_item, attribution_table, stage_counts
        from failcodes.commands.inputs import codebook_note, load_codebook, load_item_claims
        from failcodes.fileio import atomic_write_text, check_output_dir, write_jsonl
        from failcodes.traces import parse_evidence_declarations
        from failcodes.units import UnitKind

        codebook = load_codebook(self.codebook)
        declared = parse_evidence_declarations(self.evidence)
        to_attribute, claims = load_item_claims(self.source, declared, top_k=self.top_k)
        r_codes = _codes(self.retrieval, codebook, UnitKind.RETRIEVAL)
        v_codes = _codes(self.reasoning, codebook, UnitKind.VERIFICATION)
        if self.strategy is Strategy.CODEBOOK and self.retrieval is None:
            raise InputError("the codebook strategy needs --retrieval RUN_DIR (judge retrieval)")
        check_output_dir(self.output)  # before the codebook note: a bad -o is the only line
        said = codebook_note(self.codebook, codebook)
        if said:
            note(said)
        r_codes.check()
        items = [
            attribute_item(i, r_codes, strategy=self.strategy, top_k=self.top_k)
            for i in to_attribute
        ]
        del to_attribute
        table = attribution_table(items)
        tables = {
            "attribution": table,
            "attribution_summary": stage_counts(table),
            **self._part_tables(claims, r_codes, v_codes, codebook),
        }
        for name, df in tables.items():
            path = self.output / OUTPUT_FILES.get(name, f"{name}.csv")
            atomic_write_text(path, safe_frame(df, path).to_csv(index=False))
        write_jsonl(self.output / layout.ATTRIBUTION_ITEMS, items)
        heuristic = r_codes.heuristic() or v_codes.heuristic()
        coded_by: Counter[str] = Counter()
        for codes in (r_codes, v_codes):  # a cascade mixes coders: say who coded how many units
            for (coder, kind), n in codes.coders.items():
                coded_by[f"{coder}{' (heuristic baseline)' if kind == 'heuristic' else ''}"] += n
        if heuristic:
            note(HEURISTIC_NOTE)
        return AttributeResult(items, tables, self.output, heuristic, coded_by)

    def _part_tables(
        self, claims: Any, r_codes: Any, v_codes: Any, codebook: Any
    ) -> dict[str, pd.DataFrame]:
        import pandas as pd

        from failcodes.attribution import (
            all_correct_rate,
            all_high_rate,
            dominant_errors,
            passage_table,
            step_table,
        )
        from failcodes.judge.panelrun import read_panel
        from failcodes.units import UnitKind

        tables: dict[str, pd.DataFrame] = {}
        if self.retrieval is not None:
            pp = passage_table(claims, r_codes)
            tables["per_passage_codes"] = pp
            tables["retriever_all_high"] = all_high_rate(pp)
            tables["retrieval_dominant_errors"] = dominant_errors(
                pp, codebook, UnitKind.RETRIEVAL, by="retriever", top=self.top
            )
        if self.reasoning is not None:
            v_codes.check()
            pt = step_table(claims, v_codes)
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


def _codes(run_dir: Path | None, codebook: Any, kind: Any) -> Any:
    """The run's codes (a panel's consensus) of ``kind`` by unit id, slim (CodeIndex).

    Attribution reads a unit's status, coder and codes only; a judge annotation is mostly its
    per-dimension rationale and quote (a paper-scale study's 240k annotations held whole took
    gigabytes, and ~4 KB each even without their text). Each annotation is read (and
    checked) one at a time and only its small shared code record kept.
    """
    from failcodes.attribution import CodeIndex

    codes = CodeIndex(codebook, kind)
    if run_dir is not None:
        from failcodes.judge.panelrun import iter_run_codes

        for ann in iter_run_codes(run_dir, codebook):
            codes.add(ann)
    return codes


__all__ = ["HEURISTIC_NOTE", "OUTPUT_FILES", "AttributeRequest", "AttributeResult"]
