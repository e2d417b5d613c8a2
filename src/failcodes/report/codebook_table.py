"""The codebook as a table: part, dimension, subcode, definition, example (high-quality marked).

Rendered as Markdown, LaTeX (booktabs, for a paper) or HTML through the jinja2 templates
``report/templates/codebook.{md,latex,html}.j2``. Optional columns carry values computed
elsewhere, e.g. subcode frequencies and per-code human-LLM agreement; this module only
formats them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from failcodes.codebook import Codebook, Dimension, Origin, Subcode
from failcodes.csvcells import safe_frame
from failcodes.report.render import TableFormat, latex_escape, template_environment
from failcodes.units import UnitKind

HQ_MARK = "†"
"""Marks the high-quality subcode of each dimension (LaTeX: ``$^\\dagger$``)."""

Values = Mapping[str, float | int | str | None]


@dataclass(frozen=True)
class Column:
    """An extra column: a header and a value per code id (missing codes show '–')."""

    header: str
    values: Values
    number_format: str = "{:.2f}"

    def cell(self, code: str) -> str:
        """The formatted value for ``code``."""
        value = self.values.get(code)
        if value is None or (isinstance(value, float) and value != value):  # NaN
            return "–"
        if isinstance(value, bool | int | str):
            return str(value)
        return self.number_format.format(value)


@dataclass(frozen=True)
class CodebookRow:
    """One row of the table: a subcode, or a leaf under it."""

    part: str
    dimension: str
    code: str
    label: str
    definition: str
    example: str
    high_quality: bool
    is_leaf: bool
    first_in_part: bool
    first_in_dimension: bool
    extras: tuple[str, ...] = field(default=())


ORIGIN_HEADER = "Origin"


def origin_label(sub: Subcode) -> str | None:
    """How the table shows where a subcode comes from (None when the file does not say)."""
    if sub.origin is None:
        return None
    if sub.origin is Origin.SEED:
        return "seed" + (f" ({sub.seed_code})" if sub.seed_code else "")
    if sub.origin is Origin.SEED_SPLIT:
        return "seed, split" + (f" of {sub.seed_code}" if sub.seed_code else "")
    return "failcodes"


def origin_column(cb: Codebook) -> Column | None:
    """The provenance column (seed paper vs failcodes' own), if any subcode states it."""
    values = {
        sub.id: label
        for _, dim in cb.dimensions()
        for sub in dim.subcodes
        if (label := origin_label(sub)) is not None
    }
    return Column(ORIGIN_HEADER, values) if values else None


def dimension_label(dim: Dimension) -> str:
    """A dimension's label, marked when several of its codes may co-occur."""
    return f"{dim.label} (multi-label)" if dim.multi_label else dim.label


def columns_for(
    frequencies: Values | None = None, agreement: Values | None = None, extra: Sequence[Column] = ()
) -> list[Column]:
    """The optional columns: frequency, agreement (if given), then ``extra``."""
    out: list[Column] = []
    if frequencies is not None:
        out.append(Column("Freq.", frequencies, "{:.1%}"))
    if agreement is not None:
        out.append(Column("Agreement", agreement, "{:.2f}"))
    return [*out, *extra]


def codebook_rows(
    cb: Codebook,
    *,
    part: UnitKind | str | None = None,
    columns: Sequence[Column] = (),
    include_leaves: bool = True,
) -> list[CodebookRow]:
    """Rows in codebook order (part, dimension, subcode, then its leaves)."""
    parts = [cb.part(UnitKind(part))] if part is not None else list(cb.parts)
    rows: list[CodebookRow] = []
    for p in parts:
        first_part = True
        for dim in p.dimensions:
            first_dim = True
            for sub in dim.subcodes:
                entries = [(sub.id, sub.label, sub.definition, sub.examples, False)]
                if include_leaves:
                    entries += [
                        (lf.id, lf.label, lf.definition, lf.examples, True) for lf in sub.leaves
                    ]
                for code, label, definition, examples, is_leaf in entries:
                    rows.append(
                        CodebookRow(
                            part=p.label,
                            dimension=dimension_label(dim),
                            code=code,
                            label=label,
                            definition=" ".join(definition.split()),
                            example=" ".join(examples[0].split()) if examples else "",
                            high_quality=sub.high_quality and not is_leaf,
                            is_leaf=is_leaf,
                            first_in_part=first_part,
                            first_in_dimension=first_dim,
                            extras=tuple(c.cell(code) for c in columns),
                        )
                    )
                    first_part = first_dim = False
    return rows


def codebook_frame(
    cb: Codebook,
    *,
    part: UnitKind | str | None = None,
    frequencies: Values | None = None,
    agreement: Values | None = None,
    include_leaves: bool = True,
) -> pd.DataFrame:
    """The table as a DataFrame (for ``report.build``'s generic table rendering)."""
    origin = origin_column(cb)
    cols = columns_for(frequencies, agreement, [origin] if origin else [])
    rows = codebook_rows(cb, part=part, columns=cols, include_leaves=include_leaves)
    records = [
        {
            "part": r.part,
            "dimension": r.dimension,
            "subcode": ("↳ " if r.is_leaf else "")
            + r.code
            + (f" {HQ_MARK}" if r.high_quality else ""),
            "definition": r.definition,
            "example": r.example,
            **{c.header: v for c, v in zip(cols, r.extras, strict=True)},
        }
        for r in rows
    ]
    return pd.DataFrame.from_records(
        records,
        columns=[
            "part",
            "dimension",
            "subcode",
            "definition",
            "example",
            *[c.header for c in cols],
        ],
    )


_LATEX_EXTRA = {"<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "†": r"$^\dagger$"}


def tex(text: object) -> str:
    """Escape for LaTeX: the report's escaping plus < > | (wrong glyphs in OT1) and †.

    Straight double quotes around a phrase become LaTeX quotes (``...'').
    """
    escaped = "".join(_LATEX_EXTRA.get(ch, latex_escape(ch)) for ch in str(text))
    return _QUOTED.sub(r"``\1''", escaped)


_QUOTED = re.compile(r'"([^"]*)"')


_ENV = template_environment({"tex": tex})


def render_codebook_table(
    cb: Codebook,
    fmt: TableFormat | str = TableFormat.MARKDOWN,
    *,
    part: UnitKind | str | None = None,
    frequencies: Values | None = None,
    agreement: Values | None = None,
    extra: Sequence[Column] = (),
    include_leaves: bool = True,
    caption: str | None = None,
    label: str = "tab:codebook",
) -> str:
    """Render the codebook table as Markdown (``md``), LaTeX (``latex``) or HTML (``html``).

    ``frequencies`` and ``agreement`` map code ids to values (fractions are shown as
    percentages, agreement with two decimals); codes without a value show '–'.
    """
    fmt = TableFormat(fmt)
    if fmt is TableFormat.CSV:
        frame = codebook_frame(
            cb,
            part=part,
            frequencies=frequencies,
            agreement=agreement,
            include_leaves=include_leaves,
        )
        return safe_frame(frame, f"the codebook table of {cb.id}").to_csv(index=False)
    origin = origin_column(cb)
    cols = columns_for(frequencies, agreement, [*extra, *([origin] if origin else [])])
    rows = codebook_rows(cb, part=part, columns=cols, include_leaves=include_leaves)
    if caption is None:
        caption = f"Error codebook {cb.id} (hash {cb.hash[:12]})."
    template = _ENV.get_template(f"codebook.{fmt.value}.j2")
    return template.render(
        rows=rows,
        extra_headers=[c.header for c in cols],
        caption=caption,
        label=label,
        hq_mark=HQ_MARK,
        codebook=cb,
    )
