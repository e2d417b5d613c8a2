"""Render any DataFrame as Markdown, LaTeX (booktabs), HTML or CSV through jinja2 templates."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import escape

from failcodes.csvcells import safe_frame
from failcodes.errors import ConfigError, choice

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",
}


class TableFormat(StrEnum):
    """Output formats of a rendered table."""

    MARKDOWN = "md"
    LATEX = "latex"
    HTML = "html"
    CSV = "csv"


def latex_escape(text: object) -> str:
    """Escape LaTeX's special characters in ``text`` (underscores included)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


def latex_cell(text: object) -> str:
    """:func:`latex_escape`, with a line break allowed after ``_`` and ``/``.

    Ids and system names then wrap in a narrow table column instead of running past the page.
    """
    return latex_escape(text).replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")


def markdown_escape(text: object) -> str:
    """Escape the characters that break a Markdown table cell, and HTML.

    Markdown passes raw HTML through: a ``<script>`` in a claim or a rationale would run in
    the page a Markdown viewer renders. ``&``, ``<`` and ``>`` become entities (shown as the
    characters); ``|`` is escaped and line breaks become spaces.
    """
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace("|", r"\|").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:z.3f}"  # z: no -0.000
    return str(value)


def template_environment(filters: Mapping[str, Callable[[Any], str]]) -> jinja2.Environment:
    """A jinja2 environment over the report templates: ``md``, ``html`` and ``filters``.

    Templates escape through their own filters (no autoescape); undefined names are errors.
    """
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("failcodes.report", "templates"),
        autoescape=False,  # each template escapes through its own filter
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = markdown_escape
    env.filters["html"] = lambda v: str(escape(v))
    env.filters.update(filters)
    return env


_ENV = template_environment({"latex": latex_escape, "latex_cell": latex_cell})


def environment() -> jinja2.Environment:
    """The jinja2 environment holding the report templates."""
    return _ENV


#: Columns that hold a sentence about a row (a warning, why a value is undefined): printed
#: as footnotes under the table (one marker per distinct text), not as a column. CSV keeps
#: them as columns.
NOTE_COLUMNS = ("note", "notes", "warning", "CI warning", "undefined_reason")

#: LaTeX page geometry the tables are fitted to: a one-column article at 10 pt (\\textwidth
#: 345 pt), tables in \\small (9 pt), a column padded by 2 \\tabcolsep (12 pt). Text widths
#: are estimated per character (:func:`text_pt`, measured in \\small Computer Modern and
#: rounded up); a column too wide to fit becomes a ``p{...}`` column that wraps.
TEXTWIDTH_PT = 345.0
COLSEP_PT = 12.0
#: The narrowest a wrapped column is made (about 12 characters).
MIN_WRAP_PT = 54.0
#: The share of the page a table is planned to fill (the widths are estimates).
SAFETY = 0.95


def text_pt(text: str) -> float:
    """Estimated width of ``text`` in small Computer Modern, in pt (on the wide side).

    Measured: lowercase and digits 4.2-4.5 pt, capitals 6-8.5 pt, spaces and punctuation
    2.5-3 pt.
    """
    width = 0.0
    for ch in text:
        if ch.isupper():
            width += 7.0
        elif ch in " .,;:()[]/|'!-":
            width += 3.0
        else:
            width += 4.7
    return width


