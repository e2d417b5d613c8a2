"""Adapters from ratings tables (DataFrames) to the numeric core.

- Ratings tables (read by :func:`failcodes.ratingsio.read_ratings_frame`): one row per unit,
  one column per rater, blank = missing; an optional unit-id column (recognised by name or
  by its values, see :func:`choose_columns`) and an optional grouping column.
Pairing systems' sentence verdicts with clinical labels lives in :mod:`failcodes.outcomes`.

Agreement between coders' annotations (which name codebook dimensions) lives in
:mod:`failcodes.coderagreement`: the statistics know no annotation.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from failcodes.codesets import AND_JOINER, AND_PARTS, SET_SEPARATORS, listed_items
from failcodes.errors import ConfigError, InputError, StatisticsError
from failcodes.idzeros import without_leading_zeros
from failcodes.numbertext import underscore_clause, whole_number_text
from failcodes.sheetio import ERRORS
from failcodes.spelling import spelling_key
from failcodes.stats.agreement import AgreementResult, Weights, agreements
from failcodes.stats.bootstrap import FloatArray
from failcodes.stats.names import LEVELS, MAX_RESAMPLES, STATISTICS, WEIGHTS
from failcodes.stats.summaries import (
    MAX_P,
    MIN_SHARE,
    SAID_EXACT_P,
    Summary,
    name_words,
    named_summaries,
    value_summaries,
)
from failcodes.stats.tableshape import (
    ID_NAMES,
    MISSING_MARKS,
    NOT_RATING_WORDS,
    RATER_NAMES,
    UNIT_WORDS,
    WRITTEN_MISSING,
    code_slots,
    id_named,
    is_number,
    no_code_grid,
    no_containers,
    no_dates,
    no_long_rows_not_units,
    no_missing_marks,
    no_number_with_label,
    no_repeated_header,
    normal_name,
    not_frequency_table,
    not_transposed,
    one_field_per_rater,
    one_row_per_unit,
    one_way,
    present,
    rater_named,
    refuse_rows_not_units,
    time_column,
    value_key,
    without_not_ratings,
)
from failcodes.stats.tableshape import (
    blank as blank_cell,
)


@dataclass(frozen=True)
class RatingsTable:
    """A (units x raters) matrix of numeric category values with its labels.

    ``labels[k]`` is the original label of ``categories[k]`` when the ratings were text (then
    categories are 0..q-1 in ``labels`` order), else ``None``.
    """

    values: FloatArray
    unit_ids: list[str]
    raters: list[str]
    categories: FloatArray
    labels: list[str] | None = None
    ordered: bool = True
    unit_column: str | None = None
    unit_column_reason: str = ""
    n_single_rated: int = 0
    clusters: list[str] | None = None
    left_out: tuple[str, ...] = ()
    #: What reading the frame assumed, in ``agree``'s first-line words (raters, unit ids, a
    #: column read as a rater that is the others' majority): set by :func:`ratings_from_frame`.
    notes: tuple[str, ...] = ()
    #: Where ``categories`` came from: ``values`` (the ratings given), ``categories`` (given:
    #: ``categories=``, ``--categories``) or ``dtype`` (the columns' categorical type).
    categories_from: str = "values"

    def __repr__(self) -> str:
        """The table's size, raters and categories, then its notes (not the whole matrix).

        A notebook showed the values array alone: a majority column read as a fourth rater
        (Fleiss 0.696 for the raters' 0.595) was said by ``agree`` and nowhere here.
        """
        cats = self.labels or [f"{v:g}" for v in self.categories.tolist()]
        head = (
            f"RatingsTable({len(self.unit_ids)} units x {len(self.raters)} raters: "
            f"{', '.join(self.raters)}; categories: {', '.join(map(str, cats[:8]))}"
            f"{', ...' if len(cats) > 8 else ''})"
        )
        return "\n".join([head, *self.notes])

    __str__ = __repr__


class Agreements(list[AgreementResult]):
    """:func:`agreement_table`'s results (a list), with the table's :attr:`notes`.

    The notes are what reading the frame assumed (:attr:`RatingsTable.notes`): printed above
    the results, as ``agree`` prints its first line above its table.
    """

    def __init__(self, results: Iterable[AgreementResult], notes: Sequence[str] = ()) -> None:
        super().__init__(results)
        self.notes: tuple[str, ...] = tuple(notes)

    def __repr__(self) -> str:
        return "\n".join([*self.notes, super().__repr__()])

    __str__ = __repr__


def numbers_and_words(table: RatingsTable) -> list[str]:
    """For the first line: ratings that mix numbers and words, each a category of its own.

    Ben's a..e beside Gerry's 1..5 with one 'b': alpha 0.699 for the 0.692 of the scale
    written one way (Krippendorff 2011, example B); from Python 'NR' for two of r2's 1-3
    ratings read Cohen 0.452 for the 0.619 of the cells left empty, with no word in the notes.
    """
    from failcodes.numbertext import reads_as_float

    names = table.labels or []
    numeric = [n for n in names if reads_as_float(n)]
    if not numeric or len(numeric) == len(names):
        return []
    words = [n for n in names if n not in numeric]
    return [
        f"the ratings mix numbers ({', '.join(numeric[:4])}) and words "
        f"({', '.join(words[:4])}): each a category of its own ('{numeric[0]}' and "
        f"'{words[0]}' never agree); one scale written two ways? write the ratings one way"
    ]


def zero_below_the_scale(table: RatingsTable) -> list[str]:
    """For the first line: a 0 one rater alone gave below the others' 1-based scale.

    A missing rating written 0: read as a rating, at the interval level alpha 0.616 for the
    0.779 of the ratings given, no word (from Python no word in the notes either).
    """
    levels = table.categories.tolist() if table.labels is None else []
    zeros = [(r, int((c == 0).sum())) for r, c in zip(table.raters, table.values.T, strict=True)]
    zeros = [(r, k) for r, k in zeros if k]
    if levels[:2] == [0, 1] and len(levels) >= 3 and len(zeros) == 1 and len(table.raters) > 1:
        return [
            f"0 given by {zeros[0][0]} alone ({zeros[0][1]} rating(s)), the others' lowest 1: "
            "a missing rating written 0? leave those cells empty (read here as a rating)"
        ]
    return []


def marks_read_as_categories(table: RatingsTable) -> list[str]:
    """For the first line: a missing-rating mark among text codes read as a category.

    A skipped unit written 'skip' or '-' among text codes is a category of its own (Fleiss
    0.250 for the 0.556 of the cells left empty), and two raters' skips agree. ``agree`` says
    it on its first line and :func:`agreement_table` in its notes (from Python a '-' beside
    'A'/'B' read percent 0.4 and Cohen 0.0625 for the 2/3 and 0.4 of the cells left empty,
    with no word).
    """
    said: list[str] = []
    for code, label in enumerate(table.labels or []):
        if spelling_key(label) in MISSING_MARKS:
            counts = (table.values == code).sum(axis=0).tolist()
            by = [r for r, k in zip(table.raters, counts, strict=True) if k]
            said.append(
                f"'{label}' ({sum(counts)} rating(s), by {', '.join(by)}) read as a "
                "category: a missing rating? leave those cells empty"
            )
    return said


def integers_read_as_unordered(
    table: RatingsTable, results: Sequence[AgreementResult]
) -> list[str]:
    """For the first line: three or more whole numbers read as nominal categories.

    1 against 2 disagrees as much as against 3: from Python no word in the notes, where
    agree's first line said it.
    """
    levels = table.categories.tolist() if table.labels is None else []
    nominal = all(
        r.level == "nominal" and r.weights == "none" for r in results if r.value is not None
    )
    if len(levels) < 3 or not all(float(v).is_integer() for v in levels) or not nominal:
        return []
    names = [f"{v:g}" for v in levels]
    return [
        f"the numbers {', '.join(names[:8])} read as unordered categories ({names[0]} "
        f"against {names[1]} disagrees as much as against {names[-1]}; --level ordinal or "
        "--weights linear for a scale)"
    ]


#: Ordinal scales written as words (GRADE's certainty, Likert, severity): text labels all of
#: one of them (3 or more) are a scale the alphabetical order does not hold.
ORDINAL_WORDS = (
    ("very low", "low", "moderate", "medium", "high", "very high"),
    ("none", "minimal", "mild", "moderate", "severe", "critical"),
    ("minor", "moderate", "major"),
    ("never", "rarely", "sometimes", "often", "always"),
    ("strongly disagree", "disagree", "neutral", "agree", "strongly agree"),
    ("poor", "fair", "good", "very good", "excellent"),
    ("unlikely", "possible", "probable", "definite"),
)


def words_read_as_unordered(table: RatingsTable, results: Sequence[AgreementResult]) -> list[str]:
    """For the first line: text labels of an ordinal scale (low, medium, high) read unordered.

    Without ``--categories`` text labels are nominal: 'low' against 'medium' disagrees as much
    as against 'high'. Two raters of low/medium/high on 8 units read Cohen 0.238 (unweighted)
    where the scale's quadratic kappa is 0.590 (scikit-learn's cohen_kappa_score), and the
    first line said nothing (whole numbers so read were said).
    """
    if table.labels is None or table.ordered or len(table.labels) < 3:
        return []
    if not all(
        r.level == "nominal" and r.weights == "none" for r in results if r.value is not None
    ):
        return []
    given = [" ".join(label.split()).casefold() for label in table.labels]
    scale = next((s for s in ORDINAL_WORDS if set(given) <= set(s)), None)
    if scale is None:
        return []
    order = [table.labels[given.index(w)] for w in scale if w in given]
    return [
        f"the words {', '.join(order)} read as unordered categories ({order[0]} against "
        f"{order[1]} disagrees as much as against {order[-1]}; --categories {','.join(order)} "
        "with --level ordinal or --weights linear for a scale)"
    ]


def copied_raters(table: RatingsTable) -> list[str]:
    """For the first line: two raters who gave the same rating to each of 10+ units both rated.

    One rater's column pasted twice (``dr_a`` and ``dr_a (2)``) is two raters in perfect
    agreement: it raises every coefficient, kappa 1 between them, with no word.
    """
    said: list[str] = []
    values = table.values
    for i, j in itertools.combinations(range(values.shape[1]), 2):
        both = np.isfinite(values[:, i]) & np.isfinite(values[:, j])
        same = values[both, i] == values[both, j]
        if both.sum() >= 10 and same.all() and np.unique(values[both, i]).size > 1:
            said.append(
                f"{table.raters[i]} and {table.raters[j]} gave the same rating to each of the "
                f"{int(both.sum())} units both rated: one rater's ratings twice? (a copy reads "
                "as perfect agreement and raises the others')"
            )
    return said


def constant_raters(table: RatingsTable) -> list[str]:
    """For the first line: a rater who gave one category to every unit it rated (2 or more).

    The chance-corrected coefficients take that margin as chance: with two raters Cohen's
    kappa is 0 whatever the other gave (from Python no word in the notes).
    """
    names = table.labels or [f"{v:g}" for v in table.categories]
    rated = np.isfinite(table.values).sum(axis=0)
    said: list[str] = []
    for r, k, column in zip(table.raters, rated.tolist(), table.values.T, strict=True):
        seen = np.unique(column[np.isfinite(column)])
        if seen.size == 1 and len(names) > 1 and k > 1:
            label = names[int(seen[0])] if table.labels else f"{seen[0]:g}"
            said.append(
                f"{r} gave '{label}' to all {k} units it rated: the chance-corrected "
                "coefficients take that margin as chance (with two raters Cohen's kappa is 0 "
                "whatever the other gave; the kappa paradox, Feinstein & Cicchetti 1990)"
            )
    return said


#: Statistics whose chance agreement is the raters' margins (the kappa paradox's).
_MARGINS = ("cohen", "fleiss", "conger", "krippendorff")


def skewed_margin(table: RatingsTable, results: Sequence[AgreementResult]) -> list[str]:
    """For the first line: one category 90% or more of the ratings (the kappa paradox).

    49 of 50 units 'no' from each rater, one 'yes' each on different units: percent 0.96,
    Cohen -0.020, said nowhere (only a constant rater was); AC1 0.958 and PABAK 0.92 do not
    take the skewed margins as chance.
    """
    held = [r for r in results if r.statistic in _MARGINS and r.chance_agreement is not None]
    given = table.values[np.isfinite(table.values)]
    codes, counts = np.unique(given, return_counts=True)
    if not held or codes.size < 2 or counts.max() < 0.9 * given.size:
        return []
    first, top = held[0], codes[int(np.argmax(counts))]
    beside = any(r.statistic in ("gwet_ac1", "pabak") and r.value is not None for r in results)
    named = list(dict.fromkeys(r.statistic for r in held))
    return [
        f"'{table.labels[int(top)] if table.labels else f'{top:g}'}' is "
        f"{counts.max() / given.size:.0%} of the ratings: {', '.join(named)} "
        f"take{'s' if len(named) == 1 else ''} that skew as chance ({first.statistic}'s chance "
        f"agreement {first.chance_agreement:.3f}, observed {first.observed_agreement:.3f}): a "
        "few disagreements move such a coefficient far (the kappa paradox, Feinstein & "
        "Cicchetti 1990); "
        f"gwet_ac1 and pabak {'beside' if beside else '(--stat)'} do not"
    ]


#: Statistics whose chance agreement counts the categories, not only the ratings' margins.
COUNTS_CATEGORIES = ("gwet_ac1", "gwet_ac2", "brennan_prediger", "pabak")


def category_set_clauses(table: RatingsTable, results: Sequence[AgreementResult]) -> list[str]:
    """For the first line: the category set AC1, Brennan-Prediger and PABAK counted (q).

    Their chance agreement counts the categories (Brennan-Prediger's is 1/q): the ones given,
    unless listed (``--categories``, ``categories=``) or declared by the columns' categorical
    type, when one given by no rater counts too. From Python no word: a frame of a Parquet
    file's categorical a/b/c columns, c never given, read AC1 0.556 where ``agree`` on the
    file reads 0.333 (the 2 given) and says so.
    """
    counted = [
        r.statistic for r in results if r.statistic in COUNTS_CATEGORIES and r.value is not None
    ]
    if not counted:
        return []
    names = table.labels or [f"{v:g}" for v in table.categories]
    if table.categories_from == "values":
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        return [
            f"category set: the {len(names)} given ({shown}); {', '.join(counted)} count "
            "them (--categories gives the full list)"
        ]
    used = set(np.unique(table.values[~np.isnan(table.values)]).tolist())
    unused = [n for n, c in zip(names, table.categories.tolist(), strict=True) if c not in used]
    if not unused:
        return []
    if table.categories_from == "categories":
        where, alone = "of --categories", ""
    else:  # from Python alone: agree reads a file's categorical columns on the ones given
        kept = [n for n in names if n not in unused]
        where = "the rater columns' categorical type declares"
        alone = (
            f" (ratings_from_frame(frame, categories={kept!r}) counts the given ones alone, "
            "as agree does on a file of such columns)"
        )
    return [
        f"category set: the {len(names)} {where}, {len(unused)} given by no rater "
        f"({', '.join(unused[:8])}): {', '.join(counted)} count them{alone}"
    ]


def missing_clause(table: RatingsTable, sets: bool = False) -> str:
    """For the first line: raters who left units blank ('' if none); code sets too.

    A blank cell of code sets is a rating not given, not an empty set: where it meant 'no
    code' (a multi-label export), a code two raters disagreed on (r1 on 50 units, r2 on 48,
    45 alike of 100) read percent 1.000 and kappa 0/0 on the 45 units both gave codes, with
    'no code' counted: 0.92 and 0.84; said as 'missing ratings' alone.
    """
    rated = np.isfinite(table.values).sum(axis=0).tolist()
    n = len(table.unit_ids)
    short = [f"{r} rated {k}" for r, k in zip(table.raters, rated, strict=True) if k < n]
    if not short:
        return ""
    empty = (
        f"; {table.values.size - sum(rated)} blank cell(s) read as not rated, not as 'no "
        "code': a unit given no code needs a code of its own (e.g. 'none'), else the "
        "exact-set and per-code rows leave it out"
        if sets
        else ""
    )
    return (
        f"{empty}; missing ratings: {', '.join(short)} of {n} units (a unit enters with two or "
        "more ratings)" + unequal_clause(np.isfinite(table.values).sum(axis=1).tolist(), "raters")
    )


def unequal_clause(per_unit: list[int], who: str) -> str:
    """For the first line: units rated by unequal numbers of raters ('' if not).

    Units of 2 and of 3 ratings: Fleiss (1971) needs as many on each (statsmodels'
    fleiss_kappa stops on such a table); Gwet's (2014) form gave 0.343, the complete units
    0.236, said only as 'missing ratings' (as where Fleiss 1971 holds), and an annotation
    file's coders not at all.
    """
    sizes = collections.Counter(k for k in per_unit if k > 1)
    if len(sizes) < 2:
        return ""
    mixed = ", ".join(f"{sizes[k]} with {k}" for k in sorted(sizes, reverse=True))
    stats = "fleiss, conger, gwet_ac1/ac2" if who == "raters" else "fleiss, gwet_ac1"
    return (
        f"; units rated by unequal numbers of {who} ({mixed} ratings): {stats} and "
        "brennan_prediger in Gwet's (2014) form for them (Fleiss 1971 and statsmodels' "
        "fleiss_kappa need as many ratings on every unit)"
    )


def ratings_clauses(table: RatingsTable, results: Sequence[AgreementResult]) -> list[str]:
    """What agree's first line and :func:`agreement_table`'s notes say of the ratings: one rule.

    In agree's order: numbers mixed with words, whole numbers read as unordered, a lone 0
    below the scale, a rater's column twice, a missing-rating mark, a constant rater (else a
    skewed margin, said once).
    """
    constant = constant_raters(table)
    return [
        *numbers_and_words(table),
        *integers_read_as_unordered(table, results),
        *words_read_as_unordered(table, results),
        *zero_below_the_scale(table),
        *copied_raters(table),
        *marks_read_as_categories(table),
        *(constant or skewed_margin(table, results)),
    ]


def consensus_clause(table: RatingsTable) -> str:
    """The first line's clause on a rater column that sides with the others' majority ("" if none).

    ``agree`` adds it to its first line and :func:`ratings_from_frame` to the table's notes:
    one rule. A consensus (adjudicated) column beside exactly two raters, under a name no
    consensus word holds (``C``), was a third rater: Fleiss 0.618 for the two raters' 0.426,
    with no word (the value rule leaves a column out from four columns on). Beside three raters
    on 30 units the value rule, shared by the columns, had too few rows: ``decision``, their
    majority on 30 of 30 rows, read Fleiss 0.488 for the raters' 0.317; from four columns each
    is tested at :data:`MAX_P` alone (equal raters are so named in 4% of tables or fewer), or,
    never departing, at :data:`SAID_EXACT_P` (``R_all``, the majority of three raters each the
    lone dissenter on 3 of 30 units, p 0.042, read Fleiss 0.696 for their 0.595 with no word).
    A much better rater than the others reads so too: said, not left out.
    """
    if len(table.raters) < 3:
        return ""
    rows = [[f"{v:g}" if np.isfinite(v) else None for v in row] for row in table.values]
    level = None if len(table.raters) == 3 else MAX_P
    exact = 0.0 if len(table.raters) == 3 else SAID_EXACT_P  # never departing: p < 0.05
    found = value_summaries(
        rows, list(table.raters), min_columns=3, max_p=level, exact_p=exact
    ).summaries
    if not found and len(table.raters) == 3:  # two raters and their adjudication (`key`)
        loose = value_summaries(rows, list(table.raters), min_columns=3, exact_p=SAID_EXACT_P)
        found = tuple(s for s in loose.summaries if _sides_always(rows, table.raters, s.column))
    return "".join(
        f"; {s.column} {s.reason.split(': a majority')[0]}: a consensus of "
        f"{', '.join(rest[:-1])} and {rest[-1]}? read here as a rater (--raters "
        f"{','.join(rest)} leaves it out)"
        for s in found
        for rest in [[r for r in table.raters if r != s.column]]
    )


def _sides_always(rows: Sequence[Sequence[str | None]], raters: Sequence[str], column: str) -> bool:
    """Whether ``column`` gives one of the two other raters' ratings wherever they differ.

    An adjudication of two raters does; a third rater seldom does with three or more
    categories. Beside never departing where they agree (p < :data:`SAID_EXACT_P`): equal
    raters are so named in about 5% of simulated tables or fewer (30-100 units, 2-5
    categories, 70-90% accurate), an adjudication of two raters 80% accurate on 30 units in
    31-76% (2-5 categories), where the shared level alone named 0-1% (``alice, bob, key``:
    Fleiss 0.663 of the three for the two raters' 0.495, no word).
    """
    j = list(raters).index(column)
    for row in rows:
        own, others = row[j], [v for i, v in enumerate(row) if i != j]
        if own is not None and None not in others and own not in others:
            return False
    return True


def tick_box_clause(table: RatingsTable) -> str:
    """The first line's clause on ratings that are all one value beside blanks ("" if not).

    A tick box exported as 'x' (or 1, TRUE) and blank, two raters ticking 6 of 20 units each,
    4 alike: blank read as not rated left the 4 units both ticked, percent 1.000 at exit 0
    (kappas 0/0); blank as 'not ticked' reads percent 0.8, Cohen 0.524 on 20 units.
    """
    given = np.isfinite(table.values)
    seen = np.unique(table.values[given])
    if seen.size != 1 or given.all() or len(table.raters) < 2:
        return ""
    label = table.labels[int(seen[0])] if table.labels else f"{seen[0]:g}"
    blank = int(given.size - given.sum())
    return (
        f"; every rating given is '{label}' ({int(given.sum())} of {given.size} cells; the "
        f"{blank} others blank, read as not rated): a tick box, blank = not ticked? give the "
        "blank cells a code of their own (e.g. 0) to count them"
    )


def split_category_clause(table: RatingsTable) -> str:
    """The first line's clause on two categories no rater both gives, on the same units.

    ``mid`` from r1 and ``medium`` from r2 (each rater's word for one level) were two
    categories that never agree: percent 0.4 on 10 units for the 0.8 of one word, Cohen 0.294
    for 9/13, with the four categories listed and no word ("" if no such pair). Said when
    the raters who give one never give the other and both fall on the same units, on two
    units or more and on half or more of the units either falls on.
    """
    if not table.labels or len(table.raters) < 2:
        return ""
    values = table.values
    on = [(values == k).any(axis=1) for k in range(len(table.labels))]
    givers = [frozenset(np.flatnonzero((values == k).any(axis=0)).tolist()) for k in range(len(on))]
    said: list[str] = []
    for a, b in itertools.combinations(range(len(on)), 2):
        n_ab = int((on[a] & on[b]).sum())
        if givers[a] & givers[b] or n_ab < 2 or 2 * n_ab < max(on[a].sum(), on[b].sum()):
            continue
        who = [", ".join(table.raters[r] for r in sorted(givers[k])) for k in (a, b)]
        said.append(
            f"'{table.labels[a]}' (given by {who[0]} alone) and '{table.labels[b]}' (by "
            f"{who[1]} alone) fall on the same {n_ab} units: one category written two ways? "
            "(read as two, they never agree; write it one way)"
        )
    return "".join(f"; {c}" for c in said[:2])


# --------------------------------------------------------------------------- frames


@dataclass(frozen=True)
class LongColumns:
    """A long ratings table's columns: one row per (unit, rater) with its rating."""

    unit: str
    rater: str
    rating: str
    reason: str


def detect_long(
    frame: pd.DataFrame, *, unit_column: str | None = None, exclude: Sequence[str] = ()
) -> LongColumns | None:
    """The columns of a long table when its shape and names leave no doubt, else None.

    Long: a unit column (given, or the one column named like an id that is not a rater)
    whose ids repeat, and besides it exactly two columns, one named like a rater
    (:data:`RATER_NAMES`) and the rating.
    """
    cols = [str(c) for c in frame.columns if str(c) not in exclude]
    rater_named = [c for c in cols if normal_name(c) in RATER_NAMES and c != unit_column]
    if len(rater_named) != 1:
        return None
    if unit_column is None:
        named = [c for c in cols if id_named(c) and c not in rater_named]
        if len(named) != 1:
            return None
        unit_column = named[0]
    rest = [c for c in cols if c not in (unit_column, rater_named[0])]
    if len(rest) > 1:  # a time or a note beside the rating (`unit,annotator,label,seconds`,
        # `created_at`: refused before as a unit on two rows, "no rater column?")
        rest = [
            c
            for c in rest
            if not NOT_RATING_WORDS.intersection(name_words(c)) and not time_column(c, frame[c])
        ]
    if len(rest) != 1 or unit_column not in cols:
        return None
    if not frame[unit_column].duplicated().any():  # long only if the raters are no ratings
        names, ratings = (set(frame[c].dropna().astype(str)) for c in (rater_named[0], rest[0]))
        if names & ratings or len(names) < 2:
            return None
    return LongColumns(unit_column, rater_named[0], rest[0], "one row per unit and rater")


def _not_long_without_units(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None
) -> None:
    """Refuse a long table that lost its unit ids: a rater-named column of names, no ratings.

    ``annotator,code`` rows with no unit column were read as a wide table of two raters,
    'annotator' and 'code', whose values never meet.
    """
    named = [c for c in raters if normal_name(c) in RATER_NAMES]
    if len(named) != 1:
        return
    names = set(frame[named[0]].dropna().astype(str))
    ratings = {v for c in raters if c != named[0] for v in frame[c].dropna().astype(str)}
    if len(names) >= 2 and not names & ratings:
        raise InputError(
            f"column '{named[0]}' is named like a rater and holds names, none of them a rating "
            "of the other columns: one row per unit and rater, without a unit id column? add "
            "the unit ids (--long RATER,RATING --unit-column UNIT), or name the raters with "
            "--raters",
            path=source,
            field=named[0],
        )


def long_columns(
    frame: pd.DataFrame,
    given: Sequence[str] | None,
    *,
    unit_column: str | None = None,
    exclude: Sequence[str] = (),
    source: str | Path | None = None,
) -> LongColumns | None:
    """The long-table columns ``given`` (``--long RATER,RATING``) or detected (:func:`detect_long`).

    With ``given``, the unit column is ``unit_column`` or else the one column left that is
    named like an id; none or several is an :class:`InputError` asking for ``--unit-column``.
    """
    if given is None:
        return detect_long(frame, unit_column=unit_column, exclude=exclude)
    if len(given) != 2 or given[0] == given[1]:
        raise InputError(
            f"--long takes two columns, RATER_COLUMN,RATING_COLUMN (got {','.join(given)!r})",
            path=source,
        )
    rater, rating = given
    if unit_column is not None and unit_column in given:
        raise InputError(
            f"--unit-column {unit_column!r} is also a --long column: the unit ids are a third "
            "column",
            path=source,
        )
    cols = [str(c) for c in frame.columns if str(c) not in exclude]
    for name in (rater, rating):
        if name not in cols:
            raise InputError(f"no column '{name}' for --long (columns: {cols})", path=source)
    if unit_column is not None and unit_column not in cols:  # a KeyError's traceback
        raise InputError(f"no unit column {unit_column!r} (columns: {cols})", path=source)
    if unit_column is None:
        named = [c for c in cols if id_named(c) and c not in given]
        if len(named) != 1:
            raise InputError(
                "--long: name the unit id column with --unit-column "
                f"({'none' if not named else ', '.join(named)} named like an id)",
                path=source,
            )
        unit_column = named[0]
    return LongColumns(unit_column, rater, rating, "given (--long)")


def _lines(frame: pd.DataFrame, lines: Sequence[int] | None, first: int) -> Callable[[int], int]:
    """Row ``i``'s file line: ``lines[i]``, one per row, else ``i + first``."""
    if lines is not None and len(lines) == len(frame):
        return lambda row: int(lines[row])
    return lambda row: row + first


def _two_units(
    frame: pd.DataFrame, key: Sequence[str], unit: str, rating: str, row: int, line_of: Any
) -> str:
    """What a (unit, rater) pair's two rows differ in beyond the rating (two units of one id).

    A long table of two data sets numbering their items alike (``dataset`` X's item 1 and
    Y's) gave rater A two rows of unit '1'; the way named, ``--sets ';'``, joined X's 'yes'
    and Y's 'no' into one code set: Cohen 0.000 on 2 units for 0.500 on 4, exit 0.
    """
    same = (frame[list(key)] == frame[list(key)].iloc[row]).all(axis=1).to_numpy()
    first = int(np.flatnonzero(same)[0])
    for column in frame.columns:
        if column in key or column == rating:
            continue
        a, b = frame[column].iloc[first], frame[column].iloc[row]
        if pd.isna(a) or pd.isna(b) or a == b:
            continue
        units = frame.groupby(column, sort=False)[unit].nunique()
        if units.get(a, 0) > 1 and units.get(b, 0) > 1:  # a group of units (not a row's note)
            return (
                f"lines {line_of(first)} and {line_of(row)} differ in column {str(column)!r}: "
                f"two units of one id? --by {column} gives each {column} its agreement, or make "
                "the unit ids unique; "
            )
    when = _retimed(frame, key, rating)
    if when:  # the rating made again later: joined by --sets, the earlier code counted too
        column, _ = when
        a, b = frame[column].iloc[first], frame[column].iloc[row]
        return (
            f"lines {line_of(first)} and {line_of(row)} differ in column {column!r} ({a}, "
            f"{b}): a rating made again? keep the row that counts (--sets would join both); "
        )
    return ""


def _regrouped(frame: pd.DataFrame, key: Sequence[str], rating: str) -> tuple[str, int] | None:
    """A column grouping units that tells a (unit, rater) pair's rows apart, and how many pairs.

    ``dataset,item,annotator,label`` of two data sets numbering their items alike: under
    ``--long annotator,label --sets ';'`` X's item 1 and Y's item 1 were joined into one code
    set per annotator: exact-set percent 1/3 on 3 units for the 4/6 of the 6 (X 3/3, Y 1/3),
    said only as codes joined and ``dataset`` not read (as :func:`_two_units`, the refusal
    without ``--sets``, names it).
    """
    unit = key[-1]
    for column in frame.columns:
        if column in key or column == rating or time_column(str(column), frame[column]):
            continue
        pairs = frame.groupby(list(key), sort=False, dropna=True)[column].nunique()
        units = frame.groupby(column, sort=False)[unit].nunique()
        if (pairs > 1).any() and len(units) > 1 and (units > 1).all():
            return str(column), int((pairs > 1).sum())
    return None


def _retimed(frame: pd.DataFrame, key: Sequence[str], rating: str) -> tuple[str, int] | None:
    """A time column telling a (unit, rater) pair's rows apart, and how many pairs it does.

    ``unit,rater,code,created_at`` with r1's 'B' on u2 and its 'A' three days later: a
    re-rating. Joined by ``--sets`` into the set {A, B}: percent 2/3 for the 3/3 of the
    later rating, said only as codes joined.
    """
    for column in frame.columns:
        if column in key or column == rating or not time_column(str(column), frame[column]):
            continue
        pairs = frame.groupby(list(key), sort=False, dropna=False)[column].nunique()
        if (pairs > 1).any():
            return str(column), int((pairs > 1).sum())
    return None


def wide_from_long(
    frame: pd.DataFrame,
    long: LongColumns,
    *,
    keep: Sequence[str] = (),
    source: str | Path | None = None,
    first_line: int = 2,
    lines: Sequence[int] | None = None,
    join: str | None = None,
) -> pd.DataFrame:
    """One row per unit (per ``keep`` group), one column per rater, from a long table.

    A (unit, rater) pair given twice, an empty unit or rater cell, a name with spaces around
    it, a rater named like the unit (or ``keep``) column, a single rater: an
    :class:`InputError` naming the row's line: ``lines[i]`` is the file line of row ``i``
    (a CSV's quoted line breaks counted, a sheet's row numbers), else ``i + first_line``.
    With ``join`` (``--sets SEP``) the rows of one (unit, rater) pair are its codes, joined
    with ``SEP`` into one cell (a rater giving several codes to a unit, one row each).
    """
    for name in (long.unit, long.rater, long.rating, *keep):
        if name not in frame.columns:
            raise InputError(f"no column '{name}' (columns: {list(frame.columns)})", path=source)

    line_of = _lines(frame, lines, first_line)
    for column, what in ((long.rater, "rater"), (long.unit, "unit")):
        missing = frame[column].isna()
        if missing.any():
            row = int(np.flatnonzero(missing.to_numpy())[0])
            raise InputError(
                f"empty {what} cell (a long table names the {what} on every row)",
                path=source,
                line=line_of(row),
                field=column,
            )
        for row, value in enumerate(frame[column].tolist()):
            if isinstance(value, str) and value != value.strip():
                raise InputError(
                    f"{what} {value!r}: expected the name alone, without spaces around it (it "
                    f"would be another {what})",
                    path=source,
                    line=line_of(row),
                    field=column,
                )
    names = frame[long.rater].astype(str).tolist()  # 'Ann2' beside 'ann2' were two raters
    cells = ((value, line_of(row), long.rater) for row, value in enumerate(names))
    one_way(cells, source, "rater", "it would be a rater of its own; write it one way")
    key = [*keep, long.unit, long.rater]
    twice = frame.duplicated(subset=key)
    if twice.any() and join is None:
        row = int(np.flatnonzero(twice.to_numpy())[0])
        unit, rater = frame[long.unit].iloc[row], frame[long.rater].iloc[row]
        groups = _two_units(frame, key, long.unit, long.rating, row, line_of)
        raise InputError(
            f"unit {str(unit)!r} is rated by {str(rater)!r} twice ({groups}several codes per "
            "unit and rater, one row each? --sets ';' joins them into one code set)",
            path=source,
            line=line_of(row),
            field=long.rating,
        )
    if twice.any() and join is not None:  # one code given a pair twice: read once, unsaid
        again = frame.duplicated(subset=[*key, long.rating]) & frame[long.rating].notna()
        if again.any():
            row = int(np.flatnonzero(again.to_numpy())[0])
            same = frame[[*key, long.rating]].eq(frame[[*key, long.rating]].iloc[row]).all(axis=1)
            first = int(np.flatnonzero(same.to_numpy())[0])
            raise InputError(
                f"unit {str(frame[long.unit].iloc[row])!r} is given the code "
                f"{str(frame[long.rating].iloc[row])!r} by {str(frame[long.rater].iloc[row])!r} "
                f"twice (first at line {line_of(first)}): a code set holds each code once (a "
                "double entry, or a typo for another code?): keep one of the rows",
                path=source,
                line=line_of(row),
                field=long.rating,
            )
    no_dates(frame, [long.rating], source, line_of)
    one_spelling(frame, [long.rating], source, line_of)
    raters = frame[long.rater].astype(str)
    taken = [long.unit, *keep]
    clash = raters.isin(taken)
    if clash.any():  # pandas could not put the rater's column beside the unit's (traceback)
        row = int(np.flatnonzero(clash.to_numpy())[0])
        raise InputError(
            f"rater {raters.iloc[row]!r} has the name of the column {raters.iloc[row]!r} "
            "(the reshaped table needs both): rename the rater",
            path=source,
            line=line_of(row),
            field=long.rater,
        )
    distinct = raters.unique()
    if len(distinct) < 2:
        raise InputError(
            f"one rater ({distinct[0]!r}) in the whole table: agreement needs two or more "
            f"(is {long.rater!r} the rater column?)",
            path=source,
            field=long.rater,
        )
    if twice.any() and join is not None:  # --sets: a pair's rows are its codes, one cell
        sep = join

        def joined(v: pd.Series) -> Any:
            return sep.join(dict.fromkeys(str(x) for x in v.dropna())) or None

        frame = frame.copy()
        frame[long.rater] = frame[long.rater].astype(str)
        frame = frame.groupby(key, sort=False, dropna=False)[long.rating].agg(joined).reset_index()
    table = frame.astype({long.rater: str}).pivot(
        index=[*keep, long.unit], columns=long.rater, values=long.rating
    )
    table.columns = [str(c) for c in table.columns]
    return table.reset_index()


def _outside_categories(
    cells: list[list[Any]],
    ids: list[str],
    raters: list[str],
    known: Any,
    given: Sequence[Any],
    source: str | Path | None,
) -> None:
    """Refuse the first rating outside ``--categories``, naming its unit and rater column.

    It was "ratings ['medium'] are not in the category list [...]": no unit, no column.
    """
    for unit, row in zip(ids, cells, strict=True):
        for rater, value in zip(raters, row, strict=True):
            if value is not None and not known(value):
                shown = [f"{v:g}" if isinstance(v, float) else str(v) for v in (value, *given)]
                raise InputError(
                    f"rating '{shown[0]}' of unit '{unit}' is not in the category list "
                    f"(--categories: {', '.join(shown[1:])})",
                    path=source,
                    field=rater,
                )


def _no_underscore(
    cells: list[list[Any]], ids: list[str], raters: list[str], source: str | Path | None
) -> None:
    """Refuse a number rating written with ``_``, naming its unit and rater column.

    Python's float() reads ``1_0`` as 10: a rating 1_0 beside 1s and 2s was a third
    category 10 (percent and kappa over three categories), exit 0.
    """
    for unit, row in zip(ids, cells, strict=True):
        for rater, value in zip(raters, row, strict=True):
            clause = underscore_clause(value)
            if clause is not None:
                raise InputError(
                    f"rating {value!r} of unit '{unit}' is not a number: {clause}",
                    path=source,
                    field=rater,
                )


@dataclass(frozen=True)
class ColumnChoice:
    """Which column holds the unit ids (``None``: row numbers) and which are raters, and why."""

    unit_column: str | None
    raters: list[str]
    reason: str
    left_out: tuple[str, ...] = ()
    summaries: tuple[Summary, ...] = ()


def _id_by_values(frame: pd.DataFrame, col: str, others: Sequence[str]) -> bool:
    """All cells present and distinct, and most values used by no other column.

    A rating column can be all-distinct in a tiny table, but its values are the categories
    the other raters use; an id column (1..30 beside ratings 1..5) mostly is not.
    """
    values = present(frame[col])
    if len(frame) < 3 or len(values) != len(frame) or len(set(values)) != len(values):
        return False
    used = {v for o in others for v in present(frame[o])}
    outside = sum(1 for v in values if v not in used)
    return 2 * outside > len(values)


#: Fewest rows whose unnamed column running 1..n down them is read as row numbers, not a rater.
ROW_NUMBER_RUN = 4


def _row_numbered(frame: pd.DataFrame, col: str, others: Sequence[str]) -> str:
    """``'1..6'`` when ``col`` holds the whole numbers 1..n (or 0..n-1) in row order, else "".

    Such a column (``x`` beside two raters' 1-6 ratings) shares every value with the ratings,
    so :func:`_id_by_values` took it for a third rater ('raters (3): x, r1, r2'; Fleiss over
    three columns, one of them the row numbers). A rater's ratings running 1, 2, ..., n down
    the rows is a chance of (1/q)**n on q categories: they are row numbers. Not for a column
    named like a rater (``r3``), nor where no other column repeats a value (ranks: each rater
    a permutation of 1..n, the rows sorted by the first rater's).
    """
    values = present(frame[col])
    if len(frame) < ROW_NUMBER_RUN or len(values) != len(frame) or rater_named(col):
        return ""
    if not any(len(set(v)) < len(v) for v in (present(frame[o]) for o in others)):
        return ""
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return ""
    start = numbers[0]
    if start not in (0.0, 1.0) or numbers != [start + i for i in range(len(numbers))]:
        return ""
    return f"{start:g}..{numbers[-1]:g}"


def _unit_named(column: str) -> bool:
    """Whether a column is named like one unit: an id word and a number (``q3``, ``case_12``)."""
    stem = re.fullmatch(r"([a-z]+)[ _.#-]*\d+", "_".join(name_words(column)))
    return stem is not None and (stem[1] in ID_NAMES or stem[1] in UNIT_WORDS)


def choose_columns(
    frame: pd.DataFrame,
    *,
    unit_column: str | None = None,
    raters: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    source: str | Path | None = None,
    unit_reason: str = "given (--unit-column)",
    candidates: Sequence[str] | None = None,
) -> ColumnChoice:
    """Pick the unit-id column and the rater columns of a ratings table.

    A column is a rater only when named in ``raters`` or when it looks like ratings: without
    ``raters``, the columns that share values with each other (:func:`_raters_by_values`; a
    count, a name or a note beside the ratings shares none and is ``left_out``), less the
    columns that summarise the raters (:mod:`failcodes.stats.summaries`: named like a consensus,
    or the row-wise majority of the others; in ``summaries`` with the reason). ``candidates`` (a
    long table's raters) are the possible raters as they are, not linked by value. Without
    ``unit_column`` the unit id is the one column named like an id (:data:`ID_NAMES`, ``*_id``),
    else the one column whose values are all distinct and mostly unused by the other columns;
    with neither, row numbers are unit ids. Two candidates make the table ambiguous:
    :class:`InputError` asks for ``--unit-column``/``--raters``. ``unit_reason`` says why a
    given ``unit_column`` is the one (shown to the user).
    """
    cols = [str(c) for c in frame.columns if str(c) not in exclude]
    if unit_column is not None and unit_column not in cols:
        raise InputError(f"no unit column '{unit_column}' (columns: {cols})", path=source)
    if raters is not None:
        missing = [r for r in raters if r not in cols]
        if missing:
            raise InputError(f"no rater column(s) {missing} (columns: {cols})", path=source)
        if unit_column is not None and unit_column in raters:
            raise InputError(
                f"column '{unit_column}' cannot be both the unit id and a rater", path=source
            )
    if unit_column is None and raters is None and candidates is None:
        not_transposed(frame, cols, source)
        not_frequency_table(frame, cols, source)
    if unit_column is not None:
        unit, reason = unit_column, unit_reason
    else:
        pool = [c for c in cols if raters is None or c not in raters]
        named = [c for c in pool if id_named(c)]
        by_values = (
            []
            if named
            else [
                c
                for c in pool
                if _id_by_values(frame, c, [o for o in cols if o != c])
                or _row_numbered(frame, c, [o for o in cols if o != c])
            ]
        )
        found = named or by_values
        if len(found) > 1 and raters is None:
            raise InputError(
                f"cannot tell the unit id column from the rater columns ({', '.join(found)} "
                "all look like ids); name them with --unit-column and --raters",
                path=source,
            )
        if len(found) == 1:
            unit = found[0]
            others = [o for o in cols if o != unit]
            by_run = not named and not _id_by_values(frame, unit, others)
            reason = (
                "named like an id"
                if named
                else f"values {_row_numbered(frame, unit, others)} in row order: row numbers, "
                "not a rater's ratings; --raters reads it as a rater"
                if by_run
                else "values all distinct, unlike ratings"
            )
        else:
            unit, reason = None, "none found: row numbers are the unit ids"
    left_out: tuple[str, ...] = ()
    summaries: tuple[Summary, ...] = ()
    named_out: list[str] = []
    if raters is not None:
        rater_cols = list(raters)
    else:
        pool = list(candidates) if candidates is not None else [c for c in cols if c != unit]
        rater_cols, summaries = _without_named(pool, source)
        named_out = list(rater_cols)  # before the values rule sets columns aside
        if candidates is None:
            rater_cols, left_out = _raters_by_values(frame, rater_cols, source)
            if unit is None or not frame[unit].astype(str).duplicated().any():  # else long
                _not_two_spellings(frame, rater_cols, source)
            rater_cols, summaries = without_not_ratings(rater_cols, summaries, source)
        rater_cols, summaries = _without_function_columns(frame, rater_cols, summaries, source)
    if not rater_cols:
        raise InputError("no rater columns", path=source)
    if raters is None and candidates is None:
        one_field_per_rater(rater_cols, source)
        no_code_grid(frame, rater_cols, source)
        # twice as many rater columns as units, and six or more: one row per rater and one
        # column per unit, under a header no rater word names (`reader,Q1,...,Q30`): the
        # questions read as raters; counted before the values rule, which set some of them
        # aside as covariates (not where every column is named like a rater: a panel of many
        # raters and few units). Smaller, under a unit column found by its values: more raters
        # than units (`reader,Q1,...,Q4` over 3 readers). r1..r8 and reader1..reader8 are
        # rater names too, unless the unit column is rater-named (`reader,r1,...,r8`)
        unnamed = unit_column is None and unit is not None and not id_named(unit)
        wide = len(named_out) >= max(6, 2 * len(frame))
        panel = all(map(rater_named, named_out)) and not (unit and rater_named(unit))
        # every rater column named like a unit (`name,q1,...,q4` over five readers: Fleiss
        # -0.067 over the questions for the readers' 0.200); the readers' names set aside by
        # their values (two readers: no unit column found) are no rater column
        named = [c for c in named_out if c not in left_out]
        units = len(named) > 1 and all(map(_unit_named, named))
        many = wide or (unnamed and len(named_out) > len(frame))
        if (many or units) and not panel:
            shown = named_out if many else named
            raise InputError(
                f"{len(shown)} rater columns ({', '.join(shown[:3])}"
                + (", ...) " if len(shown) > 3 else ") ")
                + (f"for {len(frame)} rows" if many else "named like units")
                + ": is the table one row per rater and one column per unit? "
                "agreement needs one row per unit: transpose it (to read it as given, name "
                "the raters with --raters)",
                path=source,
                line=1,
            )
    spelt: dict[str, str] = {}
    for col in rater_cols if raters is None else ():  # 'Rater1' and 'rater1' (i35red)
        seen = spelt.setdefault(spelling_key(col), col)
        if seen != col:
            raise InputError(
                f"rater columns {seen!r} and {col!r} differ only in case, spacing or Unicode "
                "form: one rater's ratings twice? (each was a rater, inflating agreement); "
                "rename or drop one, or name the raters with --raters to keep both",
                path=source,
                line=1,
                field=col,
            )
    return ColumnChoice(
        unit_column=unit, raters=rater_cols, reason=reason, left_out=left_out, summaries=summaries
    )


def _cell_keys(frame: pd.DataFrame, columns: Sequence[str]) -> list[list[str | None]]:
    """The table's cells as comparable values (:func:`value_key`), None where empty."""

    def key(v: object) -> str | None:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return None
        text = str(v).strip()
        return value_key(text) if text else None

    return [[key(v) for v in row] for row in frame[list(columns)].itertuples(index=False)]


def _without_named(
    pool: list[str], source: str | Path | None
) -> tuple[list[str], tuple[Summary, ...]]:
    """``pool`` less the columns named like a consensus column (majority, gold, final...).

    Refused when fewer than two columns would be left: then the names do not tell raters
    from a summary and the user names the raters.
    """
    kept, named = named_summaries(pool)
    if named and len(kept) < 2:
        listed = ", ".join(s.column for s in named)
        raise InputError(
            f"cannot tell the rater columns: {listed} named like a consensus column "
            f"(majority, gold, final...) and {len(kept)} other column(s) left; name the raters "
            "with --raters",
            path=source,
        )
    return kept, tuple(named)


def _without_function_columns(
    frame: pd.DataFrame,
    raters: list[str],
    summaries: tuple[Summary, ...],
    source: str | Path | None,
) -> tuple[list[str], tuple[Summary, ...]]:
    """``raters`` less a column that is the row-wise majority of the others (a summary).

    Two such columns are two plausible rater sets: refused, asking for ``--raters``.
    """
    check = value_summaries(_cell_keys(frame, raters), raters)
    if check.ambiguous:
        raise InputError(
            f"cannot tell the raters from a majority or adjudicated column: "
            f"{', '.join(check.ambiguous)} each equal the row-wise majority of the other "
            f"columns on at least {MIN_SHARE:.0%} of rows, more often than the other columns "
            "do; name the raters with --raters",
            path=source,
        )
    dropped = {s.column for s in check.summaries}
    kept = [c for c in raters if c not in dropped]
    return kept, (*summaries, *check.summaries)


def _raters_by_values(
    frame: pd.DataFrame, candidates: Sequence[str], source: str | Path | None
) -> tuple[list[str], tuple[str, ...]]:
    """The rater columns among ``candidates``: those that share rating values.

    Raters of one table use the same categories, so two rater columns share values; a
    covariate beside them (a count, a dimension name, a free-text note) shares none. Columns
    are linked when their value sets meet; the largest linked group are the raters and the
    rest are left out (the caller says which). When no group is larger than one column there
    is nothing to tell covariates by, and every candidate stays a rater; two largest groups
    of the same size make the table ambiguous.
    """
    values = [{value_key(v) for v in present(frame[c])} for c in candidates]
    group = list(range(len(candidates)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i in range(len(candidates)):
        for j in range(i + 1, len(candidates)):
            if values[i] & values[j]:
                group[root(j)] = root(i)
    members: dict[int, list[str]] = {}
    for i, col in enumerate(candidates):
        members.setdefault(root(i), []).append(col)
    sizes = sorted((len(m) for m in members.values()), reverse=True)
    if not sizes or sizes[0] < 2:
        return list(candidates), ()
    if len(sizes) > 1 and sizes[1] == sizes[0]:
        groups = " / ".join(", ".join(m) for m in members.values() if len(m) == sizes[0])
        raise InputError(
            f"cannot tell the rater columns: groups ({groups}) use different values; "
            "name them with --raters",
            path=source,
        )
    raters = next(m for m in members.values() if len(m) == sizes[0])
    return raters, tuple(c for c in candidates if c not in raters)


#: Spellings of yes (1) and no (0) (:func:`_not_two_spellings`).
_YES_NO = dict.fromkeys(("yes", "y", "true", "t", "1"), 1) | dict.fromkeys(
    ("no", "n", "false", "f", "0"), 0
)


def _not_two_spellings(
    frame: pd.DataFrame, candidates: Sequence[str], source: str | Path | None
) -> None:
    """Refuse two raters with no rating in common, text among them: one scale written two ways.

    ``TRUE``/``FALSE`` beside ``1``/``0`` in a CSV file were two raters who never agreed. (A
    spreadsheet's booleans are read as 1 and 0, and numbers alone may be scores that never tie:
    no refusal.)
    """
    values = [{value_key(v) for v in present(frame[c])} for c in candidates]
    given = [(c, v) for c, v in zip(candidates, values, strict=True) if v]
    cells = frame[list(candidates)].to_numpy().ravel().tolist()
    if len(given) < 2 or any(a & b for (_, a), (_, b) in itertools.combinations(given, 2)):
        return
    if any(isinstance(v, bool | np.bool_) for v in cells) or all(
        is_number(v) for c in candidates for v in present(frame[c])
    ):  # booleans are 1 and 0; scores on a fine scale (0-100) may share no value
        return
    if any(normal_name(c) in RATER_NAMES for c in candidates):  # a long table's: said later
        return
    # yes and no, each rater writing them one way, still share none: raters who never agreed
    # (one said yes to every unit, the other no), not one scale written two ways
    sides = [{_YES_NO.get(v.casefold()) for v in present(frame[c])} for c, _ in given]
    if all(None not in side for side in sides) and not any(
        a & b for a, b in itertools.combinations(sides, 2)
    ):
        return
    (first, _), (second, _) = given[:2]

    def shown(column: str) -> str:  # the cells as written
        v = sorted(set(present(frame[column])))
        return ", ".join(f"'{x}'" for x in v[:4]) + (", ..." if len(v) > 4 else "")

    raise InputError(
        f"rater columns {first!r} and {second!r} share no rating ({first}: {shown(first)}; "
        f"{second}: {shown(second)}): one scale written two ways? read so they never agree "
        "(kappa at or below 0); write the ratings one way (to read them as given, name the "
        "raters with --raters)",
        path=source,
        line=1,
        field=second,
    )


def _names(value: object, name: str) -> list[str] | None:
    """``raters`` / ``categories`` as a list of names: a lone string is refused, not spelt out.

    ``raters="r1"`` was read letter by letter ("no rater column(s) ['r', '1']").
    """
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence | pd.Index | np.ndarray):
        raise ConfigError(
            f"{name}: expected a list of names, not {type(value).__name__} {value!r}"
            + (f" (give [{value!r}])" if isinstance(value, str) else "")
        )
    names = [str(v) for v in value]
    twice = next((v for i, v in enumerate(names) if v in names[:i]), None)
    if twice is not None:  # raters: a rater compared with themself; categories: q one too many
        raise ConfigError(f"{name}: names {twice!r} twice")
    return names


def _frame_arguments(
    frame: object,
    unit_column: object,
    raters: object,
    categories: object,
) -> tuple[pd.DataFrame, str | None, list[str] | None, list[str] | None]:
    """A notebook's frame with its column names as text, and the names given as text too.

    ``pd.DataFrame(matrix)`` has the column names 0, 1: a KeyError '0' from pandas, and
    ``raters=[0, 1]`` was refused as "no rater column(s) [0, 1] (columns: ['0', '1'])".
    """
    if not isinstance(frame, pd.DataFrame):
        raise ConfigError(
            f"frame: expected a pandas DataFrame, not {type(frame).__name__}"
            + (
                " (read the file with failcodes.read_ratings_frame)"
                if isinstance(frame, str | Path)
                else ""
            )
        )
    if isinstance(frame.columns, pd.MultiIndex):
        raise ConfigError(
            f"frame: its columns have {frame.columns.nlevels} levels "
            f"({', '.join(map(str, frame.columns[:2]))}, ...): give one name per column, "
            "e.g. frame.columns = ['_'.join(map(str, c)) for c in frame.columns]"
        )
    names = [str(c) for c in frame.columns]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"frame: column name {twice[0]!r} is on {names.count(twice[0])} columns "
            "(as text): give each column a name of its own"
        )
    if names != list(frame.columns):
        frame = frame.set_axis(names, axis=1)
    unit = None if unit_column is None else str(unit_column)
    return frame, unit, _names(raters, "raters"), _names(categories, "categories")


def _dtype_categories(frame: pd.DataFrame, raters: Sequence[str]) -> tuple[list[str] | None, bool]:
    """The category set of rater columns of one categorical dtype, and whether it is unordered.

    An ordered dtype is the rank order (else text labels have none); a declared category no
    rater used counts in q (AC1, Brennan-Prediger). (None, False) unless every rater column
    has the same categories.
    """
    dtypes = [d for d in (frame[c].dtype for c in raters) if isinstance(d, pd.CategoricalDtype)]
    if not dtypes or len(dtypes) < len(raters):
        return None, False
    first = dtypes[0].categories.tolist()
    if any(d.categories.tolist() != first or d.ordered != dtypes[0].ordered for d in dtypes):
        return None, False
    numbers = all(isinstance(c, int | float | np.number) and not isinstance(c, bool) for c in first)
    return [str(c) for c in first], not dtypes[0].ordered and not numbers


def _index_as_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame.reset_index()``, an index level already a column of the same values left out.

    ``frame.set_index("item", drop=False)`` (the ids kept as a column too) was pandas'
    ValueError "cannot insert item, already exists"; a level whose name is a column holding
    other values is refused naming both.
    """
    columns = {str(c) for c in frame.columns}
    drop = []
    for level, name in enumerate(frame.index.names):
        if name is None or str(name) not in columns:
            continue
        values = frame.index.get_level_values(level)
        if not (frame[str(name)].to_numpy() == values.to_numpy()).all():
            raise ConfigError(
                f"frame: its index {name!r} and its column {name!r} hold other values: "
                "rename one, or drop the index (frame.reset_index(drop=True))"
            )
        drop.append(level)
    if len(drop) == frame.index.nlevels:
        return frame.reset_index(drop=True)
    return frame.reset_index(level=drop, drop=True).reset_index() if drop else frame.reset_index()


def ratings_from_frame(
    frame: pd.DataFrame,
    *,
    unit_column: str | None = None,
    raters: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    source: str | Path | None = None,
    columns: ColumnChoice | None = None,
) -> RatingsTable:
    """Turn a units x raters DataFrame into a :class:`RatingsTable`.

    Numeric ratings keep their values (``categories``, if given, is the full numeric category
    set in rank order); text ratings become codes in ``categories`` order (sorted labels when
    not given: fine for nominal data only, see ``ordered``). The unit-id and rater columns
    are chosen by :func:`choose_columns` (or given as ``columns``, chosen once on a whole
    table that is analysed in parts); the table records which column was used and why.
    From Python (no ``columns``), a refusal names the keywords (``raters=``), not agree's
    flags, and a cell's row by the frame's index label and position, not a file line.
    """
    if columns is not None:
        return _ratings(frame, unit_column, raters, categories, exclude, source, columns)
    try:
        _no_excel_error(frame)
        return _ratings(frame, unit_column, raters, categories, exclude, source, columns)
    except InputError as e:
        reason = in_python_words(e.reason)
        if e.path is None:  # a file's frame (``source``) keeps its lines
            reason = _rows_named(reason, frame)
            if e.line is not None:
                reason = f"{_rows_named(f'line {e.line}', frame)}: {reason}"
        raise InputError(reason, path=e.path, line=e.line, field=e.field) from None
    except StatisticsError as e:
        said = in_python_words(str(e))
        if said == str(e):
            raise
        raise StatisticsError(said) from None


#: agree's flags that name an argument of the Python API, and what may follow them.
_FLAGS = re.compile(
    r"--(unit-column|raters|categories)"
    r"(:| (?!(?:and|if|to|reads|in|with|or|gives|keeps|leaves)\b)(?!\()[^\s);]+)?"
)

#: agree's flags with no keyword of the Python API, and what the API takes instead: a long
#: frame pivoted to one column per rater; code sets through a file (``AgreeRequest``); each
#: cell one category by listing the categories.
_NO_KEYWORD = (
    (
        re.compile(
            r"(?:name the columns with )?--long (?:RATER_COLUMN,RATING_COLUMN|RATER,RATING)"
            r"(?: --unit-column UNIT)?"
        ),
        "pivot it to one column per rater: frame.pivot(index=UNIT, columns=RATER, values=RATING)",
    ),
    (  # the rater column named (`--long rater,RATING_COLUMN`, `--long rater,overreach`)
        re.compile(r"(?:name the columns with )?--long ([^\s,]+),([^\s,;)]+)"),
        lambda m: (
            "pivot it to one column per rater: frame.pivot(index=UNIT, "
            f"columns={m.group(1)!r}, values="
            f"{m.group(2) if m.group(2) == 'RATING_COLUMN' else repr(m.group(2))})"
        ),
    ),
    (
        re.compile(r"--by (\S+) gives each \S+'s agreement apart"),
        r"one table per \1: ratings_from_frame(frame[frame['\1'] == value]"
        r".drop(columns='\1')) for each value",
    ),
    (
        re.compile(r"--sets none"),
        "categories=[...] listing each cell's text",
    ),
    (
        re.compile(r"--sets ('[^']+')"),
        r"failcodes.AgreeRequest(file=..., sets=\1) on the frame written to a CSV file",
    ),
)

#: agree's flags in :func:`ratings_clauses` and :func:`category_set_clauses` as
#: :func:`agreement_table`'s keywords (its notes).
_NOTE_KEYWORDS = (
    (re.compile(r"--level (\w+)"), r"level='\1'"),
    (re.compile(r"--weights (\w+)"), r"weights='\1'"),
    (re.compile(r"\(--stat\)"), "(statistics=[...])"),
    (re.compile(r"of --categories,"), "of categories=[...],"),
    (
        re.compile(r"--categories (\S+) with"),
        lambda m: f"ratings_from_frame(frame, categories={m.group(1).split(',')!r}) with",
    ),
    (re.compile(r"\(--categories gives"), "(ratings_from_frame(frame, categories=[...]) gives"),
)


def in_python_words(text: str, made: bool = False) -> str:
    """A refusal's agree flags as the Python API's keywords.

    ``--raters a,b`` -> ``raters=['a', 'b']``, ``--unit-column`` -> ``unit_column=``; ``made``
    (the table already made, as :func:`agreement_table` is given): ``--categories a,b`` ->
    ``failcodes.ratings_from_frame(frame, categories=['a', 'b'])``. From Python,
    ratings_from_frame said "name them with --unit-column and --raters".
    """

    def word(m: re.Match[str]) -> str:
        key, arg = m.group(1).replace("-", "_"), m.group(2)
        if arg is None or arg == ":":
            said = f"{key}{arg or '='}"
        elif key == "unit_column":
            value = arg.strip()
            said = f"{key}={value if value[0] in chr(39) + chr(34) else repr(value)}"
        else:
            said = f"{key}={[v.strip(chr(39) + chr(34)) for v in arg.strip().split(',')]!r}"
        if made and key == "categories" and arg not in (None, ":"):
            return f"failcodes.ratings_from_frame(frame, {said})"
        return said

    for flag, words in _NO_KEYWORD:
        text = flag.sub(words, text)
    return _FLAGS.sub(word, text)


#: A cell pandas or float() reads as an infinite number (``inf``, ``-Infinity``).
_INFINITE = re.compile(r"\s*[+-]?inf(inity)?\s*", re.IGNORECASE)


def _no_infinite(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse an infinite rating in a frame, naming its column and row.

    ``agree`` refuses it when it reads the file (ratingsio); from Python the statistics
    refused it naming neither ("ratings contain infinite values; use NaN ...").
    """
    for column in raters:
        values = frame[column].tolist()
        # among text codes ('sup', 'inf': superior, inferior) 'inf' is a code
        texts = any(
            isinstance(v, str) and not _INFINITE.fullmatch(v) and _float(v) is None for v in values
        )
        for row, value in enumerate(values):
            if (isinstance(value, float) and np.isinf(value)) or (
                isinstance(value, str) and not texts and _INFINITE.fullmatch(value)
            ):
                raise InputError(
                    f"{str(value).strip()!r} is not a rating (write a number; leave the cell "
                    "empty, or NaN, for a missing rating)",
                    path=source,
                    line=line_of(row),
                    field=str(column),
                )


def _no_category_twin(labels: Sequence[str], used: Sequence[str]) -> None:
    """Refuse ``categories=`` naming an unused category written like a used one.

    ``categories=['a', 'b', 'A']``: 'A' counted in q (AC1 0.780 for the 0.676 of q = 2 on
    six units), where agree refuses ``--categories a,b,A`` (``_given_unused``).
    """
    given = {spelling_key(v): v for v in used}
    twin = next((c for c in labels if c not in used and spelling_key(c) in given), None)
    if twin is not None:
        raise ConfigError(
            f"categories names {twin!r}, which no rater gave, beside "
            f"{given[spelling_key(twin)]!r}, which they did: one category written two ways? "
            "(categories are read as written: write it once)"
        )


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _no_excel_error(frame: pd.DataFrame) -> None:
    """Refuse a text cell holding an Excel error value (``#REF!``: a formula that failed).

    A frame ``pandas.read_excel`` read keeps its text: a ``#REF!`` rating was a category of
    its own (percent 3/5 = 0.600 for 3/4, exit 0). A file's cells are refused as it is read.
    """
    if not isinstance(frame, pd.DataFrame):
        return  # (refused by _ratings in its words)
    for i, column in enumerate(frame.columns):
        cells = frame.iloc[:, i]  # (by place: a name given twice is refused by _ratings)
        if pd.api.types.is_numeric_dtype(cells) or pd.api.types.is_bool_dtype(cells):
            continue
        if (hit := cells.isin(ERRORS - {"#N/A"}).to_numpy(dtype=bool)).any():
            pos = int(hit.argmax())  # (#N/A: a missing mark, as the files' readers read it)
            raise InputError(
                f"Excel error value {cells.iloc[pos]} (a formula that failed; the frame holds "
                "its text): fix or clear the cell",
                line=pos + 2,
                field=str(column),
            )


def _rows_named(text: str, frame: pd.DataFrame) -> str:
    """A frame refusal's ``line N`` (the frame's row N - 2, as a CSV line) as the frame's row.

    ``row 'u3' (position 2)`` by a labelled index, ``row 2`` by a default one; the message
    named the column alone (InputError shows a line only beside a path).
    """

    def row(m: re.Match[str]) -> str:
        pos = int(m.group(1)) - 2
        if pos == -1:  # a CSV's line 1: the header (the one-hot grid's refusal names it)
            return "the column names"
        if not 0 <= pos < len(frame):
            return m.group(0)
        label = frame.index[pos]
        if isinstance(label, np.generic):  # a numpy integer's repr: 'np.int64(1)'
            label = label.item()
        if isinstance(frame.index, pd.RangeIndex) and label == pos:
            return f"row {pos}"
        return f"row {label!r} (position {pos})"

    return re.sub(r"\bline (\d+)\b", row, text)


def _ratings(
    frame: pd.DataFrame,
    unit_column: str | None,
    raters: Sequence[str] | None,
    categories: Sequence[str] | None,
    exclude: Sequence[str],
    source: str | Path | None,
    columns: ColumnChoice | None,
) -> RatingsTable:
    """:func:`ratings_from_frame` in agree's words (its refusals name agree's flags)."""
    if columns is None:  # the Python API: a notebook's frame, its names as a user gave them
        frame, unit_column, raters, categories = _frame_arguments(
            frame, unit_column, raters, categories
        )
    if columns is None and any(name is not None for name in frame.index.names):
        # unit ids in a named index (`frame.set_index("item")`, as pandas users keep them):
        # left out, a long table's 'annotator' and 'code' columns were two raters and a wide
        # one's units were row numbers
        frame = _index_as_columns(frame)
    long = None if columns is not None or raters is not None else detect_long(frame)
    if long is not None:  # refused naming --long, an option of agree this function lacks
        raise InputError(
            f"a long table (one row per unit and rater: units {long.unit!r}, raters "
            f"{long.rater!r}, ratings {long.rating!r}): give one column per rater, "
            f"frame.pivot(index={long.unit!r}, columns={long.rater!r}, values={long.rating!r}) "
            "(failcodes.AgreeRequest reads a long table's file as it is)",
            path=source,
        )
    choice = columns or choose_columns(
        frame, unit_column=unit_column, raters=raters, exclude=exclude, source=source
    )
    unit_col, rater_cols = choice.unit_column, choice.raters
    unordered = False  # a notebook's categorical dtype: its category set, and its order
    named = columns is None and categories is not None  # categories=[...] from Python
    source_of = "values" if categories is None else "categories"
    if columns is None and categories is None:
        categories, unordered = _dtype_categories(frame, rater_cols)
        source_of = "values" if categories is None else "dtype"
    if columns is None:
        # called on a frame of its own (the Python API), not by ratings_tables, which checks
        # the whole file before its groups ('Yes' beside 'yes', an Excel date); lines as
        # ratings_tables counts them under a header (the frame's row + 2)
        line_of = _lines(frame, None, 2)
        no_repeated_header(frame, source, line_of)
        # categories given list every cell's text: 'a;b' among them is one category (agree's
        # --sets none; the refusal of a joined cell named that flag, which Python lacks)
        sets = None if categories is None else "none"
        _no_infinite(frame, choice.raters, source, line_of)
        _wide_checks(frame, choice, [], source, line_of, unit_column is not None, categories, sets)
    # (given ``columns``, ratings_tables checked the whole table so, once, before its parts)
    where, out = (unit_col, choice.reason), choice.left_out
    if unit_col is not None:
        ids = frame[unit_col].astype(str).tolist()
    else:
        ids = [str(i + 1) for i in range(len(frame))]
    raw = frame[rater_cols]
    as_text = raw.astype(object).where(raw.notna(), None)
    cells = [
        [None if v is None or (isinstance(v, str) and not v.strip()) else v for v in row]
        for row in as_text.itertuples(index=False)
    ]
    present = [v for row in cells for v in row if v is not None]
    labels: list[str] | None = None  # numbers (and numeric --categories): read as numbers
    given: list[float] | None = None
    try:
        [float(v) for v in present]
        given = None if categories is None else [float(c) for c in categories]
        _no_underscore(cells, ids, rater_cols, source)  # '1_0' read as the category 10
        for category in categories or ():
            if underscore_clause(category):  # --categories 1,2,1_0: 1_0 was 10
                raise ConfigError(
                    f"categories: {category!r} is not a number: {underscore_clause(category)}"
                )
    except (TypeError, ValueError):  # text labels, coded 0..q-1 in their order
        every = sorted({str(v) for v in present})
        labels = every if categories is None else [str(c) for c in categories]
        if any(v not in labels for v in every):
            _outside_categories(cells, ids, rater_cols, lambda v: str(v) in labels, labels, source)
        if named:
            _no_category_twin(labels, every)
    index = {lab: float(i) for i, lab in enumerate(labels or ())}
    code = float if labels is None else (lambda v: index[str(v)])
    values = np.array(
        [[np.nan if v is None else code(v) for v in row] for row in cells], dtype=np.float64
    ).reshape(len(cells), len(rater_cols))
    cats = np.unique(values[~np.isnan(values)])
    if labels is not None:
        cats = np.arange(len(labels), dtype=np.float64)
    elif given is not None:
        if np.setdiff1d(cats, given).size:
            known = set(given)
            _outside_categories(cells, ids, rater_cols, lambda v: float(v) in known, given, source)
        cats = np.array(given, dtype=np.float64)
    ordered = labels is None or (categories is not None and not unordered)
    table = RatingsTable(values, ids, rater_cols, cats, labels, ordered, *where, left_out=out)
    table = dataclasses.replace(table, categories_from=source_of)
    if columns is not None:  # a part of agree's table: agree says the first line itself
        return table
    # the Python API: agree's first line on the table (a majority column read as a rater),
    # which a notebook did not see (Fleiss 0.696 of four columns for the raters' 0.595)
    line = shape_line(choice, given=raters is not None)
    line += ("" if raters is not None else consensus_clause(table)) + tick_box_clause(table)
    line += split_category_clause(table)
    return dataclasses.replace(table, notes=(in_python_words(line),))


@dataclass(frozen=True)
class TableParts:
    """A ratings file made ready for the statistics: one table per ``by`` group, and notes.

    ``parts`` pairs each group's value (None without ``by``) with its table; ``notes`` say
    which columns were read as what (printed above the results).
    """

    parts: list[tuple[Any, RatingsTable]]
    notes: list[str]
    choice: ColumnChoice | None = None

    def left_out(self) -> dict[str, str]:
        """Columns that are not raters, with the reason (summaries, then covariates)."""
        if self.choice is None:
            return {}
        out = {s.column: s.reason for s in self.choice.summaries}
        for col in self.choice.left_out:
            out[col] = "shares no value with the raters' ratings"
        return out


def ratings_tables(
    frame: pd.DataFrame,
    *,
    unit_column: str | None = None,
    raters: Sequence[str] | None = None,
    by: str | None = None,
    long: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    source: str | Path | None = None,
    first_line: int = 2,
    lines: Sequence[int] | None = None,
    sets: str | None = None,
) -> TableParts:
    """The ratings tables of one file: long tables reshaped, columns chosen, groups split.

    A long table (given by ``long`` or found, :func:`long_columns`) becomes one column per
    rater first. Columns are chosen once on the whole table (a small ``by`` group must not
    drop a rater whose few values happen to differ from the others'), then each group is a
    :class:`RatingsTable`. ``lines`` are the file lines of the rows, else ``first_line`` is
    the file line of the first row (2 under a CSV header), for errors.
    """
    if by is not None and by not in frame.columns:
        raise InputError(f"no column '{by}' to group by", path=source)

    line_of = _lines(frame, lines, first_line)
    if by is not None and frame[by].isna().any():  # the group left the row out, silently
        row = int(np.flatnonzero(frame[by].isna().to_numpy())[0])
        raise InputError(
            "empty --by cell (every row belongs to a group)",
            path=source,
            line=line_of(row),
            field=by,
        )
    if by is not None:
        _one_group_spelling(frame, by, source, line_of)
    no_repeated_header(frame, source, line_of)
    keep = [by] if by is not None else []
    notes: list[str] = []
    candidates: list[str] | None = None
    shape = long_columns(frame, long, unit_column=unit_column, exclude=keep, source=source)
    unit_reason = "given (--unit-column)"
    unread = joined = ""
    if shape is not None:
        unread = _unread_long_columns(frame, shape, keep)
        if unit_column is None:
            no_long_rows_not_units(frame, shape.unit, shape.rater, source, line_of)
        if sets != "none":  # on the long rows: their lines are the file's
            _no_code_sets(frame, [shape.rating], source, line_of, sets)
        if sets is None:
            joined = _joined_cells(frame, [shape.rating], source, line_of)
        if sets not in (None, "none"):
            _no_mark_in_sets(frame, [shape.rating], source, line_of, sets)
            _no_mark_beside_rows(
                frame, [*keep, shape.unit, shape.rater], shape.rating, source, line_of
            )
        if categories is None:
            no_missing_marks(frame, [shape.rating], source, line_of)
        joins = None if sets in (None, "none") else sets
        several = frame.duplicated(subset=[*keep, shape.unit, shape.rater]).sum()
        pair = [*keep, shape.unit, shape.rater]
        when = _retimed(frame, pair, shape.rating) if several else None
        apart = _regrouped(frame, pair, shape.rating) if several and sets else None
        frame = wide_from_long(
            frame, shape, keep=keep, source=source, first_line=first_line, lines=lines, join=joins
        )
        if several and joins is not None:
            notes.append(
                f"{several} row(s) gave one more code to a (unit, rater) pair: each pair's "
                f"codes joined into one code set on {joins!r}"
            )
            if when is not None:  # on the first line: a re-rating joined is a wrong set
                unread += (
                    f"; {when[1]} (unit, rater) pair(s) have rows of different {when[0]!r}, "
                    "joined into one code set: a rating made again? keep the row that counts"
                )
            if apart is not None:  # two units of one id joined: a wrong set unless meant
                unread += (
                    f"; {apart[1]} (unit, rater) pair(s) have rows of different {apart[0]!r}, "
                    f"joined into one code set: two units of one id? --by {apart[0]} gives each "
                    f"{apart[0]} its agreement, or make the unit ids unique"
                )
        unit_column, unit_reason = shape.unit, f"the long table's units ({shape.reason})"
        if raters is None:
            candidates = [str(c) for c in frame.columns if c not in (*keep, shape.unit)]
        notes.append(
            f"long table ({shape.reason}): raters from column '{shape.rater}', ratings "
            f"from '{shape.rating}'"
        )
    slotted = ""
    if shape is None and raters is None and sets != "none":
        held = [*keep, *([unit_column] if unit_column else [])]
        frame, slotted = _joined_slots(frame, held, sets, source, line_of)
    choice = choose_columns(
        frame,
        unit_column=unit_column,
        raters=raters,
        exclude=keep,
        source=source,
        unit_reason=unit_reason,
        candidates=candidates,
    )
    if shape is None and raters is None and choice.unit_column is None:
        _not_long_without_units(frame, choice.raters, source)
    if len(choice.raters) < 2:  # a table of undefined statistics, exit 0
        raise InputError(
            f"one rater column ({choice.raters[0]!r}): agreement needs two or more (name them "
            "with --raters; a table of one row per unit and rater: --long RATER,RATING)",
            path=source,
        )
    odd = ""  # a row of descriptions under the header, or of totals under the units
    if shape is None:
        given = unit_column is not None
        odd, joined = _wide_checks(frame, choice, keep, source, line_of, given, categories, sets)
    if choice.unit_column is not None:
        notes.extend(_unit_spellings(frame[choice.unit_column].dropna().astype(str)))
    groups = [(None, frame)] if by is None else list(frame.groupby(by, sort=True))
    parts: list[tuple[Any, RatingsTable]] = []
    for key, part in groups:
        table = ratings_from_frame(part, categories=categories, source=source, columns=choice)
        parts.append((key[0] if isinstance(key, tuple) else key, table))
    if by is not None and categories is None:
        notes.extend(_group_categories(by, parts))
    line = shape_line(choice, given=raters is not None and candidates is None, sets=sets)
    notes.insert(0, line + slotted + joined + unread + odd + _single_rated(parts, by))
    return TableParts(parts, notes, choice)


#: Cells of a grid of yes/no columns (one per code or item): no code slots.
_BINARY_CELLS = frozenset({"0", "1", "0.0", "1.0", "true", "false", "yes", "no", "y", "n"})


def _joined_slots(
    frame: pd.DataFrame,
    keep: Sequence[str],
    sets: str | None,
    source: str | Path | None,
    line_of: Any,
) -> tuple[pd.DataFrame, str]:
    """Each rater's code slots (``r1_code1``, ``r1_code2``) as one column of code sets.

    Refused before as two fields of the same raters, the way named (``--raters
    r1_code1,r2_code1``) read the first slot alone: a code in a later slot was dropped. Under
    ``--sets`` each rater's filled slots are one code set (a slot holding a mark of no code,
    ``none`` or ``NA``, beside a code in another slot is an empty slot), said on the first
    line; without it refused, naming ``--sets``. A grid of 0/1 (or yes/no) cells is no slots.
    """
    slots = code_slots([str(c) for c in frame.columns if str(c) not in keep])
    if not slots:
        return frame, ""
    cols = [c for named in slots.values() for c in named]
    cells = {spelling_key(v) for c in cols for v in present(frame[c])}
    taken = {str(c) for c in frame.columns if c not in cols}
    if cells <= _BINARY_CELLS or taken & set(slots):
        return frame, ""
    shown = ", ".join(f"{r}: {' + '.join(named)}" for r, named in list(slots.items())[:4])
    if sets is None:
        first = ",".join(named[0] for named in slots.values())
        raise InputError(
            f"rater columns {', '.join(cols[:4])}{', ...' if len(cols) > 4 else ''} look like "
            f"each rater's codes in slots ({shown}): --sets ';' reads each rater's slots as one "
            "code set (every code kept: exact-set agreement, alpha with the MASI and Jaccard "
            f"distances, each code's own agreement); --raters {first} reads the first slot alone",
            path=source,
            line=1,
            field=cols[0],
        )
    out = frame.drop(columns=cols)
    blanked = 0
    for rater, named in slots.items():
        joined: list[str | None] = []
        for at, row in enumerate(frame[named].itertuples(index=False, name=None)):
            filled = [
                (column, str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip())
                for column, v in zip(named, row, strict=True)
                if not blank_cell(v) and str(v).strip()
            ]
            kept = [(c, v) for c, v in filled if spelling_key(v) not in MISSING_MARKS]
            if kept and len(kept) < len(filled):  # 'none' in a slot beside a code: empty
                blanked += len(filled) - len(kept)
                filled = kept
            codes = [v for _, v in filled]
            twice = next((i for i, v in enumerate(codes) if v in codes[:i]), None)
            if twice is not None:  # 'A' in two slots: read as {A}, or a typo for another code?
                raise InputError(
                    f"{codes[twice]!r} is in two of {rater}'s code slots ({', '.join(named)}): a "
                    "code set holds each code once (a double entry, or a typo for another "
                    "code?): write it in one slot",
                    path=source,
                    line=line_of(at),
                    field=filled[twice][0],
                )
            joined.append(sets.join(codes) if codes else None)
        out[rater] = joined
    marks = f"; {blanked} slot(s) holding a mark of no code beside a code read as empty"
    return out, (
        f"; each rater's code slots read as one code set ({shown}; a rater's blank slots "
        f"add no code, all blank: not rated){marks if blanked else ''}"
    )


def _wide_checks(
    frame: pd.DataFrame,
    choice: ColumnChoice,
    keep: Sequence[str],
    source: str | Path | None,
    line_of: Any,
    given: bool,
    categories: Sequence[str] | None,
    sets: str | None = None,
) -> tuple[str, str]:
    """A wide table's rows and cells checked, CLI and API alike: the first line's words."""
    no_containers(frame, choice.raters, source, line_of)  # before the checks comparing cells
    odd = refuse_rows_not_units(frame, choice.raters, choice.unit_column, source, line_of, given)
    if choice.unit_column is not None:  # a row without a unit id, a unit on two rows
        unlike = _unlike_the_raters(choice.raters)  # `r1,r2,batch`: batch's 1, 2 a round?
        one_row_per_unit(frame, [*keep, choice.unit_column], source, line_of, choice.raters, unlike)
    no_dates(frame, choice.raters, source, line_of)
    one_spelling(frame, choice.raters, source, line_of)
    if sets not in (None, "none"):
        _no_mark_in_sets(frame, choice.raters, source, line_of, sets)
    if categories is None:
        no_missing_marks(frame, choice.raters, source, line_of)
    if sets != "none":  # cells joining codes ('x/y' beside 'x' and 'y')
        _no_code_sets(frame, choice.raters, source, line_of, sets)
    joined = _joined_cells(frame, choice.raters, source, line_of) if sets is None else ""
    return odd, joined


def _unread_long_columns(frame: pd.DataFrame, long: LongColumns, keep: Sequence[str]) -> str:
    """The first line's words on a long table's columns that are not read ("" if none).

    A long table's raters are the values of its rater column and their ratings the rating
    column: any other column is not read, so a third rater's ratings beside them as a column of
    its own (``unit,rater,rating,rater3``) were dropped without a word. Said, with the columns
    whose values are ratings named as such.
    """
    read = {long.unit, long.rater, long.rating, *keep}
    unread = [str(c) for c in frame.columns if str(c) not in read]
    if not unread:
        return ""
    ratings = {value_key(v) for v in present(frame[long.rating])}
    named = [
        f"{c} (its values are ratings: a rater of its own? a long table counts a rater's "
        f"ratings only on rows of '{long.rater}' and '{long.rating}')"
        if ratings & {value_key(v) for v in present(frame[c])}
        else c
        for c in unread[:5]
    ]
    more = f" (and {len(unread) - 5} more)" if len(unread) > 5 else ""
    return f"; not read (the ratings are column '{long.rating}'): {', '.join(named)}{more}"


def _single_rated(parts: Sequence[tuple[Any, RatingsTable]], by: str | None = None) -> str:
    """The first line's words on units one rater rated alone ("" without any).

    Gwet's missing-data form keeps them in the chance-agreement margins of Fleiss, Conger
    and AC1/AC2, though not in their units (docs/statistics.md): 2 single-rated units of 6
    gave Fleiss 0.000 for the complete rows' -0.333 (statsmodels' fleiss_kappa), with
    "units 4" beside it and no word (i35red). Under ``--by`` each group names its own: the
    whole table's list ('u2', 'u5') left a reader to guess whose they were, and a unit id
    each group uses alike named no group at all.
    """
    per_group = [
        (
            key,
            [
                unit
                for unit, n in zip(
                    table.unit_ids, (~np.isnan(table.values)).sum(axis=1).tolist(), strict=True
                )
                if n == 1
            ],
        )
        for key, table in parts
    ]
    single = [unit for _, units in per_group for unit in units]
    if not single:
        return ""

    def listed(units: Sequence[Any]) -> str:
        return ", ".join(repr(u) for u in units[:3]) + (", ..." if len(units) > 3 else "")

    shown = (
        listed(single)
        if by is None
        else "; ".join(f"{by} {key}: {listed(units)}" for key, units in per_group if units)
    )
    return (
        f"; {len(single)} unit{'s' if len(single) > 1 else ''} rated by one rater only "
        f"({shown}) enter the chance-agreement margins of fleiss, conger and gwet_ac1/ac2 "
        "(Gwet's missing-data form), not their units: delete those rows for the complete-row "
        "values (as statsmodels' fleiss_kappa)"
    )


def _group_categories(by: str, parts: Sequence[tuple[Any, RatingsTable]]) -> list[str]:
    """A note when a ``--by`` group uses fewer categories than the whole table.

    Each group's category set is the values it uses, and AC1, Brennan-Prediger and PABAK
    depend on its size q (weighted statistics on the ranks too): a group using 2 of the
    table's 3 levels read Brennan-Prediger 0.0 where the table's scale gives 0.25, with no
    word. Groups may have scales of their own (a dimension's codes), so this is said, not
    changed: --categories gives one scale to every group.
    """

    def names(table: RatingsTable) -> set[str]:
        if table.labels is not None:
            return set(table.labels)
        return {f"{v:g}" for v in table.categories.tolist()}

    used = [(key, names(table)) for key, table in parts]
    every = set().union(*(n for _, n in used))
    short = [(key, n) for key, n in used if len(n) < len(every)]
    if not short:
        return []
    key, fewer = short[0]
    lacks = ", ".join(sorted(every - fewer)[:5])
    return [
        f"--by {by}: each group's category set is the values it uses (q, on which AC1, "
        f"Brennan-Prediger, PABAK and weights depend): {len(short)} of {len(used)} groups use "
        f"fewer than the table's {len(every)} ({key!r}: {len(fewer)}, without {lacks}); "
        "--categories gives every group the table's scale"
    ]


def _unit_spellings(ids: pd.Series) -> list[str]:
    """A note naming unit ids that differ only in case, Unicode form or leading zeros.

    Ids may differ in case alone on purpose, so they are not refused; but in a long table ``u1``
    rated by one rater and ``U1`` by the other became two units of one rating each, left out of
    every coefficient without a word.
    """
    first: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for unit in dict.fromkeys(ids.tolist()):
        # and the leading zeros of its numbers ('007' from one rater, '7'; 's007', 's7'), and
        # a whole number written as a float ('1.0': a CSV of a pandas column widened by a
        # missing cell, beside '1' from another export; JSON's 1 and 1.0 are one unit, refused
        # on two rows, where the CSV's two texts were two units of one rating each)
        text = whole_number_text(unit) or unit if isinstance(unit, str) else unit
        seen = first.setdefault(without_leading_zeros(spelling_key(text)), unit)
        if seen != unit:
            pairs.append((seen, unit))
    if not pairs:
        return []
    shown = ", ".join(f"{a!r} and {b!r}" for a, b in pairs[:3])
    more = f" (and {len(pairs) - 3} more)" if len(pairs) > 3 else ""
    floats = any(whole_number_text(a) or whole_number_text(b) for a, b in pairs)
    zeros = any(
        spelling_key(a) != spelling_key(b) and not (whole_number_text(a) or whole_number_text(b))
        for a, b in pairs
    )
    ways = ["case", "spacing", "Unicode form"]
    ways += ["leading zeros"] if zeros else []
    ways += ["a whole number written as a float ('1.0' for '1')"] if floats else []
    return [
        f"unit ids that differ only in {', '.join(ways[:-1])} or {ways[-1]} are read as "
        f"different units: {shown}{more}; write them one way if they name one unit"
    ]


def _no_code_sets(
    frame: pd.DataFrame,
    raters: Sequence[str],
    source: str | Path | None,
    line_of: Any,
    split: str | None = None,
) -> None:
    """Refuse cells that look like sets of codes ``--sets`` does not split.

    A cell is a set when it splits on one separator into two or more parts each of which is
    a rating of its own elsewhere (``overreach;conflict`` beside ``overreach`` and
    ``conflict``). Read as one category each, ``a|b`` and ``b|a`` disagreed and ``{a, b}``
    against ``{a}`` counted as fully as ``{b}`` against ``{a}``. With ``split`` (``--sets``)
    the cells' codes are checked: ``a|b`` in a table split on ``;`` is refused too.
    """

    def pieces(value: str) -> list[str]:
        return [p.strip() for p in value.split(split)] if split else [value.strip()]

    cells = [
        (column, row, value)
        for column in raters
        for row, value in enumerate(frame[column].tolist())
        if isinstance(value, str)
    ]
    wholes = {p for _, _, value in cells for p in pieces(value)}
    if split:
        _no_repeated_code(cells, split, source, line_of)
    for column, row, value in cells:
        for code in pieces(value):
            listed = listed_items(code)
            for sep in (None, *SET_SEPARATORS, AND_JOINER):
                parts = (
                    listed
                    if sep is None
                    else [p.strip() for p in AND_PARTS.split(code)]
                    if sep == AND_JOINER
                    else [p.strip() for p in code.split(sep)]
                )
                if parts is None or (sep is not None and sep == split):
                    continue
                if sep is None and (len(parts) > 1 or set(parts) <= wholes):
                    what = "a list of codes"
                elif len(parts) > 1 and all(p and p in wholes for p in parts):
                    shown = ", ".join(repr(p) for p in parts[:4])
                    what = f"a set of codes ({shown} are ratings of their own elsewhere)"
                else:
                    continue
                how = (
                    f"cells are split on {split!r} only: write every cell with {split!r}"
                    if split
                    else f"compare cells as sets with --sets '{sep}' (exact-set agreement, "
                    "alpha with the MASI and Jaccard distances), or --sets none to read each "
                    "cell as one category"
                    if sep not in (None, "\n", AND_JOINER)
                    else "join each cell's codes with ';' and compare cells as sets with "
                    "--sets ';', or --sets none to read each cell as one category"
                )
                raise InputError(
                    f"{code!r} looks like {what}: {how}",
                    path=source,
                    line=line_of(row),
                    field=str(column),
                )


def _no_mark_in_sets(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any, split: str
) -> None:
    """Refuse a mark of a missing or absent code inside a code set (``NA;X``, ``none;X``).

    ``none;X`` (or ``NA;X``) was read as the set {none, X}: against {X} an exact-set
    disagreement and a partial MASI one, and a per-code row for 'none', with no word. A cell
    of ``NA`` alone was refused naming ``--categories``, which code sets refuse.
    """
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if not isinstance(value, str):
                continue
            codes = [p.strip() for p in value.split(split) if p.strip()]
            mark = next((c for c in codes if spelling_key(c) in MISSING_MARKS), None)
            if mark is None or (len(codes) == 1 and spelling_key(mark) not in WRITTEN_MISSING):
                continue
            raise InputError(
                f"{value!r} holds {mark!r} beside other codes: a code set lists the codes "
                "given, and a mark of no code or of a missing rating cannot stand beside them "
                "(no code given: 'none' alone; a missing rating: an empty cell)"
                if len(codes) > 1
                else f"{mark!r} among code sets: a missing rating (R writes NA) or an answer "
                "(not applicable)? missing: leave the cell empty; an answer: write it as a code "
                "of its own (e.g. not_applicable)",
                path=source,
                line=line_of(row),
                field=str(column),
            )


def _no_mark_beside_rows(
    frame: pd.DataFrame,
    pair: Sequence[str],
    rating: str,
    source: str | Path | None,
    line_of: Any,
) -> None:
    """A long table's (unit, rater) rows joining 'none' (or 'NA') with a code: refused.

    The rows' codes are joined into one set: a row 'none' beside a row 'X' was {none, X}; a
    row 'none' beside a row '-' (no code, and a missing rating) was the set {none, -}: an
    exact-set disagreement with another rater's 'none' and a per-code row for '-', exit 0.
    """
    marks: dict[tuple[Any, ...], tuple[int, str]] = {}
    codes: dict[tuple[Any, ...], tuple[int, str]] = {}
    keys = frame[list(pair)].itertuples(index=False, name=None)
    for row, (key, value) in enumerate(zip(keys, frame[rating].tolist(), strict=True)):
        if not isinstance(value, str) or not value.strip():
            continue
        mine = marks if spelling_key(value) in MISSING_MARKS else codes
        other = codes if mine is marks else marks
        was = mine.setdefault(key, (row, value.strip()))
        if mine is marks and was[1] != value.strip():  # two marks: which one holds?
            other = marks
        if key in other:
            mark, code = (
                (value.strip(), other[key][1]) if mine is marks else (other[key][1], value.strip())
            )
            why = (
                "two marks for one rating (no code, or a missing rating?): keep the row that holds"
                if other is mine
                else "a mark of no code or of a missing rating cannot stand beside codes"
            )
            raise InputError(
                f"{mark!r} beside {code!r} (line {line_of(other[key][0])}) for unit "
                f"{key[-2]!r} and rater {key[-1]!r}: their rows join into one code set, and "
                f"{why} (no code given: 'none' alone; a missing rating: no row)",
                path=source,
                line=line_of(row),
                field=rating,
            )


def _no_repeated_code(
    cells: Sequence[tuple[Any, int, str]], split: str, source: str | Path | None, line_of: Any
) -> None:
    """Refuse a code set naming one code twice (``b;b`` under ``--sets ';'``).

    The set was read as ``{b}`` without a word: a code written twice is a typo (another code
    meant) or a double entry, and which one no reader can tell.
    """
    for column, row, value in cells:
        parts = [p.strip() for p in value.split(split) if p.strip()]
        twice = next((p for i, p in enumerate(parts) if p in parts[:i]), None)
        if twice is not None:
            raise InputError(
                f"{value!r} names the code {twice!r} twice: a code set holds each code once "
                "(a typo for another code, or a double entry?): write each code once",
                path=source,
                line=line_of(row),
                field=str(column),
            )


def _joined_cells(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> str:
    """Refuse one set of codes joined two ways; else the first line's words on joined cells.

    Without ``--sets`` a cell ``a;b`` is one category. :func:`_no_code_sets` finds it a set when
    ``a`` and ``b`` are ratings elsewhere; when they never are, ``a;b`` beside ``b;a`` (or
    ``a; b``) were two categories that disagreed: refused naming both cells. Cells joined one
    way only are read as one category each, and the first line says how many hold a separator
    (``""``: none).
    """
    cells = [
        (str(column), row, value.strip())
        for column in raters
        for row, value in enumerate(frame[column].tolist())
        if isinstance(value, str) and value.strip()
    ]
    most: tuple[int, str, str] = (0, "", "")
    for sep in SET_SEPARATORS:
        first: dict[frozenset[str], tuple[str, int, str]] = {}
        joined = 0
        for column, row, value in cells:
            parts = [p.strip() for p in value.split(sep)]
            if len(parts) < 2 or not all(parts):
                continue
            joined += 1
            was = first.setdefault(frozenset(parts), (value, line_of(row), column))
            if was[0] == value:
                continue
            how = (
                f"compare cells as sets with --sets '{sep}'"
                if sep != "\n"
                else "join each cell's codes with ';' and compare cells as sets with --sets ';'"
            )
            raise InputError(
                f"{value!r} holds the codes of {was[0]!r} (line {was[1]}, column {was[2]!r}) "
                "written another way (order or spacing): read as one category each they "
                f"would disagree; {how} (exact-set agreement, alpha with the MASI and Jaccard "
                "distances)",
                path=source,
                line=line_of(row),
                field=column,
            )
        if joined and sep != "," and joined > most[0]:
            most = (joined, sep, next(iter(first.values()))[0])
    joined, sep, shown = most
    if not joined:
        return ""
    return (
        f"; {joined} of {len(cells)} ratings hold {sep!r} (e.g. {shown!r}): each is one "
        f"category, not a set of codes (--sets {sep!r} compares them as sets)"
    )


def code_sets(table: RatingsTable, sep: str) -> list[list[frozenset[str] | None]]:
    """Each cell of ``table`` as the set of codes it joins with ``sep`` (None: missing)."""
    out: list[list[frozenset[str] | None]] = []
    for row in table.values.tolist():
        cells: list[frozenset[str] | None] = []
        for v in row:
            if np.isnan(v):
                cells.append(None)
                continue
            text = table.labels[int(v)] if table.labels is not None else f"{v:g}"
            cells.append(frozenset(p.strip() for p in text.split(sep) if p.strip()) or None)
        out.append(cells)
    return out


#: Up to this many raters, the first line's hint for a column left out lists the --raters
#: value that keeps it in full.
KEEP_HINT_RATERS = 8


def shape_line(choice: ColumnChoice, *, given: bool = False, sets: str | None = None) -> str:
    """The first line of ``agree`` on a ratings table: the raters, what was left out and why.

    A user reading only this line can tell whether the table was understood: which columns
    were read as raters, which were not (a consensus column, a covariate) and why, which
    column holds the unit ids, and that each cell is one category.
    """
    how = " (given with --raters)" if given else ""
    parts = [f"Assumed: raters ({len(choice.raters)}){how}: {', '.join(choice.raters)}"]
    for s in choice.summaries:
        # a real rater named like a consensus (`final_reader`) is left out by name: the line
        # says how to keep it, so a wrong guess costs one command
        keep = (
            ",".join([*choice.raters, s.column])
            if len(choice.raters) <= KEEP_HINT_RATERS
            else f"the raters,{s.column}"
        )
        parts.append(f"left out: {s.column} ({s.reason}; a rater? --raters {keep} keeps it)")
    if choice.left_out:
        parts.append(
            f"not raters (they share no value with the raters' ratings): "
            f"{', '.join(choice.left_out)}"
        )
    parts.append(
        f"unit ids: column '{choice.unit_column}' ({choice.reason})"
        if choice.unit_column is not None
        else f"unit ids: {choice.reason}"
    )
    unlike = _unlike_the_raters(choice.raters) if not given else []
    if unlike:
        # `rater_a,rater_b,rater_c,year` with years 1..3: year was a fourth rater, said only
        # in the list of raters
        rest = ",".join(r for r in choice.raters if r not in unlike)
        keep = rest if len(choice.raters) <= KEEP_HINT_RATERS else "the others"
        parts.append(
            f"read as raters though not named like the others (their values are ratings): "
            f"{', '.join(unlike)} (a covariate? --raters {keep} leaves it out)"
        )
    if not given and choice.unit_column is not None and _numbers_as_raters(choice):
        # `name,1,2,3` over five readers: the numbers were 3 raters, the readers 5 units
        # (Fleiss -0.111 for the readers' own 0.167); raters numbered 1..3 are read alike
        parts.append(
            f"the rater columns are named by numbers alone ({', '.join(choice.raters[:3])}"
            f"{', ...' if len(choice.raters) > 3 else ''}) and the unit ids found by their "
            "values: if each row is one rater and each column a unit, transpose the table"
        )
    line = "; ".join(parts) + (
        "; one category per cell (not code sets)"
        if sets in (None, "none")
        else f"; code sets per cell, split on {sets!r} (exact-set agreement and Krippendorff's "
        "alpha with the MASI and Jaccard distances)"
    )
    if choice.left_out:
        line += " (name the raters with --raters to change this)"
    return line


def _unlike_the_raters(raters: Sequence[str]) -> list[str]:
    """The rater columns not named like raters where at least two others are ([] if none)."""
    named = [r for r in raters if rater_named(r)]
    if len(named) < 2 or len(named) == len(raters):
        return []
    return [r for r in raters if r not in named]


def _numbers_as_raters(choice: ColumnChoice) -> bool:
    """Whether every rater column is named by a number and the unit column by no id word."""
    return choice.reason == "values all distinct, unlike ratings" and all(
        re.fullmatch(r"\d+", r.strip()) for r in choice.raters
    )


def _one_group_spelling(
    frame: pd.DataFrame, by: str, source: str | Path | None, line_of: Any
) -> None:
    """Refuse a ``--by`` value written two ways (case, spacing or Unicode form)."""
    cells = ((str(value), line_of(row), by) for row, value in enumerate(frame[by].tolist()))
    tail = "each spelling would be a group of its own; write it one way"
    one_way(cells, source, "--by value", tail)


def one_spelling(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a text rating written two ways: spaces around it, or another case or spacing.

    Each distinct text is a category, so ``yes`` / ``yes `` / ``Yes`` were three categories and
    the raters who wrote them disagreed. Which spelling is meant cannot be known, so the cell is
    refused naming its line and column (the first spelling's line too).
    """
    tail = "each spelling would be a category of its own; write it one way"
    cells = _text_ratings(frame, raters, source, line_of)
    if all(is_number(v) for c in raters for v in present(frame[c])):
        # numbers are read as numbers (ratings_from_frame): '1.0' (a CSV of a pandas column
        # widened to float by a missing rating) and '1' are one category, as they are in
        # the Parquet or JSONL of the same frame; refused as two (float.csv, t27api)
        cells = ((whole_number_text(v) or v, line, field) for v, line, field in cells)
    one_way(cells, source, "rating", tail, column=True)
    no_number_with_label(frame, raters, source, line_of)


def _text_ratings(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> Iterator[tuple[str, int, str]]:
    """Each text rating with its line and column; one with spaces around it refused."""
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if isinstance(value, bool | np.bool_):
                # a boolean cell (Excel TRUE, a Parquet bool) is the category 'True': beside
                # a text 'true' in another column it was a category of its own (percent
                # agreement 0.0 for 5/6)
                value = "True" if value else "False"
            if not isinstance(value, str) or not value.strip():
                continue
            if value != value.strip():
                raise InputError(
                    f"rating {value!r}: expected the value alone, without spaces around it "
                    f"(it would be a category of its own beside {value.strip()!r})",
                    path=source,
                    line=line_of(row),
                    field=str(column),
                )
            yield value, line_of(row), str(column)


#: Statistics that weight disagreements by category distance even when no weights are named.
IMPLICITLY_WEIGHTED = ("gwet_ac2",)

UNORDERED_NOTE = (
    "left out: a weighted statistic needs the category order of text labels "
    "(give --categories in rank order)"
)
NOMINAL_NOTE = (
    "left out: quadratic weights on nominal codes would treat their numbers as an order "
    "(give --weights, or --level ordinal, to weight them; gwet_ac1 is the unweighted one)"
)


def lone_units(rated: Any, clusters: Sequence[str] | None = None) -> int:
    """Units of a table's rows rated by one rater only (``rated``: rows x raters, True = rated).

    Kept in the table (a ratings table's blank cells, ``agree --missing-data``), they enter
    Gwet's missing-data margins, not ``n_units``: their rows' ``n_single_rated`` said 0.
    ``clusters``: each row's unit (a unit is alone when every row of it is).
    """
    alone = np.asarray(rated, dtype=bool).sum(axis=1) == 1
    if clusters is None:
        return int(alone.sum())
    units = np.asarray(clusters)
    return len(set(units[alone].tolist()) - set(units[~alone].tolist()))


def undefined_single_rated(
    statistic: str,
    level: str,
    weights: str,
    n_raters: int,
    n_categories: int,
    n_single: int,
    confidence: float = 0.95,
    reason: str = "",
) -> AgreementResult:
    """An undefined result: no unit was rated by two or more coders (or ``reason``)."""
    return AgreementResult(
        statistic=statistic,
        level=level,
        weights=weights,
        value=None,
        confidence=confidence,
        n_units=0,
        n_raters=n_raters,
        n_categories=n_categories,
        n_single_rated=n_single,
        undefined_reason=reason
        or f"no unit was rated by two or more coders ({n_single} rated by one only)",
    )


def _asked(
    table: object,
    statistics: object,
    level: str,
    weights: object,
    n_bootstrap: object,
    seed: object = None,
    confidence: object = 0.95,
    clusters: object = None,
) -> list[str]:
    """``agreement_table``'s arguments checked as the CLI's choices are: one line, its name.

    A DataFrame for the table was an AttributeError ('ordered'); ``"cohen"`` alone read
    letter by letter ("unknown statistic 'c'"); ``level="nominl"`` and ``weights="quadratc"``
    were refused as "need ordered categories"; ``n_bootstrap=True`` a TypeError.
    """
    if not isinstance(table, RatingsTable):
        raise ConfigError(
            f"table: expected a RatingsTable, not {type(table).__name__} (make one with "
            "failcodes.ratings_from_frame(frame))"
        )
    if isinstance(statistics, str):  # one statistic, as agree's --stat takes
        statistics = [statistics]
    if level not in LEVELS:
        raise ConfigError(f"level: {level!r} is not one of {', '.join(LEVELS)}")
    if isinstance(weights, str) and weights not in WEIGHTS:
        raise ConfigError(f"weights: {weights!r} is not one of {', '.join(WEIGHTS)}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer):
        raise ConfigError(f"n_bootstrap: expected a whole number >= 0, not {n_bootstrap!r}")
    if n_bootstrap > MAX_RESAMPLES:  # agree's bound: numpy's MemoryError, or days
        raise ConfigError(f"n_bootstrap: at most {MAX_RESAMPLES:,} resamples, not {n_bootstrap:,}")
    if not (seed is None or isinstance(seed, np.random.Generator)) and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer)
    ):
        raise ConfigError(f"seed: expected a whole number >= 0 or None, not {seed!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.number):
        raise ConfigError(f"confidence: expected a number in (0, 1), e.g. 0.95, not {confidence!r}")
    if clusters is not None:
        if isinstance(clusters, str) or not isinstance(
            clusters, Sequence | np.ndarray | pd.Series | pd.Index
        ):
            raise ConfigError(f"clusters: expected one id per row (a list), not {clusters!r}")
        blank = next((i for i, c in enumerate(clusters) if c is None or pd.isna(c)), None)
        if blank is not None:  # a missing id was a cluster of its own (NaN) or a TypeError
            raise ConfigError(f"clusters: row {blank} has no cluster id (give every row one)")
    if not isinstance(statistics, Iterable):
        raise ConfigError(f"statistics: expected a list of names, not {statistics!r}")
    names = [str(s) for s in statistics]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:  # two equal rows, where agree refuses '--stat cohen,cohen'
        raise ConfigError(f"statistics names {twice!r} twice")
    unknown = next((n for n in names if n not in STATISTICS), None)
    if unknown is not None:  # was refused for the category order first, on text labels
        raise StatisticsError(
            f"unknown statistic {unknown!r}; choose one of {', '.join(STATISTICS)}"
        )
    return names


def agreement_table(
    table: RatingsTable,
    statistics: Sequence[str] = STATISTICS,
    *,
    level: str = "nominal",
    weights: Weights = None,
    n_bootstrap: int = 0,
    seed: int | None = 0,
    confidence: float = 0.95,
    clusters: Sequence[str] | None = None,
) -> Agreements:
    """:func:`table_agreement` from Python: a refusal names ratings_from_frame's keywords.

    It said "give the category order (e.g. --categories a,b,c)", agree's flag. The results
    carry the table's notes (:class:`Agreements`), shown above them.
    """
    try:
        results = table_agreement(
            table,
            statistics,
            level=level,
            weights=weights,
            n_bootstrap=n_bootstrap,
            seed=seed,
            confidence=confidence,
            clusters=clusters,
        )
        # and what agree's first line says of units rated once and raters who skipped units:
        # from Python Fleiss 0.661 and AC1 0.672 of r2 skipping 2 of 8 units (Gwet's form,
        # the 2 in the margins) came with no word
        alone = _single_rated([(None, table)])[2:]
        missing = missing_clause(table)[2:]
        clauses = [
            *([alone] if alone else []),
            *category_set_clauses(table, results),
            *ratings_clauses(table, results),
            *(missing.split("; ") if missing else []),
        ]
        for flag, words in _NOTE_KEYWORDS:
            clauses = [flag.sub(words, c) for c in clauses]
        return Agreements(results, (*table.notes, *clauses))
    except StatisticsError as e:
        said = in_python_words(str(e), made=True)
        if said == str(e):
            raise
        raise StatisticsError(said) from None


def table_agreement(
    table: RatingsTable,
    statistics: Sequence[str] = STATISTICS,
    *,
    level: str = "nominal",
    weights: Weights = None,
    n_bootstrap: int = 0,
    seed: int | None = 0,
    confidence: float = 0.95,
    clusters: Sequence[str] | None = None,
) -> list[AgreementResult]:
    """All requested statistics on one ratings table (each bootstrapped as if asked alone).

    ``seed`` 0 by default, as ``failcodes agree``'s (None: unseeded, other intervals on
    every call).

    Weighted statistics on text labels need their rank order (``categories``): asked for alone
    they raise :class:`StatisticsError`; within several (``--stat all``) Gwet's AC2, which is
    weighted by default, is reported as undefined with the reason instead of being computed
    on alphabetical order. Within several, AC2 is left out the same way on numeric codes at
    the nominal level without explicit ``weights`` (its default quadratic weights would read
    the codes' numbers as an order); asked for alone, or on text labels given in rank order
    (``categories``), it keeps its documented quadratic default.
    ``clusters``: one id per row (rows of a unit share it).
    """
    statistics = _asked(table, statistics, level, weights, n_bootstrap, seed, confidence, clusters)
    weighted = weights is not None and not (isinstance(weights, str) and weights == "none")
    if not table.ordered and (level != "nominal" or weighted):
        raise StatisticsError(
            f"level '{level}' / weights need ordered categories, but the ratings are text "
            f"labels {table.labels}; give the category order (e.g. --categories a,b,c)"
        )
    if table.labels is not None and level in ("interval", "ratio"):
        raise StatisticsError(
            f"level '{level}' needs numeric ratings; got text labels {table.labels}"
        )
    left_out = [] if table.ordered else [s for s in statistics if s in IMPLICITLY_WEIGHTED]
    # numeric codes: their numbers are no order (text labels given in rank order are)
    nominal_codes = (
        table.labels is None and level == "nominal" and not weighted and len(statistics) > 1
    )
    if nominal_codes:
        left_out = [s for s in statistics if s in IMPLICITLY_WEIGHTED]
    if left_out and len(statistics) == 1:
        raise StatisticsError(
            f"{left_out[0]} is weighted (quadratic by default) and needs ordered categories, "
            f"but the ratings are text labels {table.labels}; give the category order "
            "(e.g. --categories a,b,c) or use gwet_ac1"
        )
    kept = [s for s in statistics if s not in left_out]
    sizes = (len(table.raters), len(table.categories))
    if table.values.shape[0] == 0:
        return [
            undefined_single_rated(s, level, "none", *sizes, table.n_single_rated, confidence)
            for s in statistics
        ]
    results = agreements(
        table.values,
        kept,
        level=level,
        weights=weights,
        categories=table.categories,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
        clusters=None if clusters is None else np.asarray(clusters),
    )
    single = table.n_single_rated + lone_units(~np.isnan(table.values), clusters)
    out = [r.model_copy(update={"n_single_rated": single}) if single else r for r in results]
    why = NOMINAL_NOTE if nominal_codes else UNORDERED_NOTE
    out.extend(
        undefined_single_rated(s, "ordinal", "quadratic", *sizes, single, confidence, why)
        for s in left_out
    )
    return out
