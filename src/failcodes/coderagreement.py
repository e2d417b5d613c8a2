"""Agreement between coders' annotations: the annotation runs joined to the numeric core.

Lists of :class:`~failcodes.annotations.Annotation` joined on ``unit_id``, per codebook
dimension, pooled over dimensions, per coder pair, and human vs LLM per code (set-valued
dimensions compared as sets). Annotations made under different codebook hashes are refused:
callers bring them to one version first (:func:`failcodes.migration.pool_annotations`).
Kept out of :mod:`failcodes.stats`, which takes arrays and tables and knows no annotation
(nor, through it, the codebook).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Generic, Literal, TypedDict, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import Field

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.contract import FrozenModel
from failcodes.errors import MixedCodebookError, StatisticsError
from failcodes.stats.agreement import POOLED_STATISTICS, AgreementResult, pooled_agreements
from failcodes.stats.names import SET_DISTANCES
from failcodes.stats.sets import (
    EXACT_MULTI_RATER,
    EXACT_PAIR,
    CodeSet,
    encode,
    set_agreements,
    set_categories,
)
from failcodes.stats.tables import (
    RatingsTable,
    lone_units,
    ratings_from_frame,
    table_agreement,
    undefined_single_rated,
)


def _index(annotations: Sequence[Annotation]) -> dict[tuple[str, str], Annotation]:
    out: dict[tuple[str, str], Annotation] = {}
    for a in annotations:
        key = (a.unit_id, a.coder)
        if key in out:
            raise StatisticsError(
                f"coder '{a.coder}' annotated unit '{a.unit_id}' twice; keep one annotation "
                "per unit and coder"
            )
        out[key] = a
    return out


_Cell = TypeVar("_Cell")


@dataclass(frozen=True)
class _Rows(Generic[_Cell]):
    """Units (x dimensions) x coders of one kind of cell, as the two tables below need."""

    rows: list[list[_Cell | None]]
    ids: list[str]
    clusters: list[str]
    n_single_rated: int


def _annotation_rows(
    annotations: Sequence[Annotation],
    dimension: str | None,
    coders: Sequence[str],
    cell: Callable[[Annotation, str], _Cell],
    min_ratings: int,
) -> _Rows[_Cell]:
    """One row per unit (and dimension when ``dimension`` is None) of ``cell`` per coder.

    Unscored annotations and dimensions a coder left empty are missing (None). Rows with
    fewer than ``min_ratings`` cells are left out and their units counted (distinct units
    that have no row kept).
    """
    idx = _index(annotations)
    units = sorted({a.unit_id for a in annotations})
    dims = (
        [dimension] if dimension is not None else sorted({d for a in annotations for d in a.codes})
    )
    rows: list[list[_Cell | None]] = []
    ids: list[str] = []
    single: set[str] = set()
    used: set[str] = set()
    clusters: list[str] = []
    for unit in units:
        for dim in dims:
            row: list[_Cell | None] = []
            for coder in coders:
                ann = idx.get((unit, coder))
                if ann is None or ann.status is not Status.SCORED or dim not in ann.codes:
                    row.append(None)
                else:
                    row.append(cell(ann, dim))
            present = sum(v is not None for v in row)
            if present >= max(min_ratings, 1):
                rows.append(row)
                ids.append(unit if dimension is not None else f"{unit}|{dim}")
                used.add(unit)
                clusters.append(unit)
            elif present:
                single.add(unit)
    if not rows and not single:
        raise StatisticsError(
            f"no scored annotations for dimension '{dimension}'"
            if dimension
            else "no scored annotations"
        )
    return _Rows(rows, ids, clusters, len(single - used))


def annotation_ratings(
    annotations: Sequence[Annotation],
    dimension: str | None,
    *,
    coders: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    code: str | None = None,
    min_ratings: int = 2,
) -> RatingsTable:
    """Units x coders for one dimension (``None``: all dimensions stacked as rows).

    Stacked rows are one per unit and dimension, with ids ``unit|dimension`` and the unit in
    ``clusters``.
    Unscored annotations and dimensions a coder left empty are missing. With ``code`` the
    ratings are binary: 1 when the coder gave that code on the dimension (among every code
    of a multi-label dimension), 0 otherwise; without it, the dimension's (first) code.
    Rows with fewer than ``min_ratings`` ratings (by default: units one coder rated) are
    left out and counted in ``n_single_rated`` (distinct units); ``min_ratings=1`` keeps them
    for the missing-data estimators (Gwet 2014; Krippendorff). Set-valued codes:
    :func:`annotation_sets`.
    """
    coder_list = list(coders) if coders is not None else sorted({a.coder for a in annotations})

    def cell(ann: Annotation, dim: str) -> str:
        if code is not None:
            return "1" if code in ann.code_set(dim) else "0"
        return ann.codes[dim]

    got = _annotation_rows(annotations, dimension, coder_list, cell, min_ratings)
    cats = ["0", "1"] if code is not None else categories
    if not got.rows:
        labels = list(cats) if cats is not None else []
        return RatingsTable(
            np.empty((0, len(coder_list))),
            [],
            coder_list,
            np.arange(len(labels), dtype=np.float64),
            labels,
            True,
            n_single_rated=got.n_single_rated,
        )
    frame = pd.DataFrame(got.rows, columns=coder_list)
    table = ratings_from_frame(frame, unit_column=None, raters=coder_list, categories=cats)
    return RatingsTable(
        table.values,
        got.ids,
        coder_list,
        table.categories,
        table.labels,
        table.ordered,
        n_single_rated=got.n_single_rated,
        clusters=got.clusters if dimension is None else None,
    )


@dataclass(frozen=True)
class SetTable:
    """Units x coders of code sets (None = missing) for one dimension, or stacked."""

    sets: list[list[CodeSet | None]]
    unit_ids: list[str]
    coders: list[str]
    n_single_rated: int = 0
    clusters: list[str] | None = None


def annotation_sets(
    annotations: Sequence[Annotation],
    dimension: str | None,
    *,
    coders: Sequence[str] | None = None,
    min_ratings: int = 2,
) -> SetTable:
    """Like :func:`annotation_ratings`, each cell every code the coder gave (a set).

    A single-label dimension's code is a set of one, so stacked dimensions mix freely.
    """
    coder_list = list(coders) if coders is not None else sorted({a.coder for a in annotations})
    got = _annotation_rows(
        annotations,
        dimension,
        coder_list,
        lambda ann, dim: frozenset(ann.code_set(dim)),
        min_ratings,
    )
    return SetTable(
        got.rows,
        got.ids,
        coder_list,
        n_single_rated=got.n_single_rated,
        clusters=got.clusters if dimension is None else None,
    )


class _Opts(TypedDict):
    n_bootstrap: int
    seed: int | None
    confidence: float


def _opts(n_bootstrap: int, seed: int | None, confidence: float) -> _Opts:
    return {"n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence}


class ScopedAgreement(FrozenModel):
    """An agreement result with the slice of annotations it describes."""

    scope: Literal["dimension", "pooled", "pair", "code"]
    dimension: str | None = Field(description="Dimension id; None when pooled.")
    coders: tuple[str, ...]
    code: str | None = Field(default=None, description="The code compared (scope 'code').")
    sets: bool = Field(
        default=False,
        description="The codes were compared as sets (a multi-label dimension, or pooled "
        "over dimensions with one); per-code rows are binary and always False.",
    )
    prevalence: dict[str, float] | None = Field(
        default=None,
        description="Per-code rows: the share of the units compared on which each coder "
        "gave the code (coder -> share); None for the other scopes.",
    )
    result: AgreementResult

    def code_columns(self) -> dict[str, object]:
        """A per-code row's columns beyond the result ({} for the other scopes).

        Each coder's prevalence, and beside a Cohen's kappa that is 0 by construction (a coder
        giving the code on every unit) the reason, not a footnote.
        """
        out: dict[str, object] = {}
        if self.prevalence is not None:
            out["prevalence"] = self.prevalence
        flag = degenerate(self.prevalence) if self.result.statistic == "cohen" else None
        if flag and self.result.value is not None:
            out["beside"] = f"({flag})"
        return out


MULTI_RATER_STATS = ("percent", "fleiss", "krippendorff", "gwet_ac1", "brennan_prediger")
PAIR_STATS = ("percent", "cohen", "gwet_ac1", "krippendorff")
CODE_STATS = ("percent", "cohen", "gwet_ac1", "pabak")


def set_agreement_table(
    table: SetTable,
    exact: Sequence[str],
    *,
    n_bootstrap: int = 0,
    seed: int | None = None,
    confidence: float = 0.95,
) -> list[AgreementResult]:
    """Exact-set statistics and alpha with the MASI and Jaccard distances on a set table.

    A table without rows (every unit coded by one coder only) gives each statistic as
    undefined with the reason, as :func:`agreement_table` does.
    """
    names = [*exact, *(f"krippendorff/{d}" for d in SET_DISTANCES)]
    if not table.sets:
        return [
            undefined_single_rated(
                name.split("/")[0],
                "nominal",
                name.split("/")[1] if "/" in name else "none",
                len(table.coders),
                0,
                table.n_single_rated,
                confidence,
            )
            for name in names
        ]
    results = set_agreements(
        table.sets,
        exact,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
        clusters=table.clusters,
    )
    rated = [[c is not None for c in row] for row in table.sets]
    single = table.n_single_rated + lone_units(rated, table.clusters)
    if not single:
        return results
    return [r.model_copy(update={"n_single_rated": single}) for r in results]


def annotation_shape_line(
    annotations: Iterable[Annotation], multi_label: Collection[str] = ()
) -> str:
    """The first line of ``agree`` on annotations: the coders and whether codes were sets.

    A user reading only this line can tell which coders were compared (and of what kind)
    and which dimensions were compared on code sets rather than on one code.
    """
    items = list(annotations)
    kinds = {a.coder: a.coder_kind.value for a in items}
    dims = sorted({d for a in items for d in a.codes})
    sets = set_dimensions(items, multi_label)
    coders = ", ".join(f"{c} ({kinds[c]})" for c in sorted(kinds))
    line = f"Assumed: coders ({len(kinds)}): {coders}"
    single = [d for d in dims if d not in sets]
    if sets:
        line += (
            f"; codes as sets on {', '.join(sets)} (multi-label: exact-set agreement and "
            "Krippendorff's alpha with the MASI and Jaccard distances; the pooled rows too)"
        )
        if single:
            line += f"; one code per unit on {', '.join(single)}"
    else:
        line += "; one code per unit on every dimension (no multi-label dimension)"
    shown = sum(a.judge_shown for a in items)
    if shown:  # a reviewer who keeps the judge's codes raises human vs machine agreement
        humans = sum(a.coder_kind is CoderKind.HUMAN for a in items)
        line += (
            f"; {shown} of {humans} human annotations made with the judge's codes pre-selected "
            "(Label Studio predictions, push --judged): human vs machine agreement may lean "
            "toward the judge"
        )
    other = other_judge_shown(items)
    return f"{line}; {other}" if other else line


def other_judge_shown(annotations: Iterable[Annotation]) -> str:
    """Reviews made with the codes of a judge no machine coder here is ('' if none, or none).

    A reviewer saw judge A's codes pre-selected (the Label Studio prediction's model_version,
    :attr:`Annotation.shown_judge`) and is compared with judge B (run again with another model
    or codebook): the lean toward the judge the captions name is toward A.
    """
    items = list(annotations)
    judges = {a.shown_as() for a in items if a.coder_kind is not CoderKind.HUMAN}
    seen = [a.shown_judge for a in items if a.shown_judge and a.shown_judge not in judges]
    if not judges or not seen:
        return ""
    return (
        f"{len(seen)} review(s) made with the codes of {', '.join(sorted(set(seen)))} "
        f"pre-selected, compared here with {', '.join(sorted(judges))}: not the judge they saw "
        "(run again since?), so human vs judge agreement is not the reviewers' check of it"
    )


def unmatched_clause(annotations: Iterable[Annotation]) -> str:
    """For the first line: human coders' units no machine coder coded ('' if none, or none).

    A review is made on a unit the judge coded; reviews of tasks exported before the unit ids
    changed (an earlier failcodes) match none of a new run's ids and were counted only as
    single-rated units, unsaid.
    """
    items = list(annotations)
    machine = {a.unit_id for a in items if a.coder_kind is not CoderKind.HUMAN}
    if not machine:
        return ""
    units: dict[str, list[str]] = {}
    for a in items:
        if a.coder_kind is CoderKind.HUMAN:
            units.setdefault(a.coder, []).append(a.unit_id)
    said = []
    for coder, ids in sorted(units.items()):
        alone = [u for u in dict.fromkeys(ids) if u not in machine]
        if alone:
            said.append(
                f"{coder} (human) annotated {len(alone)} of its {len(set(ids))} units where no "
                f"machine coder did (first: {alone[0]})"
            )
    if not said:
        return ""
    return (
        f"; {', '.join(said)}: reviews of other units, or of tasks exported by an earlier "
        "failcodes (whose unit ids held less)? they enter no human vs machine row"
    )


#: How an import without ``--user`` names a Label Studio annotator (its user id alone).
_UNNAMED_USER = re.compile(r"label-studio-user-(\d+)")


def unnamed_user_clause(annotations: Iterable[Annotation]) -> str:
    """For the first line: a Label Studio user id beside named reviewers it shares no unit with.

    A pull names reviewers by email, an import without ``--user`` by user id
    (``label-studio-user-3``): one reviewer's first 20 units pulled and the next 20 imported
    were two coders of 20 units each, never compared with each other, the per-pair rows
    splitting the one reviewer's units (alice|bob over 20, label-studio-user-3|bob over the
    other 20, alice|label-studio-user-3 undefined) under 'coders (3)', with no word. Two
    people can be so too (each their own units), so it is said, not merged ('' if none).
    """
    units: dict[str, set[str]] = {}
    for a in annotations:
        if a.coder_kind is CoderKind.HUMAN and a.status is Status.SCORED:
            units.setdefault(a.coder, set()).add(a.unit_id)
    said = []
    for coder, ids in sorted(units.items()):
        found = _UNNAMED_USER.fullmatch(coder)
        if found is None:
            continue
        apart = [
            other
            for other, theirs in sorted(units.items())
            if _UNNAMED_USER.fullmatch(other) is None and not ids & theirs
        ]
        if apart:
            said.append(
                f"{coder} (a Label Studio user id, no name) shares no unit with "
                f"{', '.join(apart)}: one reviewer named by id in one export and by name in "
                f"another? counted as two coders, their units split between the names "
                f"(`labelstudio import --user {found.group(1)}=NAME` names it)"
            )
    return "".join(f"; {s}" for s in said)


def one_code_clause(annotations: Iterable[Annotation]) -> str:
    """For the first line: coders who gave one code to every unit of a dimension ('' if none).

    Such a margin is what chance-corrected coefficients take as chance: with that coder,
    Cohen's kappa is 0 however often the other agrees (the kappa paradox, Feinstein &
    Cicchetti 1990), the other coefficients are pulled towards it.
    """
    given: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for a in annotations:
        if a.status is Status.SCORED:
            for dim in a.codes:
                given.setdefault((dim, a.coder), []).append(tuple(sorted(a.code_set(dim))))
    said = []
    for (dim, coder), codes in sorted(given.items()):
        used = {c for (d, _), cs in given.items() if d == dim for c in cs}
        if len(codes) > 1 and len(set(codes)) == 1 and len(used) > 1:
            said.append(f"{coder} gave '{';'.join(codes[0])}' on {dim} to all {len(codes)} units")
    if not said:
        return ""
    return (
        f"; one code only: {', '.join(said)} (the chance-corrected coefficients take that "
        "margin as chance: Cohen's kappa with it is 0 however often the other agrees; the "
        "kappa paradox, Feinstein & Cicchetti 1990)"
    )


def set_dimensions(
    annotations: Iterable[Annotation], multi_label: Collection[str] = ()
) -> list[str]:
    """Dimensions whose codes are sets: declared multi-label, or given as a code set.

    An annotation of a multi-label dimension always carries its ``code_sets`` entry (even
    with one code), so the annotations alone tell; ``multi_label`` (the codebook's
    multi-label dimensions) adds those nobody has coded with a set yet.
    """
    found = set(multi_label)
    for a in annotations:
        found.update(a.code_sets)
    return sorted(found)


#: Why a chance-corrected coefficient with no per-dimension pooled form is not pooled.
POOLED_CHANCE = (
    "not pooled over dimensions: the rows' chance agreement would mix codes of different "
    "dimensions, which no coder can confuse, and inflate it (two dimensions at chance level, "
    "kappa 0 each, read 0.33 pooled); see each dimension's row, or the pooled kappa rows "
    "(de Vries et al. 2008: chance within each dimension)"
)


def pooled_line(annotations: Iterable[Annotation]) -> str | None:
    """What the pooled rows of :func:`annotation_agreement` pool (None: one dimension)."""
    dims = sorted({d for a in annotations for d in a.codes})
    if len(dims) < 2:
        return None
    return (
        f"Pooled rows, over the {len(dims)} dimensions ({', '.join(dims)}): percent over the "
        "unit x dimension rows; Fleiss, AC1 and Brennan-Prediger as pooled kappa (de Vries et "
        "al. 2008: (mean p_o - mean p_e) / (1 - mean p_e), chance agreement within each "
        "dimension, every dimension weighted equally; interval from the delete-one-unit "
        "jackknife, or the bootstrap over units); alpha not pooled"
    )


def _pooled_kappas(
    items: Sequence[Annotation],
    dims: Sequence[str],
    coders: Sequence[str],
    cats: Callable[[str], list[str] | None],
    sets: Collection[str],
    least: int,
    opts: _Opts,
) -> list[AgreementResult]:
    """Pooled kappa of de Vries et al. (2008) over the dimensions (:func:`pooled_agreements`).

    Each dimension is rated on its own codes (its exact code sets for a set dimension, as its
    own rows are), aligned on the units; a dimension no two coders rated leaves them
    undefined.
    """
    tables: list[tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    for dim in dims:
        if dim in sets:
            got = annotation_sets(items, dim, coders=coders, min_ratings=least)
            found = set_categories(got.sets)
            values = encode(got.sets, found)
            tables.append((got.unit_ids, values, np.arange(len(found), dtype=np.float64)))
        else:
            table = annotation_ratings(
                items, dim, coders=coders, categories=cats(dim), min_ratings=least
            )
            tables.append((table.unit_ids, table.values, table.categories))
    stats = ("fleiss",) if sets else POOLED_STATISTICS
    empty = next((d for d, (ids, _, _) in zip(dims, tables, strict=True) if not ids), None)
    if empty is not None:
        reason = f"dimension '{empty}' has no unit rated by two coders: no pooled kappa"
        return [
            undefined_single_rated(
                s, "nominal", "none", len(coders), 0, 0, opts["confidence"], reason
            )
            for s in stats
        ]
    units = sorted({u for ids, _, _ in tables for u in ids})
    row = {u: i for i, u in enumerate(units)}
    mats = []
    for ids, values, _ in tables:
        mat = np.full((len(units), len(coders)), np.nan)
        mat[[row[u] for u in ids]] = values
        mats.append(mat)
    cats_of = [c for _, _, c in tables]
    return pooled_agreements(mats, stats, categories=cats_of, names=dims, **opts)


def _percent_only(res: AgreementResult) -> AgreementResult:
    """A pooled row: percent agreement as computed, alpha (no pooled form here) undefined."""
    if res.statistic == "percent" or res.value is None:
        return res
    return AgreementResult(
        statistic=res.statistic,
        level=res.level,
        weights=res.weights,
        value=None,
        confidence=res.confidence,
        n_units=res.n_units,
        n_rows=res.n_rows,
        n_single_rated=res.n_single_rated,
        n_raters=res.n_raters,
        n_categories=res.n_categories,
        undefined_reason=POOLED_CHANCE,
    )


def _absent_code(
    results: list[AgreementResult], table: RatingsTable, code: str
) -> list[AgreementResult]:
    """Per-code rows of a code neither coder (or one coder) gave: say it beside the numbers.

    Percent, AC1 and PABAK are 1 by construction there (both always answer 'not this code'):
    a code nobody used read "AC1 1.000" with only a zero-width warning, which a table copied
    into a paper shows as perfect agreement on finding it.
    """
    if not table.values.size:
        return results
    given = (table.values == 1).sum(axis=0).tolist()
    rated = np.isfinite(table.values).sum(axis=0).tolist()
    n = table.values.shape[0]
    always = [r for r, g, k in zip(table.raters, given, rated, strict=True) if g == k]
    if all(given) and not always:
        return results
    if len(always) == 2:
        said = (
            f"both coders gave {code} on all {n} units compared: agreement on its presence "
            "only, 1 by construction"
        )
    elif always and all(given):  # the kappa paradox at prevalence 1: Cohen 0 [0, 0]
        (every,) = always
        other = next(r for r in table.raters if r != every)
        said = (
            f"{every} gave {code} on every unit compared (prevalence 1; {other} on "
            f"{min(given)} of {n}): Cohen's kappa is 0 by construction whatever {other} gave "
            "(degenerate: its chance agreement is its agreement); PABAK and AC1 do not take "
            "that margin as chance"
        )
    elif any(given):  # one coder never gave it: Cohen 0 was read as a disagreement on finding it
        never, other = table.raters if not given[0] else table.raters[::-1]
        said = (
            f"{never} never gave {code} on the {n} units compared ({other} on {max(given)}): "
            f"Cohen's kappa is 0 whatever {other} gave, and percent, AC1 and PABAK count "
            "agreement on its absence"
        )
    else:
        said = (
            f"neither coder gave {code} on the {n} units compared: agreement on its absence "
            "only, 1 by construction"
        )
    return [
        r.model_copy(update={"warning": "; ".join(x for x in (said, r.warning) if x)})
        if r.value is not None
        else r
        for r in results
    ]


def _prevalence(table: RatingsTable) -> dict[str, float] | None:
    """Each coder's share of the units it rated (of those compared) carrying the code."""
    if not table.values.size:
        return None
    out: dict[str, float] = {}
    for rater, column in zip(table.raters, table.values.T, strict=True):
        rated = column[np.isfinite(column)]
        if rated.size:
            out[rater] = float((rated == 1).mean())
    return out


