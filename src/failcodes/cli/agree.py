"""``failcodes agree FILE``: inter-rater agreement on a ratings table or annotation run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from failcodes import jsonio, tableio
from failcodes.annotations import Annotation
from failcodes.cli.main import app
from failcodes.cli.options import UnitColumnOpt, data_console
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.errors import ConfigError
from failcodes.stats.agreement import LEVELS, STATISTICS, WEIGHTS, AgreementResult
from failcodes.stats.bootstrap import MAX_RESAMPLES
from failcodes.stats.sets import SET_DISTANCES

if TYPE_CHECKING:
    from failcodes.codebook import Codebook

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
    if not items and option:  # --long "" (an unset variable) was read as not given
        raise ConfigError(f"{option} is empty; name the column(s), comma-separated")
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


def _annotations_codebook(
    annotations: list[Annotation], path: Path | None
) -> tuple[Codebook | None, str]:
    """The codebook whose code lists the statistics use, and a note saying where it came from.

    ``--codebook`` if given; else the bundled codebook the annotations cite (same hash), so
    every code of it gets its per-code row; else none (the codes observed).
    """
    from failcodes import codebook as cbm

    if path is not None:
        given = cbm.load(path)
        return given, f"code lists: {given.id} (--codebook)"
    refs = {a.codebook for a in annotations}
    if len(refs) == 1:
        ref = next(iter(refs))
        cb = cbm.bundled_for(ref)
        if cb is not None:
            return cb, f"code lists: {cb.id} (bundled; the codebook the annotations cite)"
        return None, (
            f"code lists: the codes observed ({ref} is not bundled: give --codebook for a row "
            "per code of it)"
        )
    return None, "code lists: the codes observed"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _group_cell(row: dict[str, Any], key: str) -> str:
    """A grouping cell; a dimension compared on code sets says so (``inference [sets]``)."""
    value = row.get(key)
    text = "-" if value is None else str(value)
    if key == "dimension" and row.get("sets"):
        text = "pooled [sets]" if value is None else f"{text} [sets]"
    return text


def _alpha_kind(row: dict[str, Any]) -> str:
    """`` (nominal)`` after alpha; `` (masi)``/`` (jaccard)`` for alpha on code sets."""
    if row["statistic"] != "krippendorff":
        return ""
    return f" ({row['weights'] if row['weights'] in SET_DISTANCES else row['level']})"


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
            *[_group_cell(row, k) for k in group_keys],
            row["statistic"] + _alpha_kind(row),
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
    data_console(width=160).print(table)


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
        str | None,
        typer.Option(
            "--raters",
            help="Comma-separated rater columns to use (without it, columns named like a "
            "consensus, e.g. majority_label or gold, and a column that is the majority of the "
            "others are left out, named on the first line).",
        ),
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
    from failcodes.ratingsio import read_ratings_frame, read_weight_matrix
    from failcodes.stats.tables import agreement_table, annotation_agreement, ratings_tables

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
        from failcodes.judge.panelrun import panel_annotations
        from failcodes.stats.tables import annotation_shape_line

        annotations = (
            panel_annotations(file) if panel_run else tableio.read_models_jsonl(file, Annotation)
        )
        cb, found = _annotations_codebook(annotations, codebook_path)
        multi = [] if cb is None else [d.id for _, d in cb.dimensions() if d.multi_label]
        if panel_run:
            notes.append(f"judge panel {file}: agreement between its members")
        scoped = annotation_agreement(
            annotations,
            categories=None if cb is None else cb.code_lists(),
            codebook_hash=None if cb is None else cb.hash,
            n_bootstrap=bootstrap,
            seed=seed,
            confidence=confidence,
            missing_data=missing_data,
            multi_label=multi,
        )
        notes.insert(0, f"{annotation_shape_line(annotations, multi)}; {found}")
        group_keys = ["scope", "dimension", "coders", "code"]
        for s in scoped:
            rows.append(
                _row(
                    s.result,
                    scope=s.scope,
                    dimension=s.dimension,
                    coders="|".join(s.coders),
                    code=s.code,
                    sets=s.sets,
                )
            )
    else:
        matrix = None if weights_matrix is None else read_weight_matrix(weights_matrix)
        frame = read_ratings_frame(file)
        prepared = ratings_tables(
            frame,
            unit_column=unit_column,
            raters=_csv(raters, "--raters"),
            by=by,
            long=_csv(long, "--long"),
            categories=_csv(categories, "--categories"),
            source=file,
            first_line=2 if file.suffix.lower() == ".csv" else 1,
            lines=frame.attrs.get("lines"),
        )
        notes.extend(prepared.notes)
        group_keys = [by] if by is not None else []
        for key, table in prepared.parts:
            results = agreement_table(
                table,
                stats,
                level=level,
                weights=matrix if matrix is not None else weights,
                n_bootstrap=bootstrap,
                seed=seed,
                confidence=confidence,
            )
            extra = {by: key} if by is not None else {}
            extra["unit_column"] = table.unit_column
            extra["raters"] = list(table.raters)
            extra["left_out"] = prepared.left_out()
            rows.extend(_row(r, **extra) for r in results)
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps(rows, indent=2))
    else:
        for line in notes:
            typer.echo(line)
        _print_table(rows, group_keys)
