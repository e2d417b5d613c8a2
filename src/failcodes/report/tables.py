"""Paper-shaped tables as pandas DataFrames (pure; rendering lives in :mod:`render`).

The coded input is the wide table of :func:`failcodes.attribution.per_passage_codes` (one row
per trace x passage) or :func:`failcodes.attribution.per_trace_steps` (one row per trace): a
group column (``retriever`` or ``verifier``), ``status``, one column per dimension holding the
subcode, and the all-high flag (``all_high`` / ``all_correct``). One function serves both
Table 8 (retrieval quality by retriever) and Table 9 (reasoning by verifier), because both are
"share of each subcode per dimension, plus the rate of rows high quality on every dimension".
A row repeating a (retriever, unit) an earlier row holds (:data:`failcodes.tally.REPEAT`: a
passage retrieved for several systems' claims) counts for nothing: Table 8 counts each unit of
a retriever once (:mod:`failcodes.unitrepeats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import cast

import pandas as pd

from failcodes.annotations import NOT_ASSESSABLE, Status
from failcodes.attribution import cell_codes, quality_rate
from failcodes.codebook import Part, UnitKind
from failcodes.errors import InputError
from failcodes.labels import no_claim_carries_clause
from failcodes.metrics import ERRORS_ONLY, WITHOUT_CLAIMS_RULE, WithoutClaimsPolicy, subset_note
from failcodes.tally import row_weights
from failcodes.unitrepeats import marked

ALL_HIGH_ROW = "all_high_quality"
#: Table 9's summary row: a reasoning trace correct on every step (seed 001's "all correct").
ALL_CORRECT_ROW = "all_correct"
SUMMARY_ROWS = (ALL_HIGH_ROW, ALL_CORRECT_ROW)


def summary_row(flag: str, *, partial: bool = False) -> tuple[str, str]:
    """The summary row's id and label for the flag column (``all_high`` / ``all_correct``).

    ``partial``: some dimension was not assessable, so the rate is over the assessable ones.
    """
    if flag == "all_correct":
        label = "All assessable steps correct" if partial else "All steps correct"
        return ALL_CORRECT_ROW, label
    label = "All assessable dimensions high quality" if partial else "All dimensions high quality"
    return ALL_HIGH_ROW, label


def multi_label_caption(part: Part) -> str:
    """A caption's words for a part with multi-label dimensions ('' when it has none).

    Each code's share is of the rows (traces, passages) carrying it, and a multi-label
    dimension's row may carry several codes: its shares can add up past 100% (a v2 Table 9
    read inference 25 + 50 + 50 = 125% with no word on what the 100% was).
    """
    multi = [d.label for d in part.dimensions if d.multi_label]
    if not multi:
        return ""
    one = len(multi) == 1
    return (
        f"; each share is of the n rows of its column; {', '.join(multi)} "
        f"{'is' if one else 'are'} multi-label (a row may carry several codes), so "
        f"{'its' if one else 'their'} shares can add up past 100%"
    )


def pooled_caption(coded: pd.DataFrame, by: str) -> str:
    """A caption's words naming the columns that pool several systems ('' when none does).

    Tables 8-9 have a column per retriever or verifier: systems sharing one (a closed-book
    and a retrieval system with the same verifier) are one column, which no caption said.
    """
    if "system" not in coded or by not in coded:
        return ""
    pairs = coded[[by, "system"]].drop_duplicates().astype(str)
    pooled = {
        str(group): sorted(systems)
        for group, systems in pairs.groupby(by)["system"]
        if len(systems) > 1
    }
    if not pooled:
        return ""
    named = "; ".join(f"{group}: {', '.join(systems)}" for group, systems in sorted(pooled.items()))
    return f"; a {by}'s column pools the systems that share it ({named})"


def per_group(head: str, coded: pd.DataFrame, by: str) -> str:
    """``head`` ('... per retriever') saying what Tables 8-9's columns are.

    A claim with no retriever (verifier) named is grouped under its system (the atomic
    adapter names neither): its column is the system's, which 'per retriever' did not say.
    A group named after its one system (or ``<data set>/<system>``) is such a column.
    """
    if "system" not in coded or by not in coded:
        return head
    pairs = coded[[by, "system"]].dropna().drop_duplicates().astype(str)
    systems = {str(g): set(s) for g, s in pairs.groupby(by)["system"]}
    own = sorted(
        g
        for g, s in systems.items()
        if len(s) == 1 and (g == (one := next(iter(s))) or g.endswith(f"/{one}"))
    )
    if not own:
        return head
    if len(own) == len(systems):
        return f"{head.replace(f'per {by}', 'per system')} (no {by} named: a column per system)"
    return f"{head} (no {by} named for {', '.join(own)}: a system's own column)"


def code_shares(
    wide: pd.DataFrame, part: Part, *, by: str, flag: str, groups: Sequence[str] | None = None
) -> pd.DataFrame:
    """Share of each subcode per dimension and group, plus the all-high-quality rate.

    Returns one row per (dimension, subcode) in codebook order, then a final summary row
    (``all_high_quality`` for ``flag="all_high"``, ``all_correct`` for Table 9's
    ``flag="all_correct"``; from :func:`failcodes.attribution.quality_rate`); columns are
    ``dimension``, ``code``, ``label``, ``high_quality``, one share column per group (in [0, 1];
    NaN where the group has no scored row) and one ``n_<group>`` column with the number of
    scored rows the shares are over: the share of rows carrying each code (a multi-label
    dimension's rows may carry several, so its shares need not add up to 1). Unscored and
    missing rows are left out, never counted as a code. A dimension some rows coded
    ``not_assessable`` gets a ``not_assessable`` row (so its shares still add up to 1); the
    all-high row is then over the assessable dimensions and
    says so in its label (docs/attribution.md). A retrieval table counts each (``by``, unit)
    once, with its first row's codes (:mod:`failcodes.unitrepeats`; a table without unit ids
    counts its rows).
    """
    needed = [by, "status", flag, *(d.id for d in part.dimensions)]
    missing = [c for c in needed if c not in wide.columns]
    if missing:
        raise InputError(f"coded table lacks columns {missing}; expected {needed}")
    if part.id is UnitKind.RETRIEVAL:  # each (retriever, unit) once (failcodes.unitrepeats)
        wide = marked(wide, by, ["status", flag, *(d.id for d in part.dimensions)])[0]
    scored = wide[wide["status"] == Status.SCORED.value]
    for dim in part.dimensions:
        given = {c for cell in scored[dim.id].dropna().unique() for c in cell_codes(cell)}
        unknown = sorted(given - {*dim.code_ids(), NOT_ASSESSABLE})
        if unknown:
            raise InputError(
                f"code {unknown[0]!r} is not a subcode of dimension {dim.id!r} "
                f"in part {part.id.value!r}",
                field=dim.id,
            )
    group_order = list(groups) if groups is not None else sorted(map(str, wide[by].unique()))
    weights = row_weights(scored)  # one each, or a tally's row counts (failcodes.tally)
    sizes = weights.groupby(scored[by]).sum()
    rows: list[dict[str, object]] = []
    any_unassessed = False
    for dim in part.dimensions:
        # a row carrying several codes of a multi-label dimension counts once for each: the
        # shares are "share of rows carrying the code" and need not add up to 1 there
        # counted per distinct (group, cell), then per code: a paper-scale wide table has
        # millions of rows but a few dozen distinct cells (splitting each row's cell was 40%
        # of the report's CPU); a cell without a code (missing) is left out, as before
        counts: Counter[tuple[object, str]] = Counter()
        cells = weights.groupby([scored[by], scored[dim.id]], sort=False).sum()
        for key, n in cells.items():
            g, cell = cast(tuple[object, object], key)
            for code in cell_codes(cell):
                counts[(g, code)] += int(n)
        codes = [(s.id, s.label, s.high_quality) for s in dim.subcodes]
        if ((scored[dim.id] == NOT_ASSESSABLE) & (weights > 0)).any():
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
                row[g] = counts[(g, code)] / n if n else float("nan")
                row[f"n_{g}"] = n
            rows.append(row)
    rates = quality_rate(wide, by=by, flag=flag).set_index(by)
    summary, all_label = summary_row(flag, partial=any_unassessed)
    row = {"dimension": summary, "code": summary, "label": all_label}
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
) -> str:
    """Format ``value [low, high]`` as the paper tables do (percent); '–' if undefined."""
    if value is None or pd.isna(value):
        return "–"
    text = f"{value * 100:.1f}"
    if low is not None and high is not None and not pd.isna(low) and not pd.isna(high):
        text += f" [{low * 100:.1f}, {high * 100:.1f}]"
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
        warnings = {  # or why a defined metric has none (one question: nothing to resample)
            name: str(
                m.get(f"{metric}_ci_warning")
                or f"no interval: {m[f'{metric}_ci_undefined_reason']}"
            )
            for metric, name in (("precision", "P"), ("recall", "R"), ("f1", "F1"))
            if m.get(f"{metric}_ci_warning")
            or (m.get(metric) is not None and m.get(f"{metric}_ci_undefined_reason"))
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
    rows = list(metrics)
    seen: dict[tuple[str, str], str] = {}
    others = 0
    for m in rows:
        unlabelled = _count(m.get("n_unlabelled"))
        key = (str(m.get("system")), str(m.get("level") or "sentence"))
        if unlabelled and key not in seen:
            seen[key] = subset_note(key[0], key[1], _count(m.get("n")), unlabelled)
            others += unlabelled
    notes = list(seen.values())
    # labels that list the errors alone (metrics' and disagreements' first line say it too):
    # a system flagging all 6 sentences of 2 listed errors read P 100%, F1 100% here for 33%, 50%
    if (
        notes
        and all(_count(m.get("fp")) + _count(m.get("tn")) == 0 for m in rows)
        and any(_count(m.get("tp")) + _count(m.get("fn")) for m in rows)
    ):
        level = next(iter(seen))[1]
        said = ERRORS_ONLY.removeprefix("; ").format(level=level, m=others)
        notes.append(said[0].upper() + said[1:] + ".")
    return notes


def hidden_error_notes(metrics: Iterable[dict[str, object]]) -> list[str]:
    """Claim-level rows' sentence errors no claim label carries, one line per count and first.

    ``metrics --format json`` writes them at claim level (``n_errors_no_claim_carries``): a
    sentence labelled an error whose claims each carry a no-error label counts nowhere there
    (recall 1/1 on the page for 1/2 at sentence level; run's stderr alone said it).
    """
    found: dict[tuple[int, str], list[str]] = {}
    for m in metrics:
        n = _count(m.get("n_errors_no_claim_carries"))
        if n and m.get("level") == "claim":
            systems = found.setdefault((n, str(m.get("first_error_no_claim_carries"))), [])
            if str(m.get("system")) not in systems:
                systems.append(str(m.get("system")))
    return [
        f"Claim level, {', '.join(systems)}: {no_claim_carries_clause(n, first)}."
        for (n, first), systems in found.items()
    ]


def unlabelled_claims_note(metrics: Iterable[dict[str, object]]) -> str:
    """Table 5's caption clause where labels cover part of a system's units ('' where not).

    Its shares are over every claim of the traces, labelled or not (seed 001's Table 5 is over
    its gold subset, as its P/R/F1): a study whose labels cover 2 of 4 sentences read 3 of 4
    claims refuted (75%) beside P/R/F1 over the 2 labelled ones (1 refuted, 1 supported),
    unsaid.
    """
    rows = [m for m in metrics if _count(m.get("n_unlabelled"))]
    if not rows:
        return ""
    part = sorted({str(m.get("system")) for m in rows if _count(m.get("n"))})
    none = sorted({str(m.get("system")) for m in rows} - set(part))
    covered = " and ".join(
        [f"part of the units of {', '.join(part)}"] * bool(part)
        + [f"none of the units of {', '.join(none)}"] * bool(none)
    )
    return (
        f"; over every claim of the traces, labelled or not (labels cover {covered}, and P/R/F1 "
        "only the labelled ones)"
    )


def never_flagged_notes(
    metrics: Iterable[dict[str, object]], asserting: Collection[str] = ()
) -> list[str]:
    """Rows where the mapping flagged none of a system's sentences (TP + FP = 0).

    Their recall of 0 is the system's verdicts seen through the mapping (a support classifier
    never says refuted), not errors it looked at and missed. A system in ``asserting``
    asserts every claim (no verifier): it flags nothing under any mapping, which is said of
    it instead (the note's way, the non_supported mapping, gave it recall 0 as well).
    """
    never = [
        m for m in metrics if m.get("n") and not _count(m.get("tp")) and not _count(m.get("fp"))
    ]
    rows = [f"{m['system']} ({m['mapping']})" for m in never if m["system"] not in asserting]
    asserted = sorted({str(m["system"]) for m in never if m["system"] in asserting})
    notes = []
    if rows:
        notes.append(
            "The mapping flagged no labelled sentence of: " + ", ".join(rows) + ". Their recall "
            "of 0 is their verdicts seen through the mapping (a support classifier never says "
            "refuted; see the verdict distribution), not errors missed one by one; a verifier "
            "that does not tell refuted from unsupported is measured with the non_supported "
            "mapping."
        )
    if asserted:
        notes.append(
            f"{', '.join(asserted)} assert{'s' if len(asserted) == 1 else ''} every claim (no "
            "verifier: the verdict given at ingest, 'asserted by the system'), so no mapping "
            "flags an error of it: recall 0 by construction, each labelled error it is scored "
            "on a miss."
        )
    return notes


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
    # from a notebook: a group code_shares has no column for was pandas' KeyError 'B',
    # digits=-1 a ValueError ("Format specifier missing precision"), "AB" two groups A, B
    groups = [groups] if isinstance(groups, str) else list(groups)
    have = [str(c)[2:] for c in shares.columns if str(c).startswith("n_")]
    missing = [g for g in groups if g not in shares.columns]
    if missing:
        raise InputError(
            f"{missing[0]!r} is no group of these shares (they have: {', '.join(have) or 'none'})",
            field="groups",
        )
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise InputError(f"expected a whole number >= 0, not {digits!r}", field="digits")
    out = shares[["dimension", "code"]].copy()
    for g in groups:
        out[g] = [("–" if pd.isna(v) else f"{v * 100:.{digits}f}") for v in shares[g]]
    out.attrs["keys"] = 2  # what names a row: render_table repeats both in each part
    return out


def paper_shares(
    shares: pd.DataFrame, part: Part, groups: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """:func:`code_shares` output as a paper table, and its key.

    Dimensions and codes by their labels (the key gives each label's id), one column per
    group headed with the number of rows its shares are over (``A (n=120)``), percentages.
    A summary row over fewer rows than its column (rows the all-high rule could not decide
    are out of it) says so in a note.
    """
    dims = {d.id: d.label for d in part.dimensions}
    codes = {(d.id, s.id): s.label for d in part.dimensions for s in d.subcodes}
    summary = shares["dimension"].isin(SUMMARY_ROWS).to_numpy()
    sizes = {
        g: int(shares.loc[~summary, f"n_{g}"].max()) if (~summary).any() else 0 for g in groups
    }
    records: list[dict[str, object]] = []
    for i, row in enumerate(shares.to_dict("records")):
        dim, code = str(row["dimension"]), str(row["code"])
        rec: dict[str, object] = {
            "dimension": "" if summary[i] else dims.get(dim, dim),
            "code": codes.get((dim, code), str(row["label"])),
        }
        for g in groups:
            value = row[g]
            rec[f"{g} (n={sizes[g]:,})"] = "–" if pd.isna(value) else f"{value * 100:.1f}"
        fewer = [f"{g}: n={int(row[f'n_{g}']):,}" for g in groups if int(row[f"n_{g}"]) != sizes[g]]
        rec["note"] = (
            f"over the rows every dimension could be decided on ({', '.join(fewer)})"
            if summary[i] and fewer
            else ""
        )
        records.append(rec)
    out = pd.DataFrame(records)
    if not out["note"].astype(bool).any():
        out = out.drop(columns=["note"])
    key = [
        f"{dim.label} ({dim.id}): " + "; ".join(f"{s.label} = {s.id}" for s in dim.subcodes)
        for dim in part.dimensions
    ]
    return out, key


def _stat_name(row: Mapping[str, object]) -> str:
    """A statistic's column name: the statistic, with its weights or level when not nominal."""
    name = str(row.get("statistic"))
    weights = row.get("weights")
    level = row.get("level")
    if isinstance(weights, str) and weights not in ("none", ""):
        return f"{name} ({weights})"
    if isinstance(level, str) and level not in ("nominal", ""):
        return f"{name} ({level})"
    return name


def _subject_namer(long: pd.DataFrame) -> Callable[[Mapping[str, object]], str]:
    """A row's subject as the agreement table names it: with its coders where they differ."""
    by_coders = "coders" in long.columns and long["coders"].nunique() > 1

    def subject_of(r: Mapping[str, object]) -> str:
        return f"{r['subject']} ({r['coders']})" if by_coders else str(r["subject"])

    return subject_of


def agreement_labels(long: pd.DataFrame) -> list[str]:
    """Each agreement row's label in a figure: its subject and statistic as the table names them.

    ``subject / statistic`` alone named Cohen's kappa and its quadratic-weighted form alike
    (correctness / cohen at 0.311 and at 0.633 in one figure); the statistic's weights or level
    and, where they differ, the coders are in the label as in the table's columns and rows.
    """
    subject_of = _subject_namer(long)
    records = [{str(k): v for k, v in r.items()} for r in long.to_dict("records")]
    return [f"{subject_of(r)} / {_stat_name(r)}" for r in records]


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or pd.isna(value):
        return None
    return int(value)


def _value_ci(row: Mapping[str, object], digits: int) -> str:
    value, lo, hi = row.get("value"), row.get("ci_low"), row.get("ci_high")
    if not isinstance(value, int | float) or pd.isna(value):
        return "–"
    cell = f"{float(value):.{digits}f}"
    if isinstance(lo, int | float) and isinstance(hi, int | float) and not pd.isna([lo, hi]).any():
        cell += f" [{float(lo):.{digits}f}, {float(hi):.{digits}f}]"
    beside = row.get("beside")  # what the number means, where a footnote was not enough
    return f"{cell} {beside}" if isinstance(beside, str) and beside else cell


def agreement_table(long: pd.DataFrame, *, digits: int = 3) -> pd.DataFrame:
    """The agreement rows (one per subject and statistic) as one row per subject.

    Statistics are columns (with their weights, or level when not nominal), each cell
    ``value [low, high]`` ('–' undefined); ``n`` and ``raters`` are the subject's units and
    raters (the largest over its statistics; a statistic over fewer units says so); warnings
    and why a value is undefined go to the ``note`` column (footnotes when rendered). A
    ``coders`` column (who was compared) joins the subject when it differs between rows; one
    pair for every row is the caller's to say (:func:`agreement_coders`). A ``prevalence``
    column (per-code rows: each coder's share of units carrying the code) follows ``raters``;
    a ``beside`` text follows its value in the cell (Cohen's kappa 0 by construction).
    """
    records = [{str(k): v for k, v in r.items()} for r in long.to_dict("records")]
    stats = list(dict.fromkeys(_stat_name(r) for r in records))
    prevalence = "prevalence" in long.columns and long["prevalence"].notna().any()
    subject_of = _subject_namer(long)
    subjects = list(dict.fromkeys(subject_of(r) for r in records))
    rows: list[dict[str, object]] = []
    for subject in subjects:
        mine = [r for r in records if subject_of(r) == subject]
        units = [u for u in (_int_or_none(r.get("n_units")) for r in mine) if u is not None]
        raters = [k for k in (_int_or_none(r.get("n_raters")) for r in mine) if k is not None]
        n = max(units, default=None)
        row: dict[str, object] = {
            "subject": subject,
            "n": "–" if n is None else f"{n:,}",
            "raters": "–" if not raters else str(max(raters)),
        }
        if prevalence:
            shown = [r.get("prevalence") for r in mine]
            row["prevalence"] = next((p for p in shown if isinstance(p, str) and p), "")
        notes: list[str] = []
        for stat in stats:
            hit = next((r for r in mine if _stat_name(r) == stat), None)
            row[stat] = "" if hit is None else _value_ci(hit, digits)
            if hit is None:
                continue
            for col in ("undefined_reason", "warning"):
                text = hit.get(col)
                if isinstance(text, str) and text.strip():
                    notes.append(f"{stat}: {text.strip()}")
            own = _int_or_none(hit.get("n_units"))
            if own is not None and n is not None and own != n:
                notes.append(f"{stat}: over {own:,} units")
        row["note"] = "; ".join(dict.fromkeys(notes))
        rows.append(row)
    extra = ["prevalence"] if prevalence else []
    return pd.DataFrame(rows, columns=["subject", "n", "raters", *extra, *stats, "note"])


def labelled(frame: pd.DataFrame, part: Part) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with its ``dimension`` and ``code`` (or ``subcode``) ids as labels, and a key.

    The key lists, per dimension shown, its id and the ids of the codes shown. Summary rows
    (:data:`SUMMARY_ROWS`) get their label. Columns ``label`` (now redundant) are dropped.
    """
    dims = {d.id: d for d in part.dimensions}
    code_col = "code" if "code" in frame.columns else "subcode"
    out = frame.copy()
    shown: dict[str, list[str]] = {}
    dim_labels, code_labels = [], []
    for dim_id, code_id in zip(frame["dimension"], frame[code_col], strict=True):
        dim = dims.get(str(dim_id))
        if dim is None:  # a summary row
            flag = "all_correct" if dim_id == ALL_CORRECT_ROW else "all_high"
            dim_labels.append("")
            code_labels.append(summary_row(flag)[1] if dim_id in SUMMARY_ROWS else str(code_id))
            continue
        label = next((s.label for s in dim.subcodes if s.id == code_id), str(code_id))
        dim_labels.append(dim.label)
        code_labels.append(label)
        shown.setdefault(dim.id, [])
        if code_id not in shown[dim.id]:
            shown[dim.id].append(str(code_id))
    out["dimension"] = dim_labels
    out[code_col] = code_labels
    out = out.drop(columns=[c for c in ("label",) if c in out.columns])
    key = []
    for dim_id, ids in shown.items():
        dim = dims[dim_id]
        names = {s.id: s.label for s in dim.subcodes}
        key.append(f"{dim.label} ({dim.id}): " + "; ".join(f"{names.get(i, i)} = {i}" for i in ids))
    return out, key


def agreement_coders(long: pd.DataFrame) -> str | None:
    """The one pair of coders every agreement row compares, if there is one (for a caption)."""
    if "coders" not in long.columns or long["coders"].nunique() != 1:
        return None
    return str(long["coders"].iloc[0])
