"""Tables 8-9 corrected by human review: judge-only, human-only and corrected shares per cell.

Input: the coded table the plan was drawn from (one row per trace x passage, or per trace),
the :class:`~failcodes.reviewplan.ReviewPlan`, and the human annotations pulled for it. Every
cell of Table 8 / 9 (a system x a subcode, plus the all-high / all-correct rate) is a share of
rows; a row counts as reviewed when its unit is in the plan's estimation sample and a human
coded it. Within a cell the rows are split by the unit's plan stratum, and
:func:`failcodes.stats.ppi.share_estimates` combines the strata (weights: their shares of the
cell's rows). Targeted units and units reviewed outside the plan never enter the estimates
(their judge codes count as unreviewed rows, like every other unit not drawn). The all-high
cell uses the judge table's rule (:func:`failcodes.attribution.is_all_high`) for the human
codes too; rows the judge's rule left undecided are out of that cell, as in Table 8; a reviewed
unit whose human codes assess no dimension counts as not all-high.

A unit drawn but not reviewed yet is treated as not drawn (its judge code counts); the
estimate then assumes the missing reviews are missing at random, and the table says how many
are missing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
from pydantic import Field

from failcodes.annotations import Annotation, Status
from failcodes.attribution import ReviewedAttribution, Stage, cell_codes, code_columns, is_all_high
from failcodes.codebook import Part, UnitKind
from failcodes.contract import FrozenModel
from failcodes.errors import StatisticsError
from failcodes.report.tables import summary_row
from failcodes.reviewplan import FLAG_COLUMN, GROUP_COLUMN, ReviewPlan
from failcodes.stats.ppi import MIN_REVIEWED, ShareEstimates, Stratum, share_estimates

METHOD_NOTE = (
    "Corrected shares: prediction-powered inference (Angelopoulos et al., Science 2023) "
    "combines the judge's codes on every unit with the human codes on the plan's random "
    "estimation sample (stratified weights when the plan is stratified). Judge-only: the "
    "judge's share with no correction (biased whenever the judge is). Human-only: the reviewed "
    "units' share (Clopper-Pearson's exact interval; over strata, MOVER); with a plan "
    "stratified by the judge's code it is a judge-stratified human estimate (weights from the "
    "judge's codes) and says so. Corrected: within each stratum the units are split by the "
    "judge's code, and each part's share of the units (known: the judge coded every unit) "
    "weights the human share of its reviewed units (post-stratification; a part with no "
    "reviewed unit takes its stratum's human share): the point its interval is built around, "
    "an estimate of the share in the population the judged units are a sample of (as in PPI), "
    "not a count of the units here. lambda: the weight PPI++ (Angelopoulos, Duchi & Zrnic "
    "2023) gives the judge; PPI++'s point, tuned on the same reviewed units (ppi_py's number; "
    "corrected_ppi in the report's JSON), is not printed: it is biased low where the judge is "
    "accurate (-0.7 points on a 5% share at 50 reviewed units and judge accuracy 0.95; "
    "bench/bench_s29_ppi_seed.py). The 95% interval "
    "combines the human shares' Clopper-Pearson intervals of the parts by MOVER (Zou & Donner "
    "2008), its bound toward the nearer end of 0-100% no tighter than a Beta fitted to the "
    "parts' exact bounds (as Fay & Feuer 1997 for rates), so it needs no disagreements in the "
    "sample (measured coverage 0.96-1.00 over judge accuracy 0.7-0.95 and over sensitivity "
    "0.7-0.95 x specificity 0.9-0.995, prevalence 0.02-0.3, 30-300 reviewed units: "
    "bench/bench_ppi_coverage.py --grid accuracy, --grid regime). n_eff: reviewed units a "
    "human-only "
    "simple random sample would need for the same width. disagree: reviewed units whose human "
    "code differs from the judge's. A unit in several rows counts as one review (Kish's "
    "effective sample size). A cell with fewer than 10 reviewed units is not estimated. "
    "Targeted review units are left out of every estimate."
)


def _human_flag(ann: Annotation, part: Part) -> bool:
    """The all-high rule of the judge's table (not-assessable dimensions left out)."""
    return is_all_high(ann, {d.id: d.high_quality_code for d in part.dimensions}) is True