def _marker(i: int) -> str:
    """Footnote marker ``i`` (0-based): a, b, ..., z, aa, ab, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26]


def footnoted(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[list[str]], list[tuple[str, str]]]:
    """``frame`` without its note columns, each row's markers, and the footnotes.

    A note text shared by several rows is one footnote (one marker); a column named like a
    note (:data:`NOTE_COLUMNS`) is one only when it holds text.
    """
    notes = [c for c in frame.columns if str(c) in NOTE_COLUMNS]
    kept = frame.drop(columns=notes)
    order: dict[str, str] = {}
    markers: list[list[str]] = []
    records = frame[notes].to_dict("records") if notes else [{} for _ in range(len(frame))]
    for row in records:
        mine: list[str] = []
        for col in notes:
            value = row[col]
            if value is None or (isinstance(value, float) and pd.isna(value)):
                continue
            text = str(value).strip()
            if not text or text == "–":
                continue
            if len(notes) > 1 and col not in ("note", "notes"):
                text = f"{col}: {text}"
            if text not in order:
                order[text] = _marker(len(order))
            if order[text] not in mine:
                mine.append(order[text])
        markers.append(mine)
    return kept, markers, [(m, t) for t, m in order.items()]


def _widths(columns: Sequence[str], rows: Sequence[Sequence[str]], j: int) -> tuple[float, float]:
    """Column ``j``'s natural width and the least it can be wrapped to, without padding.

    Natural: its widest cell or header on one line; least: its widest word, at least
    :data:`MIN_WRAP_PT` (or the natural width, when smaller).
    """
    texts = [columns[j], *(r[j] for r in rows)]
    natural = max(text_pt(t) for t in texts)
    # a line may break at a space, and after _ / - (latex_escape allows it there)
    words = max(text_pt(w) for t in texts for w in (re.split(r"[\s_/-]+", t) or [""]))
    least = natural if natural <= MIN_WRAP_PT else max(words, MIN_WRAP_PT)
    return natural, least


def latex_layout(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    keys: int,
    limit: float = TEXTWIDTH_PT,
) -> list[tuple[list[int], str]]:
    """Column groups of a LaTeX table that each fit ``limit``, and their column specs.

    Every group repeats the first ``keys`` columns (what names the row). Columns join a
    group while the group fits with its text columns wrapped as far as they go (to their
    widest word, never below :data:`MIN_WRAP_PT`); a group wider than the page on one line
    then wraps its widest columns as ``p{W pt}``, the same cap ``W`` for all of them, chosen
    so that the group fits.
    """
    limit *= SAFETY  # the widths are estimates: keep a margin
    lead = list(range(min(keys, len(columns))))
    sizes = [_widths(columns, rows, j) for j in range(len(columns))]
    least = [w + COLSEP_PT for _, w in sizes]
    groups: list[list[int]] = []
    current: list[int] = []
    for j in range(len(lead), len(columns)):
        if current and sum(least[i] for i in [*lead, *current, j]) > limit:
            groups.append(current)
            current = []
        current.append(j)
    if current or not groups:
        groups.append(current)
    out = []
    for group in groups:
        picked = [*lead, *group]
        specs = ["l"] * len(picked)
        room = limit - COLSEP_PT * len(picked)
        natural = [sizes[j][0] for j in picked]
        floor = [sizes[j][1] for j in picked]
        if sum(natural) > room:
            low, high = 0.0, max(natural)  # the cap W, by bisection
            for _ in range(40):
                cap = (low + high) / 2
                used = sum(max(f, min(n, cap)) for n, f in zip(natural, floor, strict=True))
                low, high = (cap, high) if used <= room else (low, cap)
            specs = [
                f"p{{{max(f, low):.0f}pt}}" if n > max(f, low) else spec
                for n, f, spec in zip(natural, floor, specs, strict=True)
            ]
        out.append((picked, "".join(specs)))
    return out


def _constant_keys(frame: pd.DataFrame, keys: int) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Drop the naming columns (after the first) that hold one value in every row."""
    if len(frame) < 2:
        return frame, []
    constant = [
        (str(c), _cell(frame[c].iloc[0]))
        for c in list(frame.columns)[1:keys]
        if frame[c].nunique(dropna=False) == 1
    ]
    return frame.drop(columns=[c for c, _ in constant]), constant


