"""Paper-shaped tables as pandas DataFrames (pure; rendering lives in :mod:`render`).

The coded input is the wide table of :func:`failcodes.attribution.per_passage_codes` (one row
per trace x passage) or :func:`failcodes.attribution.per_trace_steps` (one row per trace): a
group column (``retriever`` or ``verifier``), ``status``, one column per dimension holding the
subcode, and the all-high flag (``all_high`` / ``all_correct``). One function serves both
Table 8 (retrieval quality by retriever) and Table 9 (reasoning by verifier), because both are
"share of each subcode per dimension, plus the rate of rows high quality on every dimension".
Rows are counted per retriever even when the judge coded a shared pair once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from failcodes.annotations import NOT_ASSESSABLE, Status
from failcodes.attribution import cell_codes, quality_rate
from failcodes.codebook import Part
from failcodes.errors import InputError

ALL_HIGH_ROW = "all_high_quality"


def code_shares(
    wide: pd.DataFrame,
    part: Part,
    *,
    by: str,
    flag: str,
    groups: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Share of each subcode per dimension and group, plus the all-high-quality rate.

    Returns one row per (dimension, subcode) in codebook order, then a final
    ``all_high_quality`` row (from :func:`failcodes.attribution.quality_rate`); columns are
    ``dimension``, ``code``, ``label``, ``high_quality``, one share column per group (in [0, 1];
    NaN where the group has no scored row) and one ``n_<group>`` column with the number of
    scored rows the shares are over: the share of rows carrying each code (a multi-label
    dimension's rows may carry several, so its shares need not add up to 1). Unscored and
    missing rows are left out, never counted as a code. A dimension some rows coded
    ``not_assessable`` gets a ``not_assessable`` row (so its shares still add up to 1); the
    all-high row is then over the assessable dimensions and
    says so in its label (docs/attribution.md).
    """
    needed = [by, "status", flag, *(d.id for d in part.dimensions)]
    missing = [c for c in needed if c not in wide.columns]
    if missing:
        raise InputError(f"coded table lacks columns {missing}; expected {needed}")
    scored = wide[wide["status"] == Status.SCORED.value]
    for dim in part.dimensions:
        given = {c for cell in scored[dim.id].dropna() for c in cell_codes(cell)}
        unknown = sorted(given - {*dim.code_ids(), NOT_ASSESSABLE})
        if unknown:
            raise InputError(
                f"code {unknown[0]!r} is not a subcode of dimension {dim.id!r} "
                f"in part {part.id.value!r}",
                field=dim.id,
            )
    group_order = list(groups) if groups is not None else sorted(map(str, wide[by].unique()))
    sizes = scored.groupby(by).size()
    rows: list[dict[str, object]] = []
    any_unassessed = False
    for dim in part.dimensions:
        # a row carrying several codes of a multi-label dimension counts once for each: the
        # shares are "share of rows carrying the code" and need not add up to 1 there
        carried = scored[[by, dim.id]].assign(**{dim.id: scored[dim.id].map(cell_codes)})
        counts = carried.explode(dim.id).groupby([by, dim.id]).size()
        codes = [(s.id, s.label, s.high_quality) for s in dim.subcodes]
        if (scored[dim.id] == NOT_ASSESSABLE).any():
            any_unassessed = True
            codes.append((NOT_ASSESSABLE, "Not assessable", False))
        for code, label, high in codes:
            row: dict[str, object] = {
                "dimension": dim.id,
                "code": code,
                "label": label,
                "high_quality": high,
            }
            for g in group_order:
                n = int(sizes.get(g, 0))
                row[g] = int(counts.get((g, code), 0)) / n if n else float("nan")
                row[f"n_{g}"] = n
            rows.append(row)
    rates = quality_rate(wide, by=by, flag=flag).set_index(by)
    all_label = "All dimensions high quality"
    if any_unassessed:
        all_label = "All assessable dimensions high quality"
    row = {"dimension": ALL_HIGH_ROW, "code": ALL_HIGH_ROW, "label": all_label}
    row["high_quality"] = True
    for g in group_order:
        rate = rates["rate"].get(g) if g in rates.index else None
        row[g] = float("nan") if rate is None or pd.isna(rate) else float(rate)
        row[f"n_{g}"] = int(rates["coded"].get(g, 0)) if g in rates.index else 0
    rows.append(row)
    return pd.DataFrame(rows)


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
    skipped. Values are formatted percentages, ready to render; "CI warning" lists the
    interval warnings of P, R and F1 (``<metric>_ci_warning``: few questions or positives,
    zero width, boundary estimate).
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
        warnings = {
            name: str(m[f"{metric}_ci_warning"])
            for metric, name in (("precision", "P"), ("recall", "R"), ("f1", "F1"))
            if m.get(f"{metric}_ci_warning")
        }
        row["CI warning"] = "; ".join(f"{k}: {v}" for k, v in warnings.items())
        rows.append(row)
    columns = ["system", "mapping", "P", "R", "F1", "TP", "FP", "FN", "TN", "CI warning"]
    return pd.DataFrame(rows, columns=columns)