def _flag(value: object) -> float:
    return float(value is True or value == "True" or value == 1)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _ci(low: float, high: float) -> str:
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def _gain(effective: float, reviewed: int) -> str:
    """``n_eff (+gain)``; a loss shows as ``-k``."""
    shown = round(effective)
    gain = shown - reviewed
    return f"{shown} ({'+' if gain >= 0 else '-'}{abs(gain)})"


def corrected_notes_key(part: UnitKind) -> str:
    """Key of the report inputs' ``notes`` for the review-plan notes of one part's tables."""
    return f"corrected:{part.value}"


def _estimate(strata: list[Stratum]) -> tuple[ShareEstimates | None, str | None]:
    """The cell's 95% estimates, or None and why (a cell too small to estimate says so)."""
    try:
        return share_estimates(strata), None
    except StatisticsError as exc:
        return None, str(exc)


def corrected_rows(
    coded: pd.DataFrame,
    plan: ReviewPlan,
    humans: Mapping[str, Annotation],
    part: Part,
    *,
    narrow: Mapping[str, Sequence[str]] | None = None,
) -> list[dict[str, Any]]:
    """One dict per cell (system x subcode, and the all-high rate) with all three estimates.

    A retrieval cell counts each (retriever, unit) once (:mod:`failcodes.unitrepeats`).

    Keys: ``dimension``, ``code``, ``system``, ``rows``, ``reviewed``, ``estimates``
    (:class:`ShareEstimates` or None), ``undefined_reason``, ``judge_share`` (the judge's share
    of the cell's rows, known where no estimate is; None: no row) and ``narrow``. ``narrow`` (the
    argument): unit id -> the steps its review coded with one code under an earlier codebook
    version that take several now (v1 -> v2, :mod:`failcodes.reviewversions`); a cell counts
    its reviewed units whose review is narrow on its dimension (the all-high rate: on any), so
    its row can say that its human and corrected shares rest on possibly incomplete sets.
    """
    narrow = narrow or {}
    by, flag = GROUP_COLUMN[plan.part], FLAG_COLUMN[plan.part]
    if plan.part is UnitKind.RETRIEVAL:  # each (retriever, unit) once, its first row, as
        # Table 8 counts it: a passage retrieved for several systems' claims weighed once per
        # system in the judge-only share, its unreviewed rows and the 'units' column
        coded = coded[~coded[[by, "unit_id"]].astype(str).duplicated()]
    scored = coded[coded["status"] == Status.SCORED.value].copy()
    sample = plan.estimation_ids()
    reviewed_ids = {
        uid for uid, ann in humans.items() if uid in sample and ann.status is Status.SCORED
    }
    scored["_reviewed"] = scored["unit_id"].astype(str).isin(reviewed_ids)
    scored["_stratum"] = [plan.unit_strata.get(str(u), "?") for u in scored["unit_id"]]
    cells: list[tuple[str, str, Any]] = [
        (d.id, s.id, (d.id, s.id)) for d in part.dimensions for s in d.subcodes
    ]
    summary = summary_row(flag)[0]  # all_high_quality (Table 8), all_correct (Table 9)
    cells.append((summary, summary, None))
    dims = [d.id for d in part.dimensions]
    # a review with no code on a dimension (a reviewer's tool left its choice empty) did not
    # review that dimension: for the dimension's cells (and the all-high rate, which needs
    # every dimension) it counts as not reviewed, like a drawn unit not reviewed yet; read as
    # "not this code" it pulled every code of the dimension down (shares summing to 67%)
    lacks = {dim: {uid for uid in reviewed_ids if dim not in humans[uid].codes} for dim in dims}
    # the all-high rate: a review whose rule cannot be told (every dimension not_assessable)
    # is not reviewed for it, as the judge's undecided rows are left out (it counted as "not
    # all high"); so is one with a dimension without a code, whatever its other codes: kept
    # where another dimension was low (decided: not all high) and left out where the rest
    # were high, the gaps took out all-high units only (10 random gaps among 40 reviews, 20
    # all high: 15/35 = 42.9% for 15/30 = 50.0%; Label Studio offers no not_assessable, and a
    # trust dimension left empty on every review read 0.0 [0.0, 16.8] for 50%)
    high = {d.id: d.high_quality_code for d in part.dimensions}
    lacks_any = {
        uid
        for uid in reviewed_ids
        if is_all_high(humans[uid], high) is None or any(uid in lacks[dim] for dim in dims)
    }
    out: list[dict[str, Any]] = []
    for system in sorted(map(str, scored[by].unique())):
        rows = scored[scored[by].astype(str) == system]
        for dim_id, code_id, target in cells:
            missing = lacks_any if target is None else lacks[dim_id]
            cell_reviewed = rows["_reviewed"] & ~rows["unit_id"].astype(str).isin(missing)
            strata: list[Stratum] = []
            for _, piece in rows.groupby("_stratum", sort=True):
                here = cell_reviewed.loc[piece.index]
                rev = piece[here]
                rest = piece[~here]
                if target is None:  # rows the judge's all-high rule could not decide are out
                    rev = rev[rev[flag].notna()]
                    rest = rest[rest[flag].notna()]
                    yhat = [_flag(v) for v in rev[flag]]
                    yhat_u = [_flag(v) for v in rest[flag]]
                    y = [float(_human_flag(humans[str(u)], part)) for u in rev["unit_id"]]
                else:
                    # a multi-label step (codebook v2) carries every code of its set, on
                    # both sides: the judge's cell joins them ('a|b'), a review lists them
                    # in code_sets; reading the first code only put co-occurring codes at 0%
                    yhat = [float(code_id in cell_codes(v)) for v in rev[dim_id]]
                    yhat_u = [float(code_id in cell_codes(v)) for v in rest[dim_id]]
                    y = [float(code_id in humans[str(u)].code_set(dim_id)) for u in rev["unit_id"]]
                clusters = [str(u) for u in rev["unit_id"]]
                strata.append(Stratum(y=y, yhat=yhat, yhat_unlabeled=yhat_u, clusters=clusters))
            estimates, reason = _estimate(strata)
            units = set(rows.loc[cell_reviewed, "unit_id"].astype(str))
            # the judge's share of the cell's rows: known where no estimate is (Table 8's)
            coded_n = sum(len(s.yhat) + len(s.yhat_unlabeled) for s in strata)
            judge_n = sum(sum(s.yhat) + sum(s.yhat_unlabeled) for s in strata)
            # a unit in several rows of one system (a duplicated chunk or claim) is one review:
            # its rows count as one unit in the intervals (Stratum.clusters), and a cell needs
            # 10 distinct reviewed units (6 units in 12 rows passed the minimum on its rows)
            if estimates is not None and len(units) < MIN_REVIEWED:
                estimates, reason = (
                    None,
                    f"too small to estimate: {len(units)} reviewed unit(s) in the cell (at "
                    f"least {MIN_REVIEWED} needed; its {int(cell_reviewed.sum())} reviewed rows "
                    "repeat units)",
                )
            out.append(
                {
                    "dimension": dim_id,
                    "code": code_id,
                    "system": system,
                    "rows": len(rows),
                    "reviewed": int(cell_reviewed.sum()),
                    "uncoded": int(rows["_reviewed"].sum() - cell_reviewed.sum()),
                    "reviewed_units": len(units),
                    "estimates": estimates,
                    "undefined_reason": reason,
                    "judge_share": judge_n / coded_n if coded_n else None,
                    "narrow": sum(
                        bool(narrow.get(u)) if target is None else dim_id in narrow.get(u, ())
                        for u in units
                    ),
                }
            )
    return out