#: The categories of a code's 0/1 table (not given, given).
_BINARY = np.arange(2, dtype=np.float64)
#: Per code of a ratings table of code sets with more than two raters (PABAK is a pair's).
CODE_STATS_MULTI = ("percent", "fleiss", "gwet_ac1", "brennan_prediger")


def set_code_agreement(
    sets: Sequence[Sequence[CodeSet | None]],
    raters: Sequence[str],
    stats: Sequence[str] | None = None,
    *,
    n_bootstrap: int = 0,
    seed: int | None = None,
    confidence: float = 0.95,
) -> list[ScopedAgreement]:
    """Per code of a units x raters table of code sets: does each rater give it (binary).

    Exact-set statistics and alpha (MASI, Jaccard) score a unit's whole set, so a code that
    co-occurs with others had no agreement of its own: two raters agreeing on ``scope`` on
    every unit and never on its companion read as one low exact-set kappa. A unit rated by one
    rater enters the chance margins (Gwet's missing-data form), as in the exact-set rows and a
    0/1 table of the code (it was left out: 3-rater Fleiss 0.529 for the table's 0.502, under
    a first line saying it entered); the rows are those of
    an annotation file's per-code scope (``stats``: :data:`CODE_STATS` for a pair, else
    :data:`CODE_STATS_MULTI`), with each rater's prevalence and, for a pair, the codes given
    by one rater only or on every unit said beside the numbers.
    """
    rows = [row for row in sets if any(s is not None for s in row)]
    pair = len(raters) == 2
    chosen = stats if stats is not None else (CODE_STATS if pair else CODE_STATS_MULTI)
    out: list[ScopedAgreement] = []
    paired = [sum(s is not None for s in row) >= 2 for row in rows]  # the units compared
    for code in sorted(
        {c for row, p in zip(rows, paired, strict=True) if p for s in row if s for c in s}
    ):
        values = np.array(
            [[np.nan if s is None else float(code in s) for s in row] for row in rows]
        )
        table, compared = (
            RatingsTable(v, [str(i) for i in range(len(v))], list(raters), _BINARY, ["0", "1"])
            for v in (values, values[paired])
        )
        results = table_agreement(table, chosen, **_opts(n_bootstrap, seed, confidence))
        for res in _absent_code(results, compared, code) if pair else results:
            out.append(
                ScopedAgreement(
                    scope="code",
                    dimension=None,
                    coders=tuple(raters),
                    code=code,
                    prevalence=_prevalence(compared),
                    result=res,
                )
            )
    return out


