"""``failcodes agree FILE``: inter-rater agreement on a ratings table or annotation run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from failcodes import dataio, jsonio
from failcodes.annotations import Annotation
from failcodes.cli.main import app
from failcodes.cli.options import UnitColumnOpt
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.errors import ConfigError, InputError
from failcodes.sheetio import is_spreadsheet, sheet_rows
from failcodes.stats.agreement import LEVELS, STATISTICS, WEIGHTS, AgreementResult
from failcodes.stats.bootstrap import MAX_RESAMPLES

_STAT_CHOICES = (*STATISTICS, "all")
_JSON_KEYS = (
    "statistic",
    "level",
    "weights",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "confidence",
    "se",
    "se_method",
    "se_null",
    "z",
    "n_units",
    "n_rows",
    "n_single_rated",
    "n_raters",
    "n_categories",
    "observed_agreement",
    "chance_agreement",
    "n_bootstrap",
    "n_bootstrap_valid",
    "undefined_reason",
    "warning",
)


def _csv(value: str | None, option: str = "") -> list[str] | None:
    """A comma-separated option value as a list; a name given twice is a ConfigError.

    ``--raters coder_A,coder_A`` compared a rater with themself (agreement 1.0).
    """
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    twice = next((v for i, v in enumerate(items) if v in items[:i]), None)
    if twice is not None and option:
        raise ConfigError(f"{option} names {twice!r} twice")
    return items or None


def _row(res: AgreementResult, **extra: Any) -> dict[str, Any]:
    dumped = res.model_dump()
    return {**extra, **{k: dumped[k] for k in _JSON_KEYS}}


def _is_annotation_file(path: Path) -> bool:
    if path.suffix.lower() not in (".jsonl", ".ndjson") or not path.exists():
        return False
    head = jsonio.peek_jsonl(path)
    return head is not None and {"unit_id", "coder", "codes"} <= head.keys()


def _read_matrix(path: Path) -> list[list[float]]:
    """A weight matrix CSV: rows of numbers, no header (one clear line on anything else)."""
    import csv

    if not path.exists():
        raise InputError("file not found", path=path)
    rows: list[list[float]] = []
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        for line_no, row in enumerate(csv.reader(fh), 1):
            if not row:
                continue
            try:
                rows.append([float(v) for v in row])
            except ValueError:
                raise InputError(
                    f"weight matrix cells must be numbers, got {row}", path=path, line=line_no
                ) from None
            if len(rows[-1]) != len(rows[0]):
                raise InputError(
                    f"expected {len(rows[0])} cells (as in the first row), got {len(row)}",
                    path=path,
                    line=line_no,
                )
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _print_table(rows: list[dict[str, Any]], group_keys: list[str]) -> None:
    table = Table(show_lines=False)
    for key in [*group_keys, "statistic", "weights", "value", "95% CI", "se", "units", "raters"]:
        table.add_column(key)
    table.add_column("note")
    for row in rows:
        ci = (
            "-"
            if row["ci_low"] is None
            else f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}] {row['ci_method']}"
        )
        table.add_row(
            *[str(row.get(k) if row.get(k) is not None else "-") for k in group_keys],
            row["statistic"] + (f" ({row['level']})" if row["statistic"] == "krippendorff" else ""),
            row["weights"],
            _fmt(row["value"]),
            ci,
            _fmt(row["se"]),
            str(row["n_units"])
            + (f" ({row['n_rows']} rows)" if row.get("n_rows") is not None else "")
            + (f" +{row['n_single_rated']} single" if row.get("n_single_rated") else ""),
            str(row["n_raters"]),
            row["undefined_reason"] or (f"warning: {row['warning']}" if row["warning"] else ""),
        )
    Console(width=160).print(table)


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_INFINITE = re.compile(r"[+-]?inf(inity)?", re.IGNORECASE)


def _check_rating_cells(frame: Any, file: Path) -> None:
    """Refuse cells no rating can be, naming line and column (a CSV's cells are text).

    ``inf``: an infinite rating (statistics then failed naming no file). A column of numbers
    some of which have a decimal comma (``1,5``, European Excel): read as text categories.
    """
    rows = sheet_rows(file) if is_spreadsheet(file) else dataio.csv_rows(file, ())
    lines = [line for line, _ in rows]  # a quoted line break counts
    if len(lines) != len(frame):
        return  # rows the CSV reader and pandas count differently: no line to name
    for column in frame.columns:
        cells = [(lines[i], v.strip()) for i, v in enumerate(frame[column]) if isinstance(v, str)]
        for line, value in cells:
            if _INFINITE.fullmatch(value):
                raise InputError(
                    f"{value!r} is not a rating (write a number; leave the cell empty for a "
                    "missing rating)",
                    path=file,
                    line=line,
                    field=str(column),
                )
        commas = [(line, v) for line, v in cells if _DECIMAL_COMMA.fullmatch(v)]
        if commas and all(_NUMBER.fullmatch(v) or _DECIMAL_COMMA.fullmatch(v) for _, v in cells):
            line, value = commas[0]
            raise InputError(
                f"{value!r} has a decimal comma (European Excel?): write {value.replace(',', '.')}"
                " (numbers with commas are read as text categories)",
                path=file,
                line=line,
                field=str(column),
            )


@app.command("agree")
def agree(
    file: Annotated[
        Path,
        typer.Argument(
            help="Ratings table (.csv/.xlsx/.parquet/.jsonl: one row per unit, one column per "
            "rater, blank = missing), a JSONL file of annotations, or a judge panel's run folder "
            "(inter-judge agreement of its members)."
        ),
    ],
    stat: Annotated[
        str, typer.Option("--stat", help="Statistic: " + "|".join(_STAT_CHOICES) + ".")
    ] = "all",
    level: Annotated[
        str, typer.Option("--level", help="Level of measurement: " + "|".join(LEVELS) + ".")
    ] = "nominal",
    weights: Annotated[
        str, typer.Option("--weights", help="Agreement weights: " + "|".join(WEIGHTS) + ".")
    ] = "none",
    bootstrap: Annotated[
        int,
        typer.Option(
            "--bootstrap",
            min=0,
            max=MAX_RESAMPLES,
            help="Bootstrap resamples over units for BCa intervals (0: Wald intervals from the "
            "standard error).",
        ),
    ] = 2000,
    seed: Annotated[int | None, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    confidence: Annotated[float, typer.Option("--confidence", help="CI level.")] = 0.95,
    unit_column: UnitColumnOpt = None,
    raters: Annotated[
        str | None, typer.Option("--raters", help="Comma-separated rater columns to use.")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Column to group units by (e.g. dimension): one row set each."),
    ] = None,
    long: Annotated[
        str | None,
        typer.Option(
            "--long",
            help="A long table (one row per unit and rater): RATER_COLUMN,RATING_COLUMN. "
            "Found without it when one column is named like a rater (rater, coder, "
            "annotator...) and one other holds the ratings.",
        ),
    ] = None,
    categories: Annotated[
        str | None,
        typer.Option("--categories", help="Comma-separated category labels in rank order."),
    ] = None,
    codebook_path: Annotated[
        Path | None,
        typer.Option("--codebook", help="Codebook YAML (annotation files): full code lists."),
    ] = None,
    weights_matrix: Annotated[
        Path | None,
        typer.Option(
            "--weights-matrix",
            help="CSV of a q x q agreement-weight matrix (no header; rows and columns in "
            "category order: --categories, else sorted values), 1 on the diagonal. Applies to "
            "the kappa family and to Krippendorff's alpha (distance 1 - w).",
        ),
    ] = None,
    missing_data: Annotated[
        bool,
        typer.Option(
            "--missing-data",
            help="Annotation files: keep units one coder rated alone (Gwet's / Krippendorff's "
            "missing-data forms); by default each coefficient uses the units its coders both "
            "rated and counts the others.",
        ),
    ] = False,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Agreement coefficients with confidence intervals (undefined ones say why).

    For an annotation file the statistics are fixed per scope (per dimension: percent, Fleiss,
    Krippendorff nominal, AC1, Brennan-Prediger; per coder pair: percent, Cohen, AC1, alpha;
    per code, human vs machine: percent, Cohen, AC1, PABAK), over the units the coders
    compared both rated; --stat/--level/--weights apply to ratings tables. Weighted statistics
    on text labels need --categories (--stat all leaves them out and says so). An interval
    that may mislead (few units, zero width, near the ceiling...) carries a warning. See
    docs/statistics.md.
    """
    if stat not in _STAT_CHOICES:
        raise ConfigError(f"--stat must be one of {', '.join(_STAT_CHOICES)}, got {stat!r}")
    if level not in LEVELS:
        raise ConfigError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    if weights not in WEIGHTS:
        raise ConfigError(f"--weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="agree")
    # imported here: the table adapters need pandas (~0.2 s), which --help should not pay
    from failcodes.dataio import read_ratings_frame
    from failcodes.stats.tables import (
        agreement_table,
        annotation_agreement,
        choose_columns,
        long_columns,
        ratings_from_frame,
        wide_from_long,
    )

    stats = list(STATISTICS) if stat == "all" else [stat]
    rows: list[dict[str, Any]] = []
    group_keys: list[str] = []
    notes: list[str] = []
    panel_run = file.is_dir() and (file / "panel.json").exists()
    if panel_run or _is_annotation_file(file):
        table_only = {
            "--by": by,
            "--raters": raters,
            "--unit-column": unit_column,
            "--long": long,
        }
        given = [name for name, value in table_only.items() if value is not None]
        if given:  # they name columns of a ratings table: silently ignored here before
            raise ConfigError(f"{', '.join(given)}: for ratings tables, not annotation files")
        from failcodes import codebook as cbm
        from failcodes.judge.panelrun import panel_annotations

        cb = cbm.load(codebook_path) if codebook_path is not None else None
        if panel_run:
            notes.append(f"judge panel {file}: agreement between its members")
        scoped = annotation_agreement(
            panel_annotations(file) if panel_run else dataio.read_models_jsonl(file, Annotation),
            categories=None if cb is None else cb.code_lists(),
            codebook_hash=None if cb is None else cb.hash,
            n_bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
            missing_data=missing_data,
        )
        group_keys = ["scope", "dimension", "coders", "code"]
        for s in scoped:
            rows.append(
                _row(
                    s.result,
                    scope=s.scope,
                    dimension=s.dimension,
                    coders="|".join(s.coders),
                    code=s.code,
                )
            )
    else:
        matrix = None if weights_matrix is None else _read_matrix(weights_matrix)
        frame = read_ratings_frame(file)
        if file.suffix.lower() == ".csv" or is_spreadsheet(file):
            _check_rating_cells(frame, file)
        if by is not None and by not in frame.columns:
            raise InputError(f"no column '{by}' to group by", path=file)
        keep = [by] if by is not None else []
        rater_names = _csv(raters, "--raters")
        shape = long_columns(
            frame, _csv(long, "--long"), unit_column=unit_column, exclude=keep, source=file
        )
        if shape is not None:
            first_line = 2 if file.suffix.lower() == ".csv" else 1
            frame = wide_from_long(frame, shape, keep=keep, source=file, first_line=first_line)
            unit_column = shape.unit
            rater_names = rater_names or [c for c in frame.columns if c not in (*keep, shape.unit)]
            notes.append(
                f"long table ({shape.reason}): raters from column '{shape.rater}', ratings "
                f"from '{shape.rating}'"
            )
        groups = [(None, frame)] if by is None else list(frame.groupby(by, sort=True))
        group_keys = [by] if by is not None else []
        # columns are chosen once on the whole table: a small group must not drop a rater
        # whose few values happen to differ from the others'
        choice = choose_columns(
            frame,
            unit_column=unit_column,
            raters=rater_names,
            exclude=keep,
            source=file,
            unit_reason="given (--unit-column)"
            if shape is None
            else f"the long table's units ({shape.reason})",
        )
        for key, part in groups:
            table = ratings_from_frame(
                part,
                categories=_csv(categories, "--categories"),
                source=file,
                columns=choice,
            )
            results = agreement_table(
                table,
                stats,
                level=level,
                weights=matrix if matrix is not None else weights,
                n_bootstrap=bootstrap,
                seed=seed,
                confidence=confidence,
            )
            extra = {by: key[0] if isinstance(key, tuple) else key} if by is not None else {}
            extra["unit_column"] = table.unit_column
            rows.extend(_row(r, **extra) for r in results)
            used = (
                f"unit ids: column '{table.unit_column}' ({table.unit_column_reason})"
                if table.unit_column is not None
                else f"unit ids: {table.unit_column_reason}"
            ) + f"; raters: {', '.join(table.raters)}"
            if choice.left_out:
                used += (
                    f"; not raters (they share no value with the raters' ratings): "
                    f"{', '.join(choice.left_out)} (name raters with --raters to change this)"
                )
            if used not in notes:
                notes.append(used)
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for line in notes:
            typer.echo(line)
        _print_table(rows, group_keys)