#: Column of the human estimate: what it is depends on the plan's strata.
HUMAN_ONLY = "human-only (%)"
HUMAN_STRATIFIED = "human, judge-stratified (%)"


def _estimate_columns(
    e: ShareEstimates | None,
    reason: str | None,
    *,
    judge_stratified: bool,
    judge_share: float | None = None,
) -> dict[str, Any]:
    """The estimate columns of one row of a corrected table (``–`` and the reason if none).

    ``judge_share``: the judge's share where no estimate is: shown (it needs no review; a
    cell too small to estimate showed '–' beside Table 8's number), '–' only without it.
    """
    human_col = HUMAN_STRATIFIED if judge_stratified else HUMAN_ONLY
    if e is None:
        judge = "–" if judge_share is None else _pct(judge_share)
        rec: dict[str, Any] = {"judge-only (%)": judge, human_col: "–", "corrected (%)": "–"}
        rec.update({"lambda": "–", "n_eff": "–"})
        if judge_stratified:
            rec["n_eff (strata)"] = "–"
        rec.update({"disagree": "–", "note": reason})
        return rec
    rec = {
        "judge-only (%)": _pct(e.judge.estimate),
        human_col: f"{_pct(e.human.estimate)} {_ci(e.human.ci_low, e.human.ci_high)}",
        "corrected (%)": f"{_pct(e.corrected.estimate)} "
        f"{_ci(e.corrected.ci_low, e.corrected.ci_high)}",
        "lambda": f"{e.lam:.2f}",
        "n_eff": _gain(e.effective_n, e.n_reviewed),
    }
    if judge_stratified:
        rec["n_eff (strata)"] = _gain(e.effective_n_human, e.n_reviewed)
    rec.update({"disagree": str(e.disagreements), "note": ""})
    return rec


