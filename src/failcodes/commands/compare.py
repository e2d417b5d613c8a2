"""``compare`` as a use case: significance tests between systems on the same units.

:class:`CompareRequest` reads paired 0/1 outcomes (a table, or traces + labels, one set per
mapping), runs Cochran's Q, pairwise McNemar and, with a reference, F1/recall differences, all
Holm-adjusted, and returns them (:class:`CompareResult`); the CLI prints them.
"""

from __future__ import annotations

import math
import shlex
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from failcodes import labelio, traceio
from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.commands.measure import (
    MAPPING_HELP,
    QUESTION_SCOPE_HELP,
    WITHOUT_CLAIMS_HELP,
    verdicts_read,
)
from failcodes.errors import ConfigError, InputError, StatisticsError
from failcodes.labels import LabelIndex, refuse_claim_labels
from failcodes.labelscope import QuestionScope, assumptions_line
from failcodes.mapping import DEFAULT_MAPPING, resolve_mappings
from failcodes.measurenames import DEFAULT_WITHOUT_CLAIMS, WithoutClaimsPolicy
from failcodes.sheetio import notes_into
from failcodes.spelling import name_key
from failcodes.stats.names import MAX_RESAMPLES

#: Most systems compared at once: every pair is tested (with --truth, 10,000 permutations a
#: pair). 100 systems of 3 sentences took 227 s and 1.4 GB (4,950 pairs); 30 make 435 pairs.
MAX_SYSTEMS = 30

if TYPE_CHECKING:  # numpy is imported where outcomes are made: `compare --help` makes none
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

    from failcodes.stats.classification import McNemarForm
    from failcodes.stats.tests import TestResult

    Outcomes = npt.NDArray[np.float64]
    #: One set of tests: the mapping (None for a FILE), the systems' 0/1 calls (units x
    #: systems), the truth (or None) and each unit's question (or None: units independent).
    OutcomeSet = tuple[str | None, Outcomes, Outcomes | None, list[str] | None]

_TRUE = {"1", "1.0", "true", "yes", "y", "t"}
_FALSE = {"0", "0.0", "false", "no", "n", "f"}


def _binary(values: list[Any], column: str, path: Path) -> list[float]:
    out: list[float] = []
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == "":
            out.append(float("nan"))
            continue
        text = str(v).strip().lower()
        if text in _TRUE:
            out.append(1.0)
        elif text in _FALSE:
            out.append(0.0)
        else:
            raise InputError(
                f"expected 0/1 (or true/false), got {v!r}{_shape_hint(values)}",
                path=path,
                line=i + 2,
                field=column,
            )
    return out


def _shape_hint(values: list[Any]) -> str:
    """The way through when a column of text is no system's 0/1 calls.

    Text in several rows is a long table's system names (or a transposed table's row labels),
    or verdict words: compare reads one row per unit and one 0/1 column per system.
    """
    texts = {str(v).strip() for v in values if str(v).strip().lower() not in _TRUE | _FALSE}
    if len(texts) < 2:
        return ""
    given = [v for v in values if str(v).strip() and not (isinstance(v, float) and math.isnan(v))]
    # a text of its own in every row: the unit's (a claim's or sentence's text), not a system's
    own = len(texts) == len(given)
    return (
        "; compare reads one row per unit and one 0/1 column per system (1 = error flagged): "
        "pivot a row per (unit, system) (pandas: df.pivot(index=UNIT, columns=SYSTEM, "
        "values=CALL)), transpose a row per system (df.set_index(SYSTEM).T), give verdict "
        "words as --traces with --labels"
        + (
            "; or, a text of each unit's own (a claim's?), name the system columns with "
            "--systems or this one with --unit-column"
            if own
            else ""
        )
    )


def _paired_line(shape: Any, unanswered: int) -> str:
    """The first line, with what ``--question-scope answered`` means for paired tests.

    The metrics' words say each system is scored on the questions it answered; paired tests
    keep only the questions every system answered, so a sentence of a question one system
    skipped is left out for all (the others' too): said with the count, which the text
    output did not show.
    """
    line = assumptions_line(shape)
    if shape.question_scope is not QuestionScope.ANSWERED:
        return line
    said = "each is scored on the questions it answered"
    paired = (
        f"the tests pair the questions every system answered ({unanswered} labelled "
        "sentence(s) of questions some system never answered are left out for every system)"
    )
    if said in line:
        return line.replace(said, paired)
    return f"{line}; {paired}" if unanswered else line