def with_row_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the names of its rows as columns: a named index, or one of labels.

    ``render_table(df.groupby("system")[["tp"]].sum(), "md")`` (or ``df.describe()``) wrote
    the numbers without the systems (statistics) they belong to: rows are written without
    their index. Row numbers (a range or whole-number index without a name) are no names.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ConfigError(f"frame: expected a pandas DataFrame, not {type(frame).__name__}")
    index = frame.index
    named = any(name is not None for name in index.names)
    labels = index.nlevels == 1 and not (
        pd.api.types.is_integer_dtype(index.dtype) or isinstance(index, pd.RangeIndex)
    )
    if not (named or labels):
        return frame
    taken = {str(c) for c in frame.columns}
    clash = [str(n) for n in index.names if n is not None and str(n) in taken]
    if clash and index.nlevels == 1 and (frame[clash[0]].to_numpy() == index.to_numpy()).all():
        return frame.reset_index(drop=True)  # set_index("system", drop=False): said once
    if clash:
        raise ConfigError(
            f"frame: its index {clash[0]!r} is also a column name: reset or drop one "
            "(frame.reset_index(drop=True) writes the rows without the index)"
        )
    return frame.reset_index()


def render_table(
    frame: pd.DataFrame,
    fmt: TableFormat | str,
    *,
    caption: str = "",
    label: str = "",
    path: str | Path | None = None,
    key: Sequence[str] = (),
    keys: int | None = None,
) -> str:
    """Render ``frame`` in ``fmt``; cells are formatted with 3 decimals for floats, '–' for NaN.

    Paper form (Markdown, LaTeX, HTML): the note columns (:data:`NOTE_COLUMNS`) become
    footnotes under the table, a marker beside the row's first cell; ``key`` lines (what the
    labels stand for, e.g. the code ids) follow them. LaTeX tables wider than the page
    (:data:`TEXTWIDTH_PT`) are split into several tables, each repeating the first ``keys``
    columns (default: the frame's ``attrs["keys"]``, 2 for :func:`percent_table`'s dimension
    and code, else 1: a part without the code column could not tell its rows apart). CSV
    keeps every column, notes included; its cells a spreadsheet would run as formulas are
    neutralised (:mod:`failcodes.csvcells`); a NUL, which no CSV cell carries, is refused
    naming ``path`` (the file to be written).
    """
    fmt = choice(TableFormat, {"markdown": "md", "tex": "latex"}.get(str(fmt), fmt), "fmt")
    frame = with_row_names(frame)
    if fmt is TableFormat.CSV:
        buf = io.StringIO()
        safe_frame(frame, path or f"the table {label or caption!r}").to_csv(buf, index=False)
        return buf.getvalue()
    keys = int(frame.attrs.get("keys", 1)) if keys is None else keys
    kept, markers, notes = footnoted(frame)
    kept, constant = _constant_keys(kept, keys)
    if constant:  # a naming column with one value for every row: said once, in the caption
        said = "; ".join(f"{c}: {v}" for c, v in constant)
        caption = f"{caption} ({said})" if caption else said
        keys -= len(constant)
    names = [str(c) for c in kept.columns]
    rows = [[_cell(v) for v in row] for row in kept.itertuples(index=False, name=None)]
    template = _ENV.get_template(f"table.{fmt.value}.j2")
    groups = [(list(range(len(names))), "l" * len(names))]
    if fmt is TableFormat.LATEX:
        groups = latex_layout(names, rows, keys)
    parts = []
    for n, (picked, part_align) in enumerate(groups, start=1):
        part_caption = caption
        if len(groups) > 1:
            part_caption = f"{caption} (part {n} of {len(groups)})" if caption else ""
        parts.append(
            template.render(
                columns=[names[j] for j in picked],
                rows=[[r[j] for j in picked] for r in rows],
                markers=[
                    {next((k for k, j in enumerate(picked) if r[j] != ""), 0): m} if m else {}
                    for r, m in zip(rows, markers, strict=True)
                ],
                notes=notes if n == len(groups) else [],
                key=list(key) if n == len(groups) else [],
                caption=part_caption,
                label=f"{label}-{n}" if label and len(groups) > 1 else label,
                align=part_align,
            )
        )
    return "\n".join(parts)