def corrected_table(
    rows: list[dict[str, Any]], by: str, *, judge_stratified: bool = False
) -> pd.DataFrame:
    """Printable table: judge-only, human [CI], corrected [CI], lam, n_eff, disagreements.

    ``judge_stratified``: the plan was stratified by the judge's code, so the human estimate
    weights its strata by the judge's codes: its column is named for that, and ``n_eff
    (strata)`` shows what the stratification (the judge) added to it.
    """
    records = []
    for r in rows:
        rec: dict[str, Any] = {
            "dimension": r["dimension"],
            "code": r["code"],
            by: r["system"],
            "units": r["rows"],
            "reviewed": r["reviewed"],
        }
        rec.update(
            _estimate_columns(
                r["estimates"],
                r["undefined_reason"],
                judge_stratified=judge_stratified,
                judge_share=r.get("judge_share"),
            )
        )
        if r.get("uncoded"):
            left = (
                f"{r['uncoded']} reviewed unit(s) whose all-high rule cannot be told (a "
                "dimension without a code, or none assessed) counted as not reviewed"
                if r["code"] == r["dimension"]
                else f"{r['uncoded']} reviewed unit(s) with no code on {r['dimension']} "
                "counted as not reviewed"
            )
            rec["note"] = "; ".join(x for x in (left, rec["note"]) if x)
        repeated = r["reviewed"] - r.get("reviewed_units", r["reviewed"])
        if repeated > 0 and r["estimates"] is not None:
            rec["note"] = "; ".join(
                x
                for x in (
                    f"the {r['reviewed']} reviewed rows are {r['reviewed_units']} distinct units "
                    "(a unit in several rows): the intervals count each unit once (Kish's "
                    "effective sample size)",
                    rec["note"],
                )
                if x
            )
        if r.get("narrow"):
            rec["note"] = "; ".join(x for x in (rec["note"], _narrow_note(r)) if x)
        records.append(rec)
    return pd.DataFrame(records)


#: What a '–' in a corrected table means (said in its caption where one shows).
DASH_TEXT = (
    "'–': not estimated (the row's note says why, e.g. fewer than 10 reviewed units in the "
    "cell); the judge-only share needs no review and is shown wherever the judge coded the "
    "cell's units"
)