@dataclass
class CompareResult:
    """The tests (with the mapping each set was made under), the systems and the sources."""

    sources: list[Path]
    systems: list[str]
    results: list[tuple[str | None, TestResult]]
    with_mapping: bool
    #: With traces: how sentences without claims were counted (policy, per-system counts),
    #: and the label design and question scope assumed (failcodes.labelscope).
    claims_note: dict[str, Any] = field(default_factory=dict)
    #: What was assumed of the data, in one line (the first line printed).
    assumed: str | None = None
    #: Per mapping (None for a FILE), the systems that never flag an error on the tested units.
    never_flag: dict[str | None, list[str]] = field(default_factory=dict)
    #: With traces: how many of the traces' sentences the labels cover, when not all (the
    #: line after the first; metrics.coverage_line, as ``metrics`` and ``disagreements``).
    coverage: str | None = None
    #: Per mapping, the questions the tests took as units (None: every unit on its own).
    clusters: dict[str | None, int | None] = field(default_factory=dict)
    #: With traces: the labels file read (``payload`` records its digest).
    labels: Path | None = None
    #: Per mapping, Kish's effective number of questions behind each (metric, pair)'s
    #: bootstrap interval (:func:`_effective_questions`; empty when questions are not units).
    effective: dict[str | None, dict[tuple[str, str], float | None]] = field(default_factory=dict)
    #: --resamples: a bootstrap interval from fewer than MIN_MC_RESAMPLES says so in its note.
    resamples: int | None = None

    def payload(self) -> dict[str, Any]:
        """``compare --format json``'s object, which a study's ``comparisons/<ds>.json`` holds.

        It records the digests of what was read: the report refuses the tests once these
        change. Built here, so a Python caller writes the file the report accepts.
        """
        from failcodes.hashing import file_sha256

        read = [*self.sources, *([self.labels] if self.labels else [])]
        return {
            "file": str(self.sources[0]),
            "files": [str(s) for s in self.sources],
            "sha256": {str(path): file_sha256(path) for path in read},
            "systems": self.systems,
            # the first line of the text output: what was assumed (systems that never flag)
            "assumed": self.assumed,
            "coverage": self.coverage,
            "never_flag": [
                {"mapping": m, "systems": systems} for m, systems in self.never_flag.items()
            ],
            **self.claims_note,
            "holm": self.holm_note(),
            "tests": self.rows(),
        }

    def note(self, mapping: str | None, result: TestResult) -> str | None:
        """What to say beside a test: its F1 is 0 for a system that never flags an error.

        Beside a bootstrap interval of a difference that may not cover: why (interval_warning).
        """
        notes = [
            result.note,  # Cochran's Q on few units: the exact p beside the chi-square's
            self._never_note(mapping, result),
            self._two_systems_note(mapping, result),
        ]
        if result.ci_low is not None:  # --method bootstrap: 20 units covered 0.40-0.79
            positives = next(  # the pair's McNemar test is on the positive units
                (
                    r.n
                    for m, r in self.results
                    if m == mapping
                    and r.comparison == result.comparison
                    and r.test.startswith("mcnemar")
                ),
                None,
            )
            from failcodes.stats.bootstrap import DIFF_MIN_POSITIVES, interval_warning

            why = interval_warning(
                result.effect,
                result.ci_low,
                result.ci_high,
                n=result.n,
                n_clusters=self.clusters.get(mapping),
                effective_clusters=self.effective.get(mapping, {}).get(
                    (result.test.split("_", 1)[-1], result.comparison)
                ),
                n_positives=positives,
                min_positives=DIFF_MIN_POSITIVES,
                bounds=(-1.0, 1.0),
                # 5 resamples read F1 difference [0.045, 0.221] (0 outside; 400,000: [-0.016,
                # 0.315]) with no word, where metrics says it of its own intervals
                resamples=self.resamples,
            )
            # "interval: interval from only 5 bootstrap resamples" said the word twice
            notes.append(why and f"interval: {why.removeprefix('interval ')}")
        return "; ".join(n for n in notes if n) or None

    def _two_systems_note(self, mapping: str | None, result: TestResult) -> str | None:
        """Beside Cochran's Q of two systems: the McNemar row's small-sample p of the pair.

        With two systems Q is McNemar's chi-square without correction, asymptotic; below
        ``--exact-below`` discordant units the McNemar row gives the binomial form (1 of 1
        discordant question: Q's p 0.317 beside the mid-p's 0.5, for one pair, no word).
        """
        if result.test != "cochran_q" or result.p_value is None or len(self.systems) != 2:
            return None
        pair = next(
            (
                r
                for m, r in self.results
                if m == mapping
                and r.comparison == result.comparison
                and r.test in ("mcnemar_midp", "mcnemar_exact")
            ),
            None,
        )
        if pair is None or pair.p_value is None:
            return None
        return (
            f"2 systems: McNemar's chi-square, asymptotic; the {pair.test} row is the "
            f"small-sample test of the pair (p {pair.p_value:.4g})"
        )

    def _never_note(self, mapping: str | None, result: TestResult) -> str | None:
        never = self.never_flag.get(mapping, [])
        if not never or not result.test.endswith("_f1"):
            return None
        for a, b in combinations(self.systems, 2):
            if result.comparison == f"{a} vs {b}":
                named = [s for s in (a, b) if s in never]
                return (
                    f"{', '.join(named)} never flag(s) an error: {NEVER_FLAGS_RULE}"
                    if named
                    else None
                )
        return None

    def holm_note(self) -> str | None:
        """Which p-values ``p (Holm)`` adjusts together (None when the table is one family).

        Holm is applied to one test's pairs of systems under one mapping: a table of McNemar,
        F1 and recall tests under two mappings is six families, and a reader taking the
        column as corrected over the whole table overstates it.
        """
        families = {(m, r.test) for m, r in self.results if r.p_holm is not None}
        if len(families) < 2:
            return None
        pairs = len(self.systems) * (len(self.systems) - 1) // 2
        mappings = len({m for m, _ in families}) > 1
        return (
            f"p (Holm): adjusted within each family of one test's {pairs} system pair(s)"
            f"{' under one mapping' if mappings else ''} ({len(families)} families here), "
            f"not across the tests{' and mappings' if mappings else ''}: for one correction "
            "over the whole table, adjust its p column together"
        )

    def rows(self) -> list[dict[str, Any]]:
        """One dict per test (``mapping`` first when the tests come from traces).

        An F1 test of a system that never flags an error carries ``note`` (its F1 is 0 there,
        undefined in ``metrics``); the other rows have ``note`` None. ``unit`` says what the
        test took as its unit and ``clustered`` whether that is the question, holding several
        units (the test names are the same in both forms: module stats.classification).
        """
        return [
            ({"mapping": m} if self.with_mapping else {})
            | r.model_dump()
            | {
                "note": self.note(m, r),
                "unit": "question"
                if self.clusters.get(m)
                else ("sentence" if self.labels else "row"),
                "clustered": bool(self.clusters.get(m)),
            }
            for m, r in self.results
        ]

    def lines(self) -> list[str]:
        """The result as plain lines."""
        return [f"{len(self.results)} test(s) of {', '.join(self.systems)}"]


