"""The self-contained HTML report: figures embedded as data URIs, tables inline, run metadata.

``index.html`` opens offline in any browser: it references no external file, font or script.
"""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from failcodes.contract import StrictModel
from failcodes.errors import ConfigError
from failcodes.fileio import atomic_write_text
from failcodes.report.render import environment


def source_date() -> datetime | None:
    """``SOURCE_DATE_EPOCH`` (the reproducible-builds convention) as a UTC time, or None (unset).

    Every timestamp a report writes follows it: the page's "generated" time and each PDF
    figure's creation date (:mod:`failcodes.report.figures`). A value that is no time is
    refused (``abc`` ended in matplotlib's traceback, the tables written; ``-5`` dated the page
    now and the PDFs 1969).
    """
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    try:
        if not (text.isascii() and text.isdigit()):
            raise ValueError(text)
        return datetime.fromtimestamp(int(text), UTC)
    except (ValueError, OverflowError, OSError):
        raise ConfigError(
            f"SOURCE_DATE_EPOCH={raw!r}: expected whole seconds since 1970-01-01 UTC (the "
            "reproducible-builds convention), e.g. SOURCE_DATE_EPOCH=$(git log -1 --format=%ct); "
            "unset it for the current time"
        ) from None


def report_time() -> str:
    """When the report was made (ISO, UTC); ``SOURCE_DATE_EPOCH`` wins (:func:`source_date`).

    With it set, two reports of the same inputs are byte-identical.
    """
    return (source_date() or datetime.now(UTC)).isoformat(timespec="seconds")


class ReportTable(StrictModel):
    """A table already rendered to HTML (``html``) plus its other formats' file names."""

    caption: str
    html: str
    files: dict[str, str] = Field(default_factory=dict, description="format -> relative path")


class ReportFigure(StrictModel):
    """A figure: PNG bytes embedded in the page, plus its files' relative paths."""

    caption: str
    png: bytes
    files: dict[str, str] = Field(default_factory=dict)

    @property
    def data_uri(self) -> str:
        """The PNG as a base64 ``data:`` URI."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


class ReportSection(StrictModel):
    """One section of the report."""

    id: str
    title: str
    notes: list[str] = Field(default_factory=list)
    tables: list[ReportTable] = Field(default_factory=list)
    figures: list[ReportFigure] = Field(default_factory=list)


class ReportMeta(StrictModel):
    """Run metadata shown at the top of the report."""

    title: str
    created: str
    codebook: str | None = None
    judge: str | None = None
    judge_is_heuristic: bool = False
    #: The heuristic baseline beside a model (a cascade, or a panel of the offline judge and a
    #: model): its consensus was coded llm, and the page said all codes were the heuristic's.
    judge_with_models: bool = False
    #: '$0.0123', or 'unknown: no price for ...' (an unpriced run's summary counts $0)
    cost: str | None = None
    inputs: list[tuple[str, str]] = Field(default_factory=list, description="(path, sha256)")
    extra: list[tuple[str, str]] = Field(default_factory=list)


def render_html(meta: ReportMeta, sections: list[ReportSection]) -> str:
    """Render the report page."""
    template = environment().get_template("report.html.j2")
    return template.render(meta=meta, sections=sections)


def write_html(meta: ReportMeta, sections: list[ReportSection], out_dir: str | Path) -> Path:
    """Write ``out_dir/index.html`` atomically and return its path."""
    return atomic_write_text(Path(out_dir) / "index.html", render_html(meta, sections))