def dash_clause(table: pd.DataFrame) -> str:
    """``'; ' + DASH_TEXT`` when a cell of ``table`` shows '–', else ''."""
    return f"; {DASH_TEXT}" if bool((table.astype(str) == "–").any().any()) else ""


def _narrow_note(row: Mapping[str, Any]) -> str:
    """Beside a cell resting on reviews migrated from a version where its step took one code."""
    if row["code"] == row["dimension"]:  # the all-high / all-correct rate
        return (
            f"{row['narrow']} reviewed unit(s) migrated from an earlier codebook version, "
            "where a step took one code: a co-occurring code may be missing, so this rate "
            "may overcount"
        )
    return (
        f"{row['narrow']} reviewed unit(s) migrated from an earlier codebook version, where "
        f"{row['dimension']} took one code: a co-occurring code may be missing, so this "
        "share may undercount"
    )


# -- the attribution (Figure 1) corrected -------------------------------------------------

#: Stratum of the items whose stage no judge code enters (closed-book, gold evidence, ...).
NO_JUDGE_CODE = "no judge code"

ATTRIBUTION_NOTE = (
    "Corrected attribution: each disagreement's stage is attributed again from the reviewer's"
    " codes by the same rule (a passage all-high on every assessed dimension -> verification;"
    " none -> retrieval, or evidence when it was given with the item), where every passage "
    "its stage rests on is in the plan's estimation sample and reviewed. Judge-only: the "
    "shares from the judge's codes (Figure 1's counts; over the items kept where a row leaves"
    " some out). Human-only: the shares among the reviewed items. Corrected: as in Tables 8-9"
    " (post-stratified by the judge's code) over the items, stratified by how many of an "
    "item's passages fall in each plan stratum (within such a group every item had the same "
    "chance to be fully reviewed); items whose stage no judge code enters (closed-book, gold "
    "evidence) count as reviewed. An item with several passages is fully reviewed only when "
    "all of them were drawn: with a passage-level plan, groups of multi-passage items can "
    "hold too few reviewed items to estimate (the note says so)."
)


def _composition(units: Sequence[str], plan: ReviewPlan) -> str:
    """The item's group: how many of its passages fall in each plan stratum."""
    if not units:
        return NO_JUDGE_CODE
    counts = Counter(plan.unit_strata.get(u, "?") for u in units)
    return ", ".join(f"{n} x {key}" for key, n in sorted(counts.items()))


#: Below this Fisher p-value the judge's codes of the drawn units reviewed and not reviewed
#: differ enough to say the reviews are not a random part of the drawn units.
SKEW_P = 0.05


def judge_doubts(root: Path, plan: ReviewPlan) -> dict[str, set[str]]:
    """The plan's drawn units its judge run doubted, by how (none without its annotations).

    A single judge: the units it flagged uncertain (Label Studio shows them "[judge
    uncertain]"). A judge panel (its folder holds ``panel.json`` and no annotations.jsonl: the
    check found nothing there) doubts the units its members split on (``panel.json``'s
    ``split_units``, which ``review plan --panel-splits`` lists) and the units whose consensus
    rests on a code a member flagged uncertain (Label Studio shows them "[judge uncertain]" as
    it does a single judge's).
    """
    from failcodes.annotationio import iter_annotations
    from failcodes.judge.panelrun import read_panel
    from failcodes.panel import uncertain_units
    from failcodes.study.layout import StudyLayout

    dataset = PurePosixPath(plan.source).parent.name
    run = StudyLayout.of(root).judge_current(dataset, plan.part)
    drawn = plan.estimation_ids()
    panel = read_panel(run)
    if panel is not None:
        return {
            "the judge panel split on": drawn & set(panel.split_units),
            "the judge panel's consensus rests on a code a member doubted on": drawn
            & set(uncertain_units(panel.units)),
        }
    path = run / "annotations.jsonl"
    found = iter_annotations(path) if path.is_file() else ()
    return {
        "the judge flagged itself uncertain on": {
            a.unit_id for a in found if a.uncertain and a.unit_id in drawn
        }
    }