class CompareRequest(Request):
    """Cochran's Q, pairwise McNemar and F1/recall differences, all Holm-adjusted.

    With --traces (repeatable) and --labels, every labelled sentence is one paired unit; each
    -m mapping (default: refuted) gives its own set of tests, Holm-adjusted within the set.
    Where a question holds several units (sentences of one answer; a FILE's question_id
    column), the tests take the question as the unit (stats.classification).
    """

    command: ClassVar[tuple[str, ...]] = ("compare",)

    file: Path | None = option(
        None,
        argument=True,
        help="Paired outcomes (.csv/.parquet/.jsonl): one row per unit, one 0/1 column per "
        "system (blank = missing); with --truth, the columns are predictions; a question_id "
        "column (or qid, question, prompt_id...) makes its questions the tests' units. Or give "
        "--traces and --labels instead.",
    )
    traces: list[Path] = option(
        default_factory=list,
        help="Trace file(s) of the systems to compare, instead of FILE; repeat for several "
        "(as in `metrics`).",
    )
    labels: Path | None = option(None, help="Clinical labels (with --traces).")
    mapping: list[str] = option(default_factory=list, flags=("-m", "--mapping"), help=MAPPING_HELP)
    truth: str | None = option(
        None,
        help="Column with the reference (1 = positive). Adds F1/recall tests; Cochran/"
        "McNemar then compare hits on the positive units (recall).",
    )
    unit_column: str | None = option(None, help="Unit id column (default: guessed from its name).")
    systems: str | None = option(None, help="Comma-separated system columns.")
    metrics: str = option("f1,recall", help="With --truth: f1,recall (comma-separated).")
    method: str = option("permutation", help="permutation|bootstrap (F1/recall tests).")
    resamples: int = option(10_000, help="Permutations/resamples.", ge=1, le=MAX_RESAMPLES)
    seed: int | None = option(
        0, help="Seed of the permutations/resamples (the same p-values on every run)."
    )
    exact_below: int = option(
        25,
        help="Mid-p exact McNemar below this many discordant pairs (questions, when the "
        "question is the unit), else chi-square.",
        ge=0,
        strict=True,
    )
    mcnemar: str = option(
        "midp",
        help="midp|exact: McNemar's mid-p and uncorrected chi-square, or the classic exact "
        "and continuity-corrected forms (to reproduce a paper; conservative).",
    )
    without_claims: WithoutClaimsPolicy = option(DEFAULT_WITHOUT_CLAIMS, help=WITHOUT_CLAIMS_HELP)
    question_scope: QuestionScope = option(QuestionScope.AUTO, help=QUESTION_SCOPE_HELP)

    def _metrics(self) -> list[str]:
        if self.method not in ("permutation", "bootstrap"):
            raise ConfigError(f"--method must be permutation or bootstrap, got {self.method!r}")
        if self.mcnemar not in ("midp", "exact"):
            raise ConfigError(f"--mcnemar must be midp or exact, got {self.mcnemar!r}")
        wanted = [m.strip() for m in self.metrics.split(",") if m.strip()]
        bad = [m for m in wanted if m not in ("f1", "recall")]
        if bad:
            raise ConfigError(f"--metrics accepts f1 and recall, got {bad}")
        return wanted

    def run(self, *, note: Note = ignore_note) -> CompareResult:
        """Read the outcomes and run every test."""
        from failcodes.stats.classification import compare_against_truth, compare_systems

        del note
        wanted = self._metrics()
        assumed = coverage = None
        if self.traces or self.labels is not None:
            sets, names, claims_note = self._from_traces()
            assumed = claims_note.pop("assumed", None)
            coverage = claims_note.pop("coverage", None)
            sources = list(self.traces)
        else:
            sets, names, assumed = self._from_file()
            claims_note, sources = {}, [self.file] if self.file is not None else []
        if len(names) > MAX_SYSTEMS:
            raise InputError(
                f"{len(names)} systems; compare tests every pair, at most {MAX_SYSTEMS} systems "
                "at once: "
                + ("give fewer systems' traces" if self.traces else "choose them with --systems"),
                path=sources[0] if len(sources) == 1 else None,
            )
        never = _never_flags(sets, names) if "f1" in wanted else {}
        if never:
            assumed = "; ".join(
                [
                    *([assumed] if assumed else []),
                    *(
                        f"{', '.join(systems)} never flag(s) an error"
                        + (f" under {mapping}" if mapping is not None else "")
                        + f": {NEVER_FLAGS_RULE}"
                        for mapping, systems in never.items()
                    ),
                ]
            )
        results: list[tuple[str | None, TestResult]] = []
        clusters: dict[str | None, int | None] = {}
        effective: dict[str | None, dict[tuple[str, str], float | None]] = {}
        form: McNemarForm = "exact" if self.mcnemar == "exact" else "midp"  # (checked above)
        for mapping_name, data, y_truth, questions in sets:
            found = (
                compare_systems(
                    data,
                    names,
                    exact_below=self.exact_below,
                    clusters=questions,
                    mcnemar=form,
                )
                if y_truth is None
                else compare_against_truth(
                    y_truth,
                    data,
                    names,
                    metrics=wanted,  # type: ignore[arg-type]
                    method=self.method,  # type: ignore[arg-type]
                    n_resamples=self.resamples,
                    seed=self.seed,
                    exact_below=self.exact_below,
                    clusters=questions,
                    mcnemar=form,
                )
            )
            results.extend((mapping_name, r) for r in found)
            n_questions = len(set(questions or []))
            clusters[mapping_name] = n_questions if n_questions < len(questions or []) else None
            if clusters[mapping_name] and y_truth is not None and self.method == "bootstrap":
                effective[mapping_name] = _effective_questions(data, y_truth, questions, names)
        with_mapping = sets[0][0] is not None
        return CompareResult(
            sources,
            names,
            results,
            with_mapping,
            claims_note,
            assumed,
            never,
            coverage,
            clusters,
            self.labels,
            effective,
            self.resamples,
        )

    def _from_traces(
        self,
    ) -> tuple[list[OutcomeSet], list[str], dict[str, Any]]:
        """One (mapping, predictions, truth, questions) per mapping: each labelled sentence."""
        from failcodes.columnar import check_system_spellings
        from failcodes.metrics import coverage_line, label_coverage
        from failcodes.outcomes import paired_outcomes_from_traces
        from failcodes.tracecols import TraceColumns

        if self.file is not None or not self.traces or self.labels is None:
            raise ConfigError("give either FILE, or both --traces and --labels")
        if self.truth is not None:
            raise ConfigError("--truth names a column of FILE; with --traces the labels are it")
        truths: Counter[str] = Counter()
        traceio.refuse_empty_trace_files(self.traces)
        traces = traceio.read_trace_files(self.traces, truths=truths)
        check_system_spellings(traces, self.traces)
        labels = labelio.read_labels(self.labels, traces=traces, columns=True)
        refuse_claim_labels(  # the paired units are sentences
            labels,
            self.labels,
            "compare pairs sentences: give sentence labels (ingest generic --label-rule ... "
            "--option label_level=sentence makes them)",
            traces,
        )
        sets: list[OutcomeSet] = []
        names: list[str] = []
        claims_note: dict[str, Any] = {}
        read = verdicts_read(truths)
        # one set per mapping: two spellings of one mapping are refused (resolve_mappings), or
        # its tests would be listed twice
        for mapping in [m.name for m in resolve_mappings(self.mapping or [DEFAULT_MAPPING])]:
            try:
                paired = paired_outcomes_from_traces(
                    traces,
                    labels,
                    mapping,
                    without_claims=self.without_claims,
                    question_scope=self.question_scope,
                )
            except StatisticsError as exc:  # (no paired units in these labels: name them)
                raise InputError(str(exc), path=self.labels) from None
            shape = paired.shape
            assert shape is not None
            claims_note = {
                "without_claims_policy": paired.policy.value,
                "n_without_claims": paired.without_claims,
                "labels": shape.labels.value,
                "question_shape": shape.questions.value if shape.questions else None,
                "question_scope": shape.question_scope.value if shape.question_scope else None,
                "n_unanswered": paired.unanswered,
                "assumed": "; ".join(
                    x
                    for x in (
                        _paired_line(shape, paired.unanswered),
                        _questions_line(paired.questions, "sentences"),
                        read,
                    )
                    if x
                ),
            }
            names, preds = paired.systems, paired.predictions
            if not self.systems:
                _refuse_reference_systems(names, self.traces)
            if self.systems:
                wanted_sys = _system_names(self.systems)
                unknown = [s for s in wanted_sys if s not in paired.systems]
                if unknown:
                    raise ConfigError(f"--systems: no traces for {unknown} (have {names})")
                preds = preds[:, [paired.systems.index(s) for s in wanted_sys]]
                names = wanted_sys
            sets.append((mapping, preds, paired.truth, paired.questions))
        # unlabelled sentences are no paired unit: say how many (of the systems compared)
        cover = label_coverage(TraceColumns.from_traces(traces), LabelIndex(labels))
        claims_note["coverage"] = coverage_line({s: cover[s] for s in names if s in cover})
        return sets, names, claims_note

    def _from_file(
        self,
    ) -> tuple[list[OutcomeSet], list[str], str]:
        """The one set of a ratings FILE: 0/1 columns, one per system (and the truth).

        Also the first line: the system columns, the unit id columns passed over, and how
        many units a missing outcome leaves out of every test (they are paired: a unit one
        system lacks is in no test, also of two systems that both have it).
        """
        # imported here: the table adapters need pandas (~0.2 s), which --help should not pay
        import numpy as np

        from failcodes.ratingsio import read_ratings_frame
        from failcodes.stats.tableshape import id_named, normal_name

        if self.file is None:
            raise ConfigError("give FILE, or --traces and --labels")
        if self.mapping:
            raise ConfigError("-m/--mapping goes with --traces (a FILE holds 0/1 outcomes)")
        file, truth = self.file, self.truth
        read_notes: list[str] = []  # rows hidden in Excel: on stderr, and on the first line
        with notes_into(read_notes):
            frame = read_ratings_frame(file)
        cols = [str(c) for c in frame.columns]
        skip = {c for c in (truth, self.unit_column) if c is not None}
        if self.unit_column is None:  # the id-column rule of `agree` (failcodes.stats.tables)
            skip |= {c for c in cols if id_named(c) or normal_name(c) in QUESTION_NAMES}
        names = _system_names(self.systems) if self.systems else [c for c in cols if c not in skip]
        if not self.systems:
            _refuse_reference_columns(names, file)
        elif truth is not None and truth in names:
            raise InputError(
                f"'{truth}' is the reference (--truth) and a system (--systems): scored "
                "against itself (F1 1, recall 1) it would enter every test as one more system; "
                "leave it out of --systems",
                path=file,
                field=truth,
            )
        for col in [*names, *([truth] if truth else [])]:
            if col not in cols:
                raise InputError(f"no column '{col}' (columns: {cols})", path=file)
        if len(names) < 2:
            raise InputError(f"need at least two system columns, got {names}", path=file)
        _refuse_correct_columns(names, truth, file)
        data = np.column_stack([_binary(frame[c].tolist(), c, file) for c in names])
        y_truth = None if truth is None else np.array(_binary(frame[truth].tolist(), truth, file))
        given = " (given with --systems)" if self.systems else ""
        parts = [f"Assumed: systems ({len(names)}){given}: {', '.join(names)}"]
        if truth is not None:
            parts.append(f"reference: column '{truth}'")
        ids = sorted(skip - {truth} - set(names))  # --systems passes over the id column too
        named = [c for c in ids if normal_name(c) in QUESTION_NAMES]
        qcol = min(named, key=lambda c: QUESTION_NAMES.index(normal_name(c)), default=None)
        questions = None if qcol is None else frame[qcol].astype(str).str.strip().tolist()
        blank = frame[qcol].isna() | (frame[qcol].astype(str).str.strip() == "") if qcol else None
        if blank is not None and blank.any():
            raise InputError(
                "blank question id: the tests take a question column's questions as their "
                "units, so every row names its question",
                path=file,
                line=int(np.flatnonzero(blank.to_numpy())[0]) + 2,
                field=qcol,
            )
        said = questions and _questions_line(questions, "rows")
        parts.append(
            f"unit ids: column(s) {', '.join(repr(c) for c in ids)}"
            + ("" if said else _ids_twice(frame, ids))
            if ids
            else "unit ids: none"
        )
        if said:
            parts.append(f"{said}, from column '{qcol}'")
        joined = data if y_truth is None else np.column_stack([data, y_truth])
        gaps = int(np.isnan(joined).any(axis=1).sum())
        parts.append(
            f"{gaps} of {len(joined)} units have a missing outcome and are left out of every "
            "test (the tests pair the units that have all outcomes)"
            if gaps
            else f"every one of {len(joined)} units has every outcome"
        )
        parts.extend(read_notes)
        return [(None, data, y_truth, questions if said else None)], names, "; ".join(parts)


