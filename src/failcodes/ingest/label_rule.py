"""Label rules: a clinical ``has_error`` label derived from a categorical column.

Written on the command line as ``--label-rule``, clauses separated by ``;``
(``label in {2} -> error; label in {0} -> no_error; otherwise -> skip``); the grammar and how
values are compared: docs/trace-format.md, "Label rules".
"""

from __future__ import annotations

import csv
import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum

from failcodes.codesets import splits
from failcodes.errors import ConfigError, InputError
from failcodes.numbertext import reads_as_float, whole_number_text
from failcodes.polarity import judged_stage, judges_a_verdict, names_absent_error, true_marks
from failcodes.tableio import refuse_excel_error
from failcodes.verdicts import DEFAULT_ALIASES, MISSING_MARKS, Verdict


class Outcome(StrEnum):
    """What a label rule makes of a row."""

    ERROR = "error"
    NO_ERROR = "no_error"
    SKIP = "skip"


_OPPOSITE = {Outcome.ERROR: Outcome.NO_ERROR, Outcome.NO_ERROR: Outcome.ERROR}
_CLAUSE = re.compile(
    r"^\s*(?:(?P<otherwise>otherwise)|(?P<column>.+?)\s+in\s*\{(?P<values>.*)\}"
    r"|(?P<column_eq>.+?)\s*==?\s*(?P<value>[^{}]+?))\s*->\s*(?P<outcome>\S+)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_SYNTAX = (
    "expected clauses like 'COLUMN in {A, B} -> error|no_error|skip', 'COLUMN = A -> ...' or "
    "'otherwise -> ...', separated by ';'"
)