def review_skew(
    coded: pd.DataFrame,
    plan: ReviewPlan,
    reviewed: AbstractSet[str],
    doubts: Mapping[str, AbstractSet[str]] | None = None,
) -> str | None:
    """Why the reviewed units are not a random part of the plan's drawn units, or None.

    A drawn unit not reviewed counts as not drawn, which assumes the missing reviews are
    missing at random within its stratum. The judge's codes are known for every drawn unit:
    when, within a stratum, the judge's summary flag (all high / all correct) or one of its
    codes (a split of the units by ``code in cell``) differs between the reviewed and the other
    drawn units (two-sided Fisher exact test, Bonferroni over the distinct splits tested, p <
    :data:`SKEW_P`), the reviews are not a random part (a reviewer who worked down a list
    sorted by the judge's code), and the shares are biased toward them. A reviewer who picked
    one code's units (the flag alike on both sides) was missed when the flag alone was tested.
    ``doubts`` (:func:`judge_doubts`) are more splits: Label Studio shows the units the judge
    flagged uncertain "[judge uncertain]", and a reviewer who took only them (the judge's codes
    alike on both sides) read partial_entity 100.0 [69.2, 100.0] with no word.
    Splits that are the same or each other's complement are one test. (Across strata drawn by
    the judge's code such a difference is accounted for: each stratum is estimated alone.)
    """
    from scipy.stats import fisher_exact  # lazy: scipy.stats costs ~0.3 s at start-up

    flag = FLAG_COLUMN[plan.part]
    units = coded.drop_duplicates("unit_id")
    ids = [str(u) for u in units["unit_id"]]
    splits: list[tuple[str, dict[str, bool]]] = [
        (
            f"the judge's {flag} is true for",
            {u: bool(_flag(v)) for u, v in zip(ids, units[flag], strict=True) if pd.notna(v)},
        )
    ]
    for dim in code_columns(coded.columns):
        cells = {u: cell_codes(v) for u, v in zip(ids, units[dim], strict=True) if cell_codes(v)}
        for code in sorted({c for codes in cells.values() for c in codes}):
            splits.append(
                (f"the judge coded {dim} {code} on", {u: code in cs for u, cs in cells.items()})
            )
    for words, doubted in (doubts or {}).items():
        if doubted:
            splits.append((words, {u: u in doubted for u in ids}))
    found: list[tuple[float, int, str, int, int, int, int]] = []
    tested: set[frozenset[str]] = set()
    for stratum in plan.strata:
        drawn = {u for u in plan.estimation_ids() if plan.unit_strata.get(u) == stratum.key}
        for order, (words, known) in enumerate(splits):
            done = [u for u in drawn & reviewed if u in known]
            rest = [u for u in drawn - reviewed if u in known]
            side = frozenset(u for u in (*done, *rest) if known[u])
            other = frozenset(u for u in (*done, *rest) if not known[u])
            if not (done and rest and side and other) or {side, other} & tested:
                continue
            tested.add(side)
            a, c = sum(known[u] for u in done), sum(known[u] for u in rest)
            p = float(fisher_exact([[a, len(done) - a], [c, len(rest) - c]]).pvalue)
            found.append((p, order, words, a, len(done), c, len(rest)))
    if not found:
        return None
    p, _, words, a, n_done, c, n_rest = min(found)
    if p * len(found) >= SKEW_P:
        return None
    where = " (in one stratum)" if len(plan.strata) > 1 else ""
    return (
        f"the reviewed units are not a random part of the drawn ones{where}: {words} "
        f"{a} of {n_done} reviewed and {c} of {n_rest} drawn but not reviewed "
        f"(Fisher p = {min(1.0, p * len(found)):.2g}); counting those as not drawn biases the "
        "human and corrected shares toward the units reviewed"
    )


