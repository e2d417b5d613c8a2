"""An independent DuckDB script for sentence-level P/R/F1 with the cluster bootstrap (issue 30).

What a user would write next to failcodes to check its numbers: it imports nothing from
failcodes. It reads the traces (JSONL or Parquet) and the sentence labels with DuckDB, forms
each system's sentences (any claim with an error verdict flags the sentence), counts TP, FP,
FN and TN per question, and computes precision, recall and F1 with failcodes' documented
studentized cluster bootstrap over questions (docs/statistics.md): the same seed contract
(``default_rng([seed, sha256(canonical JSON of the sorted question ids)[:16]])``), weights drawn
as ``(resamples, questions)`` multinomial counts, the cluster-robust (CR1) standard error of
each resample, the percentile interval where the bootstrap-t does not apply.

Assumes what bench data has: canonical verdicts, shared sentence labels (one per sentence,
question given), every system scored on every labelled sentence (a labelled sentence a
system made no claim for counts as no error flagged).

    python bench/duckdb_metrics.py TRACES LABELS -m refuted -m non_supported --bootstrap 2000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os

import duckdb
import numpy as np

MAPPINGS = {
    "refuted": ("refuted",),
    "refuted+no_evidence": ("refuted", "no_evidence"),
    "non_supported": ("refuted", "no_evidence", "ambiguous", "out_of_scope"),
}
# (numerator, denominator) weights over the count vector (tp, fp, fn, tn)
RATIOS = {
    "precision": ((1, 0, 0, 0), (1, 1, 0, 0)),
    "recall": ((1, 0, 0, 0), (1, 0, 1, 0)),
    "f1": ((2, 0, 0, 0), (2, 1, 1, 0)),
}
MIN_EVENTS = 10


def reader(path: str) -> str:
    """The DuckDB table function of a file."""
    if path.endswith(".parquet"):
        return f"read_parquet('{path}')"
    return f"read_json('{path}', format='newline_delimited')"


def per_question_counts(traces: str, labels: str, errors: tuple[str, ...]) -> tuple:
    """(systems, questions, counts[question, system, cell]) for one mapping."""
    flagged = ", ".join(f"'{v}'" for v in errors)
    rows = duckdb.sql(
        f"""
        WITH claims AS (SELECT system, sentence_id, verdict FROM {reader(traces)}),
        sentences AS (
            SELECT system, sentence_id, bool_or(verdict IN ({flagged})) AS flagged
            FROM claims GROUP BY ALL),
        labels AS (SELECT sentence_id, question_id, has_error FROM {reader(labels)}),
        systems AS (SELECT DISTINCT system FROM claims),
        units AS (
            SELECT s.system, l.question_id, l.has_error, coalesce(t.flagged, false) AS flagged
            FROM systems s CROSS JOIN labels l
            LEFT JOIN sentences t ON t.system = s.system AND t.sentence_id = l.sentence_id)
        SELECT system, question_id,
            count_if(has_error AND flagged), count_if(NOT has_error AND flagged),
            count_if(has_error AND NOT flagged), count_if(NOT has_error AND NOT flagged)
        FROM units GROUP BY ALL ORDER BY system, question_id
        """
    ).fetchall()
    systems = sorted({r[0] for r in rows})
    questions = sorted({r[1] for r in rows})
    s_at = {s: i for i, s in enumerate(systems)}
    q_at = {q: i for i, q in enumerate(questions)}
    counts = np.zeros((len(questions), len(systems), 4), dtype=np.int64)
    for system, question, *cells in rows:
        counts[q_at[question], s_at[system]] = cells
    return systems, questions, counts


def quantiles(values: np.ndarray, qs: tuple[float, float]) -> tuple[float, float]:
    """Linear interpolation between order statistics: a + (b - a) * frac at q (n - 1)."""
    ordered = np.sort(values)
    out = []
    for q in qs:
        pos = q * (len(ordered) - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, len(ordered) - 1)
        out.append(float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - np.floor(pos))))
    return out[0], out[1]


def ratio(sums: np.ndarray, name: str) -> np.ndarray:
    num, den = (sums @ np.asarray(w, dtype=np.float64) for w in RATIOS[name])
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


def robust_se(sums: np.ndarray, squares: np.ndarray, n: int, name: str) -> np.ndarray:
    """CR1 standard error of the ratio: sqrt(n / (n - 1) g' S g), g = (u - R v) / D."""
    u, v = (np.asarray(w, dtype=np.float64) for w in RATIOS[name])
    with np.errstate(divide="ignore", invalid="ignore"):
        num, den = sums @ u, sums @ v
        g = np.zeros(sums.shape) + (u - (num / den)[..., None] * v) / den[..., None]
        var = np.einsum("...i,...ij,...j->...", g, squares, g) * (n / (n - 1))
    return np.sqrt(np.maximum(var, 0.0))


def intervals(counts: np.ndarray, questions: list[str], resamples: int, seed: int) -> list:
    """Per system: {metric: (low, high, method)} at 95%."""
    text = json.dumps(sorted(questions), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    rng = np.random.default_rng([seed, int(hashlib.sha256(text.encode()).hexdigest()[:16], 16)])
    n = counts.shape[0]
    draws = rng.integers(0, n, size=(resamples, n), dtype=np.int64)
    draws += (np.arange(resamples, dtype=np.int64) * n)[:, None]
    weights = np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n)
    flat = counts.reshape(n, -1).astype(np.float64)
    res = (weights.astype(np.float64) @ flat).reshape(resamples, *counts.shape[1:])
    outer = counts[..., :, None] * counts[..., None, :]
    squares = (weights.astype(np.float64) @ outer.reshape(n, -1).astype(np.float64)).reshape(
        resamples, *outer.shape[1:]
    )
    totals = counts.sum(axis=0)
    se0_squares = outer.sum(axis=0).astype(np.float64)
    out: list[dict] = [{} for _ in range(counts.shape[1])]
    for name, (u, v) in RATIOS.items():
        point = ratio(totals, name)
        values = ratio(res, name)
        # the standard errors a block of resamples at a time, as failcodes draws them (the
        # einsum's summation order depends on the block's shape: the last digit would differ)
        step = max(1, (1 << 18) // n)
        se = np.concatenate(
            [
                robust_se(res[i : i + step], squares[i : i + step], n, name)
                for i in range(0, resamples, step)
            ]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, (values - point[None, :]) / se, np.nan)
        se0 = robust_se(totals.astype(np.float64), se0_squares, n, name)
        num, den = totals @ np.asarray(u), totals @ np.asarray(v)
        minority = np.minimum(num, den - num)
        for s in range(counts.shape[1]):
            col, tcol = values[:, s], t[:, s]
            defined = col[~np.isnan(col)]
            if not len(defined):
                out[s][name] = (None, None, "undefined")
                continue
            tdef = tcol[~np.isnan(tcol)]
            if (
                se0[s] > 0
                and len(tdef) >= 2
                and np.isfinite(point[s])
                and minority[s] >= MIN_EVENTS
            ):
                t_lo, t_hi = quantiles(tdef, (0.025, 0.975))
                lo = min(max(point[s] - t_hi * se0[s], 0.0), 1.0)
                hi = min(max(point[s] - t_lo * se0[s], 0.0), 1.0)
                out[s][name] = (float(lo), float(hi), "studentized")
            else:
                lo, hi = quantiles(defined, (0.025, 0.975))
                out[s][name] = (float(lo), float(hi), "percentile")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces")
    parser.add_argument("labels")
    parser.add_argument("-m", "--mapping", action="append", default=[])
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    duckdb.sql(f"SET threads = {args.threads}")
    rows = []
    for mapping in args.mapping or ["refuted"]:
        systems, questions, counts = per_question_counts(
            args.traces, args.labels, MAPPINGS[mapping]
        )
        ivs = intervals(counts, questions, args.bootstrap, args.seed) if args.bootstrap else None
        for s, system in enumerate(systems):
            tp, fp, fn, tn = (int(x) for x in counts[:, s].sum(axis=0))
            row = {"system": system, "mapping": mapping, "n": tp + fp + fn + tn}
            row |= {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
            for name in RATIOS:
                value = float(ratio(np.array([tp, fp, fn, tn], dtype=np.float64), name))
                row[name] = None if np.isnan(value) else value
                if ivs is not None:
                    row[f"{name}_low"], row[f"{name}_high"], row[f"{name}_method"] = ivs[s][name]
            rows.append(row)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