def _effective_questions(
    data: Outcomes, truth: Outcomes, questions: Sequence[str] | None, names: Sequence[str]
) -> dict[tuple[str, str], float | None]:
    """Kish's ``(sum d_q)^2 / sum d_q^2`` per (metric, pair) over questions ``q``, as metrics.

    ``d_q`` counts the question's units behind the metric's denominator: positives for recall;
    positives and units either system flags for F1. 25 questions, one holding 60 of ~85
    sentences: the bootstrap interval of the F1 difference covered 0.915 (recall 0.900) with
    no word, where metrics warns of such questions (t29cmp, session 29).
    """
    import numpy as np

    keep = np.isfinite(data).all(axis=1) & np.isfinite(truth)
    ids = np.unique(np.asarray(questions)[keep], return_inverse=True)[1]
    calls, positive = data[keep], truth[keep] == 1
    out: dict[tuple[str, str], float | None] = {}
    for i, j in combinations(range(len(names)), 2):
        flagged = (calls[:, i] == 1) | (calls[:, j] == 1)
        for metric, units in (("recall", positive), ("f1", positive | flagged)):
            d = np.bincount(ids, weights=units.astype(np.float64))
            total = float(d.sum())
            out[metric, f"{names[i]} vs {names[j]}"] = (
                total * total / float((d * d).sum()) if total else None
            )
    return out