def attribution_rows(
    pairs: Sequence[ReviewedAttribution], plan: ReviewPlan
) -> list[dict[str, Any]]:
    """One dict per system x stage: judge-only, human-only and corrected shares of the items.

    ``pairs``: :func:`failcodes.attribution.human_attributions` with the reviewer's decisions
    on the plan's reviewed estimation-sample units only. Items are grouped by how their
    passages fall in the plan's strata (:func:`_composition`); a group with fewer than 2 fully
    reviewed items cannot be estimated and is left out of all three shares (the row says how
    many items and which groups). A system whose every item's stage no judge code enters
    (closed-book, gold evidence) has nothing a review could correct: no estimate, ``reviewed``
    0, and ``fixed`` holds the rule's share (else None). Keys: ``system``, ``stage``,
    ``items``, ``reviewed``, ``estimates`` (:class:`ShareEstimates` or None),
    ``undefined_reason``, ``left_out``, ``fixed`` and ``judge_share`` (the judge's share of the
    items kept, shown where no estimate is; None: none kept).
    """
    out: list[dict[str, Any]] = []
    for system in sorted({p.system for p in pairs}):
        mine = [p for p in pairs if p.system == system]
        groups: dict[str, list[ReviewedAttribution]] = {}
        for p in mine:
            groups.setdefault(_composition(p.units, plan), []).append(p)
        kept = {k: g for k, g in groups.items() if sum(p.human is not None for p in g) >= 2}
        short = {k: g for k, g in groups.items() if k not in kept}
        gone = sum(len(g) for g in short.values())
        # the three shares are over the items kept: the judge-only share is then not Figure
        # 1's (10/56 = 17.9% printed beside 'items 59', where Figure 1 has 10/59 = 16.9%)
        left_out = (
            f"{gone} of {len(mine)} items left out: {len(short)} group(s) with < 2 fully "
            f"reviewed; the judge-only, human-only and corrected shares are over the other "
            f"{len(mine) - gone} (not Figure 1's)"
            if short
            else ""
        )
        seen = {p.judge for p in mine} | {p.human for p in mine if p.human is not None}
        for stage in [s for s in Stage if s in seen]:
            strata = [
                Stratum(
                    y=[float(p.human == stage) for p in group if p.human is not None],
                    yhat=[float(p.judge == stage) for p in group if p.human is not None],
                    yhat_unlabeled=[float(p.judge == stage) for p in group if p.human is None],
                )
                for _, group in sorted(kept.items())
            ]
            estimates, reason = _estimate(strata)
            counted = [p.judge == stage for _, group in sorted(kept.items()) for p in group]
            fixed = None
            if set(kept) == {NO_JUDGE_CODE}:
                # a closed-book (or gold-evidence) system: the rule fixes every item's stage
                # and its "review" cannot differ from it, so 23 such items read human-only and
                # corrected 100.0 [85.2, 100.0] as if reviewed and found so
                fixed = sum(p.judge == stage for p in kept[NO_JUDGE_CODE]) / len(
                    kept[NO_JUDGE_CODE]
                )
                estimates, reason = None, _fixed_text(len(kept[NO_JUDGE_CODE]), fixed)
            out.append(
                {
                    "system": system,
                    "stage": stage.value,
                    "items": len(mine),
                    # no review entered a fixed stage: "reviewed 23" read as 23 reviews
                    "reviewed": 0 if fixed is not None else sum(p.human is not None for p in mine),
                    "estimates": estimates,
                    "undefined_reason": reason,
                    "left_out": left_out,
                    "fixed": fixed,
                    # over the items kept, as the estimates (None: no item kept)
                    "judge_share": sum(counted) / len(counted) if counted else None,
                }
            )
    return out


def _fixed_text(items: int, share: float) -> str:
    """Beside a system whose every item's stage no judge code enters (nothing to correct)."""
    return (
        f"no judge code enters the stage of any of its {items} items (closed-book, gold "
        f"evidence or no passage): the attribution rule fixes it and no review can change it, "
        f"so its share ({_pct(share)}) is the rule's by construction, not a review finding; "
        "no human-only or corrected share"
    )


