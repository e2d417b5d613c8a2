"""What in a ratings table is no rating: rows, columns and cells that are not units or raters.

A spreadsheet of ratings carries more than ratings: a row of descriptions under the header
(``(id),(1-5 scale)``), a row of totals or means under the units, the header again between
two appended exports, columns of notes, confidences, times, totals, agreement flags or a
count of the raters, two fields of each rater (``R1 error``, ``R1 severity``), a mark of a
missing rating (``NA``, ``.``, ``#N/A``), a rating with its label (``1 (low)``) beside the
number alone, a date where a rating goes. Read as ratings each was one more unit, rater or
category and a number that looked right (exit 0). The checks here find them: pure functions
of a DataFrame that name the column (and leave it out, with the reason) or raise an
:class:`~failcodes.errors.InputError` naming the file, line and field.
:mod:`failcodes.stats.tables` calls them while it reads a table.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from failcodes.errors import InputError
from failcodes.numbertext import whole_number_text
from failcodes.spelling import TOTAL_WORDS, names_a_total, spelling_key
from failcodes.stats.summaries import Summary, name_words, rater_word

#: Column names taken as the unit id (compared lower-case, punctuation as ``_``); any name
#: ending in ``_id`` counts too.
ID_NAMES = frozenset(
    """
    unit units id ids item items instance instances subject subjects patient patients case cases
    participant participants sample samples record records row rows index unit_no unit_number
    """.split()  # noqa: SIM905
)


#: Column names taken as the rater of a long table (one row per unit and rater).
RATER_NAMES = frozenset(
    """
    rater raters coder coders annotator annotators judge judges reviewer reviewers observer
    observers user rater_id coder_id annotator_id judge_id reviewer_id observer_id user_id
    """.split()  # noqa: SIM905
)


#: Words of a numbered rater column besides the rater words (``r1``...``r8``, ``reader3``).
_NUMBERED_RATERS = frozenset({"r", "reader", "readers"})


def rater_named(column: str) -> bool:
    """Whether a column's name holds a rater word (``rater3``, ``dr_smith``, ``r2``)."""
    words = [w.rstrip("0123456789") for w in name_words(column)]
    names = RATER_NAMES | _NUMBERED_RATERS
    return rater_word(column) is not None or bool(names.intersection(words))


#: Column names of a model as the rater (an LLM judge): a wide table's column so named holding
#: one name per row is a table of one row per rater (below); a long table's rater column keeps
#: :data:`RATER_NAMES` (``claim_id,model,verdict`` is refused as two rows per unit, naming
#: ``--long``).
MODEL_NAMES = frozenset({"model", "models", "model_name", "model_id", "llm", "llms", "llm_id"})


#: Words that, with a number, name one unit as a column (``claim_1``, ``Passage 2``, ``q3``),
#: beside :data:`ID_NAMES`: a table whose every rater column is so named is one row per rater.
UNIT_WORDS = frozenset(
    """
    q question claim statement passage sentence document doc abstract article snippet chunk
    example tweet
    """.split()  # noqa: SIM905
)