def _system_names(text: str) -> list[str]:
    """``--systems``' names: an empty one or one given twice is refused in one line.

    ``--systems A,B,`` was refused as "no column ''" (a FILE) and passed as A,B (traces);
    ``--systems A,A`` as "system names must be unique", naming neither option nor file.
    An empty name may be a shell variable that was empty (``--systems $A,$B,$C``): refused
    rather than comparing the systems left.
    """
    names = [s.strip() for s in text.split(",")]
    if "" in names:
        raise ConfigError(
            f"--systems {text!r}: an empty system name (a comma at an end or two together); "
            "give the names as A,B"
        )
    twice = sorted({s for s in names if names.count(s) > 1})
    if twice:
        raise ConfigError(f"--systems {text!r}: {', '.join(twice)} given twice; name each once")
    return names


#: A FILE's column names (compared as ``normal_name``) read as the question of each row, the
#: first present taken: ``qid`` was read as a system ("expected 0/1") and ``q_id`` or
#: ``prompt_id`` as a plain unit id, its rows independent units; ``prompt`` and ``query``
#: (the prompt's text or number, beside the systems' 0/1 columns) as a system too.
QUESTION_NAMES = (
    "question_id",
    "questionid",
    "qid",
    "q_id",
    "question",
    "question_no",
    "question_number",
    "prompt_id",
    "query_id",
    "prompt",
    "query",
)


