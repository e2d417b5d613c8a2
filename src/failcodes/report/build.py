"""Assemble the report: paper tables in every format, figures, and the HTML page.

:class:`ReportInputs` holds whatever a run produced (every part optional); :func:`build_report`
turns it into ``tables/`` (md, tex, html, csv), ``figures/`` (png, pdf) and ``index.html``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from failcodes.annotations import NOT_ASSESSABLE
from failcodes.attribution import dominant_errors
from failcodes.codebook import Codebook
from failcodes.dropped import Dropped, dropped_line
from failcodes.fileio import atomic_write_text, write_jsonl
from failcodes.labelscope import QUESTIONS_COUNTED, coverage_rows
from failcodes.report import figures as figs
from failcodes.report.corrected import ATTRIBUTION_NOTE as CORRECTED_ATTRIBUTION_NOTE
from failcodes.report.corrected import METHOD_NOTE as CORRECTED_NOTE
from failcodes.report.corrected import CorrectedShare, corrected_notes_key
from failcodes.report.html import (
    ReportFigure,
    ReportMeta,
    ReportSection,
    ReportTable,
    report_time,
    write_html,
)
from failcodes.report.render import TableFormat, render_table
from failcodes.report.tables import (
    agreement_coders,
    agreement_labels,
    agreement_table,
    code_shares,
    hidden_error_notes,
    labelled,
    multi_label_caption,
    never_flagged_notes,
    paper_shares,
    per_group,
    pooled_caption,
    prf_table,
    subset_notes,
    unlabelled_claims_note,
    without_claims_notes,
)
from failcodes.tally import REPEAT
from failcodes.unitrepeats import marked as with_repeats
from failcodes.units import Unit, UnitKind

ATTRIBUTION_RULE_NOTE = (
    "Attribution rule: failcodes' own (seed 001 names Figure 1 but states no rule). A "
    "closed-book pipeline (evidence source none) or a post-hoc citation one (post-hoc: the "
    "answer came before its evidence; its citations are never judged as passages) is never "
    "blamed on retrieval, nor is one whose evidence came with the item (provided: insufficient "
    "evidence is stage 'evidence'); "
    "otherwise no usable top-k passage (gold, or all-high) -> retrieval, else verification. "
    "Assumptions: docs/attribution.md."
)
#: What each table counts (its denominator), said in its caption: at sentence level the
#: attribution summary counts sentences, Table 9 their claims and Table 8 the claims' passages,
#: so one data set's three tables have three n's (9 disagreements, 11 claims, 20 passages).
ATTRIBUTION_ROWS = "; one count per disagreement (a labelled sentence, or a claim at claim level)"
ROWS_CAPTION = {
    UnitKind.RETRIEVAL: (
        "; n = distinct (claim, passage) units retrieved for the disagreements' claims (every "
        "claim of a sentence-level disagreement counts, a false alarm's claims that raised no "
        "error too); a unit retrieved for several systems counted once"
    ),
    UnitKind.VERIFICATION: (
        "; n: the disagreements' claims, one per claim and system (every claim of a "
        "sentence-level disagreement counts, a false alarm's claims that raised no error too, "
        "so n can exceed the attribution summary's count; a trace is the verifier's run for "
        "one system: two systems' traces count once each, even alike)"
    ),
}
#: The same at claim level (``[metrics] level = "claim"``): a disagreement is one claim, so
#: no claim counts that raised no error and Table 9's n is the attribution summary's less the
#: uncoded (it said "every claim of a sentence-level disagreement counts ... n can exceed").
ROWS_CAPTION_CLAIMS = {
    UnitKind.RETRIEVAL: (
        "; n = distinct (claim, passage) units retrieved for the disagreements' claims (claim "
        "level: each disagreement is one claim); a unit retrieved for several systems counted "
        "once"
    ),
    UnitKind.VERIFICATION: (
        "; n: the disagreements' claims, one per claim and system (claim level: each "
        "disagreement is one claim, so n is the attribution summary's count less any claim "
        "with no reasoning coded; a trace is the verifier's run for one system: two "
        "systems' traces count once each, even alike)"
    ),
}
#: Table 8's rows when the coded table has no unit ids to tell a shared unit by (by hand).
ROWS_CAPTION_NO_IDS = (
    "; n: the retrieved passages of the disagreements' claims, one per row (the table has no "
    "unit_id column: a passage retrieved for several systems' claims counts once for each)"
)
FREQ_NOTE = (
    "Freq.: the rows of Tables 8-9 coded with the subcode, summed over data sets as those "
    "tables count them (a (claim, passage) unit once per retriever and data set, a trace once "
    "per system)"
)


def freq_note(pooled: Sequence[Sequence[str]] = ()) -> str:
    """:data:`FREQ_NOTE`, naming the data sets Tables 8-9 pool as one (one set of sentences).

    Data sets holding the same labels, a data set per system, are one column per retriever
    (seed 001's Table 8): a unit is counted once over them, not once in each (split: Freq. 10
    = Table 8's r1 n=10, where once per data set would read 4 + 8 = 12).
    """
    if not pooled:
        return FREQ_NOTE
    named = "; ".join(" + ".join(members) for members in pooled)
    return FREQ_NOTE.replace(
        "once per retriever and data set,",
        f"once per retriever and data set, data sets {named} counted as one (they hold the "
        "same labels, a data set per system: Tables 8-9 pool them),",
    )


NOT_ASSESSABLE_NOTE = (
    "not_assessable ({dims}): the coder could not assess this dimension from the unit (e.g. a "
    "passage without source metadata); it is neither high nor low quality, and the "
    "all_high_quality row is over the dimensions that were assessed (docs/attribution.md)."
)

_SUFFIX = {TableFormat.MARKDOWN: "md", TableFormat.LATEX: "tex", TableFormat.CSV: "csv"}


class ReopenUnits(BaseModel):
    """The units of one review file's stale reviews of one kind (a codebook bump)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    review: str = Field(description="The review file, relative to the study (review/NAME.jsonl).")
    kind: UnitKind
    units: list[Unit] = Field(description="The units found among the study's disagreements.")
    missing: list[str] = Field(default_factory=list, description="Unit ids found nowhere.")
    judged: Path | None = Field(default=None, description="The judge run to pre-select.")
    codebook: Path | None = Field(default=None, description="The study's codebook file.")


class ReportInputs(BaseModel):
    """Everything a report can show; absent parts are left out of the report."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    title: str = "failcodes report"
    meta: ReportMeta | None = None
    metrics: list[dict[str, Any]] = Field(default_factory=list)
    verdict_distribution: pd.DataFrame | None = None
    comparisons: pd.DataFrame | None = None
    codebook: Codebook | None = None
    codebook_table: pd.DataFrame | None = None
    per_passage: pd.DataFrame | None = Field(
        default=None, description="failcodes.attribution.per_passage_codes output"
    )
    per_trace: pd.DataFrame | None = Field(
        default=None, description="failcodes.attribution.per_trace_steps output"
    )
    attribution: Mapping[str, int] | None = Field(
        default=None, description="disagreements per attributed stage"
    )
    error_codes: Mapping[str, Mapping[str, int]] = Field(
        default_factory=dict, description="part -> {error subcode: coded rows}"
    )
    attribution_table: pd.DataFrame | None = None
    attribution_caption: str = Field(
        default="",
        description="Added to the attribution captions: the disagreements' error mapping",
    )
    passages_caption: str = Field(
        default="",
        description="Added to Table 8's captions: each claim's top k passages alone, when the "
        "attribution cut them at top_k, and the columns of provided evidence (report.rundir)",
    )
    attribution_levels: set[str] = Field(
        default_factory=set,
        description="The disagreements' levels (sentence, claim): Tables 8-9's captions say "
        "what their n counts at claim level when every data set's are claims",
    )
    attribution_shared: int = Field(
        default=0,
        description="Disagreements whose system and ids are in another data set too (a pilot "
        "inside the full set): the run box, Figure 1 and the summary count each once per set",
    )
    asserting: set[str] = Field(
        default_factory=set,
        description="Systems asserting every claim (no verifier: ``ingest --verdict``), named as "
        "the metrics rows name them: the note on systems never flagged says so of them",
    )
    pooled_datasets: list[list[str]] = Field(
        default_factory=list,
        description="Data sets Tables 8-9 pool as one set of sentences (the same labels, a data "
        "set per system): the codebook's Freq. and Figure 1 count a unit once over each",
    )
    dropped: list[Dropped] = Field(
        default_factory=list,
        description="Rows each data set's ingest left out for want of a verdict (the traces' "
        "footer): said in the Table 5 and coverage captions",
    )
    agreement: pd.DataFrame | None = None
    panel_agreement: pd.DataFrame | None = Field(
        default=None,
        description="Inter-judge agreement of a judge panel (failcodes.panel), per dimension "
        "and per code",
    )
    quote_checks: pd.DataFrame | None = Field(
        default=None,
        description="Per judge: coded dimensions, quoted, and quotes found in the judged text",
    )
    panel_rules: pd.DataFrame | None = Field(
        default=None,
        description="Per panel run: units decided unanimously, by majority, by the primary "
        "judge (a tie), or undecided",
    )
    corrected: dict[UnitKind, list[tuple[str, pd.DataFrame]]] = Field(
        default_factory=dict,
        description="part -> [(caption, table)] of corrected shares (report.corrected), one "
        "per review plan with pulled reviews",
    )
    corrected_shares: list[CorrectedShare] = Field(
        default_factory=list,
        description="Every cell of the corrected tables as numbers (report.corrected), in "
        "their order: the Python API's ReportResult.corrected",
    )
    corrected_attribution: list[tuple[str, pd.DataFrame, pd.DataFrame]] = Field(
        default_factory=list,
        description="[(caption, table, numbers)] of the attribution corrected by human review "
        "(report.corrected.attribution_table / attribution_numbers), one per retrieval plan "
        "with pulled reviews",
    )
    accumulation: Sequence[int] | None = None
    notes: dict[str, list[str]] = Field(default_factory=dict)
    reopen: list[ReopenUnits] = Field(
        default_factory=list,
        description="Units of reviews made under an older codebook that its migration map "
        "cannot carry: written under the report as units files, with the command that "
        "re-opens them for review",
    )


#: What the last build wrote under tables/ and figures/, one relative path a line.
WRITTEN_LIST = "written.txt"


class _Builder:
    def __init__(self, out_dir: Path) -> None:
        self.out = out_dir
        self.sections: list[ReportSection] = []
        self.written: set[Path] = set()
        #: characters of figure labels no installed font has, and the figures holding them
        self.glyphs: dict[str, None] = {}
        self.glyph_figures: list[str] = []

    def remove_leftovers(self) -> list[Path]:
        """Remove tables and figures the previous build wrote that this one did not.

        A report rebuilt into the same folder left them beside the new page: e.g. the
        corrected tables of a review plan that has gone stale since, old numbers a paper's
        LaTeX input of the tables still took. Only files the previous build listed in
        ``written.txt`` go (a file of the user's own in ``tables/`` or ``figures/``
        is never touched); this build's list replaces it.
        """
        listing = self.out / WRITTEN_LIST
        mine = {p.relative_to(self.out).as_posix() for p in self.written}
        earlier: set[str] = set()
        if listing.is_file():
            try:
                earlier = set(listing.read_text("utf-8").splitlines())
            except (OSError, UnicodeDecodeError):
                earlier = set()  # an unreadable list removes nothing
        removed = []
        for rel in sorted(earlier - mine):
            path = self.out / rel
            parts = Path(rel).parts
            if len(parts) == 2 and parts[0] in ("tables", "figures") and path.is_file():
                path.unlink()
                removed.append(path)
        if self.written:
            atomic_write_text(listing, "".join(f"{rel}\n" for rel in sorted(mine)))
        return removed

    def table(
        self,
        stem: str,
        frame: pd.DataFrame,
        caption: str,
        *,
        csv: pd.DataFrame | None = None,
        key: Sequence[str] = (),
        keys: int = 1,
    ) -> ReportTable:
        """Write the table in every format; return it for the page.

        ``csv``: the machine-readable form, when it differs (ids, unformatted numbers);
        ``key``: lines under the table (what its labels stand for); ``keys``: the leading
        columns a LaTeX table split to fit the page repeats.
        """
        files = {}
        for fmt, suffix in _SUFFIX.items():
            rel = f"tables/{stem}.{suffix}"
            path = self.out / rel
            data = csv if csv is not None and fmt is TableFormat.CSV else frame
            text = render_table(
                data, fmt, caption=caption, label=f"tab:{stem}", path=path, key=key, keys=keys
            )
            atomic_write_text(path, text)
            self.written.add(path)
            files[suffix] = rel
        html = render_table(frame, "html", caption=caption, key=key, keys=keys)
        return ReportTable(caption=caption, html=html, files=files)

    def figure(self, stem: str, fig: Any, caption: str, *, mark: str = "") -> ReportFigure:
        """Save ``fig`` as ``stem``; ``mark``: a line written on the figure itself.

        A figure drawn from the offline judge's codes carries the words in its file (PNG,
        PDF): its caption said "offline heuristic baseline" in the page alone, so the figure
        pasted into a paper showed the baseline's codes as findings.
        """
        if mark:
            fig.suptitle(mark, fontsize=6.5, style="italic", color="#7a5c00")
        paths, missing = figs.save_figure_glyphs(fig, self.out / "figures", stem)
        self.written.update(paths.values())
        if missing:  # CJK system names: empty boxes in the figure, said beside it
            self.glyphs.update(dict.fromkeys(missing))
            self.glyph_figures.append(stem)
            caption = f"{caption} ({figs.missing_glyphs_note(missing, [stem])})"
        return ReportFigure(
            caption=caption,
            png=paths["png"].read_bytes(),
            files={k: f"figures/{p.name}" for k, p in paths.items()},
        )


def shared_note(shared: int, what: str) -> str:
    """``; N disagreement(s) ... : WHAT each once per data set`` (empty when none is shared).

    Said wherever disagreements are summed over data sets: the run box's Attribution line,
    Figure 1 and the attribution summary (a pilot inside the full set: 3 rows, 2 distinct).
    """
    if not shared:
        return ""
    return (
        f"; {shared} disagreement(s) have the system, ids and text of one in another data set "
        f"(overlapping data sets?): {what} each once per data set"
    )


def _dropped_note(dropped: list[Dropped], what: str) -> str:
    """``; N row(s) without a verdict dropped at ingest (...): WHAT cover M of N+M rows``."""
    line = dropped_line(dropped, what)
    return f"; {line}" if line else ""


def _reopen(out: Path, reopen: ReopenUnits) -> str:
    """Write the stale reviews' units under the report; return the note with the command.

    The command pushes them to Label Studio for review under the current codebook.
    """
    from failcodes.study.layout import judge_kind

    kind = judge_kind(reopen.kind)
    stem = Path(reopen.review).stem
    if not reopen.units:  # nothing to push: say where they are not
        return (
            f"{reopen.review}: its {len(reopen.missing)} stale {kind} review(s) are of units "
            "in no disagreements file of the study (reviews of units it does not judge?): "
            "nothing to re-open"
        )
    units = out / "reopen" / f"{stem}.{kind}.units.jsonl"
    write_jsonl(units, reopen.units)
    argv = ["failcodes", "labelstudio", "push", str(units), "-p", reopen.kind.value]
    if reopen.codebook is not None:
        argv += ["--codebook", str(reopen.codebook)]
    if reopen.judged is not None:
        argv += ["--judged", str(reopen.judged)]
    argv += ["--project", f"{stem} {kind} (re-review)"]
    missing = (
        f" ({len(reopen.missing)} unit(s) found in no disagreements file are not in it)"
        if reopen.missing
        else ""
    )
    return (
        f"{reopen.review}: re-open its {len(reopen.units)} stale {kind} review(s) for review "
        f"under the current codebook with: {shlex.join(argv)}{missing}; then pull them into "
        "review/ and build the report again"
    )


#: Beside the quote checks of a run of the offline judge: its quotes are cut from the text.
OFFLINE_QUOTES = (
    "; the offline heuristic baseline quotes a span cut from the judged text, so its quotes "
    "are found by construction (1.000 checks nothing of it)"
)


#: The agreement rows of human review against the judge (``source``): agreement with the
#: judge, tagged as the judge's tables are when it is the offline heuristic baseline.
JUDGE_SOURCE = "human review vs judge"


#: The codebook table's legend when a per-code agreement's interval carries a warning (its
#: cell ends in " *"; the agreement table's row gives the warning).
CODE_AGREEMENT_MARK = (
    "Agreement: Cohen's kappa of the human review vs the judge on each code [95% interval]; "
    "* the interval may not cover (few reviewed units, or an estimate at its bound): the "
    "agreement table gives each reason."
)


def _review_named(caption: str, agreement: pd.DataFrame | None) -> str:
    """``caption`` naming the one reviewer vs judge pair its Agreement column compares.

    The agreement table's caption names them; the codebook table's said "the human review"
    alone, so the demo's SIMULATED reviewer, who copies the judge's codes outside evidence
    polarity, read as a person agreeing with the judge at kappa 1.00 on exact_entity.
    """
    if agreement is None or agreement.empty or "source" not in agreement:
        return caption
    coders = agreement_coders(agreement[agreement["source"].astype(str) == JUDGE_SOURCE])
    if coders is None:
        return caption
    said = "Cohen's kappa of the human review vs the judge"
    return caption.replace(said, f"Cohen's kappa of the human review vs the judge ({coders})")


def level_words(levels: Iterable[Any]) -> str:
    """Confidence levels as a caption writes them (``0.95`` -> ``95%``; 95% when none given)."""
    known = sorted({float(c) for c in levels if c is not None and c == c})  # c == c: not NaN
    return "/".join(f"{100 * c:g}%" for c in known) or "95%"


def _agreement_level(rows: pd.DataFrame) -> str:
    """The level of the agreement rows' intervals (``agree --confidence``).

    Rows without an interval do not count: an undefined statistic's row keeps the default.
    """
    if "confidence" not in rows or "ci_low" not in rows:
        return level_words(())
    return level_words(rows.loc[rows["ci_low"].notna(), "confidence"])


def ci_words(rows: Sequence[Mapping[str, Any]]) -> str:
    """The metrics rows' intervals in a caption's words ('' when none has one).

    Their level is the rows' ``ci_confidence`` (``metrics --confidence 0.5`` was captioned
    95%); rows written before it was recorded say so.
    """
    bootstrapped = [r for r in rows if any(k.endswith("_ci_defined_resamples") for k in r)]
    levels = {r.get("ci_confidence") for r in bootstrapped}
    if not levels:
        return ""
    if None in levels:
        return (
            "cluster-bootstrap CIs (their level not recorded: 95% unless metrics ran with "
            "--confidence)"
        )
    return f"{level_words(levels)} cluster-bootstrap CIs" + (
        " (levels differ by data set: each metrics/*.json gives its ci_confidence)"
        if len(levels) > 1
        else ""
    )


def build_report(inputs: ReportInputs, out_dir: str | Path) -> Path:
    """Write tables, figures and ``index.html`` under ``out_dir``; return the page's path."""
    created = report_time()  # a SOURCE_DATE_EPOCH that is no time: refused before writing
    out = Path(out_dir)
    b = _Builder(out)
    heuristic = bool(inputs.meta and inputs.meta.judge_is_heuristic)
    mixed = bool(inputs.meta and inputs.meta.judge_with_models)
    tag = (
        ""
        if not heuristic
        else " (includes the offline heuristic baseline)"
        if mixed
        else " (offline heuristic baseline)"
    )
    # after a caption whose numbers rest on the judge's codes beside a human's (the tag's words)
    judge_said = f"; judge: {tag.strip(' ()')}" if tag else ""
    # on the figures drawn from the judge's codes, in their files (a paper takes the file)
    mark = (
        ""
        if not heuristic
        else "judge's codes: includes the offline heuristic baseline (not a language model)"
        if mixed
        else "judge's codes: the offline heuristic baseline (not a language model)"
    )

    if inputs.metrics:
        sec = ReportSection(id="metrics", title="Detection of clinician-labelled errors")
        for level in ("sentence", "claim"):
            table = prf_table(inputs.metrics, level=level)
            if not table.empty:
                ci = ci_words([m for m in inputs.metrics if m.get("level") == level])
                sec.tables.append(
                    b.table(
                        f"prf_{level}",
                        table,
                        f"P / R / F1 (%){f' with {ci}' if ci else ''}, {level} level"
                        + ("" if ci else "; no intervals (metrics ran without --bootstrap)"),
                    )
                )
        rows = [m for m in inputs.metrics if m.get("level") == "sentence"]
        if rows:
            mapping = rows[0].get("mapping")
            picked = [m for m in rows if m.get("mapping") == mapping]
            empty = (
                "; no system has a non-zero recall or F1 under this mapping: every bar is 0 or "
                "undefined (see the table)"
                if figs.no_nonzero_bar(picked, ("recall", "f1"))
                else ""
            )
            ci = ci_words(picked)
            sec.figures.append(
                b.figure(
                    "recall_f1",
                    figs.metric_bars(picked, ci=ci.replace("cluster-bootstrap ", "")),
                    f"Recall and F1 by system (mapping: {mapping}), {ci or 'no intervals'}{empty}",
                )
            )
        covered = coverage_rows(inputs.metrics)
        if covered:
            sec.tables.append(
                b.table(
                    "coverage",
                    pd.DataFrame(covered),
                    "Coverage: labelled questions and sentences per system, and how many "
                    f"were counted (sentence level; {QUESTIONS_COUNTED})"
                    + _dropped_note(inputs.dropped, "the metrics"),
                )
            )
        sec.notes.extend(without_claims_notes(inputs.metrics))
        sec.notes.extend(subset_notes(inputs.metrics))
        sec.notes.extend(hidden_error_notes(inputs.metrics))
        sec.notes.extend(never_flagged_notes(inputs.metrics, inputs.asserting))
        self_notes = inputs.notes.get("metrics", [])
        sec.notes.extend(self_notes)
        b.sections.append(sec)

    if inputs.comparisons is not None and not inputs.comparisons.empty:
        sec = ReportSection(
            id="comparisons", title="Comparing systems (Cochran's Q, Holm-adjusted pairwise tests)"
        )
        sec.tables.append(
            b.table(
                "comparisons",
                inputs.comparisons,
                "System comparisons; p (Holm): adjusted within one test's pairs of systems "
                "(per data set and mapping), not across tests, mappings or data sets",
            )
        )
        sec.notes.extend(inputs.notes.get("comparisons", []))
        b.sections.append(sec)

    if inputs.verdict_distribution is not None and not inputs.verdict_distribution.empty:
        sec = ReportSection(id="verdicts", title="Verdict distribution by system (Table 5 shape)")
        sec.tables.append(
            b.table(
                "verdicts",
                inputs.verdict_distribution,
                "Share of claims per verdict"
                + unlabelled_claims_note(inputs.metrics)
                + _dropped_note(inputs.dropped, "these shares"),
            )
        )
        b.sections.append(sec)

    if inputs.attribution or inputs.corrected_attribution:
        sec = ReportSection(id="attribution", title=f"Attribution of disagreements{tag}")
        if inputs.attribution:
            sec.figures.append(
                b.figure(
                    "attribution",
                    figs.attribution_flow(
                        inputs.attribution, inputs.error_codes, inputs.pooled_datasets
                    ),
                    f"Disagreements -> pipeline stage -> dominant subcodes{tag}"
                    f"{inputs.attribution_caption}"
                    f"{shared_note(inputs.attribution_shared, 'the figure counts')}",
                    mark=mark,
                )
            )
        sec.notes.append(ATTRIBUTION_RULE_NOTE)
        if inputs.attribution_table is not None:
            sec.tables.append(
                b.table(
                    "attribution",
                    inputs.attribution_table,
                    f"Attribution summary{tag}{ATTRIBUTION_ROWS}{inputs.attribution_caption}"
                    f"{shared_note(inputs.attribution_shared, 'the all row counts')}",
                )
            )
        for i, (corr_caption, corr_table, numbers) in enumerate(inputs.corrected_attribution):
            suffix = "" if i == 0 else f"_{i + 1}"
            sec.tables.append(
                b.table(f"attribution_corrected{suffix}", corr_table, corr_caption + judge_said)
            )
            if not numbers.empty:
                sec.figures.append(
                    b.figure(
                        f"attribution_corrected{suffix}",
                        figs.corrected_shares(numbers),
                        f"{corr_caption.split(':')[0]}: judge-only, human-only and corrected "
                        f"shares of the disagreements per system and stage, 95% CIs{judge_said}",
                        mark=mark,
                    )
                )
        if inputs.corrected_attribution:
            sec.notes.append(CORRECTED_ATTRIBUTION_NOTE)
        sec.notes.extend(inputs.notes.get("attribution", []))
        b.sections.append(sec)

    if inputs.codebook is not None:
        for kind, coded, by, flag, stem, title, caption, draw, drawn in (
            (
                UnitKind.RETRIEVAL,
                inputs.per_passage,
                "retriever",
                "all_high",
                "retrieval_quality",
                "Retrieval quality by retriever (Table 8 shape)",
                "Evidence-quality subcodes (%) per retriever",
                figs.stacked_subcodes,
                "Subcode shares per retriever",
            ),
            (
                UnitKind.VERIFICATION,
                inputs.per_trace,
                "verifier",
                "all_correct",
                "reasoning_steps",
                "Reasoning by verifier (Table 9 shape)",
                "Reasoning-step subcodes (%) per verifier",
                figs.step_error_heatmap,
                "Reasoning-step errors per verifier (%)",
            ),
        ):
            if coded is None or coded.empty:
                continue
            part = inputs.codebook.part(kind)
            differ = None
            if kind is UnitKind.RETRIEVAL and REPEAT not in coded:  # a table from the API
                codes = ["status", flag, *(d.id for d in part.dimensions if d.id in coded)]
                coded, seen = with_repeats(coded, by, codes)
                differ = seen.note("the per-passage table")
            rows_caption = (
                ROWS_CAPTION_NO_IDS
                if kind is UnitKind.RETRIEVAL and REPEAT not in coded
                else ROWS_CAPTION_CLAIMS[kind]
                if inputs.attribution_levels == {"claim"}
                else ROWS_CAPTION[kind]
            )
            # the disagreements' mapping (the P/R/F1 tables show every [metrics] mapping) and,
            # Table 8, the passages cut at top_k: both are what n counts
            rows_caption += (
                inputs.passages_caption if kind is UnitKind.RETRIEVAL else ""
            ) + inputs.attribution_caption
            groups = sorted(map(str, coded[by].unique()))
            shares = code_shares(coded, part, by=by, flag=flag, groups=groups)
            sec = ReportSection(id=stem, title=f"{title}{tag}")
            corrected = inputs.corrected.get(kind, [])
            plan_notes = inputs.notes.get(corrected_notes_key(kind), [])
            state = (
                ""
                if corrected
                else " (judge-coded, uncorrected: review plan stale, see the note)"
                if any("is stale" in n for n in plan_notes)
                else " (judge-coded, uncorrected: no human review plan)"
            )
            shown, key = paper_shares(shares, part, groups)
            sec.tables.append(
                b.table(
                    stem,
                    shown,
                    f"{per_group(caption, coded, by)}{tag}{state}{rows_caption}"
                    f"{multi_label_caption(part)}"
                    f"{pooled_caption(coded, by)}",
                    csv=shares,
                    key=key,
                    keys=2,
                )
            )
            for i, (corr_caption, corr_table) in enumerate(corrected):
                suffix = "" if i == 0 else f"_{i + 1}"
                corr_shown, corr_key = labelled(corr_table, part)
                sec.tables.append(
                    b.table(
                        f"{stem}_corrected{suffix}",
                        corr_shown,
                        corr_caption + judge_said,
                        csv=corr_table,
                        key=corr_key,
                        keys=3,
                    )
                )
            if corrected:
                sec.notes.append(CORRECTED_NOTE)
            sec.notes.extend(plan_notes)
            sec.notes.extend([differ] if differ else [])
            sec.notes.extend(inputs.notes.get(stem, []))  # systems with no column (closed-book)
            unassessed = shares[shares["code"] == NOT_ASSESSABLE]["dimension"].tolist()
            if unassessed:
                sec.notes.append(NOT_ASSESSABLE_NOTE.format(dims=", ".join(unassessed)))
            dominant = dominant_errors(coded, inputs.codebook, kind, by=by)
            dom_shown, dom_key = (
                labelled(dominant, part)
                if not dominant.empty
                else (dominant.drop(columns=["label"], errors="ignore"), [])
            )
            # an empty table under a caption that said nothing of it read as a failed build
            none = (
                ""
                if not dominant.empty
                else "; none: the judge coded no unit with an error subcode"
            )
            sec.tables.append(
                b.table(
                    f"{stem}_dominant",
                    dom_shown,
                    f"{per_group(f'Dominant error subcodes per {by}', coded, by)}{tag}"
                    f"{rows_caption}{none}",
                    csv=dominant,
                    key=dom_key,
                )
            )
            sec.figures.append(
                b.figure(
                    stem,
                    draw(shares, part, groups),
                    f"{per_group(drawn, coded, by)}{tag}",
                    mark=mark,
                )
            )
            b.sections.append(sec)

    if inputs.agreement is not None and not inputs.agreement.empty:
        sec = ReportSection(id="agreement", title="Agreement")
        long = inputs.agreement
        sources = long["source"] if "source" in long else pd.Series(["agreement"] * len(long))
        # one table and one figure per source: a figure of every source named two sources'
        # rows alike, and human vs judge rows are agreement with the judge (its tag)
        for i, source in enumerate(dict.fromkeys(sources.astype(str))):
            part = long[sources.astype(str).to_numpy() == source]
            coders = agreement_coders(part)
            level = _agreement_level(part)
            stem = "agreement" if i == 0 else f"agreement_{i + 1}"
            named = f"Agreement per subject, {source}" + (f" ({coders})" if coders else "")
            judge = judge_said if source == JUDGE_SOURCE else ""
            sec.tables.append(
                b.table(
                    stem,
                    agreement_table(part.drop(columns=["source", "confidence"], errors="ignore")),
                    f"{named}: value [{level} CI] per statistic; n: units, raters: coders{judge}",
                    csv=part,
                )
            )
            plot = part.dropna(subset=["value"]) if "value" in part else None
            if plot is None or plot.empty:
                continue
            sec.figures.append(
                b.figure(
                    stem,
                    figs.interval_bars(
                        agreement_labels(plot),
                        list(plot["value"]),
                        list(plot.get("ci_low", plot["value"])),
                        list(plot.get("ci_high", plot["value"])),
                        title=f"Agreement with {level} CIs",
                        xlabel="value",
                    ),
                    f"{named}: value per subject and statistic, {level} CIs (the table's "
                    f"notes give each interval's warnings){judge}",
                )
            )
        sec.notes.extend(inputs.notes.get("agreement", []))
        b.sections.append(sec)

    if inputs.panel_agreement is not None or inputs.quote_checks is not None:
        sec = ReportSection(id="judges", title="Judges: panel agreement and quoted evidence")
        if inputs.panel_rules is not None and not inputs.panel_rules.empty:
            sec.tables.append(
                b.table(
                    "panel_rules",
                    inputs.panel_rules,
                    "How the judge panel's consensus was decided, in units (a unit counts "
                    "under its weakest dimension): every member agreed; more than half agreed; "
                    "a tie decided by the primary judge's code (the first --judge; ties are "
                    "listed first for review); undecided (a tie the primary did not break: "
                    "left out of the tables); on a doubted code: units whose consensus code "
                    "a member that gave it flagged uncertain (Label Studio shows them "
                    "[judge uncertain])",
                )
            )
        if inputs.panel_agreement is not None and not inputs.panel_agreement.empty:
            sec.tables.append(
                b.table(
                    "panel_agreement",
                    inputs.panel_agreement,
                    "Inter-judge agreement of the judge panel per dimension (code: -) and per "
                    "code (binary), Fleiss' kappa / Krippendorff's alpha / Gwet's AC1; compare "
                    "with human vs judge agreement above",
                )
            )
        if inputs.quote_checks is not None and not inputs.quote_checks.empty:
            sec.tables.append(
                b.table(
                    "quote_checks",
                    inputs.quote_checks,
                    "Per-dimension quotes per judge: share of coded dimensions whose quote was "
                    "found in the judged text (passage; reasoning and passages for steps)"
                    + (OFFLINE_QUOTES if heuristic else ""),
                )
            )
        b.sections.append(sec)

    if inputs.notes.get("saturation") or inputs.accumulation:
        sec = ReportSection(id="saturation", title=f"Codebook saturation{tag}")
        sec.notes.extend(inputs.notes.get("saturation", []))
        if inputs.accumulation:
            sec.figures.append(
                b.figure(
                    "saturation",
                    figs.accumulation_curve(list(inputs.accumulation)),
                    "Accepted new patterns per round and cumulative",
                )
            )
        b.sections.append(sec)

    if b.glyphs:  # `failcodes report` says it on stderr in one line
        inputs.notes["figures"] = [figs.missing_glyphs_note(list(b.glyphs), b.glyph_figures)]
    reviews = [*inputs.notes.get("reviews", []), *(_reopen(out, r) for r in inputs.reopen)]
    if reviews:
        inputs.notes["reviews"] = reviews  # `failcodes report` says them on stderr too
        b.sections.append(
            ReportSection(
                id="reviews",
                title="Reviews made under an older codebook, and repeated reviews",
                notes=reviews,
            )
        )

    if inputs.codebook_table is not None:
        sec = ReportSection(id="codebook", title="Codebook")
        agreement = inputs.codebook_table.get("Agreement", pd.Series(dtype=object))
        marked = agreement.astype(str).str.endswith(" *").any()
        caption = f"Codebook. {CODE_AGREEMENT_MARK}" if marked else "Codebook"
        caption = _review_named(caption, inputs.agreement)
        if "Freq." in inputs.codebook_table:  # rows, not units (5 for 2 units shared 3 ways)
            caption += f"{'' if marked else '.'} {freq_note(inputs.pooled_datasets)}"
        judged = [c for c in ("Freq.", "Agreement") if c in inputs.codebook_table]
        if tag and judged:  # the judge's codes, as Tables 8-9 are tagged
            caption += f"; {' and '.join(judged)} from the judge's codes{tag}"
        sec.tables.append(b.table("codebook", inputs.codebook_table, caption))
        b.sections.append(sec)

    meta = inputs.meta or ReportMeta(title=inputs.title, created=created)
    page = write_html(meta, b.sections, out)
    b.remove_leftovers()
    return page
