"""Paper-ready report tables and figures (issue 28).

Notes as footnotes, one row per subject for agreement, labels with their ids in a key, n per
column, Table 9's "all correct" row, LaTeX tables that fit the page (compiled by pdflatex),
the judge's endpoint in the run box, and a figure with nothing to draw that says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from failcodes.codebook import UnitKind
from failcodes.report import figures as figs
from failcodes.report.build import ReportInputs, build_report
from failcodes.report.html import ReportMeta
from failcodes.report.render import TEXTWIDTH_PT, latex_layout, render_table, text_pt
from failcodes.report.rundir import load_run_dir
from failcodes.report.tables import agreement_table, code_shares, paper_shares
from tests.judge_helpers import make_codebook
from tests.latex import compile_table

CB = make_codebook()


def test_notes_become_footnotes_one_per_text() -> None:
    frame = pd.DataFrame(
        {
            "system": ["a", "b", "c"],
            "value": [0.5, 0.25, None],
            "note": ["few units", "few units", ""],
            "warning": [None, "zero width", None],
        }
    )
    md = render_table(frame, "md")
    # the two rows sharing a text share its marker; a row without a note has none
    assert md.splitlines()[2:5] == [
        "| a<sup>a</sup> | 0.500 |",
        "| b<sup>a</sup><sup>b</sup> | 0.250 |",
        "| c | – |",
    ]
    assert "<sup>a</sup> few units" in md and "<sup>b</sup> warning: zero width" in md
    assert "note" not in md.splitlines()[0]  # no note column
    html = render_table(frame, "html")
    assert '<td class="fn" colspan="2"><sup>a</sup> few units</td>' in html
    tex = render_table(frame, "latex")
    assert r"a\textsuperscript{a} & 0.500 \\" in tex
    assert r"\textsuperscript{b}~warning: zero width\par" in tex
    # CSV is for machines: every column as it was
    assert render_table(frame, "csv").splitlines()[0] == "system,value,note,warning"


def test_agreement_is_one_row_per_subject_with_statistics_as_columns() -> None:
    long = pd.DataFrame(
        [
            ("scope", "cohen", "nominal", "none", 0.61234, 0.5, 0.7, 120, 2, None, None),
            ("scope", "cohen", "ordinal", "quadratic", 0.8, 0.75, 0.85, 120, 2, None, None),
            ("scope", "krippendorff", "nominal", "none", None, None, None, 120, 2,
             "all pairable values are identical", None),
            ("polarity", "cohen", "nominal", "none", 0.2, -0.1, 0.5, 30, 2, None, "only 30 units"),
        ],
        columns=["subject", "statistic", "level", "weights", "value", "ci_low", "ci_high",
                 "n_units", "n_raters", "undefined_reason", "warning"],
    )  # fmt: skip
    wide = agreement_table(long)
    assert list(wide.columns) == [
        "subject", "n", "raters", "cohen", "cohen (quadratic)", "krippendorff", "note",
    ]  # fmt: skip
    rows = wide.set_index("subject")
    assert rows.loc["scope", "cohen"] == "0.612 [0.500, 0.700]"
    assert rows.loc["scope", "cohen (quadratic)"] == "0.800 [0.750, 0.850]"
    assert rows.loc["scope", "krippendorff"] == "–"  # undefined, and why in the note
    assert rows.loc["scope", "note"] == "krippendorff: all pairable values are identical"
    assert (rows.loc["polarity", "n"], rows.loc["polarity", "krippendorff"]) == ("30", "")
    assert rows.loc["polarity", "note"] == "cohen: only 30 units"


def _coded(flag: str, by: str) -> pd.DataFrame:
    # three rows of group A (two coded all-high / all-correct), one of B
    part = CB.part(UnitKind.VERIFICATION if flag == "all_correct" else UnitKind.RETRIEVAL)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    low = {**high, part.dimensions[0].id: part.dimensions[0].subcodes[1].id}
    rows = [
        {by: "A", "status": "scored", flag: True, **high},
        {by: "A", "status": "scored", flag: True, **high},
        {by: "A", "status": "scored", flag: False, **low},
        {by: "B", "status": "scored", flag: False, **low},
    ]
    return pd.DataFrame(rows)


def test_table_9_summary_row_says_all_correct_and_columns_carry_n() -> None:
    part = CB.part(UnitKind.VERIFICATION)
    shares = code_shares(_coded("all_correct", "verifier"), part, by="verifier", flag="all_correct")
    summary = shares.iloc[-1]
    assert (summary["code"], summary["label"]) == ("all_correct", "All steps correct")
    assert (summary["A"], summary["B"]) == (pytest.approx(2 / 3), 0.0)  # 2 of 3, 0 of 1
    shown, key = paper_shares(shares, part, ["A", "B"])
    assert list(shown.columns) == ["dimension", "code", "A (n=3)", "B (n=1)"]
    assert list(shown.iloc[-1]) == ["", "All steps correct", "66.7", "0.0"]
    first = part.dimensions[0]
    # labels in the table, their ids in the key
    assert shown.iloc[0]["dimension"] == first.label
    assert key[0] == f"{first.label} ({first.id}): " + "; ".join(
        f"{s.label} = {s.id}" for s in first.subcodes
    )
    # Table 8 keeps its name for the same row
    retrieval = CB.part(UnitKind.RETRIEVAL)
    t8 = code_shares(_coded("all_high", "retriever"), retrieval, by="retriever", flag="all_high")
    assert t8.iloc[-1]["code"] == "all_high_quality"


def test_wide_latex_tables_are_split_to_fit_the_page(tmp_path: Path) -> None:
    # 3 naming columns and 9 value columns of "12.3 [45.6, 78.9]": far wider than a page
    frame = pd.DataFrame(
        {
            "dimension": ["Evidence polarity", "Scope"],
            "code": ["All assessable dimensions high quality", "Broader scope"],
            "retriever": ["ragchecker-example/ragchecker-example", "bm25_medcorp"],
            **{f"estimate {i}": ["12.3 [45.6, 78.9]", "1.0 [0.0, 9.9]"] for i in range(9)},
            "note": ["coverage not assured here", ""],
        }
    )
    tex = render_table(frame, "latex", caption="Corrected", label="tab:c", keys=3)
    parts = tex.count(r"\begin{tabular}")
    assert parts >= 2 and tex.count(r"\begin{table}") == parts
    assert "(part 1 of " in tex and r"\label{tab:c-1}" in tex
    # every part repeats the three naming columns, and every value column is in one part
    heads = [ln for ln in tex.splitlines() if ln.startswith("dimension & code & retriever")]
    assert len(heads) == parts
    assert sum(ln.count("estimate") for ln in heads) == 9
    # the footnote comes once, under the last part
    assert tex.count("coverage not assured here") == 1
    path = tmp_path / "wide.tex"
    path.write_text(tex, encoding="utf-8")
    assert compile_table(path, tmp_path / "tex") == []  # no Overfull \hbox: it fits


def test_layout_keeps_each_group_within_the_page_estimate() -> None:
    columns = ["subject", *(f"s{i}" for i in range(10))]
    rows = [["entity_match", *("0.500 [0.446, 0.557]",) * 10]]
    for picked, spec in latex_layout(columns, rows, 1):
        assert picked[0] == 0
        widths = []
        for j, s in zip(picked, _specs(spec), strict=True):
            natural = max(text_pt(columns[j]), text_pt(rows[0][j]))
            widths.append(float(s[2:-3]) if s.startswith("p{") else natural)
        assert sum(widths) + 12 * len(picked) <= TEXTWIDTH_PT


def _specs(spec: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(spec):
        if spec[i] == "p":
            end = spec.index("}", i)
            out.append(spec[i : end + 1])
            i = end + 1
        else:
            out.append(spec[i])
            i += 1
    return out


def test_a_figure_without_a_non_zero_bar_says_so(tmp_path: Path) -> None:
    rows = [
        {"system": "a", "level": "sentence", "mapping": "refuted", "recall": 0.0, "f1": None},
        {"system": "b", "level": "sentence", "mapping": "refuted", "recall": 0.0, "f1": 0.0},
    ]
    fig = figs.metric_bars(rows)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "no non-zero recall or f1: every bar is 0 or undefined" in texts
    assert texts.count("0") == 2  # each system's place says 0 (a: recall 0, F1 undefined)
    inputs = ReportInputs(meta=ReportMeta(title="T", created="2026-12-01"), metrics=rows)
    page = build_report(inputs, tmp_path).read_text()
    assert "no system has a non-zero recall or F1 under this mapping" in page


def test_the_run_box_names_where_the_judge_was_called(tmp_path: Path) -> None:
    run = tmp_path / "judge" / "d" / "retrieval"
    run.mkdir(parents=True)
    (run / "annotations.jsonl").write_text("")
    summary = {
        "judge": "openai:gpt-5-mini", "coder_kind": "llm", "kind": "retrieval", "units": 0,
        "already_done": 0, "provider": "openai",
        "base_url": "http://user:secret@127.0.0.1:8000/v1?api_key=k", "journal_cost_usd": 0.0,
    }  # fmt: skip
    (run / "summary.json").write_text(json.dumps(summary))
    inputs = load_run_dir(tmp_path, codebook=CB)
    assert inputs.meta is not None
    extra = dict(inputs.meta.extra)
    # a compatible server, not the vendor, credentials redacted
    assert extra["Judge endpoint"] == "openai:gpt-5-mini: http://***@127.0.0.1:8000/v1?api_key=***"
    summary.pop("base_url")
    (run / "summary.json").write_text(json.dumps(summary))
    extra = dict(load_run_dir(tmp_path, codebook=CB).meta.extra)  # type: ignore[union-attr]
    assert extra["Judge endpoint"] == "openai:gpt-5-mini: the vendor's API (openai)"