def _questions_line(questions: Sequence[str], units: str) -> str | None:
    """Words for the first line when some question holds several units (None if none does).

    Its sentences are not independent (one answer): the tests treating them so rejected equal
    systems in up to 12% of seeded data sets at alpha 0.05 (30 questions of 1-6 sentences,
    docs/statistics.md), so the tests take the question as the unit, and say so.
    """
    import numpy as np

    sizes = np.unique(np.asarray(questions), return_counts=True)[1]
    several = int((sizes > 1).sum())
    if not several:
        return None
    return (
        f"the tests take the question as the unit: {several} of {sizes.size} questions hold "
        f"several of the {len(questions)} {units}, which are not independent (McNemar and "
        "Cochran's Q on question totals; permutations swap and the bootstrap resamples whole "
        "questions)"
    )


def _ids_twice(frame: Any, ids: Sequence[str]) -> str:
    """Words for the first line when rows share a unit id ("" if none).

    Each row is one unit of every test and the ids pair nothing, so a unit on two rows (a
    table joined twice) counted twice: said, as several rows per id (sentences of one
    question) can be meant.
    """
    twice = frame[list(ids)].astype(str).duplicated(keep=False)
    if not twice.any():
        return ""
    keys = frame.loc[twice, list(ids)].astype(str).drop_duplicates()
    shown = ", ".join(repr("/".join(k)) for k in list(keys.itertuples(index=False, name=None))[:3])
    return (
        f" ({int(twice.sum())} rows share an id, e.g. {shown}: each row counts as one unit "
        "in every test)"
    )


