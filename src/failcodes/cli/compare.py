"""``failcodes compare FILE``: significance tests between systems on the same units."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import numpy.typing as npt
import typer
from rich.table import Table

from failcodes.cli.claims_option import WithoutClaimsOpt
from failcodes.cli.main import app
from failcodes.cli.options import MappingOpt, UnitColumnOpt, data_console, load_inputs
from failcodes.cli.output_format import FormatOpt, OutputFormat, require_format
from failcodes.errors import ConfigError, InputError
from failcodes.labelio import refuse_claim_labels
from failcodes.mapping import DEFAULT_MAPPING
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, WITHOUT_CLAIMS_RULE, WithoutClaimsPolicy
from failcodes.stats.bootstrap import MAX_RESAMPLES
from failcodes.stats.classification import compare_against_truth, compare_systems
from failcodes.stats.tests import TestResult

_TRUE = {"1", "1.0", "true", "yes", "y", "t"}
_FALSE = {"0", "0.0", "false", "no", "n", "f"}


def _binary(values: list[Any], column: str, path: Path) -> list[float]:
    out: list[float] = []
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and np.isnan(v)) or str(v).strip() == "":
            out.append(float("nan"))
            continue
        text = str(v).strip().lower()
        if text in _TRUE:
            out.append(1.0)
        elif text in _FALSE:
            out.append(0.0)
        else:
            raise InputError(
                f"expected 0/1 (or true/false), got {v!r}", path=path, line=i + 2, field=column
            )
    return out


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


@app.command("compare")
def compare(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Paired outcomes (.csv/.parquet/.jsonl): one row per unit, one 0/1 column per "
            "system (blank = missing); with --truth, the columns are predictions. Or give "
            "--traces and --labels instead."
        ),
    ] = None,
    traces_paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--traces",
            help="Trace file(s) of the systems to compare, instead of FILE; repeat for several "
            "(as in `metrics`).",
        ),
    ] = None,
    labels_path: Annotated[
        Path | None, typer.Option("--labels", help="Clinical labels (with --traces).")
    ] = None,
    mappings: MappingOpt = None,
    truth: Annotated[
        str | None,
        typer.Option(
            "--truth",
            help="Column with the reference (1 = positive). Adds F1/recall tests; Cochran/"
            "McNemar then compare hits on the positive units (recall).",
        ),
    ] = None,
    unit_column: UnitColumnOpt = None,
    systems: Annotated[
        str | None, typer.Option("--systems", help="Comma-separated system columns.")
    ] = None,
    metrics: Annotated[
        str, typer.Option("--metrics", help="With --truth: f1,recall (comma-separated).")
    ] = "f1,recall",
    method: Annotated[
        str, typer.Option("--method", help="permutation|bootstrap (F1/recall tests).")
    ] = "permutation",
    resamples: Annotated[
        int,
        typer.Option("--resamples", min=0, max=MAX_RESAMPLES, help="Permutations/resamples."),
    ] = 10_000,
    seed: Annotated[int | None, typer.Option("--seed")] = None,
    exact_below: Annotated[
        int, typer.Option("--exact-below", help="Exact McNemar below this many discordant pairs.")
    ] = 25,
    without_claims: WithoutClaimsOpt = DEFAULT_WITHOUT_CLAIMS,
    fmt: FormatOpt = OutputFormat.TABLE,
) -> None:
    """Cochran's Q, pairwise McNemar and F1/recall differences, all Holm-adjusted.

    With --traces (repeatable) and --labels, every labelled sentence is one paired unit; each
    -m mapping (default: refuted) gives its own set of tests, Holm-adjusted within the set.
    """
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="compare")
    if method not in ("permutation", "bootstrap"):
        raise ConfigError(f"--method must be permutation or bootstrap, got {method!r}")
    wanted = [m.strip() for m in metrics.split(",") if m.strip()]
    bad = [m for m in wanted if m not in ("f1", "recall")]
    if bad:
        raise ConfigError(f"--metrics accepts f1 and recall, got {bad}")
    # imported here: the table adapters need pandas (~0.2 s), which --help should not pay
    from failcodes.outcomes import paired_outcomes_from_traces
    from failcodes.ratingsio import read_ratings_frame
    from failcodes.stats.tables import id_named

    sources: list[Path]
    claims_note: dict[str, Any] = {}
    # one (mapping, predictions, truth) per mapping; a ratings FILE has one, named None
    sets: list[tuple[str | None, npt.NDArray[np.float64], npt.NDArray[np.float64] | None]] = []
    if traces_paths or labels_path is not None:
        if file is not None or not traces_paths or labels_path is None:
            raise ConfigError("give either FILE, or both --traces and --labels")
        if truth is not None:
            raise ConfigError("--truth names a column of FILE; with --traces the labels are it")
        traces, labels = load_inputs(traces_paths, labels_path)
        refuse_claim_labels(  # the paired units are sentences
            labels,
            labels_path,
            "compare pairs sentences: give sentence labels (ingest generic --label-rule ... "
            "--option label_level=sentence makes them)",
        )
        names = []
        for mapping in dict.fromkeys(mappings or [DEFAULT_MAPPING]):
            paired = paired_outcomes_from_traces(
                traces, labels, mapping, without_claims=without_claims
            )
            claims_note = {
                "without_claims_policy": paired.policy.value,
                "n_without_claims": paired.without_claims,
            }
            names = paired.systems
            preds = paired.predictions
            if systems:
                wanted_sys = [s.strip() for s in systems.split(",") if s.strip()]
                unknown = [s for s in wanted_sys if s not in paired.systems]
                if unknown:
                    raise ConfigError(f"--systems: no traces for {unknown} (have {names})")
                preds = preds[:, [paired.systems.index(s) for s in wanted_sys]]
                names = wanted_sys
            sets.append((mapping, preds, paired.truth))
        sources = list(traces_paths)
    else:
        if file is None:
            raise ConfigError("give FILE, or --traces and --labels")
        if mappings:
            raise ConfigError("-m/--mapping goes with --traces (a FILE holds 0/1 outcomes)")
        sources = [file]
        frame = read_ratings_frame(file)
        cols = [str(c) for c in frame.columns]
        skip = {c for c in (truth, unit_column) if c is not None}
        if unit_column is None:  # the id-column rule of `agree` (failcodes.stats.tables)
            skip |= {c for c in cols if id_named(c)}
        names = (
            [s.strip() for s in systems.split(",")]
            if systems
            else [c for c in cols if c not in skip]
        )
        for col in [*names, *([truth] if truth else [])]:
            if col not in cols:
                raise InputError(f"no column '{col}' (columns: {cols})", path=file)
        if len(names) < 2:
            raise InputError(f"need at least two system columns, got {names}", path=file)
        data = np.column_stack([_binary(frame[c].tolist(), c, file) for c in names])
        y_truth = None if truth is None else np.array(_binary(frame[truth].tolist(), truth, file))
        sets.append((None, data, y_truth))
    results: list[tuple[str | None, TestResult]] = []
    for mapping_name, data, y_truth in sets:
        found = (
            compare_systems(data, names, exact_below=exact_below)
            if y_truth is None
            else compare_against_truth(
                y_truth,
                data,
                names,
                metrics=wanted,  # type: ignore[arg-type]
                method=method,  # type: ignore[arg-type]
                n_resamples=resamples,
                seed=seed,
                exact_below=exact_below,
            )
        )
        results.extend((mapping_name, r) for r in found)
    with_mapping = sets[0][0] is not None
    rows = [({"mapping": m} if with_mapping else {}) | r.model_dump() for m, r in results]
    if fmt is OutputFormat.JSON:
        payload = {
            "file": str(sources[0]),
            "files": [str(s) for s in sources],
            "systems": names,
            **claims_note,
            "tests": rows,
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    table = Table()
    head = ["mapping"] if with_mapping else []
    for col in (*head, "test", "comparison", "statistic", "df", "p", "p (Holm)", "effect", "n"):
        table.add_column(col)
    table.add_column("note")
    for m, r in results:
        table.add_row(
            *([m or ""] if with_mapping else []),
            r.test,
            r.comparison,
            _fmt(r.statistic),
            "-" if r.df is None else str(r.df),
            _fmt(r.p_value),
            _fmt(r.p_holm),
            "-" if r.effect is None else f"{r.effect_name}={r.effect:.4g}",
            str(r.n),
            r.undefined_reason or "",
        )
    data_console(width=160).print(table)
    if claims_note:
        counts = ", ".join(f"{s}: {n}" for s, n in sorted(claims_note["n_without_claims"].items()))
        rule = WITHOUT_CLAIMS_RULE[WithoutClaimsPolicy(claims_note["without_claims_policy"])]
        typer.echo(f"sentences without claims: {rule}; per system: {counts}")
