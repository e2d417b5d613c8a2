from pathlib import Path

import numpy as np
import pandas as pd

from failcodes.codebook import Dimension, Part, Subcode
from failcodes.report.figures import (
    accumulation_curve,
    attribution_flow,
    interval_bars,
    metric_bars,
    save_figure_glyphs,
    stacked_subcodes,
    step_error_heatmap,
)
from failcodes.report.html import ReportFigure, ReportMeta, ReportSection, ReportTable, write_html
from failcodes.report.render import render_table
from failcodes.report.tables import code_shares
from failcodes.units import UnitKind
from tests.browser import probe_page, screenshot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _part() -> Part:
    subs = (
        Subcode(id="exact", label="exact", definition="d", high_quality=True),
        Subcode(id="partial", label="partial", definition="d"),
    )
    return Part(
        id=UnitKind.RETRIEVAL,
        label="Retrieval",
        dimensions=(Dimension(id="entity", label="Entity", definition="d", subcodes=subs),),
    )


def _figures(tmp: Path) -> list[ReportFigure]:
    wide = pd.DataFrame(
        [
            ("A", "scored", "exact", True),
            ("A", "scored", "partial", False),
            ("B", "scored", "exact", True),
        ],
        columns=["retriever", "status", "entity", "all_high"],
    )
    shares = code_shares(wide, _part(), by="retriever", flag="all_high", groups=["A", "B"])
    rows = [
        {
            "system": "A",
            "recall": 0.5,
            "recall_ci_low": 0.3,
            "recall_ci_high": 0.7,
            "f1": 0.4,
            "f1_ci_low": 0.2,
            "f1_ci_high": 0.6,
        }
    ]
    figs = {
        "stacked": stacked_subcodes(shares, _part(), ["A", "B"]),
        "heatmap": step_error_heatmap(shares, _part(), ["A", "B"]),
        "bars": metric_bars(rows),
        "flow": attribution_flow(
            {"retrieval": 3, "verification": 1},
            {"retrieval": {"irrelevant": 3}, "verification": {"overreach": 1}},
        ),
        "agreement": interval_bars(["entity"], [0.6], [0.4], [0.8], title="kappa", xlabel="kappa"),
        "curve": accumulation_curve([3, 1, 0, 0, 0]),
    }
    out = []
    for stem, fig in figs.items():
        paths = save_figure_glyphs(fig, tmp / "figures", stem)[0]
        png = paths["png"].read_bytes()
        assert png.startswith(PNG_MAGIC)
        assert paths["pdf"].read_bytes().startswith(b"%PDF")
        out.append(ReportFigure(caption=stem, png=png, files={"pdf": f"figures/{stem}.pdf"}))
    return out


def test_report_opens_offline_in_a_real_browser(tmp_path: Path) -> None:
    figures = _figures(tmp_path)
    wide = pd.DataFrame({f"col_{i}": [f"value {i}"] for i in range(12)})
    section = ReportSection(
        id="quality",
        title="Retrieval quality",
        tables=[ReportTable(caption="wide table", html=render_table(wide, "html"))],
        figures=figures,
    )
    meta = ReportMeta(
        title="Test report",
        created="2026-11-30",
        codebook="cb@1+abc",
        judge="offline",
        judge_is_heuristic=True,
        inputs=[("x.jsonl", "0" * 64)],
    )
    index = write_html(meta, [section], tmp_path)
    page = index.read_text()
    assert "Heuristic baseline" in page
    assert 'src="http' not in page and 'href="http' not in page  # self-contained
    probe = probe_page(index)
    assert probe == {"images": len(figures), "broken": 0, "wide": 0}
    shot = screenshot(index, tmp_path / "shot.png")
    assert shot.read_bytes().startswith(PNG_MAGIC)


def test_interval_bars_take_an_estimate_on_its_bound_up_to_rounding() -> None:
    # Outside check (redteam2): a review study's agreement row had Krippendorff's alpha
    # -0.9166666666666667 with a CI bound one ulp above it (a zero-width bootstrap interval):
    # v - lo = -1.1e-16, matplotlib refused the negative error bar and `failcodes report`
    # ended in a traceback (exit 1). The bar is drawn with zero width on that side.
    v = -11 / 12
    fig = interval_bars(
        ["trustworthy / krippendorff"],
        [v],
        [np.nextafter(v, 0.0)],
        [v],
        title="t",
        xlabel="value",
    )
    assert fig.axes[0].get_yticklabels()[0].get_text() == "trustworthy / krippendorff"