#: What an F1 test means for a system that never flags an error (the first line, the notes).
NEVER_FLAGS_RULE = (
    "F1 counted as 0 in the F1 tests (2TP / (2TP + FP + FN)), where metrics shows it "
    "undefined (no predicted errors)"
)


def _never_flags(sets: list[OutcomeSet], names: list[str]) -> dict[str | None, list[str]]:
    """Per mapping, the systems that never flag an error on the tested units.

    Their F1 is 2TP / (2TP + FP + FN) = 0 in the F1 tests, where ``metrics`` shows it undefined
    (no predicted errors): said, or an F1 difference stands beside a metrics table's '–'.
    """
    import numpy as np

    out: dict[str | None, list[str]] = {}
    for mapping, data, y_truth, _ in sets:
        if y_truth is None:
            continue
        rows = ~np.isnan(np.column_stack([data, y_truth])).any(axis=1)
        if not np.nansum(y_truth[rows]):  # no positive unit: every F1 test is undefined
            continue
        never = [n for i, n in enumerate(names) if not np.nansum(data[rows, i])]
        if never:
            out[mapping] = never
    return out


def _refuse_reference_columns(names: list[str], file: Path) -> None:
    """Refuse a column named like the reference, a consensus or a rater among the systems.

    Read as one more system, a ``gold`` or ``has_error`` column entered Cochran's Q (df 3 for
    2) and made McNemar pairs "sysA vs gold" under the Holm correction of the systems', exit
    0; a ``majority`` column (the systems' vote) may be meant as a system: named with
    ``--systems`` it is one. So is a clinician's column (``dr_a`` beside ``--truth
    majority``, their vote): read as systems, three raters made 10 pairs of 5 "systems" under
    Holm for the 1 pair of the two systems. So is a column written as another is but for
    case, spacing or Unicode form (``gpt`` and ``GPT ``: one system twice, a table joined
    twice), which ``--traces`` refuses. So is a column named as a property of each unit
    (``is_hard``, ``hasCitation``: a flag kept beside the systems): read as a third system
    it made Cochran's Q df 2 and the Holm correction over 3 pairs (gpt vs claude p 0.625 read
    1.0), exit 0; unless every column is one flag named by its system (``has_error_gpt``,
    ``has_error_claude``: the systems' error flags).
    """
    from failcodes.stats.summaries import name_words, rater_word, reference_reason, truth_named
    from failcodes.stats.tableshape import DERIVED_WORDS, NOT_RATING_WORDS

    # a note, a confidence, a time or a value computed from the outcomes (`confidence` 0/1
    # beside sysA, sysB: a third system, McNemar sysA vs sysB p (Holm) 0.1875 for 0.0625), as
    # agree leaves such a column out; every column so named: the systems' (as agree's too)
    beside = {n: w for n in names for w in name_words(n) if w in NOT_RATING_WORDS | DERIVED_WORDS}
    if beside and len(beside) < len(names):
        name, word = next(iter(beside.items()))
        raise InputError(
            f"column {name!r} is named like a note, a confidence or a time, or a value computed "
            f"from the outcomes (holds {word!r}), not a system: read as one it would enter "
            "every test (Cochran's Q, a McNemar pair with each system, their Holm "
            "correction); name the system columns with --systems",
            path=file,
            line=1,
            field=name,
        )

    # every column one flag named by its system (has_error_gpt, has_error_claude; is_gpt_wrong):
    # the systems' own error flags, not a property kept beside them (refused, nothing was left
    # to call a system); is_hard beside has_citation is no such table
    words_of = [name_words(name) for name in names]
    flags = (
        len({len(w) for w in words_of}) == 1
        and len(words_of[0]) > 2
        and all(w[0] in ("is", "has") for w in words_of)
        and sum(len({w[i] for w in words_of}) > 1 for i in range(len(words_of[0]))) == 1
    )
    folded: dict[str, str] = {}
    for name in names:
        first = folded.setdefault(name_key(name), name)
        if first != name:  # as --traces refuses it (columnar.check_system_spellings)
            raise InputError(
                f"column {name!r} is {first!r} written another way (case, spacing or Unicode "
                "form): they would be compared as two systems; keep one, or name the system "
                "columns with --systems",
                path=file,
                line=1,
                field=name,
            )
        why, rater = reference_reason(name) or truth_named(name, names), rater_word(name)
        if why is None and rater is not None:
            raise InputError(
                f"column {name!r} is named like a clinician or rater (holds {rater!r}), not a "
                "system: a rater's labels would enter every test as one more system; name "
                "the system columns with --systems (a human rater compared as a system too)",
                path=file,
                line=1,
                field=name,
            )
        words = name_words(name)
        if why is None and not flags and len(words) > 1 and words[0] in ("is", "has"):
            raise InputError(
                f"column {name!r} is named like a property of each unit (a flag: "
                f"{' '.join(words)}), not a system: read as one it would enter every test "
                "(Cochran's Q, a McNemar pair with each system, their Holm correction); "
                "name the system columns with --systems",
                path=file,
                line=1,
                field=name,
            )
        if why is None:
            continue
        raise InputError(
            f"column {name!r} is named like the reference or a consensus of the systems "
            f"({why}), not a system: give the reference with --truth {shlex.quote(name)} (F1 "
            "and recall differences), or name the system columns with --systems (a majority vote "
            "compared as a system too)",
            path=file,
            line=1,
            field=name,
        )


