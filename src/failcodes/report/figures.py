"""Paper figures with matplotlib: colour-blind-safe, readable at column width, PNG and PDF.

Figures are built on :class:`matplotlib.figure.Figure` objects (no pyplot global state), so
they are safe to make in tests and background jobs.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from failcodes.annotations import NOT_ASSESSABLE
from failcodes.codebook import Part
from failcodes.fileio import atomic_path
from failcodes.report.tables import SUMMARY_ROWS

#: Okabe & Ito (2008) colour-blind-safe palette, black last.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HIGH_QUALITY_COLOUR = "#009E73"
COLUMN_WIDTH_IN = 3.4
PAGE_WIDTH_IN = 7.0

_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 6.5,
    "pdf.fonttype": 42,
}


def _figure(width: float, height: float) -> Figure:
    import matplotlib as mpl

    mpl.rcParams.update(cast(Any, _RC))
    return Figure(figsize=(width, height), layout="constrained")


#: matplotlib's warning for a character no installed font can draw (an empty box instead).
_MISSING_GLYPH = re.compile(r"Glyph (\d+) .*missing from")


def save_figure_glyphs(
    fig: Figure, out_dir: str | Path, stem: str
) -> tuple[dict[str, Path], list[str]]:
    """Write ``stem.png`` (200 dpi) and ``stem.pdf``: their paths, and characters no font draws.

    A system named in CJK (``模型β``) was drawn as empty boxes in the legend, said only by
    matplotlib warnings on stderr (one per glyph and format); the caller says it once, beside
    the figure. Fonts are never downloaded.
    """
    from failcodes.report.html import source_date

    out = Path(out_dir)
    paths = {"png": out / f"{stem}.png", "pdf": out / f"{stem}.pdf"}
    missing: dict[str, None] = {}
    when = source_date()  # the PDF's creation date, as the page's (a PNG holds none)
    for fmt, path in paths.items():
        dated: dict[str, Any] = (
            {"metadata": {"CreationDate": when}} if fmt == "pdf" and when else {}
        )
        with atomic_path(path) as tmp, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.savefig(tmp, dpi=200, format=fmt, **dated)
        for w in caught:
            m = _MISSING_GLYPH.match(str(w.message))
            if m is None:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            else:
                missing[chr(int(m.group(1)))] = None
    return paths, list(missing)


def missing_glyphs_note(chars: Sequence[str], figures: Sequence[str]) -> str:
    """One line: which characters the fonts lack and in which figures (drawn as boxes)."""
    shown = " ".join(chars[:12]) + (" ..." if len(chars) > 12 else "")
    return (
        f"figures {', '.join(figures)}: the installed fonts have no glyph for {len(chars)} "
        f"character(s) of the labels ({shown}), drawn as empty boxes; the tables give the "
        "names (install a font that has them, e.g. Noto Sans CJK, and build the report again)"
    )


#: The not-assessable part of a stacked bar: grey, neither high nor low quality.
NOT_ASSESSABLE_COLOUR = "#BBBBBB"


def _colours(n: int) -> list[str]:
    rest = [c for c in OKABE_ITO if c != HIGH_QUALITY_COLOUR]
    return [HIGH_QUALITY_COLOUR, *[rest[i % len(rest)] for i in range(n - 1)]]


def stacked_subcodes(shares: pd.DataFrame, part: Part, groups: Sequence[str]) -> Figure:
    """One row of stacked bars per dimension: subcode shares per group (Table 8 as bars).

    ``shares`` is :func:`failcodes.report.tables.code_shares` output. The high-quality subcode
    is drawn first, in green, so the panels read as "how much is good" at a glance.
    """
    dims = list(part.dimensions)
    panel = 0.32 * len(groups) + 0.45
    fig = _figure(PAGE_WIDTH_IN, panel * len(dims) + 0.5)
    axes = fig.subplots(len(dims), 1, squeeze=False, sharex=True)
    y = np.arange(len(groups))
    for i, dim in enumerate(dims):
        ax = axes[i][0]
        codes = [dim.high_quality_code, *[s.id for s in dim.subcodes if not s.high_quality]]
        colours = _colours(len(codes))
        # units the coder could not assess (Table 8's "Not assessable" row): drawn, or a group
        # coded not_assessable throughout showed an empty bar, read as no data
        if (shares["dimension"].eq(dim.id) & shares["code"].eq(NOT_ASSESSABLE)).any():
            codes, colours = [*codes, NOT_ASSESSABLE], [*colours, NOT_ASSESSABLE_COLOUR]
        left = np.zeros(len(groups))
        for code, colour in zip(codes, colours, strict=True):
            row = shares[(shares["dimension"] == dim.id) & (shares["code"] == code)]
            vals = np.array([float(row[g].iloc[0]) if len(row) else 0.0 for g in groups])
            vals = np.nan_to_num(vals)
            ax.barh(y, vals, left=left, color=colour, label=code, edgecolor="white", linewidth=0.3)
            left += vals
        ax.set_yticks(y, list(groups))
        ax.set_xlim(0, 1)
        ax.set_title(dim.label, loc="left")
        ax.invert_yaxis()
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    axes[-1][0].set_xlabel("share of coded rows")
    return fig


def step_error_heatmap(shares: pd.DataFrame, part: Part, groups: Sequence[str]) -> Figure:
    """Heatmap of the share of each error subcode per group (Table 9's yellow cells)."""
    errors = shares[
        (~shares["high_quality"].astype(bool)) & (~shares["dimension"].isin(SUMMARY_ROWS))
    ]
    labels = [f"{d}: {c}" for d, c in zip(errors["dimension"], errors["code"], strict=True)]
    data = errors[list(groups)].to_numpy(dtype=float)
    fig = _figure(COLUMN_WIDTH_IN + 0.35 * len(groups), 0.9 + 0.2 * len(labels))
    ax = fig.add_subplot()
    # shares are 0..1: with every share 0 matplotlib's scale ran -0.1..0.1, a 0 cell drawn as
    # its middle (a share scale with negative values); the scale keeps 0 at its bottom
    top = float(np.nanmax(data)) if data.size and np.nanmax(data) > 0 else 1.0
    image = ax.imshow(np.nan_to_num(data), cmap="cividis", vmin=0, vmax=top, aspect="auto")
    ax.set_xticks(np.arange(len(groups)), list(groups), rotation=30, ha="right")
    ax.set_yticks(np.arange(len(labels)), labels)
    for (r, c), v in np.ndenumerate(data):
        if not np.isnan(v) and v > 0:
            ax.text(
                c,
                r,
                f"{v * 100:.0f}",
                ha="center",
                va="center",
                fontsize=6,
                color="white" if v < 0.6 * np.nanmax(data) else "black",
            )
    fig.colorbar(image, ax=ax, label="share of units", shrink=0.8)
    ax.set_title(f"{part.label}: error subcodes")
    if not (np.nan_to_num(data) > 0).any():
        say_empty(ax, "no error subcode coded")
    return fig


def metric_bars(
    rows: Sequence[Mapping[str, object]],
    metrics: Sequence[str] = ("recall", "f1"),
    *,
    ci: str = "95% CI",
) -> Figure:
    """Grouped bars of metrics per system with percentile-bootstrap CI whiskers (``ci``)."""
    systems = [str(r["system"]) for r in rows]
    fig = _figure(max(COLUMN_WIDTH_IN, 0.55 * len(systems) + 1.2), 2.3)
    ax = fig.add_subplot()
    x = np.arange(len(systems))
    width = 0.8 / len(metrics)
    for k, (metric, colour) in enumerate(zip(metrics, OKABE_ITO, strict=False)):
        vals = np.array([_f(r.get(metric)) for r in rows])
        lo = np.array([_f(r.get(f"{metric}_ci_low")) for r in rows])
        hi = np.array([_f(r.get(f"{metric}_ci_high")) for r in rows])
        err = np.vstack([np.nan_to_num(vals - lo), np.nan_to_num(hi - vals)])
        xs = x + (k - (len(metrics) - 1) / 2) * width
        ax.bar(xs, np.nan_to_num(vals), width, color=colour, label=metric)
        ax.errorbar(
            xs,
            np.nan_to_num(vals),
            yerr=err,
            fmt="none",
            ecolor="#333333",
            capsize=2,
            elinewidth=0.7,
        )
    ax.set_xticks(x, systems, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(f"value ({ci})" if ci else "value")
    for i, r in enumerate(rows):  # a system without a bar says why: 0, or undefined
        own = [_f(r.get(m)) for m in metrics]
        if not any(v > 0 for v in own if not np.isnan(v)):
            word = "0" if any(v == 0 for v in own) else "undefined"
            ax.text(x[i], 0.02, word, ha="center", va="bottom", fontsize=6.5, color="#333333")
    if no_nonzero_bar(rows, metrics):
        say_empty(ax, f"no non-zero {' or '.join(metrics)}: every bar is 0 or undefined")
    ax.legend(frameon=False, ncol=len(metrics), loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def say_empty(ax: Any, text: str) -> None:
    """Write ``text`` across an axes that has no bar to show (so it is not read as missing)."""
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=7.5,
        wrap=True,
        bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "#999999"},
    )


def no_nonzero_bar(rows: Sequence[Mapping[str, object]], metrics: Sequence[str]) -> bool:
    """Whether :func:`metric_bars` of ``rows`` would draw no bar above 0."""
    return not any(_f(r.get(m)) > 0 for r in rows for m in metrics)


#: What the attribution figure's subcode counts count: Tables 8-9's n (build.FREQ_NOTE's
#: words), not rows: a unit several systems' claims retrieved with one retriever counts once.
FLOW_CODES_UNIT = (
    "as Tables 8-9 count: retrieval a (claim, passage)\n"
    "unit once per retriever and data set,\nverification a claim once per system"
)


def flow_codes_unit(pooled: Sequence[Sequence[str]] = ()) -> str:
    """:data:`FLOW_CODES_UNIT`, naming the data sets Tables 8-9 pool as one (``freq_note``)."""
    if not pooled:
        return FLOW_CODES_UNIT
    named = "; ".join(" + ".join(members) for members in pooled)
    return FLOW_CODES_UNIT.replace(
        "data set,\n", f"data set\n(data sets {named} counted as one),\n"
    )


def attribution_flow(
    stages: Mapping[str, int],
    error_codes: Mapping[str, Mapping[str, int]],
    pooled: Sequence[Sequence[str]] = (),
) -> Figure:
    """Figure 1 as counts: disagreements per stage, then the dominant error subcodes.

    ``stages`` maps a stage (retrieval, verification, mixed, ...) to its number of
    disagreements; ``error_codes`` maps a codebook part to {low-quality subcode: count of coded
    rows carrying it}; ``pooled``: the data sets Tables 8-9 count as one (the x label says so).
    """
    fig = _figure(PAGE_WIDTH_IN * 0.85, 2.4)
    left_ax, right_ax = fig.subplots(1, 2, width_ratios=[1, 2])
    names = list(stages)
    totals = [stages[s] for s in names]
    left_ax.barh(names, totals, color=OKABE_ITO[: len(names)])
    left_ax.set_title(f"{sum(totals)} disagreements attributed")
    for i, t in enumerate(totals):
        left_ax.text(t, i, f" {t}", va="center", fontsize=7)
    left_ax.set_xlim(0, max(totals, default=1) * 1.25)
    left_ax.invert_yaxis()
    labels: list[str] = []
    values: list[int] = []
    colours: list[str] = []
    for i, part in enumerate(error_codes):
        for code, n in sorted(error_codes[part].items(), key=lambda kv: -kv[1])[:5]:
            labels.append(f"{part}: {code}")
            values.append(n)
            colours.append(OKABE_ITO[i])
    right_ax.barh(labels, values, color=colours)
    right_ax.invert_yaxis()
    right_ax.set_title("frequent error subcodes")
    # its counts are Tables 8-9's rows, not disagreements (misreading 119 beside 120 of them)
    right_ax.set_xlabel(flow_codes_unit(pooled), fontsize=7)
    if not values:  # no scale around nothing (it read -0.04 .. 0.04)
        right_ax.set_xticks([])
        right_ax.set_yticks([])
        say_empty(right_ax, "no error subcode coded")
    return fig


def interval_bars(
    labels: Sequence[str],
    values: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    *,
    title: str,
    xlabel: str,
) -> Figure:
    """Horizontal point-and-interval plot, e.g. agreement per dimension with CIs."""
    longest = max((len(str(label)) for label in labels), default=0)
    fig = _figure(max(COLUMN_WIDTH_IN, 2.2 + 0.06 * longest), 0.8 + 0.22 * len(labels))
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    v = np.array([_f(x) for x in values])
    lo = np.array([_f(x) for x in lows])
    hi = np.array([_f(x) for x in highs])
    ax.errorbar(
        v,
        y,
        # an estimate equal to its bound up to rounding (-0.916667 - -0.916667 = -1e-16) made
        # matplotlib refuse the figure and the whole report end in a traceback
        xerr=np.clip(np.vstack([np.nan_to_num(v - lo), np.nan_to_num(hi - v)]), 0.0, None),
        fmt="o",
        color=OKABE_ITO[0],
        capsize=2,
        markersize=3,
        linewidth=0.8,
    )
    ax.set_yticks(y, list(labels))
    ax.invert_yaxis()
    ax.axvline(0, color="#999999", linewidth=0.5)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return fig


def corrected_shares(numbers: pd.DataFrame) -> Figure:
    """Judge-only, human-only and corrected shares with their intervals, one row per label.

    ``numbers``: columns ``label``, ``judge``, ``human``, ``human_low``, ``human_high``,
    ``corrected``, ``low``, ``high`` (shares in [0, 1]; NaN where a cell has no estimate).
    """
    labels = [str(x) for x in numbers["label"]]
    longest = max((len(label) for label in labels), default=0)
    fig = _figure(max(COLUMN_WIDTH_IN, 2.6 + 0.06 * longest), 1.0 + 0.32 * len(labels))
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    judge = numbers["judge"].to_numpy(dtype=float)
    ax.plot(100 * judge, y - 0.2, "x", color=OKABE_ITO[2], markersize=4, label="judge-only")
    for offset, (mid, lo, hi), colour, name in (
        (0.0, ("human", "human_low", "human_high"), OKABE_ITO[0], "human-only"),
        (0.2, ("corrected", "low", "high"), OKABE_ITO[1], "corrected"),
    ):
        v = 100 * numbers[mid].to_numpy(dtype=float)
        low = 100 * numbers[lo].to_numpy(dtype=float)
        high = 100 * numbers[hi].to_numpy(dtype=float)
        ax.errorbar(
            v,
            y + offset,
            xerr=np.vstack([np.nan_to_num(v - low), np.nan_to_num(high - v)]),
            fmt="o",
            color=colour,
            capsize=2,
            markersize=3,
            linewidth=0.8,
            label=name,
        )
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the system's disagreements (%)")
    ax.legend(frameon=False, ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def accumulation_curve(new_per_round: Sequence[int]) -> Figure:
    """New patterns per saturation round (bars) and the cumulative count (line)."""
    fig = _figure(COLUMN_WIDTH_IN, 2.0)
    ax = fig.add_subplot()
    rounds = np.arange(1, len(new_per_round) + 1)
    ax.bar(rounds, new_per_round, color=OKABE_ITO[4], label="new per round")
    ax.plot(rounds, np.cumsum(new_per_round), marker="o", color=OKABE_ITO[0], label="cumulative")
    ax.set_xlabel("round")
    ax.set_ylabel("accepted patterns")
    ax.set_xticks(rounds)
    ax.legend(frameon=False)
    return fig


def _f(value: object) -> float:
    if isinstance(value, Mapping):
        value = value.get("value")
    if value is None:
        return float("nan")
    if isinstance(value, int | float):
        return float(value)
    return float("nan")