def normal_name(name: str) -> str:
    """A column name compared: lower-case, each run of other characters one ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def id_named(name: str) -> bool:
    """True when a column name reads like a unit id (``patient``, ``Units``, ``case_id``...)."""
    norm = normal_name(name)
    return norm in ID_NAMES or norm.endswith("_id")


def present(values: pd.Series) -> list[str]:
    """The cells of ``values`` that hold something, as stripped text (blanks left out)."""
    return [
        str(v).strip()
        for v in values.tolist()
        if v is not None and not (isinstance(v, float) and np.isnan(v)) and str(v).strip()
    ]


def not_transposed(frame: pd.DataFrame, cols: Sequence[str], source: str | Path | None) -> None:
    """Refuse a wide table with a column named like a rater holding one value per row.

    That is a table of one row per rater and one column per unit: read as given, the units were
    the raters. A rater column whose values repeat is a long table's (:func:`long_columns`); one
    whose values are ratings the other columns use too is a rater (``judge`` beside ``human``).
    A column named like a model (:data:`MODEL_NAMES`) counts too: five LLMs as the rows of
    ``model,claim_1,claim_2,claim_3`` read the claims as raters and the models as units (Fleiss
    -0.339 for the models' 0.062, exit 0).
    """
    for column in cols:
        if normal_name(column) not in RATER_NAMES | MODEL_NAMES:
            continue
        values = frame[column].dropna().astype(str)
        others = {str(v) for c in cols if c != column for v in frame[c].dropna().tolist()}
        # names, not ratings: one per row, none of them a value of the other columns
        if len(values) >= 2 and values.is_unique and not others.intersection(values):
            raise InputError(
                f"column '{column}' is named like a rater and holds one value per row: is the "
                "table one row per rater and one column per unit? agreement needs one row per "
                "unit: transpose it (or give --unit-column if that column holds unit ids)",
                path=source,
                field=column,
            )


#: Whole column names of a row's frequency: a table of rating patterns and their counts.
FREQUENCY_NAMES = frozenset(
    {"count", "counts", "freq", "frequency", "n", "weight", "weights", "wt", "cases", "n_cases"}
)


def not_frequency_table(
    frame: pd.DataFrame, cols: Sequence[str], source: str | Path | None
) -> None:
    """Refuse a table of one row per rating pattern and a column of its count.

    R's ``as.data.frame(table(a, b))`` writes two raters' 2x2 table as four rows and ``Freq``
    (SPSS weights cases alike): read as given, each pattern was one unit. Found by a column so
    named holding whole numbers, no column named like an id, no two rows rating alike, and the
    count not a count of the row's own cells (``count`` of the raters who said yes is one, left
    out).
    """
    if len(frame) < 2 or any(id_named(c) for c in cols):
        return
    for column in cols:
        counts = pd.to_numeric(frame[column], errors="coerce")
        if normal_name(column) not in FREQUENCY_NAMES or counts.isna().any():
            continue
        if (counts < 0).any() or (counts != counts.round()).any():
            continue
        rest = frame[[c for c in cols if c != column]].astype(str)
        own = [
            {0, len(row), *(row.count(v) for v in row)}
            for row in rest.itertuples(index=False, name=None)
        ]
        if rest.duplicated().any() or all(c in o for c, o in zip(counts, own, strict=True)):
            continue
        raise InputError(
            f"column '{column}' is named like a count and no two rows rate alike: is each row "
            f"a rating pattern and '{column}' how many units had it (as R's "
            "as.data.frame(table(...)) writes it)? agreement needs one row per unit: repeat "
            f"each row '{column}' times (pandas: df.loc[df.index.repeat(df['{column}'])]); to "
            "read it as given, name the raters with --raters",
            path=source,
            line=1,
            field=column,
        )


#: Words that name a column beside the ratings that is no rating: a rater's note, a
#: confidence, a time (matched against the words of the column name, :func:`name_words`).
NOT_RATING_WORDS = frozenset(
    """
    note notes comment comments remark remarks rationale reasoning explanation justification
    memo feedback confidence conf certainty sureness time timestamp date duration seconds
    minutes
    """.split()  # noqa: SIM905
)


#: A date, or a date and time, as ISO 8601 writes it (``2026-01-02``, ``2026-01-02T10:00Z``).
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")


def time_column(name: str, values: pd.Series) -> bool:
    """True for a column of times: named so (``created_at``, ``updated_at``) or all dates.

    Beside a long table's rating (``unit,rater,code,created_at``, an annotation tool's export)
    such a column made the table not found as long, refused as a unit on two rows.
    """
    words = name_words(name)
    if len(words) >= 2 and words[-1] == "at":
        return True
    cells = [v for v in values.tolist() if not blank(v)]
    return bool(cells) and all(
        isinstance(v, dt.date | dt.time | pd.Timestamp)
        or (isinstance(v, str) and ISO_TIME.fullmatch(v.strip()) is not None)
        for v in cells
    )


#: Words that name a column computed from the ratings: a row's total or count, an
#: agreement flag (matched as :data:`NOT_RATING_WORDS` are).
DERIVED_WORDS = frozenset(
    """
    total totals sum count agree agreement match matches matched concordance concordant disagree
    disagreement discordant diff difference mean average avg median
    """.split()  # noqa: SIM905
)


#: A column named with one of these and one of :data:`COUNTED_WORDS` counts the raters
#: (``n_raters``, ``number of ratings``): computed from the ratings, no rating.
COUNT_WORDS = frozenset({"n", "num", "number", "no", "nr"})


COUNTED_WORDS = frozenset(
    {"raters", "ratings", "coders", "annotators", "reviewers", "judges", "votes", "rated"}
)


def without_not_ratings(
    pool: list[str], summaries: tuple[Summary, ...], source: str | Path | None
) -> tuple[list[str], tuple[Summary, ...]]:
    """``pool`` less the columns named like a note, a confidence or a time (not ratings).

    Such a column sharing a value with the raters (a note ``yes``, ``R1 confidence`` 1-3 beside
    ``R1 code`` 1-3) was one more rater; so was a column named like a value computed from them
    (:data:`DERIVED_WORDS`: a row's ``total``, an ``agree`` flag). Left out when two or more
    columns are left; when every column is so named they are the ratings (``r1_confidence``,
    ``r2_confidence``) and all stay; one left is refused, asking for ``--raters``.
    """
    named = {c: w for c in pool for w in name_words(c) if w in NOT_RATING_WORDS | DERIVED_WORDS}
    for c in pool:  # a count of the raters ('n_raters', 'number of ratings'): a count too
        words = set(name_words(c))
        if words & COUNT_WORDS and words & COUNTED_WORDS:
            named.setdefault(c, "count")
        elif normal_name(c) in FREQUENCY_NAMES:  # `n` (ratings per row) a rater (t18red2)
            named.setdefault(c, normal_name(c))
    kept = [c for c in pool if c not in named]
    if not named or not kept:
        return pool, summaries
    if len(kept) < 2:
        raise InputError(
            f"cannot tell the rater columns: {', '.join(named)} named like a note, a "
            f"confidence or a time (or a total) and {len(kept)} other column left; name the "
            "raters with --raters",
            path=source,
        )
    out = [
        Summary(
            c,
            f"named like a note, a confidence or a time ('{w}'), not a rating"
            if w in NOT_RATING_WORDS
            else f"named like a value computed from the ratings ('{w}': a total, a count, an "
            "agreement flag), not a rating",
        )
        for c, w in named.items()
    ]
    return kept, (*summaries, *out)


#: Words of a role that people are numbered or lettered within (``Dr A``, ``Nurse 1``): such
#: columns are raters, never a field of each rater.
ROLE_WORDS = frozenset(
    {"dr", "doctor", "physician", "nurse", "md", "rn", "clinician", "expert", "resident"}
    | {"student", "pharmacist", "specialist", "consultant", "attending", "fellow", "person"}
    | {w for name in RATER_NAMES for w in name.split("_")}
)


def _field_first_grid(columns: Sequence[str]) -> dict[str, dict[tuple[str, ...], str]]:
    """The columns as fields of the same raters, the rater last (``overreach_A``).

    Read only as a whole grid: every column ``<field>_<rater>`` (a field of three or more
    characters, not a role), two or more fields, each with the same two or more raters.
    ``overreach_A``, ``overreach_B``, ``conflict_A``, ``conflict_B`` (a code's 0/1 per rater)
    were four raters of one rating. Anything else: no fields (``{}``).
    """
    grid: dict[str, dict[tuple[str, ...], str]] = {}
    for col in columns:
        *field, rater = name_words(col) or [""]
        if len("".join(field)) < 3 or "".join(field).isdigit() or ROLE_WORDS & set(field):
            return {}
        grid.setdefault("_".join(field), {})[(rater,)] = col
    raters = {frozenset(named) for named in grid.values()}
    if len(grid) < 2 or len(raters) != 1 or len(next(iter(raters))) < 2:
        return {}
    return grid


#: A name's last word that reads as a time point (``t1``, ``v2``: a test and a retest, visits).
TIME_POINT = re.compile(r"[tv][0-9]")


def one_field_per_rater(columns: Sequence[str], source: str | Path | None) -> None:
    """Refuse rater columns that are two or more fields of each rater.

    ``R1 error``, ``R1 severity``, ``R2 error``, ``R2 severity`` (a dimension each) were four
    raters of one rating. Found when, with the last word of each name as its field (a word of
    three or more characters, not a number), two or more fields each name the same two or more
    raters; which field is the rating is the user's to say, with ``--raters``. The field first
    (``error_R1``, ``severity_R1``...) is found when the rest of the name reads as a rater:
    letters and digits (``R1``, ``coder2``) or a rater word (``error_rater_1``). Roles numbered
    alike (``Physician 1``, ``Nurse 1``: a field '1') or lettered (``Dr A``) are raters, not
    fields.
    """
    heads = _field_first_grid(columns)
    for col in columns:
        words = name_words(col)
        # a time point (a_t1, a_t2, b_t1, b_t2: each rater's test and retest) is a field too
        # of two characters: read as four raters, Fleiss 0.385 mixed the raters' agreement
        # with each one's own over time
        named_field = len(words[-1]) >= 3 or TIME_POINT.fullmatch(words[-1]) is not None
        if len(words) >= 2 and named_field and not words[-1].isdigit():
            heads.setdefault(words[-1], {})[tuple(words[:-1])] = col
        rater = "".join(words[1:])  # the field first: 'error_R1', 'severity_coder_2'
        coded = rater.isalnum() and not rater.isalpha() and not rater.isdigit()
        if len(words[0]) >= 3 and (coded or RATER_NAMES & set(words[1:])):
            heads.setdefault(words[0], {})[tuple(words[1:])] = col
    fields = {f: h for f, h in heads.items() if len(h) >= 2}
    for field, named in fields.items():
        same = [g for g, h in fields.items() if g != field and len(set(h) & set(named)) >= 2]
        if same:
            ours, theirs = list(named.values()), list(fields[same[0]].values())
            raise InputError(
                f"rater columns {', '.join(ours[:4])} and {', '.join(theirs[:4])} look like "
                f"two fields ({field!r}, {same[0]!r}) of the same raters: each column would be "
                f"a rater; name the rating's columns with --raters (e.g. --raters "
                f"'{','.join(ours)}')"
                + (
                    "; each rater's codes in slots? --sets ';' reads each rater's slots as "
                    "one code set"
                    if code_slots(columns)
                    else ""
                ),
                path=source,
                line=1,
                field=theirs[0],
            )


#: Words naming one of a rater's code slots with a number (``r1_code1``, ``coder_a_label_2``).
SLOT_WORDS = ("code", "codes", "label", "labels", "tag", "tags", "category", "class", "error")
_SLOT = rf"(?:(?:{'|'.join(SLOT_WORDS)})_?[0-9]{{1,2}}|(?:primary|secondary|tertiary)" + (
    rf"(?:_(?:{'|'.join(SLOT_WORDS)}))?)"
)
_RATER_SLOT = re.compile(rf"(?P<rater>[a-z0-9_]+?)_(?P<slot>{_SLOT})")
_SLOT_RATER = re.compile(rf"(?P<slot>{_SLOT})_(?P<rater>[a-z0-9_]+)")


def code_slots(columns: Sequence[str]) -> dict[str, list[str]]:
    """Each rater's code slot columns (``r1_code1``, ``r1_code2``...), or ``{}`` if none.

    Read only as a whole grid: two or more raters, each with the same two or more slots of one
    word numbered (``code1``, ``code2``) or ranked (``primary``, ``secondary``), the slot
    after the rater or before it. Each slot one more rater (refused before as two fields of
    the same raters, naming ``--raters`` with the first slots: the others' codes dropped).
    """
    grid: dict[str, dict[str, str]] = {}
    for col in columns:
        name = "_".join(name_words(col))
        found = _RATER_SLOT.fullmatch(name) or _SLOT_RATER.fullmatch(name)
        if found is not None:
            grid.setdefault(found["rater"], {})[found["slot"]] = col
    slots = {frozenset(named) for named in grid.values()}
    if len(grid) < 2 or len(slots) != 1 or len(next(iter(slots))) < 2:
        return {}
    ranks = ("primary", "secondary", "tertiary")

    def rank(slot: str) -> int:  # code1 ... code10; primary, secondary, tertiary
        digits = "".join(ch for ch in slot if ch.isdigit())
        return int(digits) if digits else next(i for i, w in enumerate(ranks) if w in slot)

    order = sorted(next(iter(slots)), key=rank)
    return {rater: [named[s] for s in order] for rater, named in grid.items()}


_BINARY = frozenset({"0", "1", "0.0", "1.0", "true", "false"})
_BINARY = frozenset({"0", "1", "0.0", "1.0", "true", "false"})


def _split_grid(columns: Sequence[str], last: bool) -> list[tuple[str, str]] | None:
    """Each column's two name parts (at its first or last separator), if they form a grid."""
    pairs = []
    for col in columns:
        cut = [i for i, ch in enumerate(col) if ch in "_.-: "]
        if not cut:
            return None
        i = cut[-1] if last else cut[0]
        pairs.append((col[:i], col[i + 1 :]))
    heads, tails = dict.fromkeys(h for h, _ in pairs), dict.fromkeys(t for _, t in pairs)
    if len(heads) < 2 or len(tails) < 2 or len(set(pairs)) != len(heads) * len(tails):
        return None
    return pairs


def no_code_grid(frame: pd.DataFrame, columns: Sequence[str], source: str | Path | None) -> None:
    """Refuse 0/1 rater columns that name every pair of raters and codes (one-hot codes).

    ``A_x, A_y, A_z, B_x, B_y, B_z`` (rater A or B gave code x, y or z) were six raters of one
    0/1 rating, A's x compared with B's z (codes of one letter pass :func:`one_field_per_rater`,
    whose fields have three or more). Roles lettered alike (``Dr A``, ``Nurse A``) are people,
    as there.
    """
    if len(columns) < 4:
        return
    for col in columns:
        cells = {str(v).strip().lower() for v in frame[col].tolist() if not blank(v)}
        if not cells or not cells <= _BINARY:
            return
    pairs = _split_grid(columns, last=True) or _split_grid(columns, last=False)
    if pairs is None:
        return
    heads, tails = (
        list(dict.fromkeys(h for h, _ in pairs)),
        list(dict.fromkeys(t for _, t in pairs)),
    )
    if any(ROLE_WORDS & set(name_words(part)) for part in (*heads, *tails)):
        return  # roles lettered alike (Dr A, Dr B, Nurse A, Nurse B): four people
    # `a_r1, a_r2, b_r1, b_r2` (code first): the raters are the tails, named like raters;
    # the hint named a_r1,b_r1,c_r1, which compares r1's codes with each other at exit 0
    code_first = all(map(rater_named, tails)) and not any(map(rater_named, heads))
    raters, codes = (tails, heads) if code_first else (heads, tails)
    first = [
        c for c, (h, t) in zip(columns, pairs, strict=True) if (h if code_first else t) == codes[0]
    ]
    raise InputError(
        f"rater columns {', '.join(columns[:8])}{', ...' if len(columns) > 8 else ''} hold 0/1 "
        f"and name every pair of {', '.join(heads)} and {', '.join(tails)}: one column per "
        f"rater and code (one-hot)? Read as {len(columns)} raters, each column is compared "
        f"with every other code's; per code, name its raters' columns: --raters "
        f"{','.join(first)} (if {', '.join(raters)} are the raters)",
        path=source,
        line=1,
        field=columns[0],
    )


def value_key(value: str) -> str:
    """One spelling per value: ``1``, ``1.0`` and `` 1 `` are the same rating."""
    try:
        number = float(value)
    except ValueError:
        return value
    return repr(number) if np.isfinite(number) else value


def _numbers(value: object) -> bool:
    """A number, or numbers joined by ``;``, ``|`` or ``,`` (a set of codes: ``1;2``)."""
    return all(is_number(v) for v in re.split(r"[;|,]", str(value)))


def is_number(value: object) -> bool:
    """A finite number, or a text that reads as one (a CSV's cells are text)."""
    if isinstance(value, bool | np.bool_):
        return False
    try:
        return bool(np.isfinite(float(str(value).strip())))
    except ValueError:
        return False


#: Cells that mark a missing rating in many exports (R's ``NA``, Excel's ``#N/A``, ``-``).
MISSING_MARKS = frozenset(
    {"na", "n/a", "#n/a", "nan", "null", "none", "missing", "-", ".", "?", "skip", "skipped"}
)


def missing_marks(cells: Sequence[object]) -> bool:
    """True when any of ``cells`` is a mark of a missing rating (:data:`MISSING_MARKS`)."""
    return any(spelling_key(str(v)) in MISSING_MARKS for v in cells)


#: The marks a program writes for a missing cell (R's ``NA``, pandas' ``nan``, SQL's ``NULL``,
#: Excel's ``#N/A``): checked among text codes too, where ``none``, ``-`` or ``?`` may be
#: answers of their own.
WRITTEN_MISSING = frozenset({"na", "n/a", "#n/a", "nan", "null"})


def no_missing_marks(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a mark of a missing rating (:data:`MISSING_MARKS`) among the ratings.

    R's ``write.csv`` writes a missing rating ``NA``: among 1-5 scores it was a category (two
    raters' NA one more agreeing unit) and made the scores text labels (no weights). Among text
    codes ``NA`` or ``N/A`` (:data:`WRITTEN_MISSING`) may be a missing rating or an answer (not
    applicable); which it is is the user's to say (empty cells, or ``--categories`` listing it).
    A table of marks alone is not checked.
    """
    marks: list[tuple[int, str, str]] = []
    texts: set[str] = set()
    numbers: list[tuple[float, int, str, str]] = []
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if not pd.notna(value) or not str(value).strip():
                continue
            if is_number(value):
                numbers.append((float(str(value).strip()), row, str(column), str(value).strip()))
                continue
            if spelling_key(str(value)) in MISSING_MARKS:
                marks.append((row, str(column), str(value)))
            else:
                texts.add(str(value))
    if texts:
        marks = [m for m in marks if spelling_key(m[2]) in WRITTEN_MISSING]
    elif not marks:
        _no_missing_code(numbers, source, line_of)
    if not marks or len(marks) == sum(int(frame[c].notna().sum()) for c in raters):
        return
    row, column, value = min(marks)
    labels = ",".join([*sorted(texts), value]) if len(texts) < 8 else f"CODE,...,{value}"
    raise InputError(
        f"{value!r} among text codes: a missing rating (R writes NA) or an answer (not "
        "applicable)? it would be a category of its own; missing: leave the cell empty; an "
        f"answer: list the categories with --categories {labels}"
        if texts
        else f"{value!r} among numeric ratings: a missing rating (R writes NA)? leave the cell "
        f"empty (it would be a category of its own); a category indeed: list the categories "
        "with --categories",
        path=source,
        line=line_of(row),
        field=column,
    )


#: The codes a statistics package's users give a missing answer (SPSS, Stata: ``9``, ``99``,
#: ``999``, ``-9``, ``-1``) and a survey's "don't know" or "refused" (``88``, ``98``, ``97``,
#: ``77``, ``-8``, ``-7``; a single 7 or 8 is a rating of many scales): ``88`` for two of r2's
#: 1-3 ratings was a category of its own, Cohen 0.452 for the 0.619 of the 8 units rated
#: (statsmodels), said only as "the numbers 1, 2, 3, 88 read as unordered categories".
MISSING_CODES = frozenset(
    {9.0, 99.0, 999.0, 9999.0, -1.0, -9.0, -99.0, -999.0}
    | {77.0, 88.0, 97.0, 98.0, 777.0, 888.0, -7.0, -8.0, -77.0, -88.0, -98.0}
)


def _no_missing_code(
    numbers: Sequence[tuple[float, int, str, str]], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a missing-value code (:data:`MISSING_CODES`) apart from the other ratings.

    ``999`` (or ``-9``, ``99``) for a missing 1-3 rating was a rating of its own. Refused when
    the code lies outside the other ratings' range by more than one step (``-1`` beside a 0-4
    scale is its next level, ``9`` inside 1-10 a rating) and, above them, by more than a tenth
    of their range (``99`` beside 0-100 scores up to 97: the scale's top, refused with no way
    through but 101 categories listed).
    """
    for code in sorted({n for n, *_ in numbers} & MISSING_CODES):
        rest = [n for n, *_ in numbers if n != code]
        low, high = min(rest, default=0), max(rest, default=0)
        if len(set(rest)) < 2 or low - 1 <= code <= high + max(1, (high - low) / 10):
            continue
        _, row, column, text = min(t for t in numbers if t[0] == code)
        raise InputError(
            f"{text!r} among ratings {low:g}-{high:g}: a missing-value code (SPSS and Stata write "
            "9, 99, 999, -9 or -1; a survey 88, 98, 97 or -8 for don't know or refused)? "
            "leave the cell empty (it would be a rating of its own, "
            "far from the others); a rating indeed: list the categories with --categories",
            path=source,
            line=line_of(row),
            field=column,
        )


def rows_not_units(
    frame: pd.DataFrame, raters: Sequence[str], unit_column: str | None
) -> list[tuple[int, str]]:
    """The rows that read as no unit (the first, the last, a total between): ``(row, why)``.

    A row of units or descriptions under the column names
    (``unit id,rater 1 (MD),rater 2 (RN)``, ``(id),(1-5 scale),(1-5 scale)``) or a row of totals
    under the units (``Total,2,1``; an Excel export's ``Mean`` row) was one more unit. Read so
    when the row's ratings are text where every other row's are numbers (or numbers where every
    other row's are text), when its unit id is text where the other ids (3 or more) are numbers
    and none of its ratings occurs on another row, or (the last row) when its id names a total
    (:data:`TOTAL_WORDS`; a row between the units too, by :func:`names_a_total`), or (the first
    row) when its id reads like the unit column's name (``ID,Dr A,Dr B`` above ids ``q1``...)
    and none of its ratings occurs on another row.
    """
    if len(frame) < 4:
        return []
    cells = [
        [v for v in row if pd.notna(v) and str(v).strip()]
        for row in frame[list(raters)].itertuples(index=False)
    ]
    keys = [{value_key(str(v).strip()) for v in row} for row in cells]
    ids = (
        [str(v).strip() if pd.notna(v) else "" for v in frame[unit_column].tolist()]
        if unit_column is not None
        else None
    )
    found: list[tuple[int, str]] = []
    for row, kind in ((0, "units or descriptions under the header"), (len(frame) - 1, "totals")):
        if ids is not None and not ids[row]:  # no unit id: every_unit_named refuses it
            continue
        others = [c for i, c in enumerate(cells) if i != row]
        mine, rest = cells[row], [v for c in others for v in c]
        shown = ", ".join(repr(str(v)) for v in mine[:3])
        elsewhere = set().union(*(k for i, k in enumerate(keys) if i != row))
        why = ""
        # numbers joined ('1;2': a set of codes, --sets) are no text: such a first row was
        # refused as a row of descriptions, the same row second read
        texts = mine and not any(map(_numbers, mine)) and not missing_marks(mine)
        if texts and rest and all(map(is_number, rest)):
            why = f"its ratings ({shown}) are text where every other row's are numbers"
        elif mine and rest and all(map(is_number, mine)) and not any(map(is_number, rest)):
            why = f"its ratings ({shown}) are numbers where every other row's are text"
        elif ids is not None and row and spelling_key(ids[row]).rstrip(":") in TOTAL_WORDS:
            why = f"its unit id {ids[row]!r} names a total"
        elif (
            ids is not None
            and not ids[row].isdecimal()
            and all(i.isdecimal() for j, i in enumerate(ids) if j != row)
            and mine
            and not keys[row] & elsewhere
        ):
            why = (
                f"its unit id {ids[row]!r} is text where the other {len(ids) - 1} ids are "
                f"numbers, and its ratings ({shown}) are found on no other row"
            )
        elif (
            ids is not None
            and not row
            and names_a_column(ids[row], str(unit_column))
            and mine
            and not keys[row] & elsewhere
        ):
            why = (
                f"its unit id {ids[row]!r} names the unit column, and its ratings ({shown}) "
                "are found on no other row"
            )
        if why:
            found.append((row, f"a row of {kind}? {why}"))
    for row, unit in enumerate((ids or [])[1:-1], start=1):  # a total between the units
        if names_a_total(unit):
            why = f"its unit id {unit!r} names a total"
            found.append((row, f"a row of totals between the units? {why}"))
    return sorted(found)


def blank(value: object) -> bool:
    """A missing cell: None, NaN (a float), pandas' NA or NaT."""
    return (
        value is None
        or value is pd.NA
        or value is pd.NaT
        or (isinstance(value, float) and np.isnan(value))
    )


def no_repeated_header(frame: pd.DataFrame, source: str | Path | None, line_of: Any) -> None:
    """Refuse a row that repeats the header: two exports appended, each with its header.

    ``item,r1,r2`` again between the units was one more unit, ``item``, whose raters disagreed.
    A row whose every cell (two or more) is its column's name is refused.
    """
    names = [spelling_key(str(c)) for c in frame.columns]
    if len(names) < 2:
        return
    same = np.ones(len(frame), dtype=bool)
    for column, name in zip(frame.columns, names, strict=True):
        same &= np.array(
            [blank(v) or spelling_key(str(v)) == name for v in frame[column].tolist()], dtype=bool
        ).reshape(len(frame))
        if not same.any():
            return
    some = np.array(
        [sum(not blank(v) for v in row) >= 2 for row in frame.itertuples(False)], dtype=bool
    )
    hits = np.flatnonzero(same & some)
    if hits.size:
        raise InputError(
            "the header again (each cell is its column's name): two files appended? it would "
            "be read as one more unit: delete the row",
            path=source,
            line=line_of(int(hits[0])),
            field=str(frame.columns[0]),
        )


def no_long_rows_not_units(
    frame: pd.DataFrame,
    unit_column: str,
    rater_column: str,
    source: str | Path | None,
    line_of: Any,
) -> None:
    """Refuse a long table's row of column names under the header, or of totals.

    ``unit id,rater name,rating (yes/no)`` under the header made ``rater name`` a rater of one
    unit, ``unit id``. Refused when the unit cell reads like the unit column's name and its
    rater is on no other row. A unit named like a total (:func:`names_a_total`: each rater's
    ``Mean`` under the units) was one more unit. ``--unit-column`` reads every row.
    """
    for row, unit in enumerate(frame[unit_column].tolist()):
        if names_a_total(str(unit)):
            raise InputError(
                f"a row of totals? its unit {str(unit)!r} names a total; it would be read as "
                f"one more unit: delete the row (a unit so named: --unit-column {unit_column} "
                "reads every row)",
                path=source,
                line=line_of(row),
                field=unit_column,
            )
    if len(frame) < 3:
        return
    unit, rater = str(frame[unit_column].iloc[0]), frame[rater_column].iloc[0]
    if not names_a_column(unit, unit_column) or (frame[rater_column].iloc[1:] == rater).any():
        return
    raise InputError(
        f"a row of units or descriptions under the header? its unit {unit!r} names the unit "
        f"column and its rater {str(rater)!r} is on no other row; it would be read as a rater "
        f"of one more unit: delete the row (a unit so named: --unit-column {unit_column} reads "
        "every row)",
        path=source,
        line=line_of(0),
        field=unit_column,
    )


def names_a_column(value: str, column: str) -> bool:
    """True when a cell reads like the unit column's name (``ID``, ``unit id``, the name)."""
    return spelling_key(value) == spelling_key(column) or id_named(value)


def refuse_rows_not_units(
    frame: pd.DataFrame,
    raters: Sequence[str],
    unit_column: str | None,
    source: str | Path | None,
    line_of: Any,
    unit_given: bool,
) -> str:
    """Refuse a row :func:`rows_not_units` finds; with ``--unit-column`` given, say it.

    Refused, not left out: the guess could drop a unit (a unit so named), and the row also
    made the other rows' numbers text categories (``(1-5 scale)`` above 1..5), so the safe
    way is one line naming it. A given unit column is the user's word that each of its rows
    is a unit: then the row is read and the first line says so (the returned words).
    """
    found = rows_not_units(frame, raters, unit_column)
    if not found:
        return ""
    row, why = found[0]
    field = unit_column if unit_column is not None else raters[0]
    if not unit_given:
        keep = (
            f" (a unit so named: --unit-column {unit_column} reads every row as a unit)"
            if unit_column is not None
            else ""
        )
        raise InputError(
            f"{why}; it would be read as one more unit: delete the row{keep}",
            path=source,
            line=line_of(row),
            field=field,
        )
    return f"; line {line_of(row)} is read as a unit (--unit-column given), though {why}"


def every_unit_named(
    frame: pd.DataFrame, unit: str, source: str | Path | None, line_of: Any
) -> None:
    """Refuse a row of a wide table without a unit id (see :func:`one_row_per_unit`)."""
    blank = frame[unit].isna().to_numpy()
    if blank.any():
        raise InputError(
            "empty unit cell (a wide table names the unit on every row; a row of rater names "
            "or units under the header? delete it)",
            path=source,
            line=line_of(int(np.flatnonzero(blank)[0])),
            field=unit,
        )


#: Column names of a rating round (``unit, r1, r2, round``): read as a rater where its values
#: are the ratings' (1, 2), the refusal named ``--long`` (from Python a pivot), not ``--by``.
ROUND_NAMES = frozenset(
    """
    round rounds round_no round_number visit visit_no visit_number wave session sessions
    timepoint time_point occasion phase period iteration
    """.split()  # noqa: SIM905
)


def _rounds_by_content(frame: pd.DataFrame, key: Sequence[str], col: str) -> bool:
    """Whether ``col`` holds every repeated unit once under each of its values (2 or more).

    A round column (``batch``, ``t``, ``pass``) read as a rater: each round rates the same
    units. A rater's own ratings of a unit's two rows seldom split so (and only a column not
    named like the other raters is asked).
    """
    ids = frame[list(key)].astype(str).agg("\x1f".join, axis=1)
    cells = frame[col].astype(str).str.strip()
    held = [frozenset(ids[cells == v]) for v in cells.unique()]
    return len(held) > 1 and all(h == held[0] for h in held) and len(held[0]) > 1


def _round_column(
    frame: pd.DataFrame, key: Sequence[str], raters: Sequence[str], unlike: Sequence[str] = ()
) -> str | None:
    """A column beside the raters that tells a unit's rows apart (``round``, ``visit``), or None.

    Two rating rounds of the same raters in one table (``unit, round, r1, r2``): the refusal
    asked for ``--long`` (a rater column), where ``--by round`` reads it. A column named like
    a rater is no round: ``unit,rater,overreach,conflict`` (one 0/1 column per code) was
    told ``--by rater``, which read the two codes' columns as two raters (percent 0.5,
    Cohen 0.0 between the codes, exit 0). A column named like a round (:data:`ROUND_NAMES`)
    read as a rater (its 1, 2 the ratings' values) is a round too: it was told ``--long``.
    So is one of ``unlike`` (rater columns not named like the others: ``batch``, ``t``) that
    holds every unit once under each of its values (:func:`_rounds_by_content`).
    """
    for col in frame.columns:
        name = normal_name(str(col))
        round_rater = name in ROUND_NAMES or (
            col in unlike and _rounds_by_content(frame, key, str(col))
        )
        if col in key or (col in raters and not round_rater) or name in RATER_NAMES:
            continue
        column = frame[col].astype(str).str.strip()
        if column.nunique() < len(frame) and not frame[[*key, col]].astype(str).duplicated().any():
            return str(col)
    return None


def _zero_one(column: pd.Series) -> bool:
    """True for a column whose cells given are all 0 or 1 (a code's one-hot column)."""
    cells = {str(v).strip() for v in column.tolist() if not blank(v)}
    return bool(cells) and cells <= {"0", "1", "0.0", "1.0", "True", "False", "true", "false"}


def one_row_per_unit(
    frame: pd.DataFrame,
    key: Sequence[str],
    source: str | Path | None,
    line_of: Any,
    raters: Sequence[str] = (),
    unlike: Sequence[str] = (),
) -> None:
    """Refuse a unit (per ``--by`` group) on two rows of a wide table, naming both lines.

    And a row without a unit id, as a long table's: a row of rater names or units under the
    header (``,Dr A,Dr B``) was one more unit whose raters disagreed. Ids are compared without
    spaces around them: ``u1 `` below ``u1`` was a unit of its own. A column beside the raters
    that tells the unit's rows apart (``round``) is named with ``--by``; so is a rater column
    of ``unlike`` (not named like the other raters) that does so (:func:`_round_column`).
    """
    unit = key[-1]
    every_unit_named(frame, unit, source, line_of)
    ids = frame[list(key)].astype(str).apply(lambda column: column.str.strip())
    twice = ids.duplicated()
    if not twice.any():
        return
    row = int(np.flatnonzero(twice.to_numpy())[0])
    same = (ids == ids.iloc[row]).all(axis=1).to_numpy()
    first = int(np.flatnonzero(same)[0])
    this, that = (str(frame[unit].iloc[i]) for i in (row, first))
    by = _round_column(frame, key, raters, unlike) if this == that else None
    if by is not None:
        raise InputError(
            f"unit {this!r} is on two rows (first at line {line_of(first)}), told apart by "
            f"{by!r} ({frame[by].iloc[first]!s}, {frame[by].iloc[row]!s}): the raters' "
            f"rounds (or visits) in one table? --by {by} gives each {by}'s agreement apart "
            "(one row per unit and rater? name the columns with --long "
            "RATER_COLUMN,RATING_COLUMN)",
            path=source,
            line=line_of(row),
            field=unit,
        )
    # a rater column there (`unit,rater,code,severity`): "no rater column?" was false
    named = [str(c) for c in frame.columns if normal_name(str(c)) in RATER_NAMES]
    rest = [str(c) for c in frame.columns if str(c) not in (*key, *named)]
    way = (
        f"--long {named[0]},RATING_COLUMN (the ratings: one of {', '.join(rest[:4])}; the "
        "other columns are not read"
        + (
            f"; one 0/1 column per code? each code's agreement: --long {named[0]},{rest[0]}, "
            "then the next)"
            if len(rest) > 1 and all(_zero_one(frame[c]) for c in rest)
            else ")"
        )
        if len(named) == 1 and rest
        else "--long RATER_COLUMN,RATING_COLUMN (no rater column? add one naming the rater of "
        "each row)"
    )
    raise InputError(
        f"unit {this!r} is {that!r} (line {line_of(first)}) with spaces around it: one unit on "
        "two rows (each spelling would be a unit of its own)? write it one way"
        if this != that
        else f"unit {this!r} is on two rows (first at line {line_of(first)}): one row per "
        f"unit and rater? name the columns with {way}",
        path=source,
        line=line_of(row),
        field=unit,
    )


def _shown(value: Any) -> str:
    """A cell's value as the refusal shows it: its repr, cut to 40 characters."""
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def no_containers(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a cell holding a list, set or object where a rating goes (a notebook's frame).

    The file readers refuse or join them first (:mod:`failcodes.ratingsio`); unchecked, a list
    stops in numpy and a tuple is the text of its repr (``('a', 'b')``, ``('b', 'a')``: two
    categories).
    """
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if not isinstance(value, list | tuple | set | frozenset | dict | np.ndarray):
                continue
            kind = (
                "an object"
                if isinstance(value, dict)
                else "an array"
                if isinstance(value, np.ndarray)
                else f"a {type(value).__name__}"
            )
            raise InputError(
                f"{kind} ({_shown(value)}) is not a rating (one number or text per cell)"
                + (
                    ""
                    if isinstance(value, dict)
                    else "; co-occurring codes? failcodes.AgreeRequest(file=..., sets=';') "
                    "reads a JSONL or Parquet file's lists as code sets (agree --sets ';')"
                ),
                path=source,
                line=line_of(row),
                field=str(column),
            )


def no_dates(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a date or time where a rating goes (Excel turns ``1/2`` or ``3-4`` into dates)."""
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if isinstance(value, dt.date | dt.time | pd.Timestamp):
                raise InputError(
                    f"a date or time ({value}) is not a rating (Excel turns 1/2 or 3-4 into "
                    "dates: format the column as text or numbers)",
                    path=source,
                    line=line_of(row),
                    field=str(column),
                )


#: A number and its label in one cell (``1 (low)``, ``2 - partly``, ``3: fully``): a letter
#: after the separators (``2-3`` is no label).
NUMBER_LABEL = re.compile(r"([+-]?[0-9]+(?:\.[0-9]+)?)[\s\-\u2013\u2014:=.)(]+[^\W\d_]")


def one_way(
    cells: Iterable[tuple[str, int, str]],
    source: str | Path | None,
    what: str,
    tail: str,
    *,
    column: bool = False,
) -> None:
    """Refuse a value written two ways (case, spacing or Unicode form): the first one wins.

    ``cells`` are (value, line, field); the error names the first spelling's line (and
    ``column``: its field) and ends with ``tail``. A whole number written as a float is
    one way too: rater ``1.0`` (a CSV of a pandas column widened by a missing cell) beside
    ``1`` from another export was a rater of its own, each rating half the units (t25red).
    """
    first: dict[str, tuple[str, int, str]] = {}
    for value, line, field in cells:
        key = spelling_key(whole_number_text(value) or value)
        was, at, where = first.setdefault(key, (value, line, field))
        if was != value:
            place = f"line {at}, column {where!r}" if column else f"line {at}"
            floats = whole_number_text(value) or whole_number_text(was)
            how = "a whole number as a float" if floats else "case, spacing or Unicode form"
            raise InputError(
                f"{what} {value!r} is {was!r} ({place}) written another way ({how}): {tail}",
                path=source,
                line=line,
                field=field,
            )


#: A percentage in one cell (``90%``, ``12.5 %``).
PERCENT = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?\s*%")


def no_number_with_label(
    frame: pd.DataFrame, raters: Sequence[str], source: str | Path | None, line_of: Any
) -> None:
    """Refuse a rating written as its number and label beside the number alone.

    ``1 (low)`` from one rater (a spreadsheet's drop-down) and ``1`` from another were two
    categories that disagreed; likewise a percentage (``90%``) beside numbers (``0.9``: a column
    formatted as percent).
    """
    numbers: dict[str, tuple[str, int, str]] = {}  # its key -> (the cell, line, column)
    labelled: list[tuple[int, str, str, str]] = []  # (row, column, cell, its number's key)
    for column in raters:
        for row, value in enumerate(frame[column].tolist()):
            if blank(value) or isinstance(value, bool | np.bool_):
                continue
            text = str(value).strip()
            if is_number(value):
                numbers.setdefault(value_key(text), (text, line_of(row), str(column)))
            elif PERCENT.fullmatch(text):  # '90%': beside any number (0.9, 90), refused
                labelled.append((row, str(column), text, "%"))
            elif (m := NUMBER_LABEL.match(text)) is not None:
                labelled.append((row, str(column), text, value_key(m.group(1))))
    if numbers:  # a number of the table stands for the percentages' numbers
        numbers["%"] = next(iter(numbers.values()))
    for row, column, text, key in labelled:
        if key in numbers:
            plain, line, where = numbers[key]
            raise InputError(
                f"rating {text!r} and {plain!r} (line {line}, column {where!r}): one rating "
                + (
                    "written with and without its label? "
                    if key != "%"
                    else "scale written as percentages and as numbers (Excel shows 0.9 as 90%)? "
                )
                + "each would be a category of its own; write it one way",
                path=source,
                line=line_of(row),
                field=column,
            )