def _refuse_correct_columns(names: list[str], truth: str | None, file: Path) -> None:
    """Refuse a FILE whose columns' names give 1 opposite meanings (:mod:`failcodes.polarity`).

    A system's 1 is an error flagged and the reference's 1 the positive (an error). Columns
    of correctness (``gpt_correct``: 1 = right) against ``--truth has_error`` were read as
    errors flagged: F1 0.571 and 0.667 for flags that are 1 - correct's 0.4 and 0.333, exit
    0; a reference ``is_correct`` counted each correct unit as an error to find. Without
    ``--truth``, ``gpt_correct`` beside ``claude_hallucinated`` compared a rate of right
    answers with one of errors. Columns all of correctness, the reference's too, agree.
    """
    from failcodes.polarity import ERROR_FLAG, names_correctness

    right = [n for n in names if names_correctness(n)]
    if truth is None:
        wrong = [n for n in names if ERROR_FLAG.search(n)]
        if right and wrong:
            raise InputError(
                f"column {right[0]!r} is named as correctness (1 = right) and {wrong[0]!r} "
                "as an error flag (1 = an error): the tests would compare a rate of right "
                "answers with one of errors; write every system column one way "
                f"(1 - {right[0]} is its errors)",
                path=file,
                line=1,
                field=right[0],
            )
        return
    if names_correctness(truth):
        odd = [n for n in names if not names_correctness(n)]
        if odd:
            raise InputError(
                f"the reference '{truth}' is named as correctness (1 = right), where compare "
                f"reads a system's 1 ({odd[0]!r}) as an error flagged: F1 and recall would "
                f"count each right unit as an error to find; give the errors as the reference "
                f"(1 - {truth}), or, if the systems' 1 means right too, name their columns so "
                f"({odd[0]}_correct)",
                path=file,
                line=1,
                field=truth,
            )
    elif right:
        raise InputError(
            f"column {right[0]!r} is named as correctness (1 = right), where compare reads a "
            f"system's 1 as an error flagged and the reference's (column '{truth}') as an "
            "error: F1 and recall would count its right answers as errors flagged; columns of "
            "correctness are compared without --truth (McNemar on who was right), or write "
            f"each system's errors flagged (1 - {right[0]})",
            path=file,
            line=1,
            field=right[0],
        )


def _refuse_reference_systems(names: list[str], paths: Sequence[Path]) -> None:
    """Refuse a system of the traces named like the reference or a consensus.

    A wide table's ``gold`` column given to ``ingest --verdict-column`` (or a ``reference``
    answer keyed beside the systems') is a system of the traces: it entered Cochran's Q and the
    Holm correction of the systems' pairs, where FILE's ``gold`` column is refused
    (:func:`_refuse_reference_columns`).
    """
    from failcodes.columnar import first_row_of_system
    from failcodes.stats.summaries import reference_reason

    for name in names:
        why = reference_reason(name)
        if why is None:
            continue
        path, line = first_row_of_system(paths, name)
        raise InputError(
            f"system {name!r} is named like the reference or a consensus of the systems "
            f"({why}): as one more system it would enter every test; leave its traces out, "
            "or name the systems with --systems (a majority vote compared as a system too)",
            path=path,
            line=line,
            field="system",
        )