def degenerate(prevalence: Mapping[str, float] | None) -> str | None:
    """Why Cohen's kappa of a per-code row is 0 or undefined by construction (None: it is not).

    A coder who gave the code on every unit (prevalence 1) or on none (0) makes its margin the
    chance agreement: kappa is 0 whatever the other gave (the kappa paradox, Feinstein &
    Cicchetti 1990), printed 0.000 [0.000, 0.000] beside a percent agreement of 0.83.
    """
    if not prevalence:
        return None
    ends = [f"{c} {p:g}" for c, p in prevalence.items() if p in (0.0, 1.0)]
    return f"degenerate: prevalence {', '.join(ends)}" if ends else None


def annotation_agreement(
    annotations: Iterable[Annotation],
    *,
    categories: Mapping[str, Sequence[str]] | None = None,
    codebook_hash: str | None = None,
    n_bootstrap: int = 0,
    seed: int | None = None,
    confidence: float = 0.95,
    missing_data: bool = False,
    multi_label: Collection[str] = (),
) -> list[ScopedAgreement]:
    """Agreement per dimension, pooled, per coder pair, and human vs LLM per code.

    A dimension whose codes are sets (:func:`set_dimensions`: declared in ``multi_label``,
    or given as ``code_sets``) is compared on the sets, not on its first code
    (:func:`set_agreement_table`: exact-set percent, Fleiss/Cohen and alpha, then alpha with
    the MASI and Jaccard distances); so is the pooled scope when any dimension is. The
    per-code rows cover every code given (any position of a set) or listed in
    ``categories``.

    Each coefficient uses the units the coders compared rated together (two or more of them
    for the multi-rater scopes, both for a pair); units one coder rated alone are counted
    (``n_single_rated``), not used, and ``n_units`` is the number used. ``missing_data``
    keeps them, for the missing-data forms (Gwet 2014; Krippendorff), where they still move
    the chance-agreement margins and the variance. Pooled agreement resamples whole units
    (all their dimensions together): ``n_units`` distinct units, ``n_rows`` unit x dimension
    rows. ``categories`` (dimension id -> its full code list, e.g.
    :meth:`failcodes.codebook.Codebook.code_lists`) sets each listed dimension's category set
    (AC1 and Brennan-Prediger depend on the number of possible codes), else the codes observed.
    ``codebook_hash`` refuses annotations made under any other codebook version.
    The heuristic (offline) judge counts on the machine side and is named by its coder id.
    """
    least = 1 if missing_data else 2
    items = list(annotations)
    if not items:
        raise StatisticsError("no annotations given")
    refs = {a.codebook for a in items}
    if len(refs) > 1:
        raise MixedCodebookError(
            "annotations were made under different codebooks "
            f"({', '.join(sorted(str(r) for r in refs))}); agreement would compare codes "
            "with different meanings. Bring them to one version first "
            "(failcodes.migration.pool_annotations with a MigrationMap or a code map)"
        )
    if codebook_hash is not None:
        ref = next(iter(refs))
        if ref.hash != codebook_hash:
            raise MixedCodebookError(
                f"annotations were made under {ref}, not the codebook given "
                f"(hash {codebook_hash[:12]}); pass the matching version or a migration"
            )
    dims = sorted({d for a in items for d in a.codes})
    coders = sorted({a.coder for a in items})
    kinds = {a.coder: a.coder_kind for a in items}
    sets = set(set_dimensions(items, multi_label))
    opts = _opts(n_bootstrap, seed, confidence)

    # not_assessable is an answer a coder may give on any dimension (the judge's heuristic
    # gives it on most): a category of its dimension wherever a coder used it, not a rating
    # outside the codebook's list (which failed the whole report on one reviewer's answer)
    unassessed = {d for a in items for d, code in a.codes.items() if code == NOT_ASSESSABLE}

    def cats(dim: str) -> list[str] | None:
        listed = None if categories is None else categories.get(dim)
        if listed is None:
            return None
        extra = [NOT_ASSESSABLE] if dim in unassessed and NOT_ASSESSABLE not in listed else []
        return [*listed, *extra]

    def scoped(
        dim: str | None, who: Sequence[str], stats: Sequence[str], exact: Sequence[str]
    ) -> list[tuple[bool, AgreementResult]]:
        """One scope's results: on code sets when ``dim`` is a set dimension (or pooled)."""
        as_sets = bool(sets) and (dim is None or dim in sets)
        if as_sets:
            table = annotation_sets(items, dim, coders=who, min_ratings=least)
            return [(True, r) for r in set_agreement_table(table, exact, **opts)]
        ratings = annotation_ratings(
            items, dim, coders=who, categories=None if dim is None else cats(dim), min_ratings=least
        )
        return [
            (False, r) for r in table_agreement(ratings, stats, clusters=ratings.clusters, **opts)
        ]

    out: list[ScopedAgreement] = []
    for dim in dims:
        for as_sets, res in scoped(dim, coders, MULTI_RATER_STATS, EXACT_MULTI_RATER):
            out.append(
                ScopedAgreement(
                    scope="dimension", dimension=dim, coders=tuple(coders), sets=as_sets, result=res
                )
            )
    if len(dims) == 1:
        # pooled over one dimension is that dimension: read again without its code list, AC1
        # and Brennan-Prediger took the codes observed as the category set (AC1 0.420 and
        # Brennan-Prediger 0.400 on a 4-code dimension whose own rows read 0.496 and 0.467)
        out += [row.model_copy(update={"scope": "pooled", "dimension": None}) for row in out]
    else:
        kappas = {
            r.statistic: r for r in _pooled_kappas(items, dims, coders, cats, sets, least, opts)
        }
        for as_sets, res in scoped(None, coders, MULTI_RATER_STATS, EXACT_MULTI_RATER):
            # one margin over every dimension's codes: Fleiss 0.333 for two dimensions at
            # 0.000; pooled kappa takes chance agreement within each dimension (de Vries 2008)
            kept = _percent_only(res)
            if res.statistic in kappas and res.weights == "none":
                kept = kappas[res.statistic].model_copy(
                    update={"n_single_rated": res.n_single_rated}
                )
            out.append(
                ScopedAgreement(
                    scope="pooled", dimension=None, coders=tuple(coders), sets=as_sets, result=kept
                )
            )
    for a, b in combinations(coders, 2):
        for dim in dims:
            for as_sets, res in scoped(dim, [a, b], PAIR_STATS, EXACT_PAIR):
                out.append(
                    ScopedAgreement(
                        scope="pair", dimension=dim, coders=(a, b), sets=as_sets, result=res
                    )
                )
    humans = [c for c in coders if kinds[c] is CoderKind.HUMAN]
    machines = [c for c in coders if kinds[c] is not CoderKind.HUMAN]
    for h in humans:
        for m in machines:
            for dim in dims:
                codes = cats(dim) or sorted(
                    {c for x in items if x.coder in (h, m) for c in x.code_set(dim)}
                )
                for code in codes:
                    table = annotation_ratings(
                        items, dim, coders=[h, m], code=code, min_ratings=least
                    )
                    prevalence = _prevalence(table)
                    for res in _absent_code(
                        table_agreement(table, CODE_STATS, **_opts(n_bootstrap, seed, confidence)),
                        table,
                        code,
                    ):
                        out.append(
                            ScopedAgreement(
                                scope="code",
                                dimension=dim,
                                coders=(h, m),
                                code=code,
                                prevalence=prevalence,
                                result=res,
                            )
                        )
    return out
