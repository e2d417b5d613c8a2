"""Paper-shaped tables as pandas DataFrames (pure; rendering lives in :mod:`render`).

The coded-unit input is a tidy table with one row per (group, unit, dimension):
columns ``group`` (retriever or verifier system), ``unit_id``, ``dimension``, ``code``.
One function serves both Table 8 (retrieval quality by retriever: five dimensions) and
Table 9 (reasoning by verifier: six steps), because both are "share of each subcode per
dimension, plus the rate of units that are high quality on every dimension".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from failcodes.codebook import Part
from failcodes.errors import InputError

CODED_COLUMNS = ("group", "unit_id", "dimension", "code")
ALL_HIGH_ROW = "all_high_quality"


def _check_coded(coded: pd.DataFrame, part: Part) -> None:
    missing = [c for c in CODED_COLUMNS if c not in coded.columns]
    if missing:
        raise InputError(f"coded table lacks columns {missing}; expected {list(CODED_COLUMNS)}")
    known = {(d.id, s.id) for d in part.dimensions for s in d.subcodes}
    pairs = set(zip(coded["dimension"], coded["code"], strict=True))
    unknown = sorted(pairs - known)
    if unknown:
        dim, code = unknown[0]
        raise InputError(
            f"code {code!r} is not a subcode of dimension {dim!r} in part {part.id.value!r}",
            field="code",
        )


def code_shares(
    coded: pd.DataFrame, part: Part, groups: Sequence[str] | None = None
) -> pd.DataFrame:
    """Share of each subcode per dimension and group, plus the all-high-quality rate.

    Returns one row per (dimension, subcode) in codebook order, then a final
    ``all_high_quality`` row; columns are ``dimension``, ``code``, ``label``,
    ``high_quality``, then one column per group with shares in [0, 1] and one ``n_<group>``
    column per group with the number of units the shares are over. Shares of a dimension are
    over the units of that group coded on that dimension; the all-high rate is over units coded
    on *every* dimension of the part (a unit missing a dimension cannot be called high quality).
    """
    _check_coded(coded, part)
    group_order = list(groups) if groups is not None else sorted(coded["group"].unique())
    counts = coded.groupby(["group", "dimension", "code"]).size()
    per_dim = coded.groupby(["group", "dimension"])["unit_id"].nunique()
    rows: list[dict[str, object]] = []
    for dim in part.dimensions:
        for sub in dim.subcodes:
            row: dict[str, object] = {
                "dimension": dim.id,
                "code": sub.id,
                "label": sub.label,
                "high_quality": sub.high_quality,
            }
            for g in group_order:
                n = int(per_dim.get((g, dim.id), 0))
                k = int(counts.get((g, dim.id, sub.id), 0))
                row[g] = k / n if n else float("nan")
                row[f"n_{g}"] = n
            rows.append(row)
    all_high = all_high_rates(coded, part)
    row = {"dimension": ALL_HIGH_ROW, "code": ALL_HIGH_ROW, "label": "All dimensions high quality"}
    row["high_quality"] = True
    for g in group_order:
        rate, n = all_high.get(g, (float("nan"), 0))
        row[g] = rate
        row[f"n_{g}"] = n
    rows.append(row)
    return pd.DataFrame(rows)


def all_high_rates(coded: pd.DataFrame, part: Part) -> dict[str, tuple[float, int]]:
    """Per group: (share of fully coded units high quality on every dimension, n units)."""
    high = {d.id: d.high_quality_code for d in part.dimensions}
    dims = set(high)
    frame = coded[coded["dimension"].isin(dims)].copy()
    frame["is_high"] = [
        high[d] == c for d, c in zip(frame["dimension"], frame["code"], strict=True)
    ]
    per_unit = frame.groupby(["group", "unit_id"]).agg(
        n_dims=("dimension", "nunique"), all_high=("is_high", "all")
    )
    complete = per_unit[per_unit["n_dims"] == len(dims)]
    out: dict[str, tuple[float, int]] = {}
    for g, sub in complete.groupby(level="group"):
        out[str(g)] = (float(sub["all_high"].mean()), len(sub))
    return out


def dominant_errors(coded: pd.DataFrame, part: Part, top: int = 3) -> pd.DataFrame:
    """The ``top`` most frequent low-quality subcodes per group, with their share of units."""
    _check_coded(coded, part)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    errors = coded[
        [high.get(d) != c for d, c in zip(coded["dimension"], coded["code"], strict=True)]
    ]
    n_units = coded.groupby("group")["unit_id"].nunique()
    counts = (
        errors.groupby(["group", "dimension", "code"])["unit_id"].nunique().reset_index(name="n")
    )
    counts["share"] = [n / n_units[g] for g, n in zip(counts["group"], counts["n"], strict=True)]
    counts = counts.sort_values(
        ["group", "n", "dimension", "code"], ascending=[True, False, True, True]
    )
    return counts.groupby("group").head(top).reset_index(drop=True)


def format_ci(
    value: float | None,
    low: float | None,
    high: float | None,
    *,
    scale: float = 100.0,
    digits: int = 1,
) -> str:
    """Format ``value [low, high]`` as the paper tables do (percent); '–' if undefined."""
    if value is None or pd.isna(value):
        return "–"
    text = f"{value * scale:.{digits}f}"
    if low is not None and high is not None and not pd.isna(low) and not pd.isna(high):
        text += f" [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"
    return text


def prf_table(metrics: Iterable[dict[str, object]], *, level: str = "sentence") -> pd.DataFrame:
    """P/R/F1 with CIs by system and mapping (the shape of seed 001's Tables 2, 3, 4 and 6).

    ``metrics`` are the JSON objects of ``failcodes metrics --format json`` (keys ``system``,
    ``mapping``, ``level``, ``precision``, ``precision_ci_low`` ...). Rows of other levels are
    skipped. Values are formatted percentages, ready to render.
    """
    rows = []
    for m in metrics:
        if m.get("level") != level:
            continue
        row: dict[str, object] = {"system": m["system"], "mapping": m["mapping"]}
        for metric, name in (("precision", "P"), ("recall", "R"), ("f1", "F1")):
            row[name] = format_ci(
                _num(m.get(metric)),
                _num(m.get(f"{metric}_ci_low")),
                _num(m.get(f"{metric}_ci_high")),
            )
        row["TP"], row["FP"], row["FN"], row["TN"] = (
            m.get("tp"),
            m.get("fp"),
            m.get("fn"),
            m.get("tn"),
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=["system", "mapping", "P", "R", "F1", "TP", "FP", "FN", "TN"])


def _num(value: object) -> float | None:
    if isinstance(value, dict):  # {"value": ..., "undefined_reason": ...}
        value = value.get("value")
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    raise InputError(f"expected a number, got {value!r}")


def percent_table(shares: pd.DataFrame, groups: Sequence[str], *, digits: int = 1) -> pd.DataFrame:
    """Turn :func:`code_shares` output into a printable table of percentages."""
    out = shares[["dimension", "code"]].copy()
    for g in groups:
        out[g] = [("–" if pd.isna(v) else f"{v * 100:.{digits}f}") for v in shares[g]]
    return out