def attribution_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Printable corrected attribution: per system and stage, as the corrected Tables 8-9."""
    records = []
    for r in rows:
        rec: dict[str, Any] = {
            "system": r["system"],
            "stage": r["stage"],
            "items": r["items"],
            "reviewed": r["reviewed"],
        }
        rec.update(
            _estimate_columns(
                r["estimates"],
                r["undefined_reason"],
                judge_stratified=False,
                judge_share=r.get("judge_share"),
            )
        )
        if r.get("fixed") is not None:  # the rule's share: the judge-only column holds it
            rec["judge-only (%)"] = _pct(r["fixed"])
        if r["left_out"]:
            rec["note"] = "; ".join(n for n in (r["left_out"], rec["note"]) if n)
        records.append(rec)
    return pd.DataFrame(records)


def attribution_numbers(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The shares behind :func:`attribution_table` as numbers, for the figure (estimated rows)."""
    records = []
    for r in rows:
        e: ShareEstimates | None = r["estimates"]
        if e is None:
            continue
        records.append(
            {
                "label": f"{r['system']}: {r['stage']}",
                "judge": e.judge.estimate,
                "human": e.human.estimate,
                "human_low": e.human.ci_low,
                "human_high": e.human.ci_high,
                "corrected": e.corrected.estimate,
                "low": e.corrected.ci_low,
                "high": e.corrected.ci_high,
            }
        )
    columns = ["label", "judge", "human", "human_low", "human_high", "corrected", "low", "high"]
    return pd.DataFrame(records, columns=columns)


class CorrectedShare(FrozenModel):
    """One cell of a corrected Table 8 / 9, as numbers: the report's CSV row, typed.

    ``ReportResult.corrected`` holds one per cell of every plan's corrected table, so a
    script reads the judge-only, human and corrected shares (0-1, with their intervals) without
    parsing the table's ``"54.7 [24.6, 86.6]"`` cells.
    """

    plan: str = Field(description="The review plan whose reviews correct the cell.")
    part: UnitKind = Field(description="retrieval (Table 8) or reasoning (Table 9).")
    system: str = Field(
        description="The cell's retriever or verifier (the plan's group); "
        "'<data set>/<group>' when several data sets code the part."
    )
    dimension: str = Field(description="The code's dimension (the summary row: its label).")
    code: str = Field(description="The code counted (the summary row: all-high / all-correct).")
    rows: int = Field(description="Rows of the coded table in the cell.")
    reviewed: int = Field(description="Of them, rows of units in the estimation sample.")
    reviewed_units: int = Field(description="Distinct reviewed units behind those rows.")
    estimates: ShareEstimates | None = Field(
        description="Judge-only, human and corrected shares with 95% intervals; None: not "
        "estimated (undefined_reason says why, e.g. too few reviewed units)."
    )
    undefined_reason: str | None = None
    narrow: int = Field(
        default=0,
        description="Reviewed units whose review was migrated from a codebook version where "
        "the step took one code (its human share may undercount).",
    )
    note: str = Field(
        default="",
        description="The cell's note, as the table's note column gives it: why it has no "
        "estimate, or what its numbers assume (reviewed units without a code on the dimension "
        "counted as not reviewed, repeated units, migrated reviews, missing reviews not "
        "missing at random).",
    )


def corrected_shares(
    rows: Sequence[Mapping[str, Any]], plan: ReviewPlan, notes: Sequence[str]
) -> list[CorrectedShare]:
    """:func:`corrected_rows`' cells of ``plan`` as :class:`CorrectedShare` values.

    ``notes``: the printed table's note per row, in ``rows``' order (what the CSV says beside
    a cell reaches the API's cell too).
    """
    return [
        CorrectedShare(
            plan=plan.name,
            part=plan.part,
            system=str(r["system"]),
            dimension=str(r["dimension"]),
            code=str(r["code"]),
            rows=int(r["rows"]),
            reviewed=int(r["reviewed"]),
            reviewed_units=int(r["reviewed_units"]),
            estimates=r["estimates"],
            undefined_reason=r["undefined_reason"],
            narrow=int(r["narrow"]),
            note=note,
        )
        for r, note in zip(rows, notes, strict=True)
    ]