def without_claims_notes(metrics: Iterable[dict[str, object]]) -> list[str]:
    """The rule for labelled sentences without claims, and how many each system had.

    One line per policy found in the sentence-level rows (``failcodes.metrics`` records it in
    ``without_claims_policy``; rows written before that field existed are left out).
    """
    from failcodes.metrics import WITHOUT_CLAIMS_RULE, WithoutClaimsPolicy

    counts: dict[str, dict[str, int]] = {}
    for m in metrics:
        policy = m.get("without_claims_policy")
        if m.get("level") != "sentence" or not isinstance(policy, str):
            continue
        per = counts.setdefault(policy, {})
        per[str(m["system"])] = max(
            per.get(str(m["system"]), 0), int(str(m.get("n_without_claims") or 0))
        )
    out = []
    for policy, per in sorted(counts.items()):
        listed = ", ".join(f"{s}: {n}" for s, n in sorted(per.items()))
        out.append(
            f"Sentences without claims: {WITHOUT_CLAIMS_RULE[WithoutClaimsPolicy(policy)]}. "
            f"Count per system: {listed}."
        )
    return out


def subset_notes(metrics: Iterable[dict[str, object]]) -> list[str]:
    """Systems whose labels cover a subset of their units (``n_unlabelled`` > 0), one line each.

    Rows of one system and level share their units; the first mapping's row speaks for them.
    """
    from failcodes.metrics import subset_note

    seen: dict[tuple[str, str], str] = {}
    for m in metrics:
        unlabelled = _count(m.get("n_unlabelled"))
        key = (str(m.get("system")), str(m.get("level") or "sentence"))
        if unlabelled and key not in seen:
            seen[key] = subset_note(key[0], key[1], _count(m.get("n")), unlabelled)
    return list(seen.values())


def never_flagged_notes(metrics: Iterable[dict[str, object]]) -> list[str]:
    """Rows where the mapping flagged none of a system's sentences (TP + FP = 0).

    Their recall of 0 is the system's verdicts seen through the mapping (a support classifier
    never says refuted), not errors it looked at and missed.
    """
    rows = [
        f"{m['system']} ({m['mapping']})"
        for m in metrics
        if m.get("n") and not _count(m.get("tp")) and not _count(m.get("fp"))
    ]
    if not rows:
        return []
    return [
        "The mapping flagged no labelled sentence of: " + ", ".join(rows) + ". Their recall of "
        "0 is their verdicts seen through the mapping (a support classifier never says "
        "refuted; see the verdict distribution), not errors missed one by one; a verifier "
        "that does not tell refuted from unsupported is measured with the non_supported mapping."
    ]


def _count(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


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
