"""The rendered codebook table: Markdown renders as a table, LaTeX has a sound booktabs shape."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from failcodes import codebook
from failcodes.codebook import CodebookDraft, Leaf
from failcodes.report.codebook_table import HQ_MARK, codebook_frame, render_codebook_table, tex

REPO = Path(__file__).resolve().parent.parent
V1 = codebook.load(REPO / "taxonomy" / "medical-fact-check.v1.yaml")
N_SUBCODES = 35  # issue 3: 4+4+3+4+4 retrieval + 3+2+3+3+2+3 verification
N_HIGH = 11  # one per dimension: 5 + 6


def unescaped(char: str, text: str) -> list[str]:
    """Occurrences of ``char`` not preceded by a backslash."""
    return re.findall(rf"(?<!\\){re.escape(char)}", text)


def latex_rows(text: str) -> list[str]:
    body = text.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    return [ln for ln in body.splitlines() if ln.strip().endswith("\\\\")]


def test_latex_shape_is_balanced_and_escaped() -> None:
    text = render_codebook_table(V1, "latex")
    assert text.count("\\begin{tabular}") == text.count("\\end{tabular}") == 1
    assert text.count("\\begin{table*}") == text.count("\\end{table*}") == 1
    assert text.count("\\toprule") == 1 and text.count("\\bottomrule") == 1
    assert text.index("\\toprule") < text.index("\\midrule") < text.index("\\bottomrule")
    spec = re.search(r"\\begin\{tabular\}\{(.*)\}\n", text)
    assert spec is not None
    n_cols = len(re.findall(r"[lrc]|p\{[^}]*\}", spec.group(1).replace("@{}", "")))
    assert n_cols == 6  # part, dimension, subcode, definition, example, origin
    rows = latex_rows(text)
    assert len(rows) == N_SUBCODES
    for row in rows:
        assert len(unescaped("&", row)) == n_cols - 1, row
    # Every underscore of an id is escaped; no raw % $ # anywhere; braces balance.
    assert "exact\\_entity" in text
    assert unescaped("_", text) == []
    body = text.split("\n", 1)[1]  # skip the "% Requires booktabs" comment line
    assert unescaped("%", body) == []
    assert len(unescaped("{", text)) == len(unescaped("}", text))
    assert text.count("$^\\dagger$") == N_HIGH + 1  # one per dimension + the caption note
    # a new part starts after a \midrule; dimensions are separated by \addlinespace
    assert text.count("\\midrule") == 2
    assert text.count("\\addlinespace") == (5 - 1) + (6 - 1)


def test_latex_extra_columns_and_specials() -> None:
    text = render_codebook_table(
        V1,
        "latex",
        part="retrieval",
        frequencies={"exact_entity": 0.145, "irrelevant": 0.14},  # seed 001 Table 8, Qwen3
        agreement={"exact_entity": 0.86},
    )
    rows = latex_rows(text)
    assert len(rows) == 19
    assert all(len(unescaped("&", r)) == 7 for r in rows)  # + the origin column
    first = rows[0]
    assert first.endswith("& 14.5\\% & 0.86 & seed \\\\")
    assert "14.0\\%" in next(r for r in rows if "irrelevant" in r)
    assert tex('5% of "C_max" & {x} #1 $2 ~ ^') == (
        "5\\% of ``C\\_max'' \\& \\{x\\} \\#1 \\$2 \\textasciitilde{} \\textasciicircum{}"
    )


def test_markdown_renders_as_one_table_with_all_subcodes() -> None:
    text = render_codebook_table(V1, "md")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<table>") == 1
    headers = re.findall(r"<th[^>]*>(.*?)</th>", html)
    assert headers == ["Part", "Dimension", "Subcode", "Definition", "Example", "Origin"]
    body_rows = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1], flags=re.S)
    assert len(body_rows) == N_SUBCODES
    assert all(len(re.findall(r"<td[^>]*>", r)) == 6 for r in body_rows)
    assert html.count("†") == N_HIGH + 1  # marks + the footnote
    assert "<code>exact_entity</code> †" in html


def test_leaves_and_pipes_in_markdown_and_html() -> None:
    v2 = (
        CodebookDraft(V1, "leaf")
        .add_leaf(
            "partial_entity",
            Leaf(id="class_for_agent", label="Class", definition="Class | not agent <b>."),
        )
        .build()
    )
    md = render_codebook_table(v2, "md", part="retrieval")
    html = MarkdownIt("commonmark").enable("table").render(md)
    body_rows = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1], flags=re.S)
    assert len(body_rows) == 19 + 1
    assert "↳ <code>class_for_agent</code>" in html
    assert "Class | not agent" in html  # the escaped pipe stays inside its cell
    out = render_codebook_table(v2, "html", part="retrieval", agreement={"class_for_agent": 0.5})
    assert out.count("<tr") == 1 + 20 + 1  # head, rows, footer
    assert "Class | not agent &lt;b&gt;." in out
    assert '<td class="num">0.50</td>' in out


def test_frame_for_report_build() -> None:
    frame = codebook_frame(V1, part="verification", frequencies={"grounded": 12})
    assert list(frame.columns) == [
        "part",
        "dimension",
        "subcode",
        "definition",
        "example",
        "Freq.",
        "Origin",
    ]
    assert len(frame) == 16  # 3+2+3+3+2+3
    assert frame.iloc[0]["subcode"] == "complete_selection †"
    assert frame.set_index("subcode").loc["grounded †", "Freq."] == "12"


def test_demo_step_validates_bundled_codebook_and_writes_table(tmp_path: Path) -> None:
    from failcodes.demo import STEPS, run_demo

    step = next(s for s in STEPS if s.name == "codebook")
    [(_, out)] = list(run_demo(tmp_path, [step]))
    assert out.lines[0].startswith(
        "medical-fact-check@1 valid (2 version(s), medical-fact-check@1 the default); hash "
        f"{V1.hash[:12]}"
    )
    assert out.lines[1].startswith("  medical-fact-check@1: single-label everywhere (departs")
    assert out.lines[2] == (
        "  medical-fact-check@2: codes may co-occur on evidence_selection, inference, "
        "verbal_confidence, grounding (multi-label, as seed 001 Table 9)"
    )
    md = (tmp_path / "codebook" / "codebook.md").read_text(encoding="utf-8")
    assert md == render_codebook_table(V1, "md")
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert len(re.findall(r"<tr>", html.split("<tbody>")[1])) == N_SUBCODES
    assert (tmp_path / "codebook" / "codebook.tex").read_text(encoding="utf-8").count(
        "\\begin{tabular}"
    ) == 1
    assert sorted(p.name for p in (tmp_path / "codebook").iterdir()) == [
        "codebook.md",
        "codebook.tex",
    ]


def test_origin_column_separates_the_seed_papers_codes_from_failcodes_own() -> None:
    # Seed 001 (Tables 8-9, as summarised in ../shared/seeds/001_*.txt) names each dimension's
    # high-quality subcode, "irrelevant", "incorrect chunking" and seven reasoning-step errors
    # (selective coverage, comprehension failure, overreach, conflict-synthesis failure,
    # overconfidence, label inconsistency, ungrounded reasoning): 8 low-quality seed codes,
    # 3 from the split of "incorrect chunking", so 13 of the 24 low-quality codes are ours.
    frame = codebook_frame(V1)
    low = frame[~frame["subcode"].str.endswith(HQ_MARK)]
    assert len(low) == 24
    assert (low["Origin"] == "failcodes").sum() == 13
    assert (low["Origin"] == "seed, split of incorrect chunking").sum() == 3
    assert low["Origin"].str.startswith("seed").sum() == 11
    high = frame[frame["subcode"].str.endswith(HQ_MARK)]
    assert set(high["Origin"]) == {"seed"}
    assert "seed (comprehension failure)" in set(low["Origin"])