def _key(value: object) -> str:
    """The text a cell is compared as (booleans as true/false, 2.0 as 2, one Unicode form).

    NFC: a value decomposed on some rows ("möglicherweise Nein" from a macOS export) got the
    implied opposite of the rule naming it composed (1 error label for 3, exit 0).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    whole = whole_number_text(value)  # 2.0 and '2.0' (pandas, after a NaN) as 2
    if whole is not None:
        return whole
    return unicodedata.normalize("NFC", str(value).strip()).casefold()


def _clauses(text: str) -> list[str]:
    """Split on ``;`` outside double quotes and braces."""
    parts: list[str] = []
    depth, quoted, cur = 0, False, ""
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "{}":
            depth += 1 if ch == "{" else -1
        if ch == ";" and not quoted and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def _values(raw: str, rule: str) -> list[str]:
    try:
        (cells,) = list(csv.reader([raw], skipinitialspace=True))
    except (csv.Error, ValueError):
        raise ConfigError(f"--label-rule {rule!r}: cannot read the values {{{raw}}}") from None
    values = [c.strip() for c in cells]
    if not values or any(v == "" for v in values):
        raise ConfigError(f"--label-rule {rule!r}: empty value in {{{raw}}}")
    return values


@dataclass(frozen=True)
class LabelRule:
    """A parsed label rule: ``column``, value -> outcome, and the outcome of other values."""

    text: str
    column: str
    outcomes: dict[str, Outcome]
    otherwise: Outcome | None
    #: ``otherwise`` is the single clause's opposite, which no row without a value gets.
    implied: bool = False
    #: The values :meth:`outcome` met: compared text -> (first spelling, file, line).
    seen: dict[str, tuple[str, str | None, int | None]] = field(
        default_factory=dict, compare=False, repr=False
    )
    #: The first row without a value, under an ``implied`` opposite.
    blank: list[tuple[str | None, int | None, str]] = field(
        default_factory=list, compare=False, repr=False
    )
    #: Rows per compared value that got the ``implied`` opposite (first spellings in ``seen``).
    others: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    #: The row last counted in ``others``: ``--verdict-column`` makes one row a trace per
    #: system, and the shared label it gives is one ('0' 404 for 202 rows of two systems).
    counted: list[object] = field(default_factory=list, compare=False, repr=False)

    def outcome(
        self,
        value: object,
        *,
        path: str | None = None,
        line: int | None = None,
        row: object = None,
    ) -> Outcome:
        """The outcome for one cell (``None`` = the row has no value in the column).

        ``row``: where one row gives several calls (a trace per system), the same key on
        each, so that the row is counted once.
        """
        if isinstance(value, dict | list):  # its text never matched: the 'otherwise' label
            raise InputError(
                f"expected one value for --label-rule {self.text!r}, got a "
                f"{'list' if isinstance(value, list) else 'nested object'} {str(value)[:60]}",
                path=path,
                line=line,
                field=self.column,
            )
        key = None
        if value is not None and not (isinstance(value, str) and not value.strip()):
            key = _key(value)
            if key not in self.outcomes:  # #VALUE! in a JSONL or Parquet (a CSV: refused before)
                refuse_excel_error(value, path, line, self.column)
            if self.implied and key in MISSING_MARKS and key not in self.outcomes:
                key = None  # R's NA, Excel's #N/A: no value, as the null they stand for
            elif key not in self.seen and len(self.seen) < _SEEN_CAP:
                self.seen[key] = (str(value).strip(), path, line)
            found = self.outcomes.get(key) if key is not None else None
            if found is not None:
                return found
        if self.implied and key is None:  # said by unmatched(), after the column checks
            text = "" if value is None else str(value).strip()
            mark = f" ({text!r}, a missing mark)" if text else ""
            self.blank[:] = self.blank or [(path, line, mark)]
            return Outcome.SKIP
        if self.implied and key is not None and (row is None or self.counted != [row]):
            self.counted[:] = [row]  # said by notes(); '': values past _SEEN_CAP
            key = key if key in self.seen else ""
            self.others[key] = self.others.get(key, 0) + 1
        if self.otherwise is not None:
            return self.otherwise
        what = "no value" if value is None else f"value {value!r}"
        known = ", ".join(sorted(self.outcomes))
        raise InputError(
            f"{what} is not named by --label-rule {self.text!r} (it names: {known}); add "
            "'otherwise -> skip' (or error/no_error) for such rows",
            path=path,
            line=line,
            field=self.column,
        )

    def notes(self) -> list[str]:
        """After every row: what the rows made of the rule, as notes (refusals raised).

        Under an implied opposite, two or more values the rule does not name all got it
        (``gold = bad -> error`` on ok, 'partially wrong' and 'unsure': 3 no-error labels):
        each is named with its rows. Then :meth:`unmatched`'s note.
        """
        absent = self.unmatched()  # first: it refuses a row without a value
        return self._others() + ([absent] if absent is not None else [])

    def _others(self) -> list[str]:
        if len(self.others) < 2:  # the rule's value and one other: its two values
            return []
        over = "+" if "" in self.others else ""  # more distinct values than _SEEN_CAP
        named = [(k, n) for k, n in self.others.items() if k]
        shown = named[:_SHOWN]
        rest = sum(self.others.values()) - sum(n for _, n in shown)
        text = ", ".join(f"{self.seen[k][0]!r} {n:,}" for k, n in shown)
        if rest:
            text += f" and {len(named) - len(shown):,}{over} more in {rest:,} row(s)"
        return [
            f"label rule {self.text!r}: {len(named):,}{over} values it does not name got "
            f"{self.otherwise}, its implied opposite: {text} (give a value its own clause if "
            f"it is not {self.otherwise})"
        ]

    def unmatched(self) -> str | None:
        """After every row: a note naming the rule's values no row had (None: all were met).

        A value no row had, spelt almost like a value the rule does not name (``incorect``
        beside ``incorrect``), is a typo: every ``incorrect`` row got the other outcome. So is
        one spelling a truth value the rows write another way (``1`` where a boolean column
        reads ``true``, ``true`` where rows hold ``1``/``0``, ``yes``). Both are refused, naming
        the unnamed value's first file and line. A value merely absent (a category this sample
        lacks) is said in the note.
        """
        if self.blank:  # unrated: read as the opposite, it was one more true negative
            path, line, mark = self.blank[0]
            raise InputError(
                f"no value{mark}, and --label-rule {self.text!r} gives {self.otherwise} to the "
                f"other values, not to a row without one: add 'otherwise -> skip' to leave such "
                "rows unlabelled (or 'otherwise -> no_error')",
                path=path,
                line=line,
                field=self.column,
            )
        self._check_variants()
        self._check_sets()
        self._check_inverted()
        missing = [k for k in self.outcomes if k not in self.seen]
        if not missing:
            return None
        if len(self.seen) < _SEEN_CAP:
            unnamed = [k for k in self.seen if k not in self.outcomes]
            words = [k for k in unnamed if not reads_as_float(k)]
            for key in missing:
                close = [] if reads_as_float(key) else difflib.get_close_matches(key, words, 1, 0.8)
                why = "a typo?"
                if not close:
                    # 'wrong = 1 -> error' on a boolean column (read as true/false), or
                    # 'wrong = true' on 1.0/0.0: no row matched, every row got the opposite
                    # label (0 errors of 4), exit 0 with a note
                    close = [
                        k for k in unnamed if _truth(k) is not None and _truth(k) == _truth(key)
                    ]
                    why = "the same truth value written another way?"
                if close:
                    spelling, path, line = self.seen[close[0]]
                    got = self.otherwise.value if self.otherwise is not None else "no"
                    raise InputError(
                        f"--label-rule {self.text!r} names {key!r}, which no row has, and not "
                        f"{spelling!r}, which rows have ({why} those rows got the {got!r} "
                        "label): name the values as the column writes them",
                        path=path,
                        line=line,
                        field=self.column,
                    )
        shown = ", ".join(repr(k) for k in missing)
        return f"label rule {self.text!r}: no row has {shown}"

    def _check_inverted(self) -> None:
        """Refuse ``is_correct = 1 -> error`` where the column holds truth values alone.

        (:func:`_inverted_truth`; a rule's true/yes words are refused as it is read.) Named at
        the first row of the value.
        """
        if not self.seen or len(self.seen) >= _SEEN_CAP:
            return
        if any(_truth(k) is None for k in (*self.seen, *self.outcomes)):
            return  # a scale (accuracy 1-5, or a rule naming 2), or words: 1 is no truth value
        inverted = _inverted_truth(self.column, self.outcomes, numbers=True)
        if inverted is None:
            return
        first = next((self.seen[k] for k in self.outcomes if k in self.seen), None)
        _, path, line = first if first is not None else (None, None, None)
        raise InputError(
            f"--label-rule {self.text!r}: {inverted}", path=path, line=line, field=self.column
        )

    def _check_variants(self) -> None:
        """Refuse a value the rule does not name that writes a named one another way.

        ``not-supported`` or ``Not_Supported`` beside a named ``not supported`` (the same
        letters and digits), or ``NS`` for it (its words' initials): read as written, such rows
        got the other outcome. Named at its first row; the rule must name it (or map it) to
        count it.
        """
        if self.otherwise is None:
            return  # an unnamed value is refused row by row
        named: dict[str, str] = {}
        for key in self.outcomes:
            if reads_as_float(key):
                continue  # -1 and 1 are two values
            named.setdefault(_squash(key), key)
            words = [w for w in re.split(r"[\W_]+", key) if w]
            if len(words) >= 2:
                named.setdefault("".join(w[0] for w in words), key)
        for key, (spelling, path, line) in self.seen.items():
            if key in self.outcomes or reads_as_float(key):
                continue
            same = named.get(_squash(key))
            if same is None or len(_squash(key)) < 2:
                continue
            raise InputError(
                f"{spelling!r} is not named by --label-rule {self.text!r} but looks like "
                f"{same!r} written another way (those rows got the {self.otherwise.value!r} "
                f"label): name it in the rule too (e.g. {{{same}, {spelling}}}), or give "
                "its own clause if it is another category",
                path=path,
                line=line,
                field=self.column,
            )

    def _check_sets(self) -> None:
        """Refuse a value the rule does not name that joins values it names (several codes).

        ``dosage;interaction`` under ``error_type in {dosage, interaction} -> error; otherwise
        -> no_error``: a sentence with two errors was labelled no error (one error label for
        two, exit 0; with the implied opposite, only a note). A cell splits as ``agree`` splits
        one (:func:`failcodes.codesets.splits`) when every part is a value the rule names or a
        value of its own in the column, one at least named; it is refused when a part gets
        another outcome than the cell got. Named at its first row.
        """
        if self.otherwise is None:
            return  # an unnamed value is refused row by row
        for key, (spelling, path, line) in self.seen.items():
            if key in self.outcomes:
                continue
            for sep, parts in splits(key):
                keys = [_key(p) for p in parts]
                if not all(k in self.outcomes or k in self.seen for k in keys):
                    continue
                gets = {self.outcomes.get(k, self.otherwise) for k in keys}
                if not any(k in self.outcomes for k in keys) or gets == {self.otherwise}:
                    continue
                shown = ", ".join(repr(self.seen[k][0] if k in self.seen else k) for k in keys)
                gives = " and ".join(sorted(o.value for o in gets))
                joined = "written as a list" if sep is None else f"by {sep!r}"
                quoted = '"' + spelling.replace('"', '""') + '"'  # as the rule's values read
                raise InputError(
                    f"{spelling!r} is not named by --label-rule {self.text!r} but joins values "
                    f"({shown}, {joined}) that get {gives}: several codes in one cell? those "
                    f"rows got the {self.otherwise.value!r} label; name it in the rule, quoted "
                    f"({{..., {quoted}}}), or give its own clause",
                    path=path,
                    line=line,
                    field=self.column,
                )


def _squash(key: str) -> str:
    """A compared value's letters and digits alone (``not-supported`` -> ``notsupported``)."""
    return re.sub(r"[\W_]+", "", key)


#: Distinct values of the rule's column remembered for :meth:`LabelRule.unmatched`.
_SEEN_CAP = 10_000
#: Values named in :meth:`LabelRule.notes`' line of values given the implied opposite.
_SHOWN = 10


#: Texts that spell a truth value, as compared (casefolded). Beside English, the words a
#: spreadsheet in another language writes for TRUE/FALSE when it saves a boolean column as CSV
#: (German WAHR/FALSCH, French VRAI/FAUX, Spanish VERDADERO/FALSO, ...) and yes/no words: a
#: rule naming ``true`` on such a column matched no row and gave every row the opposite
#: label (0 errors of 4, exit 0, with a note).
_TRUTH = {
    **dict.fromkeys(
        (
            *("true", "1", "yes", "y", "t", "on"),
            *("wahr", "vrai", "verdadero", "verdadeiro", "vero", "waar", "sant", "sand"),
            *("sann", "tosi", "prawda", "pravda", "ja", "oui", "si", "sí", "sim", "tak"),
        ),
        True,
    ),
    **dict.fromkeys(
        (
            *("false", "0", "no", "n", "f", "off"),
            *("falsch", "faux", "falso", "onwaar", "falskt", "falsk", "usann", "epätosi"),
            *("fałsz", "nepravda", "nein", "non", "nee", "nej", "não", "nao", "nie"),
        ),
        False,
    ),
}


def _truth(key: str) -> bool | None:
    """The truth value a compared text spells (``1``, ``yes``, ``true``...), or None."""
    return _TRUTH.get(key)


#: Words that name a verdict (not a truth value): a column of them is a gold verdict.
_VERDICT_KEYS = frozenset(
    k for k in (*DEFAULT_ALIASES, *(v.value for v in Verdict)) if k not in _TRUTH
)


def false_as_written(value: object) -> str | None:
    """How ``value`` writes false as a rule names it (``0``, ``no``, ``falsch``), or None.

    A refusal naming ``'is_correct = false -> error'`` on a column of 1/0 named a rule that
    is then refused (no row has ``false``): the way must name the column's own spelling.
    """
    key = _key(value)
    return key if _truth(key) is False else None


def spells_truth(value: object) -> bool:
    """Whether ``value`` writes a truth value (``1``, ``no``, ``WAHR``) as a rule compares it."""
    return _truth(_key(value)) is not None


def _refuse_verdict_judgement(text: str, column: str, outcomes: dict[str, Outcome]) -> None:
    """Refuse a rule on a column judging the pipeline's verdict (``verdict_correct = no``).

    Its values say whether the verifier was right, not whether the sentence holds an error
    (:func:`~failcodes.polarity.judges_a_verdict`): three right ``refuted`` verdicts and a
    right ``supported`` scored FP 3, TN 1 for TP 3, TN 1, exit 0. A rule naming verdict words
    (``correct_verdict = REFUTED -> error``) reads a gold verdict and is left alone.
    """
    if any(k in _VERDICT_KEYS for k in outcomes):
        return
    stage = judged_stage(column)
    if stage is not None and not judges_a_verdict(column):
        raise ConfigError(
            f"--label-rule {text!r}: column {column!r} is named as a judgement of the "
            f"pipeline's {stage} (right or wrong, relevant or not), not of the sentence: a "
            "label is the clinicians' truth (has_error), which a stage's judgement does not "
            "give; give a column of that truth (rename the column if it is one)"
        )
    if not judges_a_verdict(column):
        return
    raise ConfigError(
        f"--label-rule {text!r}: column {column!r} is named as a judgement of the pipeline's "
        "verdict (right or wrong), not of the sentence: a label is the clinicians' truth "
        "(has_error), and a right verdict is an error where it flagged one (a right "
        "'refuted'), a wrong one where it flagged none; give a column of that truth, e.g. "
        "error = (the verdict flagged an error) == (the verdict was right)"
    )


def _inverted_truth(column: str, outcomes: dict[str, Outcome], *, numbers: bool) -> str | None:
    """Why a rule gives a column's truth value the label its name says it is not (or None).

    ``is_correct = 1 -> error``: the sentences the clinicians marked correct became the
    errors and the others no error (TP 0, FP 1, FN 1, TN 0 for TP 1, TN 1, exit 0), as
    ``--map is_correct=has_error`` did before it was refused; so is ``is_hallucination = no
    -> error``. Names as :func:`~failcodes.polarity.true_marks` reads them (a name turned
    round or mixed, ``not_correct``, says nothing), and a name of the error's absence
    (``no_error``, ``error_free``: :func:`~failcodes.polarity.names_absent_error`) as one whose
    true marks a correct sentence; values that spell no
    truth (``wrong``, ``2``) are the rule's own. ``numbers``: whether ``1``/``0`` count (only where
    the column holds truth values alone: ``accuracy in {1, 2} -> error`` on a 1-5 scale is
    no truth value).
    """
    # 'needs_correction', 'correct_label' (the reference), 'not_correct': None; a name saying
    # plainly that its true marks no error ('no_error', 'error_free': names_absent_error) is
    # read as a correctness flag ('no_error = 1 -> error' made the right sentences errors)
    correct = True if names_absent_error(column) else true_marks(column)
    if correct is None:
        return None
    for key, outcome in outcomes.items():
        truth = _truth(key)
        if truth is None or outcome is Outcome.SKIP or (reads_as_float(key) and not numbers):
            continue
        if (outcome is Outcome.ERROR) == (truth == correct):
            means = "a correct sentence" if correct else "an error"
            way = _OTHER_TRUTH.get(key, "false" if truth else "true")
            return (
                f"column {column!r} is named as if its true value marks {means}, but the rule "
                f"gives {key!r} the {outcome.value!r} label (the sentences it marks would count "
                f"the other way round); give '{column} = {way} -> {outcome.value}', or, if the "
                "name misleads, rename the column"
            )
    return None


#: A truth value's opposite written the same way.
_PAIRS = (("1", "0"), ("true", "false"), ("yes", "no"), ("y", "n"), ("t", "f"))
_OTHER_TRUTH = {**dict(_PAIRS), **{b: a for a, b in _PAIRS}}


def parse_label_rule(text: str) -> LabelRule:
    """Parse a ``--label-rule`` string; a :class:`ConfigError` (one line) if it is malformed."""
    clauses = _clauses(text)
    if not clauses:
        raise ConfigError(f"--label-rule is empty; {_SYNTAX}")
    column: str | None = None
    outcomes: dict[str, Outcome] = {}
    otherwise: Outcome | None = None
    for clause in clauses:
        m = _CLAUSE.match(clause)
        if m is None:
            raise ConfigError(f"--label-rule {text!r}: cannot read {clause.strip()!r}; {_SYNTAX}")
        try:
            outcome = Outcome(m["outcome"].lower())
        except ValueError:
            raise ConfigError(
                f"--label-rule {text!r}: unknown outcome {m['outcome']!r} "
                "(expected error, no_error or skip)"
            ) from None
        if m["otherwise"]:
            if otherwise is not None:
                raise ConfigError(f"--label-rule {text!r}: 'otherwise' given twice")
            otherwise = outcome
            continue
        name = (m["column"] or m["column_eq"]).strip().strip('"')
        negated = re.search(r"(?:[!<>]|\bnot)$", name, re.IGNORECASE)
        if negated:  # 'label != correct' read column 'label !' and left 'label' unknown
            raise ConfigError(
                f"--label-rule {text!r}: {negated.group(0)!r} before '=' or 'in' is not a rule "
                "operator; name the values instead: 'COLUMN = correct -> no_error' gives every "
                "other value the error label"
            )
        values = _values(m["values"], text) if m["column"] else _values(m["value"], text)
        if column is not None and name != column:
            raise ConfigError(
                f"--label-rule {text!r}: every clause must name the same column "
                f"({column!r} and {name!r})"
            )
        column = name
        for v in values:
            key = _key(v)
            if key in outcomes:
                raise ConfigError(f"--label-rule {text!r}: value {v!r} appears in two clauses")
            outcomes[key] = outcome
    if column is None:
        raise ConfigError(f"--label-rule {text!r}: no clause names a column; {_SYNTAX}")
    _refuse_verdict_judgement(text, column, outcomes)
    inverted = _inverted_truth(column, outcomes, numbers=False)  # 1/0: by the rows (unmatched)
    if inverted is not None:
        raise ConfigError(f"--label-rule {text!r}: {inverted}")
    kinds = set(outcomes.values())
    implied = otherwise is None and len(clauses) == 1 and kinds <= set(_OPPOSITE)
    if implied:
        otherwise = _OPPOSITE[next(iter(kinds))]
    if otherwise is None and kinds == {Outcome.SKIP}:
        raise ConfigError(f"--label-rule {text!r}: a rule that only skips gives no label")
    return LabelRule(text, column, outcomes, otherwise, implied)
