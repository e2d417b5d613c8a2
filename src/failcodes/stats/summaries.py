"""Columns that summarise the raters instead of rating: a majority, gold or adjudicated column.

Published ratings tables often carry, beside the raters, a column derived from them (the
majority vote, an adjudicated or gold label). Read as one more rater it inflates agreement: it
agrees with every rater as often as the raters agree with each other, and more. Two rules
find such columns among the candidate raters of a table (never among raters the user named):
**by name** (a consensus word of :data:`CONSENSUS_WORDS` in the name) and **by value** (a
column that is a function of the others: it equals their row-wise majority on at least
:data:`MIN_SHARE` of at least :data:`MIN_ROWS` rows and departs from it significantly less
often than the others do, one-sided binomial at :data:`MAX_P`, Bonferroni over the columns).
The rules, their thresholds and why the second condition keeps raters who simply agree well:
docs/statistics.md, "Raters, not summaries". Two columns that both pass the value rule leave
two plausible rater sets: the caller refuses the table and asks for ``--raters``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

#: Words that name a consensus column (matched against the ``_``-separated words of the
#: lower-cased column name): besides majority and gold, the reference standard and who set
#: it (``compare`` takes a ``reference`` column for the truth), a panel's, committee's or
#: arbiter's label, a consolidated or pooled column, ground truth written as one word, who
#: breaks a tie and the settled code, and the same words in Spanish, Italian, Portuguese,
#: German and French (accents folded), a golden, silver- or criterion-standard label, a
#: unanimous, settled or post-discussion one (each a fourth rater beside three: Fleiss 0.298
#: for the raters' 0.0625 on 10 units, said only as "a covariate?"): such a column is no rater.
CONSENSUS_WORDS = frozenset(
    """
    majority consensus gold adjudicated adjudication reference adjudicator ref referee panel
    committee arbiter arbitrated arbitration final aggregate aggregated vote voted mv maj agreed
    reconciled resolved truth consolidated consolidation combined pooled merged mode modal
    plurality harmonised harmonized groundtruth goldstandard tiebreaker tiebreak breaker
    resolution reconciliation arbitrator moderated moderation moderator finalised finalized
    consenso konsens konsensus adjudicado adjudicada adjudicacion acordado referencia referenz
    riferimento mayoria maggioranza mehrheit majorite definitivo finale definitif definitive
    definitiva einigung endgultig arbitrage arbitraje golden silverstandard criterionstandard
    unanimous unanimity settled discussed postdiscussion afterdiscussion
    """.split()  # noqa: SIM905
)

#: Share of the others' majority rows a summary column must equal.
MIN_SHARE = 0.95
#: Rows where the others have a majority, needed before a column can be called a summary.
MIN_ROWS = 10
#: Candidate columns needed for the value rule (a column and three others).
MIN_COLUMNS = 4
#: Significance of "departs from the majority less often than the other columns do" (shared
#: by the columns tested, Bonferroni).
MAX_P = 0.01
#: Said, not left out (``agree``'s first line, from four columns on): a column that never
#: departs from the others' majority on its :data:`MIN_ROWS` or more rows, where a rater
#: departing as often as the others do would do so with probability below this. A majority
#: column named ``R_all`` beside three raters of 30 units (never departing, the raters on 10%:
#: p = 0.9^30 = 0.042) read Fleiss 0.696 for their 0.595 with no word. Equal raters are so
#: named in at most 0.13 of seeded tables (20-100 units, error 0.05-0.25, 2-3 categories;
#: docs/statistics.md).
SAID_EXACT_P = 0.05


@dataclass(frozen=True)
class Summary:
    """A candidate column left out of the raters, and why (shown to the user)."""

    column: str
    reason: str


@dataclass(frozen=True)
class MajorityFit:
    """How one column compares with the row-wise majority of the other columns."""

    column: str
    rows: int  # rows where the column is present and the others have a majority
    departures: int  # of those, rows where the column differs from that majority


#: Whole column names (lower case, words ``_``-joined) that name the clinicians' reference in
#: a table of systems' outcomes (``compare FILE``) though they hold no consensus word. Not
#: applied to a ratings table (``agree``): there a ``clinician`` or ``label`` column is a rater.
#: With :data:`TRUTH_NAMES` (``y_true``, ``gt``, ``target``, ``true_label``): a ``y_true``
#: column beside two systems is the reference, not a third system.
REFERENCE_NAMES = frozenset({"has_error", "label", "labels", "clinician"})

#: Whole column names of the truth in scikit-learn's and data sets' words (``y`` beside
#: ``sysA``, ``sysB``: a third system of Cochran's Q and McNemar pairs "sysA vs y" before),
#: read as the reference in ``compare FILE`` only (``y`` not where every column is one letter,
#: systems ``X``, ``Y``, ``Z``; :func:`truth_named`).
ML_TRUTH_NAMES = frozenset(
    """
    y y_test ytrue y_label y_gt y_truth true actual actual_label expected expected_label
    correct_label correct_answer answer_key labels_true true_labels gold_labels
    """.split()  # noqa: SIM905
)


def truth_named(name: str, names: Sequence[str]) -> str | None:
    """Why ``name`` among ``names`` (a table of systems' outcomes) names the truth, or None."""
    joined = "_".join(name_words(name))
    if joined not in ML_TRUTH_NAMES or (len(name) == 1 and all(len(n) == 1 for n in names)):
        return None
    return "names the truth"


#: Words that name a clinician or another human rater (``dr_a``, ``annotator_2``, ``Rater1``):
#: beside a consensus column in a table of systems' outcomes (``compare FILE --truth
#: majority``), such a column is one of the raters the reference came from, not a system.
RATER_WORDS = frozenset(
    """
    clinician clinicians annotator annotators rater raters reviewer reviewers doctor doctors dr
    physician physicians nurse pharmacist expert experts human labeler labeller
    """.split()  # noqa: SIM905
)


def rater_word(name: str) -> str | None:
    """The rater word in a column name (``dr_a`` -> ``dr``, ``rater1`` -> ``rater``), or None."""
    return next((w for w in name_words(name) if w.rstrip("0123456789") in RATER_WORDS), None)


def name_words(name: str) -> list[str]:
    """The lower-cased words of a column name (``Gold Standard`` -> ``gold``, ``standard``).

    camelCase splits into words too (``MajorityVote`` -> ``majority``, ``vote``); accents are
    folded (``référence`` -> ``reference``).
    """
    folded = unicodedata.normalize("NFKD", name)
    name = "".join(c for c in folded if not unicodedata.combining(c))
    spaced = re.sub(r"([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])", r"\1\3_\2\4", name)
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_").split("_")


#: What a consensus word is written onto as one word (``goldlabel``, ``finalcode``: a fourth
#: rater, as ``tie_break`` was, where ``gold_label`` and ``tiebreak`` were left out).
LABEL_WORDS = ("label", "labels", "code", "codes", "answer", "rating", "class", "category")


def consensus_word(name: str) -> str | None:
    """The consensus word in a column name (``majority_label`` -> ``majority``), or None.

    Whole words only, two joined (``tie_break``), or one followed by a word of
    :data:`LABEL_WORDS` (``goldlabel``): ``goldfish``, ``referral`` and ``panelist`` hold none.
    """
    words = name_words(name)
    for word in (*words, *(a + b for a, b in pairwise(words))):
        if word in CONSENSUS_WORDS:
            return word
        head = word.removesuffix(next((x for x in LABEL_WORDS if word.endswith(x)), ""))
        if head != word and head in CONSENSUS_WORDS:
            return head
    return None


#: Consensus words that name the reference with a number after them too (``gold2``): a
#: third system in ``compare FILE`` before. Not ``mode1``, ``final2``, ``ref1``: a system's run
#: or mode may be so numbered.
NUMBERED_REFERENCE_WORDS = frozenset(
    {"majority", "maj", "consensus", "gold", "goldstandard", "groundtruth", "truth"}
    | {"adjudicated", "adjudication", "mv"}
)


def reference_reason(name: str) -> str | None:
    """Why a column of systems' outcomes is named like the reference (None if it is not).

    The one rule of ``compare``: a consensus word (as ``agree`` leaves a column out), or a
    whole name of :data:`REFERENCE_NAMES` or :data:`TRUTH_NAMES`.
    """
    word = consensus_word(name)
    if word is None and name[-1:].isdigit():  # `gold2`, `majority1`: a reference still
        word = consensus_word(name.rstrip("0123456789"))
        word = word if word in NUMBERED_REFERENCE_WORDS else None
    if word is not None:
        return f"holds {word!r}"
    joined = "_".join(name_words(name))
    return "names the reference" if joined in REFERENCE_NAMES | TRUTH_NAMES else None


#: Whole column names (lower case, words ``_``-joined) of a data set's own label beside its
#: raters, with no consensus word: a ``gt`` column (the ground truth three noisy raters were
#: scored against) is no fourth rater.
TRUTH_NAMES = frozenset({"gt", "label", "labels", "target", "y_true", "true_label"})

#: Whole names that are the outcome or the truth beside raters (``agree``; read so by
#: :func:`named_summaries` as :data:`TRUTH_NAMES` are): ``r1,r2,r3,y`` with ``y`` adjudicated
#: (2 of 10 rows off the majority) read Fleiss 1/3 for the raters' 0.2, said only as "a
#: covariate?". ``y`` stays a rater where every column is one letter (raters ``X``, ``Y``, ``Z``).
OUTCOME_NAMES = (
    ML_TRUTH_NAMES
    | {"decision", "outcome", "class", "result"}
    | {
        "verdict",
        "answer",
        "correct",
        "is_correct",
    }
)


def named_summaries(candidates: Sequence[str]) -> tuple[list[str], list[Summary]]:
    """Split ``candidates`` into the rest and the columns named like a consensus or a truth.

    A truth (or an outcome, :data:`OUTCOME_NAMES`) is left out only beside two or more other
    columns (``label`` and ``pred`` alone are the pair asked about), ``gt`` only beside raters
    not all named with two or three letters (``AB``, ``CD``, ``GT``: a rater's initials) and
    ``y`` only beside raters not all named with one. Kept, the first line names it.
    """
    initials = all(re.fullmatch(r"[A-Za-z]{2,3}", c) for c in candidates)
    letters = all(len(c) == 1 for c in candidates)  # X, Y, Z: raters
    truths = [c for c in candidates if normal(c) in TRUTH_NAMES | OUTCOME_NAMES]
    truths = [c for c in truths if not ((initials and normal(c) == "gt") or letters)]
    if len(candidates) - len(truths) < 2:
        truths = []
    # a consensus word with a number (`gold2`, `consensus1`) beside raters: a fourth rater
    # (Fleiss 0.758 for the raters' 0.683, the line naming it a covariate); a numbered series
    # of them (`ref1`, `ref2`: referees) are raters
    numbered = {c: consensus_word(c.rstrip("0123456789")) for c in candidates}
    numbered = {c: w for c, w in numbered.items() if w is not None and c[-1:].isdigit()}
    series = Counter(numbered.values())
    kept: list[str] = []
    out: list[Summary] = []
    for col in candidates:
        word = consensus_word(col)
        if word is None and col in numbered and series[numbered[col]] == 1:
            word = numbered[col]
        if word is not None:
            out.append(Summary(col, f"named like a consensus column ('{word}')"))
        elif col in truths:
            out.append(Summary(col, f"named like the data set's label ('{normal(col)}')"))
        else:
            kept.append(col)
    return kept, out


def normal(name: str) -> str:
    """A column name's words ``_``-joined (``Y True`` -> ``y_true``)."""
    return "_".join(name_words(name))


def _majority_without(top: list[tuple[str, int]], own: str, others: int) -> str | None:
    """The majority of a row's values less one ``own``, from the row's three most common.

    The majority: the unique most frequent value, given at least twice (None without one).

    Taking one value away moves only that value's count, so the two most common of the rest
    are among the row's three most common (with ``own``'s count less one).
    """
    if others < 2:
        return None
    ranked = sorted(((c - (v == own), v) for v, c in top), key=lambda t: -t[0])
    if ranked[0][0] < 2 or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return None
    return ranked[0][1]


def majority_fits(
    rows: Sequence[Sequence[str | None]], columns: Sequence[str]
) -> list[MajorityFit]:
    """Each column against the row-wise majority of the other columns (None = missing).

    Each row is counted once (its values' counts, then each column's own value taken away):
    comparing every column with a majority recounted from the others was columns^2 x rows
    (2,000 raters of 500 units ran past a minute).
    """
    n = [0] * len(columns)
    departures = [0] * len(columns)
    for row in rows:
        counts = Counter(v for v in row if v is not None)
        total = sum(counts.values())
        top = counts.most_common(3)
        for j, own in enumerate(row):
            if own is None:
                continue
            major = _majority_without(top, own, total - 1)
            if major is None:
                continue
            n[j] += 1
            departures[j] += own != major
    return [MajorityFit(col, n[j], departures[j]) for j, col in enumerate(columns)]


def _binom_cdf(k: int, n: int, p: float) -> float:
    from scipy.stats import binom  # lazy: scipy.stats costs ~0.3 s at start-up

    return float(binom.cdf(k, n, p))


@dataclass(frozen=True)
class ValueCheck:
    """What the value rule found among the candidate raters.

    ``summaries``: columns to leave out; ``ambiguous``: two or more columns that each pass
    (then ``summaries`` is empty and the caller refuses the table, asking for ``--raters``).
    """

    summaries: tuple[Summary, ...] = ()
    ambiguous: tuple[str, ...] = ()


def value_summaries(
    rows: Sequence[Sequence[str | None]],
    columns: Sequence[str],
    min_columns: int = MIN_COLUMNS,
    max_p: float | None = None,
    exact_p: float = 0.0,
) -> ValueCheck:
    """Columns that are a function of the others (see the module docstring).

    ``min_columns=3``: of three columns, one that sides with the other two wherever they agree
    (``agree`` says it on its first line; a much better rater than the other two does too).
    ``max_p``: each column tested at that level, not :data:`MAX_P` shared by the columns.
    ``exact_p``: a column that never departs from the others' majority passes at that level
    too (:data:`SAID_EXACT_P`: said, not left out).
    """
    if len(columns) < min_columns:
        return ValueCheck()
    fits = majority_fits(rows, columns)
    found: list[Summary] = []
    for fit in fits:
        if fit.rows < MIN_ROWS or fit.departures > (1 - MIN_SHARE) * fit.rows:
            continue
        others = [f for f in fits if f.column != fit.column]
        rows_o = sum(f.rows for f in others)
        rate = sum(f.departures for f in others) / rows_o if rows_o else 0.0
        level = MAX_P / len(fits) if max_p is None else max_p
        if rate <= 0:
            continue
        p = _binom_cdf(fit.departures, fit.rows, rate)
        if p >= level and not (fit.departures == 0 and p < exact_p):
            continue
        found.append(
            Summary(
                fit.column,
                "equals the row-wise majority of the other columns on "
                f"{fit.rows - fit.departures} of {fit.rows} rows (the other columns equal "
                f"theirs on {1 - rate:.0%}): a majority or adjudicated column, not a rater",
            )
        )
    if len(found) > 1:
        return ValueCheck(ambiguous=tuple(s.column for s in found))
    return ValueCheck(summaries=tuple(found))
