"""``agree`` as a use case: inter-rater agreement on a ratings table or annotation run.

:class:`AgreeRequest` reads a ratings table (wide or long), an annotation file or a judge
panel's run folder and returns one row per coefficient (:class:`AgreeResult`); the CLI prints
them as a table or JSON.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import field_validator

from failcodes import jsonio, tableio
from failcodes.annotations import Annotation, Status, foreign_code
from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.errors import ConfigError, InputError
from failcodes.sheetio import notes_into
from failcodes.stats.names import LEVELS, MAX_RESAMPLES, STATISTICS, WEIGHTS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcodes.codebook import Codebook
    from failcodes.stats.agreement import AgreementResult

_STAT_CHOICES = (*STATISTICS, "all")
_JSON_KEYS = (
    "statistic",
    "level",
    "weights",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "confidence",
    "se",
    "se_method",
    "se_null",
    "z",
    "n_units",
    "n_rows",
    "n_single_rated",
    "n_raters",
    "n_categories",
    "observed_agreement",
    "chance_agreement",
    "n_bootstrap",
    "n_bootstrap_valid",
    "ci_mc_error",
    "seed",
    "undefined_reason",
    "warning",
)


def _csv(value: str | None, option: str = "") -> list[str] | None:
    """A comma-separated option value as a list; a name given twice is a ConfigError.

    ``--raters coder_A,coder_A`` compared a rater with themself (agreement 1.0).
    """
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items and option:  # --long "" (an unset variable) was read as not given
        raise ConfigError(f"{option} is empty; name the column(s), comma-separated")
    twice = next((v for i, v in enumerate(items) if v in items[:i]), None)
    if twice is not None and option:
        raise ConfigError(f"{option} names {twice!r} twice")
    return items or None


#: The exact-set statistics ``--sets`` gives (and ``--stat`` may choose among).
_SET_EXACT = ("percent", "fleiss", "cohen", "krippendorff")


def _unused_levels(values: list[float]) -> str:
    """For the first line: integer codes with levels between them nobody gave ('' if none).

    Weights are on the ranks of the values given, as scikit-learn's: codes 1, 2, 5 of a 1-5
    scale weigh 2 against 5 as one step (linear Cohen 0.333 where the scale gives 0.366).
    """
    if len(values) < 2 or any(not v.is_integer() for v in values):
        return ""
    low, high = int(min(values)), int(max(values))
    unused = sorted(set(range(low, high + 1)) - {int(v) for v in values})
    if not unused or high - low > 100:
        return ""
    return (
        f"; weights on the ranks of the values given ({', '.join(f'{v:g}' for v in values)}), "
        f"{', '.join(map(str, unused))} never given (--categories "
        f"{','.join(map(str, range(low, high + 1)))} weighs the whole scale)"
    )


def _declared_unused(frame: Any, labels: list[str]) -> list[str]:
    """Categories a column's type declares (a Parquet/pandas categorical) that nobody gave."""
    import pandas as pd  # loaded already: the frame is pandas'

    unused: list[str] = []
    for col in frame.columns:
        dtype = frame[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            declared = [str(c) for c in dtype.categories]
            if set(labels) <= set(declared):  # the column holds the ratings
                unused += [c for c in declared if c not in labels and c not in unused]
    return unused


def _given_unused(table: Any, names: list[str]) -> None:
    """Refuse --categories naming a category no rater gave written like a given one.

    A scale's unused category is counted on purpose (Gwet 2014: q is the scale's size), but
    one written like a given one in another case or spacing (``--categories a,b,A``) is a typo
    that moved AC1 from 0.5 to 0.673 on four units, unsaid: refused.
    """
    import numpy as np  # loaded already: the table is numpy's

    used = set(np.unique(table.values[~np.isnan(table.values)]).tolist())
    unused = [n for n, c in zip(names, table.categories.tolist(), strict=True) if c not in used]
    given = {
        " ".join(n.split()).casefold(): n
        for n, c in zip(names, table.categories.tolist(), strict=True)
        if c in used
    }
    twin = next((n for n in unused if " ".join(n.split()).casefold() in given), None)
    if twin is not None:
        raise ConfigError(
            f"--categories names {twin!r}, which no rater gave, beside "
            f"{given[' '.join(twin.split()).casefold()]!r}, which they did: one category written "
            "two ways? (categories are read as written: write it once)"
        )


def _table_clauses(table: Any, frame: Any, results: list[AgreementResult], given: bool) -> str:
    """For the first line: what a ratings table's category set and gaps assumed ('' if none).

    AC1, Brennan-Prediger and PABAK count the categories (Brennan-Prediger's chance agreement
    is 1/q): the categories given, unless --categories lists the full set, and a categorical
    column's declared but unused categories are not counted. Numbers are nominal categories
    unless --level/--weights say otherwise; a rater who skipped units leaves them with fewer
    ratings.
    """
    from failcodes.stats.tables import (
        COUNTS_CATEGORIES,
        category_set_clauses,
        missing_clause,
        ratings_clauses,
        split_category_clause,
        tick_box_clause,
    )

    names = table.labels or [f"{v:g}" for v in table.categories]
    counted = any(r.statistic in COUNTS_CATEGORIES and r.value is not None for r in results)
    if counted and given:
        _given_unused(table, names)
    clauses = category_set_clauses(table, results)
    if counted and not given:
        unused = _declared_unused(frame, names)
        if unused:
            clauses.append(
                f"the column type declares {len(unused)} more never given "
                f"({', '.join(unused[:8])}): not counted (--categories "
                f"{','.join([*names, *unused])} counts them)"
            )
    clauses += ratings_clauses(table, results)
    split = split_category_clause(table)
    return (
        "".join(f"; {c}" for c in clauses) + split + tick_box_clause(table) + missing_clause(table)
    )


#: Statistics --weights weighs (AC1 and PABAK are unweighted by definition).
_WEIGHABLE = ("percent", "cohen", "fleiss", "conger", "brennan_prediger")


def _level_clause(level: str, results: list[AgreementResult]) -> str:
    """For the first line: --level ordinal (interval...) without --weights weighs few of them.

    Cohen's kappa under ``--level ordinal`` was the unweighted kappa, said only by 'none' in
    the weights column.
    """
    plain = [
        r.statistic
        for r in results
        if r.statistic in _WEIGHABLE and r.weights == "none" and r.value is not None
    ]
    if level == "nominal" or not plain:
        return ""
    weighed = [s for s in ("krippendorff", "gwet_ac2") if any(r.statistic == s for r in results)]
    what = {
        ("krippendorff", "gwet_ac2"): "krippendorff (and gwet_ac2, quadratic by default) only",
        ("krippendorff",): "krippendorff only",
        ("gwet_ac2",): "gwet_ac2 only (quadratic by default)",
    }.get(tuple(weighed), "none of the statistics asked for")
    them = "them" if len(plain) > 1 else "it"
    return (
        f"; --level {level} weighs {what}: {', '.join(plain)} "
        f"{'are' if len(plain) > 1 else 'is'} unweighted (--weights linear or quadratic "
        f"weighs {them})"
    )


def _row(res: AgreementResult, **extra: Any) -> dict[str, Any]:
    dumped = res.model_dump()
    return {**extra, **{k: dumped[k] for k in _JSON_KEYS}}


def _is_annotation_file(path: Path) -> bool:
    if path.suffix.lower() not in (".jsonl", ".ndjson") or not path.exists():
        return False
    head = jsonio.peek_jsonl(path)
    return head is not None and {"unit_id", "coder", "codes"} <= head.keys()


def _codes_in_codebook(
    annotations: list[Annotation], lines: list[int], cb: Codebook, path: Path
) -> None:
    """Refuse a code its dimension's list in ``cb`` does not hold, naming line and field.

    It was refused after the file was read, naming neither ('ratings ['same_scope'] are not
    in the category list [...]'), so a typo in one of hundreds of reviews could not be found.
    """
    lists = cb.code_lists()
    for ann, line in zip(annotations, lines, strict=True):
        found = foreign_code(ann, lists)
        if found is not None:
            dim, code, known = found
            raise InputError(
                f"code {code!r} is not one of dimension {dim!r}'s codes in {cb.id} "
                f"({', '.join(known)}); --codebook names another codebook",
                path=path,
                line=line,
                field=f"codes.{dim}",
            )


def _annotations_codebook(
    annotations: list[Annotation], path: Path | None
) -> tuple[Codebook | None, str]:
    """The codebook whose code lists the statistics use, and a note saying where it came from.

    ``--codebook`` if given; else the bundled codebook the annotations cite (same hash), so
    every code of it gets its per-code row; else none (the codes observed).
    """
    from failcodes import codebook as cbm

    if path is not None:
        given = cbm.load(path)
        return given, f"code lists: {given.id} (--codebook)"
    refs = {a.codebook for a in annotations}
    if len(refs) == 1:
        ref = next(iter(refs))
        cb = cbm.bundled_for(ref)
        if cb is not None:
            return cb, f"code lists: {cb.id} (bundled; the codebook the annotations cite)"
        return None, (
            f"code lists: the codes observed ({ref} is not bundled: give --codebook for a row "
            "per code of it)"
        )
    return None, "code lists: the codes observed"


@dataclass
class AgreeResult:
    """One row per coefficient, the columns that group them, and the notes to print first."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    group_keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The result as plain lines."""
        return [*self.notes, f"{len(self.rows)} coefficient(s)"]

    @property
    def assumed(self) -> str:
        """The first line's assumptions (raters, columns left out...): ``failcodes.run`` says it.

        Through the Python API the CLI's first line was never said: a majority_label column
        left out as a consensus, or units rated once, came back with the numbers and no word.
        """
        return next((n for n in self.notes if n.startswith("Assumed")), "")

    @property
    def later(self) -> list[str]:
        """The notes under the first line: ``failcodes.run`` says them after ``assumed``.

        Rows pooled, a judge panel, the bootstrap's Monte Carlo error: the CLI prints them.
        """
        return [n for n in self.notes if n != self.assumed]


def _panel_doubts(run_dir: Path) -> str:
    """``'; members flagged ...'`` of a panel run (:func:`failcodes.panel.uncertain_line`)."""
    from failcodes.judge.panelrun import read_panel
    from failcodes.panel import uncertain_line

    report = read_panel(run_dir)
    line = None if report is None else uncertain_line(report.members, report.units)
    return "" if line is None else f"; {line}"


def _coders_written_one_way(
    annotations: Sequence[Annotation], lines: Sequence[int], path: Path
) -> None:
    """Refuse a coder named two ways in an annotation file (case, spacing or Unicode form).

    Each name was a coder of its own: ``Reviewer A`` on half the lines and ``reviewer a`` on the
    others were two coders of half the units each. A ratings table refuses such a rater.
    """
    from failcodes.stats.tableshape import one_way  # (pandas: coderagreement's already)

    cells = ((ann.coder, line, "coder") for ann, line in zip(annotations, lines, strict=False))
    tail = "each spelling would be a coder of its own, its units split between them"
    one_way(cells, path, "coder", f"{tail}; write the name one way")


def _one_kind_per_coder(
    annotations: Sequence[Annotation], lines: Sequence[int], path: Path
) -> None:
    """Refuse a coder of two kinds (human on one line, llm on another), or of a unit twice.

    The last line decided the kind, and with it whether the human-vs-machine rows per code
    were computed at all (12 rows, or none), exit 0.
    """
    first: dict[str, tuple[Any, int]] = {}
    for ann, line in zip(annotations, lines, strict=False):
        kind, at = first.setdefault(ann.coder, (ann.coder_kind, line))
        if kind is not ann.coder_kind:
            raise InputError(
                f"coder '{ann.coder}' is {ann.coder_kind.value} here and {kind.value} on line "
                f"{at}: one coder is one kind (the human vs machine rows follow it)",
                path=path,
                line=line,
                field="coder_kind",
            )
    seen: dict[tuple[str, str], int] = {}
    for ann, line in zip(annotations, lines, strict=False):
        at = seen.setdefault((ann.unit_id, ann.coder), line)
        if at != line:  # the statistics' refusal named no file nor line
            raise InputError(
                f"coder '{ann.coder}' annotated unit '{ann.unit_id}' on line {at} too: keep "
                "one annotation per unit and coder",
                path=path,
                line=line,
                field="unit_id",
            )


def _no_review_twice(annotations: Sequence[Annotation], lines: Sequence[int], path: Path) -> None:
    """Refuse one Label Studio annotation under two coder names (as the report does).

    A pull's reviews (by email) and an import's (``label-studio-user-3``) in one file were
    three coders for two reviewers: Fleiss 0.749 for their 0.6, exit 0.
    """
    from failcodes.annotations import review_twice

    found = review_twice((f"on line {n}", a) for a, n in zip(annotations, lines, strict=False))
    if found is not None:
        raise InputError(
            f"{found[1]}; keep one copy (name the user with `labelstudio import --user ID=EMAIL`)",
            path=path,
            line=lines[found[0]],
            field="coder",
        )


def _no_consensus_coder(
    annotations: Sequence[Annotation], lines: Sequence[int], path: Path
) -> None:
    """Refuse a coder named like a consensus (``adjudicator``, ``majority``, ``gold``...).

    A ratings table leaves such a column out by name; an annotation file read it as one more
    coder, raising the agreement of the coder it sided with.
    """
    from failcodes.stats.summaries import consensus_word

    for ann, line in zip(annotations, lines, strict=False):
        word = consensus_word(ann.coder)
        if word is not None:
            raise InputError(
                f"coder '{ann.coder}' is named like a consensus ('{word}'): its codes resolve "
                "the coders' disagreements, and read as one more coder they raise agreement; "
                "take its annotations out of the file (or rename the coder, if a rater)",
                path=path,
                line=line,
                field="coder",
            )


class AgreeRequest(Request):
    """Agreement coefficients with confidence intervals (undefined ones say why).

    For an annotation file the statistics are fixed per scope (per dimension: percent, Fleiss,
    Krippendorff nominal, AC1, Brennan-Prediger; per coder pair: percent, Cohen, AC1, alpha;
    per code, human vs machine: percent, Cohen, AC1, PABAK), over the units the coders
    compared both rated; --stat/--level/--weights apply to ratings tables. Weighted statistics
    on text labels need --categories (--stat all leaves them out and says so). An interval
    that may mislead (few units, zero width, near the ceiling...) carries a warning. See
    docs/statistics.md.
    """

    command: ClassVar[tuple[str, ...]] = ("agree",)

    file: Path = option(
        argument=True,
        help="Ratings table (.csv/.xlsx/.parquet/.jsonl: one row per unit, one column per "
        "rater, blank = missing), a JSONL file of annotations, or a judge panel's run folder "
        "(inter-judge agreement of its members).",
    )
    stat: list[str] = option(
        default_factory=lambda: ["all"],
        help="Statistic: " + "|".join(_STAT_CHOICES) + " (repeatable: --stat cohen --stat fleiss).",
    )
    out: Path | None = option(
        None,
        flags=("-o", "--out"),
        help="Also write the rows as JSON here (in a study: agreement/NAME.json, which the "
        "report reads).",
    )
    level: str = option("nominal", help="Level of measurement: " + "|".join(LEVELS) + ".")
    weights: str = option("none", help="Agreement weights: " + "|".join(WEIGHTS) + ".")
    bootstrap: int = option(
        2000,
        help="Bootstrap resamples over units for BCa intervals (0: Wald intervals from the "
        "standard error).",
        ge=0,
        le=MAX_RESAMPLES,
    )
    seed: int | None = option(0, help="Bootstrap seed.")
    confidence: float = option(0.95, help="CI level.", gt=0, lt=1)
    unit_column: str | None = option(None, help="Unit id column (default: guessed from its name).")
    raters: str | None = option(
        None,
        help="Comma-separated rater columns to use (without it, columns named like a "
        "consensus, e.g. majority_label or gold, and a column that is the majority of the "
        "others are left out, named on the first line).",
    )
    by: str | None = option(
        None, help="Column to group units by (e.g. dimension): one row set each."
    )
    long: str | None = option(
        None,
        help="A long table (one row per unit and rater): RATER_COLUMN,RATING_COLUMN. Found "
        "without it when one column is named like a rater (rater, coder, annotator...) and one "
        "other holds the ratings.",
    )
    categories: str | None = option(None, help="Comma-separated category labels in rank order.")
    codebook: Path | None = option(None, help="Codebook YAML (annotation files): full code lists.")
    weights_matrix: Path | None = option(
        None,
        help="CSV of a q x q agreement-weight matrix (no header; rows and columns in category "
        "order: --categories, else sorted values), 1 on the diagonal. Applies to the kappa "
        "family and to Krippendorff's alpha (distance 1 - w).",
    )
    sets: str | None = option(
        None,
        help="Ratings tables whose cells join several codes: SEP splits each cell into a set "
        "(e.g. ';'), compared as sets (exact-set percent, Fleiss or Cohen, alpha; alpha with the "
        "MASI and Jaccard distances). 'none': one category per cell. Cells that look like sets "
        "are refused without it.",
    )
    missing_data: bool = option(
        False,
        help="Annotation files: keep units one coder rated alone (Gwet's / Krippendorff's "
        "missing-data forms); by default each coefficient uses the units its coders both rated "
        "and counts the others.",
    )

    @field_validator("raters", "long", "categories", mode="before")
    @classmethod
    def _names_listed(cls, value: Any) -> Any:
        # a list of names, as a study file writes them (long = ["annotator", "has_error"]):
        # from Python it was '--long: Input should be a valid string'
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return ",".join(value)
        return value

    def run(self, *, note: Note = ignore_note) -> AgreeResult:
        """Every coefficient the input asks for (undefined ones say why)."""
        if self.out is not None and self.out.suffix != ".json":
            # JSON was written under .csv (or .JSON): a study's report reads agreement/*.json
            # alone, so the file dropped out of it unsaid
            raise ConfigError(
                f"-o {self.out}: the rows are written as one JSON document; name the file "
                "NAME.json (a study's report reads agreement/*.json)"
            )
        result = self._compute()
        if self.out is not None:
            from failcodes.fileio import check_not_input, write_json

            check_not_input([self.out], [self.file])
            write_json(self.out, result.rows)
            note(f"wrote {len(result.rows):,} coefficient(s) -> {self.out}")
        return result

    def statistics(self) -> list[str]:
        """The statistics asked for (``all``: every one), each once, in the order given."""
        bad = [s for s in self.stat if s not in _STAT_CHOICES]
        if bad or not self.stat:
            raise ConfigError(
                f"--stat must be one of {', '.join(_STAT_CHOICES)}, got {bad[0] if bad else ''!r}"
            )
        twice = next((s for i, s in enumerate(self.stat) if s in self.stat[:i]), None)
        if twice is not None:  # the last one silently won before --stat was repeatable
            raise ConfigError(f"--stat {twice} given twice")
        if "all" in self.stat:
            if len(self.stat) > 1:
                raise ConfigError("--stat all means every statistic; drop the others")
            return list(STATISTICS)
        return list(self.stat)

    def _compute(self) -> AgreeResult:
        stats = self.statistics()
        if self.level not in LEVELS:
            raise ConfigError(f"--level must be one of {', '.join(LEVELS)}, got {self.level!r}")
        if self.weights not in WEIGHTS:
            raise ConfigError(
                f"--weights must be one of {', '.join(WEIGHTS)}, got {self.weights!r}"
            )
        # imported here: the table adapters need pandas (~0.2 s), which --help should not pay
        from failcodes.coderagreement import annotation_agreement
        from failcodes.ratingsio import read_ratings_frame, read_weight_matrix
        from failcodes.stats.tables import (
            consensus_clause,
            missing_clause,
            ratings_tables,
            table_agreement,
            unequal_clause,
        )

        rows: list[dict[str, Any]] = []
        group_keys: list[str] = []
        notes: list[str] = []
        panel_run = self.file.is_dir() and (self.file / "panel.json").exists()
        if panel_run or _is_annotation_file(self.file):
            # and the statistic choices: an annotation file's are fixed per scope, so
            # `--weights quadratic` or `--stat cohen` gave the unweighted, every-statistic rows
            table_only = {
                "--by": self.by,
                "--raters": self.raters,
                "--unit-column": self.unit_column,
                "--long": self.long,
                "--stat": None if self.stat == ["all"] else self.stat,
                "--level": None if self.level == "nominal" else self.level,
                "--weights": None if self.weights == "none" else self.weights,
                "--weights-matrix": self.weights_matrix,
                "--categories": self.categories,
                "--sets": self.sets,
            }
            given = [name for name, value in table_only.items() if value is not None]
            if given:  # they name columns of a ratings table: silently ignored here before
                raise ConfigError(f"{', '.join(given)}: for ratings tables, not annotation files")
            from failcodes.coderagreement import (
                annotation_shape_line,
                one_code_clause,
                pooled_line,
                unmatched_clause,
                unnamed_user_clause,
            )
            from failcodes.judge.panelrun import panel_annotations

            lines: list[int] = []
            if panel_run:
                annotations = panel_annotations(self.file)
            else:
                annotations = []
                for line, record in jsonio.iter_jsonl(self.file):
                    annotations.append(tableio.validate_record(Annotation, record, self.file, line))
                    lines.append(line)
            _coders_written_one_way(annotations, lines, self.file)
            _no_consensus_coder(annotations, lines, self.file)
            _no_review_twice(annotations, lines, self.file)
            _one_kind_per_coder(annotations, lines, self.file)
            cb, found = _annotations_codebook(annotations, self.codebook)
            if cb is not None and lines:
                _codes_in_codebook(annotations, lines, cb, self.file)
            multi = [] if cb is None else [d.id for _, d in cb.dimensions() if d.multi_label]
            if panel_run:
                notes.append(
                    f"judge panel {self.file}: agreement between its members"
                    + _panel_doubts(self.file)
                )
            scoped = annotation_agreement(
                annotations,
                categories=None if cb is None else cb.code_lists(),
                codebook_hash=None if cb is None else cb.hash,
                n_bootstrap=self.bootstrap,
                seed=self.seed,
                confidence=self.confidence,
                missing_data=self.missing_data,
                multi_label=multi,
            )
            notes.insert(
                0,
                f"{annotation_shape_line(annotations, multi)}; {found}"
                + one_code_clause(annotations)
                + unmatched_clause(annotations)
                + unnamed_user_clause(annotations)
                + unequal_clause(
                    list(
                        collections.Counter(
                            a.unit_id for a in annotations if a.status is Status.SCORED
                        ).values()
                    ),
                    "coders",
                ),
            )
            pooled = pooled_line(annotations)
            if pooled is not None:
                notes.insert(1, pooled)
            group_keys = ["scope", "dimension", "coders", "code"]
            for s in scoped:
                rows.append(
                    _row(
                        s.result,
                        scope=s.scope,
                        dimension=s.dimension,
                        coders="|".join(s.coders),
                        code=s.code,
                        sets=s.sets,
                        **s.code_columns(),
                    )
                )
        else:
            matrix = (
                None if self.weights_matrix is None else read_weight_matrix(self.weights_matrix)
            )
            split = self._set_separator(stats, matrix)
            read_notes: list[str] = []  # rows hidden in Excel: on stderr, and in the notes
            with notes_into(read_notes):
                frame = read_ratings_frame(self.file, split)
            prepared = ratings_tables(
                frame,
                unit_column=self.unit_column,
                raters=_csv(self.raters, "--raters"),
                by=self.by,
                long=_csv(self.long, "--long"),
                categories=_csv(self.categories, "--categories"),
                source=self.file,
                first_line=2 if self.file.suffix.lower() == ".csv" else 1,
                lines=frame.attrs.get("lines"),
                sets=self.sets,
            )
            notes.extend(prepared.notes)  # the shape assumed first
            group_keys = [self.by] if self.by is not None else []
            if split is not None:  # the per-code rows' column
                group_keys.append("code")
            said: dict[Any, str] = {}  # each group's first-line clauses
            for key, table in prepared.parts:
                # group_by names the group's column for a reader of the rows (the report)
                extra = {self.by: key, "group_by": self.by} if self.by is not None else {}
                extra["unit_column"] = table.unit_column
                extra["raters"] = list(table.raters)
                extra["left_out"] = prepared.left_out()
                pair_only = [x for x in ("cohen", "pabak") if x in self.stat]
                if pair_only and len(table.raters) != 2:  # no row at all for it, before
                    raise ConfigError(
                        f"--stat {pair_only[0]}: it needs exactly two raters, the table has "
                        f"{len(table.raters)} ({', '.join(table.raters)}); use fleiss, "
                        "krippendorff or gwet_ac1 for more, or name two with --raters"
                    )
                if split is not None:
                    rows.extend(self._on_sets(table, split, extra))
                    said[key] = missing_clause(table, sets=True)
                    continue
                if matrix is not None and len(matrix) != len(table.categories):
                    shown = table.labels or [f"{v:g}" for v in table.categories.tolist()]
                    raise ConfigError(
                        f"--weights-matrix is {len(matrix)} x {len(matrix)}: its rows and columns "
                        f"are the {len(shown)} categories in order ({', '.join(shown)}); "
                        "--categories lists the whole scale"
                    )
                results = table_agreement(
                    table,
                    stats,
                    level=self.level,
                    weights=matrix if matrix is not None else self.weights,
                    n_bootstrap=self.bootstrap,
                    seed=self.seed,
                    confidence=self.confidence,
                )
                rows.extend(_row(r, **extra) for r in results)
                said[key] = _table_clauses(table, frame, results, self.categories is not None)
                said[key] += "" if self.raters else consensus_clause(table)
                # a --weights-matrix too: its rows are the values given, a level nobody gave
                # (3 of 1, 2, 4, 5) has no row, unsaid where linear weights said it
                if table.labels is None and self.categories is None:
                    weighted = [r for r in results if r.weights != "none" and r.value is not None]
                    gaps = _unused_levels(table.categories.tolist()) if weighted else None
                    if gaps and gaps not in notes[0]:  # the first line: weights on ranks
                        notes[0] += gaps
                level = _level_clause(self.level, results)
                if level not in notes[0]:
                    notes[0] += level
            if len(set(said.values())) == 1:  # every group alike: said once
                notes[0] += next(iter(said.values()))
            else:
                notes[0] += "".join(f"; {self.by} {k}:{t[1:]}" for k, t in said.items() if t)
            # what the read assumed (rows hidden in Excel read, the first of several sheets):
            # a line of its own under the first, which a reader of the first line missed
            notes[0] += "".join(f"; {n}" for n in read_notes)
        if self.bootstrap and any(r.get("ci_mc_error") is not None for r in rows):
            notes.append(
                f"bootstrap intervals: {self.bootstrap} resamples, seed {self.seed}; "
                "'±' after an interval is the Monte Carlo error of its endpoints (another seed "
                "moves them by about that; more --bootstrap resamples shrink it)"
            )
        record = self.provenance(self.out)
        for row in rows:  # the lines printed above the table, also in JSON (and -o)
            row.update(notes=list(notes), **record)
        return AgreeResult(rows, group_keys, notes)

    def provenance(self, out: Path | None) -> dict[str, Any]:
        """What the rows were computed from (``sha256``) and the ``command`` computing them again.

        The report refuses an agreement/NAME.json whose ratings were corrected since. Written
        (``out``) into a study's agreement/, a file inside the study is named from its root:
        the study moved, it is checked still (an absolute path was "not there now").
        """
        from failcodes.hashing import file_sha256

        out = out.resolve() if out else None
        root = out.parent.parent if out and out.parent.name == "agreement" else None

        def named(p: Path) -> Path:
            return p.relative_to(root) if root and p.is_relative_to(root) else p

        read = {"file": self.file, "codebook": self.codebook, "weights_matrix": self.weights_matrix}
        whole = {k: p.resolve() for k, p in read.items() if p is not None}
        files = [p / "panel.json" if p.is_dir() else p for p in whole.values()]  # a panel run
        sha256 = {named(p).as_posix(): file_sha256(p) for p in files}
        named_all = {k: named(p) for k, p in whole.items()}
        again = self.model_copy(update={**named_all, "out": None}).command_line()
        return {"sha256": sha256, "command": again}

    def _set_separator(self, stats: list[str], matrix: Any) -> str | None:
        """``--sets``' separator (None: one category per cell); what it cannot go with."""
        if self.sets is None or self.sets == "none":
            return None
        if not self.sets.strip() or len(self.sets) > 3:
            raise ConfigError(
                f"--sets must be the separator joining codes in a cell (e.g. ';') or none, "
                f"got {self.sets!r}"
            )
        fixed = [s for s in stats if s not in _SET_EXACT and self.stat != ["all"]]
        given = {
            "--level": self.level != "nominal",
            "--weights": self.weights != "none",
            "--weights-matrix": matrix is not None,
            "--categories": self.categories is not None,
            f"--stat {fixed[0] if fixed else ''}": bool(fixed),
        }
        clash = [name for name, on in given.items() if on]
        if clash:
            raise ConfigError(
                f"--sets: {clash[0]} does not apply to code sets (they are compared as "
                "exact sets with percent, fleiss or cohen and krippendorff, and by alpha with "
                "the MASI and Jaccard distances)"
            )
        return self.sets

    def _on_sets(self, table: Any, sep: str, extra: dict[str, Any]) -> list[dict[str, Any]]:
        """The table's cells as code sets: exact-set statistics, alpha (MASI, Jaccard), codes.

        Then each code's own agreement (binary: does each rater give it), as annotation files
        get it: a code co-occurring with others had no row of its own.
        """
        from failcodes.coderagreement import set_code_agreement
        from failcodes.stats.sets import EXACT_MULTI_RATER, EXACT_PAIR, set_agreements
        from failcodes.stats.tables import code_sets

        exact: tuple[str, ...] = EXACT_PAIR if len(table.raters) == 2 else EXACT_MULTI_RATER
        per_code: tuple[str, ...] | None = None
        if self.stat != ["all"]:  # cohen of 3 raters: an undefined row saying why
            exact = tuple(s for s in self.stat if s in _SET_EXACT)
            per_code = tuple(s for s in self.stat if s != "krippendorff")
        sets = code_sets(table, sep)
        boot, seed, level = self.bootstrap, self.seed, self.confidence
        rows = [
            _row(r, sets=True, **extra)
            for r in set_agreements(sets, exact, n_bootstrap=boot, seed=seed, confidence=level)
        ]
        codes = set_code_agreement(
            sets, table.raters, per_code, n_bootstrap=boot, seed=seed, confidence=level
        )
        rows.extend(_row(s.result, code=s.code, **s.code_columns(), **extra) for s in codes)
        return rows
