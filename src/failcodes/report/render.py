"""Render any DataFrame as Markdown, LaTeX (booktabs), HTML or CSV through jinja2 templates."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
from markupsafe import escape

from failcodes.csvcells import safe_frame

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
        return f"{value:.3f}"
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


_ENV = template_environment({"latex": latex_escape})


def environment() -> jinja2.Environment:
    """The jinja2 environment holding the report templates."""
    return _ENV


def render_table(
    frame: pd.DataFrame,
    fmt: TableFormat | str,
    *,
    caption: str = "",
    label: str = "",
    align: str | None = None,
    headers: Mapping[str, str] | None = None,
    path: str | Path | None = None,
) -> str:
    """Render ``frame`` in ``fmt``; cells are formatted with 3 decimals for floats, '–' for NaN.

    CSV cells a spreadsheet would run as formulas are neutralised (:mod:`failcodes.csvcells`);
    a NUL, which no CSV cell carries, is refused naming ``path`` (the file to be written).
    """
    fmt = TableFormat(fmt)
    if fmt is TableFormat.CSV:
        buf = io.StringIO()
        safe_frame(frame, path or f"the table {label or caption!r}").to_csv(buf, index=False)
        return buf.getvalue()
    columns = [str(c) for c in frame.columns]
    names = [headers.get(c, c) if headers else c for c in columns]
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    template = _ENV.get_template(f"table.{fmt.value}.j2")
    return template.render(
        columns=names,
        rows=rows,
        caption=caption,
        label=label,
        align=align or "l" * len(columns),
    )
