"""Read a study folder (what ``failcodes run``, the CLI steps or ``failcodes demo`` write).

Every path comes from :class:`failcodes.study.layout.StudyLayout`; every part is optional, but
a folder holding none of them is an error (exit 2, one line). What the report makes of each
(traces -> Table 5, metrics -> the P/R/F1 tables, the coded tables -> Tables 8-9, judge runs,
agreement, reviews, comparisons, saturation): docs/study.md, "The folder" (column "read by").

With several datasets, groups are prefixed ``<dataset>/`` so systems of different data never mix.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import pandas as pd

from failcodes import codebook as codebooks
from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status, foreign_code
from failcodes.attribution import (
    NO_CLAIMS,
    AttributeNotes,
    ItemAttribution,
    cell_codes,
    human_attributions,
    is_all_high,
)
from failcodes.codebook import Codebook, Dimension
from failcodes.contract import first_repeat
from failcodes.csvcells import line_of, read_chunks, read_frame
from failcodes.dropped import Dropped, read_dropped, vanished_line, vanished_systems
from failcodes.errors import FailcodesError, InputError, listed
from failcodes.fileio import check_regular_file
from failcodes.hashing import file_sha256
from failcodes.jsonio import decode_error, read_json
from failcodes.labelscope import assumptions_line, shape_of_rows
from failcodes.metrics import distributions_dataframe, verdict_distributions
from failcodes.report.build import JUDGE_SOURCE, ReopenUnits, ReportInputs, shared_note
from failcodes.report.codebook_table import codebook_frame
from failcodes.report.corrected import (
    CorrectedShare,
    attribution_numbers,
    attribution_rows,
    corrected_notes_key,
    corrected_rows,
    corrected_shares,
    corrected_table,
    dash_clause,
    judge_doubts,
    review_skew,
)
from failcodes.report.corrected import attribution_table as corrected_attribution_table
from failcodes.report.html import ReportMeta, report_time
from failcodes.reviewplan import (
    GROUP_COLUMN,
    Sample,
    StratifyBy,
    draw_digest,
    draw_reason,
    human_codes,
    known_dimensions,
    match_reviews,
    one_spelling,
    people_only,
    plan_source,
    plans_dir,
    read_plan,
    redraw_command,
    repeated_reviews,
    settles,
    splits_reason,
    stale_reason,
)
from failcodes.spelling import unseen_note
from failcodes.study.layout import (
    ATTRIBUTION_ITEMS,
    ATTRIBUTION_NOTES,
    JUDGE_KINDS,
    StudyLayout,
    judge_kind,
    trace_dataset,
)
from failcodes.tableio import read_models_jsonl, table_columns
from failcodes.tally import FIRST, REPEAT, is_tally, row_weights, tally_chunks, value_counts
from failcodes.traces import CITING_SOURCES, EvidenceSource
from failcodes.unitrepeats import FirstUnits
from failcodes.units import Unit, UnitKind, build_units
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.annotationlines import AnnotationRead
    from failcodes.judge.summary import RunSummary
    from failcodes.panel import QuoteShare
    from failcodes.reviewplan import ReviewPlan
    from failcodes.reviewversions import ReviewVersions
    from failcodes.study.config import StudyFile

_T = TypeVar("_T")


def _stage_table(frames: list[pd.DataFrame], stages: list[str]) -> pd.DataFrame:
    """Disagreements per system (``dataset/system`` when several) and stage, and their total.

    A study comparing pipelines needs each one's split; the pooled counts alone would hide
    it. With more than one row an ``all`` row sums them (``all systems`` when a system is
    named ``all``: the sum was written over that system's own row).
    """
    if not frames or not stages:
        return pd.DataFrame()
    rows = pd.concat(frames, ignore_index=True)
    table = pd.crosstab(rows["system"].astype(str), rows["stage"].astype(str))
    table = table.reindex(columns=stages, fill_value=0)
    table["total"] = table.sum(axis=1)
    if len(table) > 1:
        table.loc["all systems" if "all" in table.index else "all"] = table.sum(axis=0)
    return table.rename_axis("system").reset_index().rename_axis(None, axis=1)


def _coded_groups(
    layout: StudyLayout, names: Sequence[str], traced: Mapping[str, Sequence[str]]
) -> tuple[dict[str, str | None], list[str], list[list[str]]]:
    """Each data set's prefix in Tables 8-9's columns (None: none), what was pooled, and how.

    Seed 001's Table 8 has a column per retriever (Table 9 per verifier) over one set of
    labelled sentences. Data sets that hold the same labels (``data/<ds>.labels.jsonl`` byte
    for byte) and no system in common are one such set split by system (a data set per
    system): their rows share a prefix, so a retriever two of them use is one column, as it
    is when the systems are one data set (``claude/bm25`` and ``gpt/bm25`` split bm25 by
    system). Other data sets keep their own name (different sentences: pooling would mix
    them); with one group in all, no prefix.
    """
    groups: dict[str, list[str]] = {}
    for name in names:
        labels = layout.labels(name)
        key = file_sha256(labels) if labels.is_file() and name in traced else f"\0{name}"
        groups.setdefault(key, []).append(name)
    prefixes: dict[str, str | None] = {}
    pooled: list[str] = []
    pools: list[list[str]] = []
    for members in groups.values():
        systems = [s for m in members for s in traced.get(m, ())]
        shared = len(members) > 1 and len(systems) == len(set(systems))
        for m in members:
            prefixes[m] = "+".join(members) if shared else m
        if shared:
            pools.append(members)
            pooled.append(
                f"data sets {', '.join(members)} hold the same labels (one set of sentences, "
                "a data set per system): Tables 8-9 give a column per retriever and per "
                "verifier over them, as seed 001's Table 8 does, not one per data set"
            )
    if len(set(prefixes.values())) == 1:  # one set of sentences in all: no prefix needed
        prefixes = dict.fromkeys(prefixes)
    return prefixes, pooled, pools


def _prefixed(frame: pd.DataFrame, column: str, dataset: str, many: bool) -> pd.DataFrame:
    if many:
        frame = frame.copy()
        frame[column] = [f"{dataset}/{v}" for v in frame[column]]
    return frame


#: Columns each attribution table must have (besides the codebook's dimension ids).
_TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "per_passage": ("retriever", "status", "all_high"),
    "per_trace": ("verifier", "status", "all_correct"),
    "attribution": ("stage",),
}
_TABLE_PART = {"per_passage": UnitKind.RETRIEVAL, "per_trace": UnitKind.VERIFICATION}
#: Columns of the report's agreement table (from agreement files and from human review).
AGREEMENT_COLUMNS = (
    "statistic",
    "level",
    "weights",
    "value",
    "ci_low",
    "ci_high",
    "n_units",
    "n_raters",
    "undefined_reason",
    "warning",
)


def _read_table(path: Path, kind: str) -> pd.DataFrame:
    """Read an attribution CSV whole, refusing a malformed file or a missing column."""
    frame = _parsed(path, lambda: read_frame(path))
    _check_header(path, kind, list(frame.columns))
    return frame


def _gold_mix(att: pd.DataFrame, folder: Path) -> list[str]:
    """Systems of an attribution whose claims ``auto`` took both by gold evidence and by codes.

    ``attribute`` says it on its first line (:class:`~failcodes.attribution.GoldFlags`) and
    writes it in its ``notes.json``, with the tables (one batch): the report reads it there.
    An attribution without one (an earlier failcodes') is read back: the table's strategy
    cells name the systems that may be such (both strategies among their items), and only
    then are their claims read from its items (a claim without passages takes the
    codebook's name but no strategy decided it).
    """
    from failcodes.attribution import GoldFlags, Strategy

    notes = _attribute_notes(folder)
    if notes is not None:  # attribute's own lines (its tables are the ones shown)
        return notes.gold_mix
    items = folder / ATTRIBUTION_ITEMS
    if "strategy" not in att or "system" not in att or not items.is_file():
        return []
    used: dict[str, set[str]] = {}
    for system, cell in att[["system", "strategy"]].astype(str).itertuples(index=False):
        used.setdefault(system, set()).update(cell.split("+"))
    both = {Strategy.GOLD_EVIDENCE.value, Strategy.CODEBOOK.value}
    maybe = {system for system, kinds in used.items() if both <= kinds}
    if not maybe:
        return []
    gold = GoldFlags()
    with items.open("rb") as f:
        for raw in f:
            if raw.strip():
                item = ItemAttribution.model_validate_json(raw)
                if item.system in maybe:
                    gold.add_attributed(item.claims)
    return gold.lines()


def _coded_columns(path: Path, kind: str) -> list[str]:
    """The checked header of a coded table (``per_passage``, ``per_trace``).

    Checked as :func:`_read_table` checks it; the rows are read by :func:`_coded_tally`.
    """
    columns = _parsed(path, lambda: list(pd.read_csv(check_regular_file(path), nrows=0).columns))
    _check_header(path, kind, columns)
    return columns


#: Rows of a coded table read at a time (:func:`_coded_tally`).
CHUNK_ROWS = 20_000


def _coded_tally(
    path: Path, kind: str, columns: list[str], cb: Codebook, once: FirstUnits | None = None
) -> pd.DataFrame:
    """A coded table as a tally (:mod:`failcodes.tally`) over the columns the report counts.

    Those are the group, status and flag columns, every codebook dimension the file has and
    the system column, which the caption reads to name a column pooling several systems (a
    retriever two systems share: :func:`~failcodes.report.tables.pooled_caption`).

    ``once`` (a per-passage table with unit ids): the (retriever, unit) keys of the tables read
    before into the same columns; a row repeating one is marked :data:`REPEAT` (Table 8 counts
    each unit of a retriever once, :mod:`failcodes.unitrepeats`).

    Read in chunks of :data:`CHUNK_ROWS` rows (every column: a malformed row is refused as
    in a whole read). Cells are text, as written, but the flag (``True``/``False``, read as
    pandas reads it), so a chunk reads as the whole file does.
    """
    dims = {d.id for _, d in cb.dimensions()}
    keep = [*_TABLE_COLUMNS[kind], *(c for c in columns if c in dims or c == "system")]
    flag = _TABLE_COLUMNS[kind][2]
    text = [c for c in columns if c != flag]
    chunks = read_chunks(path, CHUNK_ROWS, text=text)
    if once is not None and "unit_id" in columns:
        codes = ["status", flag, *(c for c in columns if c in dims)]
        seen = once
        chunks = (c.assign(**{REPEAT: seen.repeated_in(c, "retriever", codes)}) for c in chunks)
        keep.append(REPEAT)
    return _parsed(path, lambda: tally_chunks(chunks, keep))


def _parsed(path: Path, read: Callable[[], _T]) -> _T:
    """``read()`` of the CSV file ``path``, a malformed or empty file refused in one line."""
    try:
        return read()
    except pd.errors.EmptyDataError:
        raise InputError("empty file, expected a header row", path=path, line=1) from None
    except pd.errors.ParserError as exc:
        said = " ".join(str(exc).split())
        found = re.search(r" in line (\d+)", said)
        # pandas' "line N" counts records, not the lines a quoted cell's line breaks add
        line = None
        if found is not None:
            line = line_of(path, int(found[1]), blanks=True)
            said = said.replace(found[0], f" in line {line}", 1)
        raise InputError(f"malformed CSV ({said})", path=path, line=line) from None
    except UnicodeDecodeError as exc:
        raise decode_error(path, exc) from None


def _check_header(path: Path, kind: str, columns: list[str]) -> None:
    """A column named twice, or one the report needs missing, refused in one line."""
    repeated = first_repeat(table_columns(path) or [])  # pandas renamed it to NAME.1
    if repeated is not None:
        raise InputError("column appears twice in the header", path=path, line=1, field=repeated)
    for column in _TABLE_COLUMNS[kind]:
        if column not in columns:
            have = ", ".join(map(str, columns))
            raise InputError(f"missing column (have: {have})", path=path, line=1, field=column)


def _check_codes(path: Path, frame: pd.DataFrame, kind: str, cb: Codebook | None) -> None:
    """Every dimension of the codebook part is a column, holding only its subcodes.

    ``frame``: the table or its tally (:mod:`failcodes.tally`); a bad code is refused naming
    the first line that holds it.
    """
    if cb is None or kind not in _TABLE_PART:
        return

    part = cb.part(_TABLE_PART[kind])
    scored = frame["status"] == "scored"
    for dim in part.dimensions:
        if dim.id not in frame.columns:
            raise InputError(
                f"missing column for dimension {dim.id!r} of codebook {cb.name}@{cb.version}",
                path=path,
                line=1,
                field=dim.id,
            )
        allowed = {*dim.code_ids(), NOT_ASSESSABLE}
        # a multi-label step's cell joins its set ('overreach|conflict_synthesis_failure', as
        # attribute writes it): each code is checked (the joined text was refused as one code)
        parts = cell_codes if dim.multi_label else _one_code
        ok = [all(c in allowed for c in parts(cell)) for cell in frame[dim.id]]
        bad = frame.index[scored & frame[dim.id].notna() & ~pd.Series(ok, index=frame.index)]
        if len(bad):
            row = int(bad[0])
            first = int(frame[FIRST].loc[row]) if is_tally(frame) else row
            raise InputError(
                f"{frame.at[row, dim.id]!r} is not a subcode of dimension {dim.id!r} of codebook "
                f"{cb.name} v{cb.version} (the report's); coded under another version? A table "
                "attributed before a re-code holds the old codes: `failcodes run STUDY` "
                "attributes again",
                path=path,
                line=line_of(path, first + 2, blanks=False),  # row 0 is record 2
                field=dim.id,
            )


def _one_code(cell: object) -> list[object]:
    """A single-label dimension's cell: one code, whatever it holds."""
    return [cell]


def _agreement_subject(row: dict[str, Any], stem: str) -> str:
    """An ``agreement/*.json`` row's subject; rows of an annotation file name their scope.

    `agree` on annotations writes per-dimension, pooled, coder-pair and per-code rows: read
    by dimension alone, a code's PABAK filled the dimension's cell (entity 0.600, the
    exact_entity code's, where the dimension has none) and the pooled row took the file name.
    A ratings table's ``--by`` groups (``group_by``) each name their group: every group of
    ``--by item`` took the file's name, and the table showed the first group's value alone.
    Rows compared on code sets (``sets``: a multi-label dimension, ``--sets``) say so, as the
    review rows do: an exact-set Cohen read as a single code's. A ratings table's per-code rows
    (``--sets``: one set of rows per code, a ``code`` and no ``scope``) name their code: all
    took the file's (or the ``--by`` group's) name, and the table showed the first code's
    values alone as the file's (Cohen 0.667 where the codes read 0.667, 0.000 and 1.000).
    """
    subject = _scope_subject(row, stem)
    code = row.get("code")
    if code is not None and row.get("scope") != "code":
        subject = f"{subject}: {code}"
    return f"{subject} [code sets]" if row.get("sets") is True else subject


def _scope_subject(row: dict[str, Any], stem: str) -> str:
    group = row.get("group_by")
    if isinstance(group, str) and group != "dimension":
        return f"{stem}: {group} {row.get(group)}"
    dim = row.get("dimension")
    scope = row.get("scope")
    who = " vs ".join(str(row.get("coders", "")).split("|"))
    if scope == "pooled":
        return f"{stem}: pooled over dimensions"
    if scope == "pair":
        return f"{dim} ({who})"
    if scope == "code":
        return f"{dim}: {row.get('code')} ({who})"
    return str(dim or row.get("subject") or stem)


def _records(data: Any, path: Path, keys: tuple[str, ...], where: str = "") -> list[dict[str, Any]]:
    """``data`` as a list of objects that each have ``keys``; else one line naming the field."""
    if not isinstance(data, list):
        raise InputError("expected a JSON list of objects", path=path, field=where or None)
    for i, row in enumerate(data):
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", path=path, field=f"{where}[{i}]")
        for key in keys:
            if key not in row:
                raise InputError("missing required field", path=path, field=f"{where}[{i}].{key}")
    return data


@dataclass(frozen=True)
class _RunFacts:
    """What the report shows of a judge run's annotations."""

    refs: set[tuple[str, int, str]]
    coders: set[str]
    heuristic: bool
    quotes: list[QuoteShare]
    models: bool = False  # a model coded some units too (a cascade)


def _judge_run_facts(path: Path) -> _RunFacts:
    """One pass over a run's ``annotations.jsonl``: codebooks, judges, quote checks.

    Streamed (:func:`failcodes.annotationio.iter_annotations`, as strict as before, a line
    msgspec vouches for read as its struct): the report read every annotation twice into a
    list, 136 s and most of its 2.7 GB at paper scale.
    """
    from failcodes.annotationio import iter_annotations
    from failcodes.panel import quote_verification

    refs: set[tuple[str, int, str]] = set()
    coders: set[str] = set()
    heuristic = models = False

    def noted() -> Iterator[AnnotationRead]:
        nonlocal heuristic, models
        for ann in iter_annotations(path):
            refs.add((ann.codebook.name, ann.codebook.version, ann.codebook.hash))
            coders.add(ann.coder)
            heuristic |= ann.coder_kind is CoderKind.HEURISTIC
            models |= ann.coder_kind is CoderKind.LLM
            yield ann

    quotes = quote_verification(noted())
    return _RunFacts(refs, coders, heuristic, quotes, models)


def _add_refs(
    refs: dict[tuple[str, int, str], str],
    found: set[tuple[str, int, str]],
    folder: Path,
    root: Path,
) -> None:
    """Note the codebooks a judge run cites, each with the first run folder citing it."""
    where = folder.relative_to(root) if folder.is_relative_to(root) else folder
    for ref in found:
        refs.setdefault(ref, where.as_posix())


def _find_codebook(
    refs: dict[tuple[str, int, str], str], explicit: Codebook | None, root: Path
) -> Codebook | None:
    """The codebook the annotations name: ``explicit``, else the study's copy, else bundled.

    Runs coded under two versions (a data set re-coded after a bump, another not yet) are
    refused naming a run of each and the way: the line named neither, as if the annotations
    were one file.
    """
    if not refs:
        return explicit
    if len(refs) > 1:
        shown = ", ".join(f"{n}@{v}+{h[:12]} in {refs[(n, v, h)]}" for n, v, h in sorted(refs))
        raise InputError(
            f"annotations were made under different codebooks ({shown}): a report reads one; "
            "re-code the older run(s) to the study file's codebook (failcodes run STUDY plans "
            "failcodes recode for a run coded under another version)"
        )
    name, version, digest = next(iter(refs))
    candidates = [explicit] if explicit is not None else []
    if explicit is None:
        # a study keeps its codebook (and each version it was bumped to) in its folder
        own = root / f"{name}.v{version}.yaml"
        with contextlib.suppress(FailcodesError):  # absent or not this one: reported below
            candidates.append(
                codebooks.load(own) if own.is_file() else codebooks.bundled(name, version)
            )
    for cb in candidates:
        if cb.hash == digest:
            return cb
    if explicit is not None:  # it said "neither in the study folder nor bundled" of one that is
        _not_the_given(name, version, digest, explicit, refs, root)
    raise InputError(
        f"annotations were made under codebook {name}@{version}+{digest[:12]}, which is neither "
        "in the study folder nor bundled; pass --codebook with that exact version"
    )


def _not_the_given(
    name: str,
    version: int,
    digest: str,
    given: Codebook,
    refs: Mapping[tuple[str, int, str], str],
    root: Path,
) -> NoReturn:
    """Refuse ``--codebook`` naming another codebook than the judge runs were coded under.

    ``report STUDY --codebook v2.yaml`` on runs coded under v1 (in the study folder and
    bundled) said "annotations were made under codebook ...@1, which is neither in the study
    folder nor bundled; pass --codebook with that exact version".
    """
    own = root / f"{name}.v{version}.yaml"
    found = "neither the study folder nor failcodes has it: pass that exact version"
    with contextlib.suppress(FailcodesError):
        if own.is_file() and codebooks.load(own).hash == digest:
            found = "its copy in the study folder is read"
        elif codebooks.bundled(name, version).hash == digest:
            found = "the bundled one is read"
    raise InputError(
        f"annotations were made under codebook {name}@{version}+{digest[:12]} (first: "
        f"{next(iter(refs.values()))}), not the --codebook given ({given.name}@{given.version}"
        f"+{given.hash[:12]}): a report reads the judge's codes under the codebook they were "
        f"coded under; leave --codebook out ({found}), or re-code the runs to it (name it in "
        "the study file's codebook: failcodes run STUDY plans failcodes recode)"
    )


def study_codebook(root: Path) -> Codebook:
    """The codebook a study's reviews are brought to, as :func:`load_run_dir` finds it.

    Its judge runs' (a panel's: its members'), else the study file's, else the bundled one;
    ``review status`` counts the reviews the report will use by it.
    """
    layout = StudyLayout.of(root)
    refs: dict[tuple[str, int, str], str] = {}
    for name in layout.judge_datasets():
        for kind in JUDGE_KINDS:
            folder = layout.judge_current(name, kind)
            _add_refs(refs, _run_refs(folder), folder, root)
    return _find_codebook(refs, None, root) or _study_file_codebook(layout) or codebooks.bundled()


def _run_refs(folder: Path) -> set[tuple[str, int, str]]:
    """The codebook a judge run's annotations cite (a panel's: its first member's), if any."""
    from failcodes.study.recode import run_codebook

    ref = run_codebook(folder) if folder.is_dir() else None
    return set() if ref is None else {(ref.name, ref.version, ref.hash)}


def _study_file_codebook(layout: StudyLayout) -> Codebook | None:
    """The codebook the study file names, when no judge run names one (None: none loads)."""
    path = _study_codebook_path(layout)
    with contextlib.suppress(FailcodesError):  # said where the study file is read (run)
        return codebooks.load(path) if path is not None and path.is_file() else None
    return None


def load_run_dir(run_dir: str | Path, *, codebook: Codebook | None = None) -> ReportInputs:
    """Collect what ``run_dir`` holds into :class:`ReportInputs` (see module docstring)."""
    root = Path(run_dir)
    if not root.is_dir():
        raise InputError("not a study folder (no such folder)", path=root)
    layout = StudyLayout.of(root)
    if not layout.report_inputs():
        raise InputError(
            "holds nothing to report on (no data/*.traces.parquet, metrics/*.json, judge/, "
            "attribution/, agreement/, review/, comparisons/ or saturation/; see docs/study.md)",
            path=root,
        )
    _check_study_datasets(layout)
    from failcodes.columnar import asserting_systems, read_verdict_counts
    from failcodes.judge.run import read_summary

    inputs_files: list[Path] = []
    trace_files = layout.trace_files()
    metric_files = layout.metric_files()
    many = len(layout.datasets()) > 1

    metrics: list[dict[str, Any]] = []
    assumed: list[tuple[str, str]] = []  # the run box: what each metrics file assumed
    metric_levels: dict[str, set[str]] = {}  # data set -> the levels its metrics counted
    no_label: dict[str, set[str]] = {}  # data set -> its systems no label applies to
    for path in metric_files:
        rows = _records(read_json(path), path, ("system",))
        shape = shape_of_rows(rows)
        said = (
            assumptions_line(shape)
            if shape is not None
            else f"not recorded: metrics/{path.name} was written by an older failcodes, before "
            "what metrics assumed of the labels was saved (shared or per-system, the questions "
            "counted); compute it again (failcodes run STUDY --force) to have it said"
        )
        if rows:  # an older file's numbers came with no word of their assumptions
            assumed.append((f"Data ({path.stem})" if many else "Data", said))
        metric_levels[path.stem] = {str(row.get("level")) for row in rows}
        # systems no label applies to (per-system labels of others): none of theirs is scored
        no_label[path.stem] = {
            str(r["system"]) for r in rows if not r.get("n") and r.get("n_unlabelled")
        }
        for row in rows:
            if many:
                row = {**row, "system": f"{path.stem}/{row['system']}"}
            metrics.append(row)
        inputs_files.append(path)

    dists = []
    dropped: list[Dropped] = []
    traced: dict[str, list[str]] = {}  # each data set's systems (for the zero-disagreement note)
    asserting: set[str] = set()  # systems asserting every claim (no verifier), as metrics names
    for path in trace_files:
        # the verdict columns only (the traces' texts are not shown), same checks and errors
        dist = verdict_distributions(read_verdict_counts(path))
        if not dist:
            # a file with no row (edited, or written empty by hand): its table would have no
            # system column
            raise InputError("no traces found (expected at least one trace)", path=path)
        frame = distributions_dataframe(dist)
        dataset = trace_dataset(path)
        traced[dataset] = sorted(map(str, frame["system"]))
        asserting |= {f"{dataset}/{s}" if many else s for s in asserting_systems(path)}
        dists.append(_prefixed(frame, "system", dataset, many))
        inputs_files.append(path)
        unverdicted = read_dropped(path)  # rows the ingest left out for want of a verdict
        gone = vanished_systems([unverdicted] if unverdicted else [], traced[dataset])
        gone_line = vanished_line(gone, traced[dataset])
        if gone_line:  # a system of the input with no row: the tables showed the others alone
            assumed.append((f"Systems ({dataset})" if many else "Systems", gone_line))
        if unverdicted is not None:
            named = {f"{dataset}/{k}" if many else k: n for k, n in unverdicted.by_system.items()}
            dropped.append(replace(unverdicted, by_system=named))

    per_passage, per_trace, stages = [], [], {"retrieval": 0, "verification": 0}
    attributed_rows: list[pd.DataFrame] = []
    refs: dict[tuple[str, int, str], str] = {}  # codebook -> the first run citing it
    judges: set[str] = set()
    endpoints: dict[str, str] = {}  # judge -> where it was called (the run box says)
    heuristic = models = False
    cost = 0.0
    unpriced: set[str] = set()  # LLM judges with no price: their runs' cost reads $0 unpriced
    judge_files: list[Path] = []
    # the coded tables' headers now (refused as before the judge runs), their rows below as
    # tallies once the codebook is known (its dimensions are the columns counted)
    coded: list[tuple[Path, list[str], str, str]] = []
    with_rows: dict[str, set[str]] = {}  # the systems each attribution table has rows of
    claimless: dict[str, set[str]] = {}  # ... of which no row has a claim (_uncoded_notes)
    # a disagreement's ids -> its data sets -> its item id there (its text is compared)
    in_sets: dict[tuple[str, ...], dict[str, str]] = {}
    evidence: dict[str, dict[str, set[str]]] = {}  # data set -> system -> evidence sources
    mixed: dict[str, dict[str, Counter[str]]] = {}  # ... -> disagreements per evidence source
    # kept only where two data sets have attribution tables: one data set's held each row's
    # ids (~490 bytes a disagreement, 48 MB at 10x paper scale) to count none shared
    tabled = [n for n in layout.attribution_datasets() if layout.attribution_table(n).exists()]
    for name in layout.attribution_datasets():
        for path, kind in (
            (layout.per_passage(name), "per_passage"),
            (layout.per_trace(name), "per_trace"),
        ):
            if path.exists():
                coded.append((path, _coded_columns(path, kind), kind, name))
                inputs_files.append(path)  # Tables 8-9 come from it: the run box names it
        if layout.attribution_table(name).exists():
            inputs_files.append(layout.attribution_table(name))
            att = _read_table(layout.attribution_table(name), "attribution")
            for stage, n in att["stage"].value_counts().items():
                stages[str(stage)] = stages.get(str(stage), 0) + int(n)
            by_system = att.assign(system=att.get("system", "all"))
            with_rows[name] = {str(v) for v in att["system"]} if "system" in att else {""}
            if "system" in att and "reason" in att:  # systems with claimless disagreements only
                has_claims = att.loc[att["reason"] != NO_CLAIMS, "system"].astype(str)
                claimless[name] = with_rows[name] - set(has_claims)
            if "system" in att and "evidence_source" in att:  # Table 8's provided columns
                pairs = att[["system", "evidence_source"]].astype(str).value_counts()
                for key, n in pairs.items():
                    system, source = (str(part) for part in cast(tuple[object, object], key))
                    evidence.setdefault(name, {}).setdefault(system, set()).update(
                        source.split("+")
                    )
                    mixed.setdefault(name, {}).setdefault(system, Counter())[source] += int(n)
            # kind too: a pilot inside the full set repeats its label and verdict (the same FN or
            # FP); ids reused by two data sets (q1, s1 in each) with an FN in one and an FP in
            # the other were said as "overlapping data sets?"
            keys = ("system", "question_id", "sentence_id", "claim_id", "kind")
            ids = [c for c in keys if c in att]
            many_sets = ids and len(tabled) > 1
            cols = [*ids, "item_id"] if "item_id" in att else ids
            cells: tuple[str, ...]
            for cells in (
                att[cols].astype(str).itertuples(index=False, name=None) if many_sets else ()
            ):
                key, item = (cells[:-1], cells[-1]) if len(cols) > len(ids) else (cells, "")
                in_sets.setdefault(key, {})[name] = item
            attributed_rows.append(_prefixed(by_system[["system", "stage"]], "system", name, many))
            for line in _gold_mix(att, layout.attribution(name)):
                assumed.append(("Attribution", f"Assumed: {f'{name}: ' if many else ''}{line}"))
            # the whole table (its reasons' text: ~35 MB at 10x paper scale) was held through
            # the reads of Tables 8-9 below
            del att, by_system
            skipped = _rank_gaps(layout, name)
            if skipped:  # Table 8's passages cut at the study's top_k, fewer for some claims
                assumed.append(("Attribution", f"Assumed: {f'{name}: ' if many else ''}{skipped}"))
    panel_rows: list[dict[str, Any]] = []
    rule_rows: list[dict[str, Any]] = []
    quote_rows: list[dict[str, Any]] = []
    for name in layout.judge_datasets():
        for kind in JUDGE_KINDS:
            folder = layout.judge_current(name, kind)  # a re-code run once complete
            panel_rows += _panel_rows(folder, f"{name}/{kind}")
            rule_rows += _panel_rule_rows(folder, f"{name}/{kind}")
            ann_path = folder / "annotations.jsonl"
            seen = _judge_run_facts(ann_path) if ann_path.exists() else None
            quote_rows += _quote_rows(folder, f"{name}/{kind}", seen)
            if (folder / "panel.json").is_file():  # its consensus is what a review answers
                judge_files.append(folder)
            if seen is not None:
                judge_files.append(ann_path)
                _add_refs(refs, seen.refs, folder, root)
                judges |= seen.coders
                heuristic |= seen.heuristic
                models |= seen.models
            else:  # a panel (no annotations of its own): its members' codebook
                _add_refs(refs, _run_refs(folder), folder, root)
            # each summary through its contract (a count edited to -5 was shown as it was)
            summary = read_summary(folder)
            if summary is not None:
                cost += summary.journal_cost_usd
            members = [p.parent for p in sorted(folder.glob("panel/*/summary.json"))]
            member_summaries = [read_summary(m) for m in members]
            if summary is None:  # a panel: its judges and their cost are its members'
                # (the run box named no judge, no cost and, offline, no heuristic baseline)
                for each in filter(None, member_summaries):
                    judges.add(each.judge)
                    heuristic |= each.coder_kind is CoderKind.HEURISTIC
                    models |= each.coder_kind is CoderKind.LLM
                    cost += each.journal_cost_usd
            for run_summary in [summary, *member_summaries]:
                _endpoint(run_summary, endpoints)
                if run_summary is not None and not run_summary.price_known:
                    unpriced.add(run_summary.judge)

    # --codebook, else the judge runs' (not the study file's: after a bump, before the run
    # re-codes, `report STUDY` was refused naming the run's v1 as 'neither in the study
    # folder nor bundled'), else the study file's
    cb = _find_codebook(refs, codebook, root)
    codebook_notes: list[str] = []
    if cb is None:
        cb = _study_file_codebook(layout)
        if coded:
            # coded tables but no judge run naming their codebook (a table brought from
            # elsewhere): Tables 8-9 were left out without a word; read them under the
            # study's codebook, else the bundled one, and say so
            which = "the study's" if cb is not None else "the bundled"
            cb = cb or codebooks.bundled()
            shown = ", ".join(path.relative_to(root).as_posix() for path, _, _, _ in coded)
            codebook_notes.append(
                f"Assumed: {shown} coded under {which} codebook {cb.name} v{cb.version} (no "
                "judge annotations name one); pass --codebook if they were coded under another"
            )
    prefixes, pooled, pools = _coded_groups(layout, layout.datasets(), traced)
    # Table 8: each (retriever, unit) once within a data set, or the data sets pooled into
    # one column (a passage retrieved for several systems' claims counted once per system:
    # 3 systems x 8 questions read bm25 n=81 over 69 distinct units)
    once: dict[str | None, tuple[FirstUnits, list[str]]] = {}
    no_ids: list[str] = []  # tables without unit ids (made by hand): their rows count each
    coded_systems: dict[tuple[str, str], set[str]] = {}  # (data set, kind) -> systems
    # Table 8's columns of provided evidence (not retrieved) -> the systems they pool whose
    # evidence was given, those whose was retrieved (a retriever name both share), and those
    # given it for some claims, retrieved for others (said with their counts)
    provided: dict[str, _Given] = {}
    for path, columns, kind, name in coded:
        if cb is None:  # not so: the bundled one at the least (above)
            break
        prefix = prefixes.get(name, name if many else None)
        repeats: FirstUnits | None = None
        if kind == "per_passage" and "unit_id" in columns:
            repeats, read = once.setdefault(prefix, (FirstUnits(), []))
            read.append(path.relative_to(root).as_posix())
        elif kind == "per_passage":
            no_ids.append(path.relative_to(root).as_posix())
        tally = _coded_tally(path, kind, columns, cb, repeats)
        _check_codes(path, tally, kind, cb)
        if "system" in tally:  # the systems it counts: one with disagreements and none is said
            coded_systems[(name, kind)] = {str(s) for s in tally["system"].dropna()}
        if kind == "per_passage":
            tally = _prefixed(tally, "retriever", prefix or "", prefix is not None)
            per_passage.append(tally)
            judged = {s: e - CITING_SOURCES for s, e in evidence.get(name, {}).items()}
            given = {s for s, e in judged.items() if EvidenceSource.PROVIDED in e}
            if given and "system" in tally:  # the columns holding evidence given with the item
                systems = tally["system"].astype(str)
                for column in set(map(str, tally.loc[systems.isin(given), "retriever"])):
                    group = provided.setdefault(column, _Given())
                    for system in set(systems[tally["retriever"].astype(str) == column]):
                        if system not in given:
                            group.retrieved.add(system)
                        elif judged[system] == {EvidenceSource.PROVIDED.value}:
                            group.given.add(system)
                        else:  # given for some claims, retrieved for others
                            group.partly[system] = _given_share(mixed[name][system])
        else:
            per_trace.append(_prefixed(tally, "verifier", prefix or "", prefix is not None))
    pp_all = pd.concat(per_passage, ignore_index=True) if per_passage else None
    differ = [text for repeats, read in once.values() if (text := repeats.note(listed(read)))]
    once.clear()  # each unit's key (16 bytes, 34 MB at 10x paper scale): not held past here
    if pp_all is not None and REPEAT in pp_all:
        pp_all[REPEAT] = pp_all[REPEAT].fillna(False).astype(bool)
        if no_ids:  # the caption says distinct units: these tables' rows are not
            differ.append(
                f"{listed(no_ids)}: no unit_id column, so a passage retrieved for several "
                "systems' claims cannot be told apart there: its rows count one each"
            )
    assumed += [("Table 8", f"Assumed: {text}") for text in differ]
    pt_all = pd.concat(per_trace, ignore_index=True) if per_trace else None
    attributed = {s: n for s, n in stages.items() if n}
    error_codes = {
        part: counts
        for part, counts in (
            ("retrieval", _error_counts(pp_all, cb, "retrieval")),
            ("verification", _error_counts(pt_all, cb, "verification")),
        )
        if counts
    }
    stage_table = _stage_table(attributed_rows, list(attributed))

    agreement_rows: list[dict[str, Any]] = []
    # what `agree` assumed of each file (the raters, a column left out as a consensus, units
    # rated once...): its first line, kept in every row's notes, never reached the report
    agreement_notes: list[str] = []
    planned = _study_agreements(layout)  # a study step's inputs are the run's to check
    for path in layout.agreement_files():
        rows = _records(read_json(path), path, ())
        if path.stem not in planned:
            agreement_notes += _check_agreement_inputs(path, rows)
        for row in rows:
            subject = _agreement_subject(row, path.stem)
            agreement_rows.append({"source": f"agreement/{path.name}", "subject": subject, **row})
            row_notes = row.get("notes")
            for line in row_notes if isinstance(row_notes, list) else []:
                shown = f"agreement/{path.name}: {line}"
                if str(line).startswith("Assumed") and shown not in agreement_notes:
                    agreement_notes.append(shown)
        inputs_files.append(path)
    agreement = pd.DataFrame(agreement_rows) if agreement_rows else None
    if agreement is not None:
        # the intervals' level: `agree --confidence 0.5` was captioned 95%
        keep = [
            c for c in ("source", "subject", *AGREEMENT_COLUMNS, "confidence") if c in agreement
        ]
        agreement = agreement[keep]

    # Human review (e.g. `failcodes labelstudio pull -o RUN_DIR/review/NAME.jsonl`) against
    # the judge: agreement per dimension and per code, and a column in the codebook table.
    per_code: dict[str, str] = {}
    review_files = layout.review_files()
    if review_files and cb is None:  # the reviews were left out of every table, unsaid
        shown = listed([str(p.relative_to(root)) for p in review_files])
        assumed.append(
            (
                "Reviews",
                f"{shown}: not read: the folder holds no judge annotations (judge/<data set>/"
                "retrieval or reasoning) to compare the reviews with, nor coded tables naming "
                "their codebook",
            )
        )
    versions = _review_versions(layout, review_files, cb)
    humans = versions.reviews if versions is not None else []
    unchecked = _names_unchecked(humans)  # names 85524ae cannot match (no lead time)
    if unchecked:
        assumed.append(("Reviewers", unchecked))
    reopen = _reopen(layout, versions) if versions is not None else []
    inputs_files.extend(review_files)
    shares: list[CorrectedShare] = []  # every corrected cell, typed (ReportResult.corrected)
    corrected, corrected_attribution, review_notes, skews = _corrected(
        root,
        humans,
        versions.stale if versions is not None else 0,
        cb,
        inputs_files,
        versions.widened if versions is not None else {},
        shares,
    )
    if humans and cb is not None:
        # a plan's targeted units were picked where the judge is likely wrong (panel splits,
        # judge vs cascade): counted in human vs judge agreement they pulled a judge whose
        # random-sample kappa is 1.00 to 0.33 (10 targeted of 30), said nowhere
        targeted, outside, picked = _not_drawn(root, humans)
        left_out = targeted | outside | picked
        if targeted:
            agreement_notes.append(_targeted_text(len(targeted)))
        if outside:
            agreement_notes.append(_outside_agreement_text(len(outside)))
        if picked:
            agreement_notes.append(
                f"{len(picked)} reviewed unit(s) of a plan that is not its seed's draw (written "
                "or edited by hand: the corrected shares' note says which) are left out of "
                "human vs judge agreement: over them it is not the judge's agreement on the "
                "units it codes"
            )
        uneven = _unequal_rates(root, humans)
        agreement_notes.extend(text for _, text in uneven)
        agreement_notes.extend(_unplanned(root, humans, judge_files, cb))
        # reviews made with the judge's codes shown were said under the corrected shares only,
        # where human vs judge agreement leans toward the judge first
        compared = [a for a in humans if a.unit_id not in left_out]
        preselected = sum(a.judge_shown for a in compared)
        if preselected:
            agreement_notes.append(
                _judged_text(preselected, len(compared))[2:].replace(
                    "the human and corrected shares", "human vs judge agreement"
                )
            )
        # reviews skewed toward some of the drawn units (those the judge flagged uncertain):
        # said under the corrected shares only, where human vs judge agreement is over them
        for part, texts in sorted(skews.items(), key=lambda kv: kv[0].value):
            agreement_notes.extend(f"{t}; on {part.value}, {SKEWED_AGREEMENT}" for t in texts)
        review_rows, per_code, unjudged, other, unanswered = _review_agreement(
            compared,
            judge_files,
            cb,
            versions.widened if versions is not None else {},
            {d.id for part in skews for d in cb.part(part).dimensions},
            {d.id for part, _ in uneven for d in cb.part(part).dimensions},
        )
        if other:  # on the first line too: the anchoring the captions name is another judge's
            agreement_notes.append(other)
            assumed.append(("Reviewers", f"Assumed: {other}"))
        people = _by_coder(compared)
        settling = [c for c in people if settles(c)]
        if settling and len(people) > 1:  # all of them, and how to read one as a reviewer
            assumed.append(  # on stderr and in the run box too: it moves the numbers
                (
                    "Reviewers",
                    f"Assumed: reviewer {', '.join(settling)} read as an adjudication (named "
                    "like a consensus): its review counted where a unit has several, and left "
                    "out of reviewer vs reviewer agreement; a reviewer? name it otherwise "
                    "(labelstudio import --user ID=NAME, or the coder field of its review file)",
                )
            )
            agreement_notes.append(
                f"Reviewer {', '.join(settling)} {'is' if len(settling) == 1 else 'are'} named "
                "like a consensus (it settles the others' disagreements): compared with the "
                "judge, and left out of reviewer vs reviewer agreement, where it would raise "
                "the reviewers' own (a reviewer? name it otherwise: labelstudio import --user "
                "ID=NAME, or the coder field of its review file)"
            )
        people = {c: anns for c, anns in people.items() if not settles(c)}
        if len(people) > 1 and not _shared(people):  # e.g. one reviewer per system
            agreement_notes.append(
                f"Reviewers {', '.join(people)} reviewed no unit in common: no reviewer vs "
                "reviewer agreement, and each one's rows vs the judge are over its own units "
                "only (a reviewer given one system's units measures the judge on that system)"
            )
        if unanswered:  # the judge's failures were the reviewed units it left out, unsaid
            agreement_notes.append(
                f"{len(unanswered)} reviewed unit(s) the judge left unscored (no valid answer, "
                f"or a panel tie; first: {unanswered[0]}): not in human vs judge agreement, "
                "which is over the units the judge answered"
            )
        if unjudged:  # counted nowhere: tasks of an earlier failcodes' ids match no unit now
            agreement_notes.append(
                f"{len(unjudged)} reviewed unit(s) no judge run coded (first: {unjudged[0]}): "
                "not in human vs judge agreement (reviews of other units, or of tasks exported "
                "by an earlier failcodes, whose unit ids held less?)"
            )
        if review_rows:
            frame = pd.DataFrame(review_rows)
            agreement = frame if agreement is None else pd.concat([agreement, frame])
    if versions is not None:
        review_notes["reviews"] = _version_notes(versions)
    for part in (UnitKind.RETRIEVAL, UnitKind.VERIFICATION):  # said under Tables 8 and 9
        review_notes.setdefault(corrected_notes_key(part), []).extend(pooled)
    review_notes[corrected_notes_key(UnitKind.RETRIEVAL)].extend(differ)

    accumulation, saturation_notes = _saturation(layout.saturation_dir)

    comparison_rows: list[dict[str, Any]] = []
    comparison_notes: list[str] = []
    for path in layout.comparison_files():
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object with a 'tests' list", path=path)
        _check_comparison_inputs(layout, path, data)
        if isinstance(data.get("assumed"), str):  # compare's first line: e.g. question as unit
            comparison_notes.append(f"{path.name}: {data['assumed']}")
        for t in _records(data.get("tests", []), path, ("test", "comparison"), "tests"):
            comparison_rows.append(
                {
                    "data": path.stem,
                    # `compare --format json` under several mappings: each test once per
                    # mapping (the rows of two mappings were shown alike, values apart)
                    "mapping": t.get("mapping"),
                    "test": t["test"],
                    "comparison": t["comparison"],
                    "statistic": t.get("statistic"),
                    "p": p_text(t.get("p_value")),
                    "p (Holm)": p_text(t.get("p_holm")),
                    "effect": None
                    if t.get("effect") is None
                    else f"{t.get('effect_name')}={t['effect']:.3f}",
                    # each test's units and their count (files before 'unit' have none)
                    "unit": t.get("unit"),
                    "n": t.get("n"),
                }
            )
        inputs_files.append(path)

    shared = _shared_disagreements(layout, in_sets)  # a pilot inside the full set
    meta = ReportMeta(
        title=f"failcodes report: {root.name}",
        created=report_time(),
        codebook=f"{cb.name} v{cb.version} (sha256 {cb.hash})" if cb else None,
        judge=", ".join(sorted(judges)) or None,
        judge_is_heuristic=heuristic,
        judge_with_models=heuristic and models,
        cost=_cost_text(cost, unpriced) if judges else None,
        # each once (a review plan's coded table is read again for the corrected tables)
        inputs=[(str(p.relative_to(root)), file_sha256(p)) for p in dict.fromkeys(inputs_files)],
        extra=assumed
        + (
            [
                (
                    "Attribution",
                    ", ".join(f"{s}: {n}" for s, n in stages.items() if n)
                    + shared_note(shared, "summed over data sets, counting"),
                )
            ]
            if any(stages.values())
            else []
        )
        + (
            [("Judge endpoint", "; ".join(f"{j}: {u}" for j, u in sorted(endpoints.items())))]
            if endpoints
            else []
        ),
    )
    caption, levels = _attribution_caption(layout, with_rows, metric_levels)
    cut = _top_k_caption(
        {n: _attribute_notes(p.parent) for p, _, k, n in coded if k == "per_passage"}
    ) + _provided_caption(provided)
    closed = _closed_book_notes(evidence)
    return ReportInputs(
        title=meta.title,
        meta=meta,
        metrics=metrics,
        verdict_distribution=_compact(pd.concat(dists, ignore_index=True)) if dists else None,
        codebook=cb,
        per_passage=pp_all,
        per_trace=pt_all,
        attribution=attributed or None,
        error_codes=error_codes,
        attribution_table=stage_table if not stage_table.empty else None,
        attribution_caption=caption,
        passages_caption=cut,
        attribution_levels=levels,
        asserting=asserting,
        pooled_datasets=pools,
        attribution_shared=shared,
        dropped=dropped,
        agreement=agreement,
        panel_agreement=pd.DataFrame(panel_rows) if panel_rows else None,
        panel_rules=pd.DataFrame(rule_rows) if rule_rows else None,
        quote_checks=pd.DataFrame(quote_rows) if quote_rows else None,
        corrected=corrected,
        corrected_shares=shares,
        corrected_attribution=corrected_attribution,
        accumulation=accumulation,
        comparisons=_comparisons_frame(comparison_rows),
        codebook_table=None
        if cb is None
        else codebook_frame(
            cb,
            frequencies=_frequencies([t for t in (pp_all, pt_all) if t is not None], cb) or None,
            agreement=per_code or None,
        ),
        notes={
            "assumed": [
                text
                for key, text in assumed
                if key in ("Reviewers", "Reviews", "Table 8", "Attribution")
            ],
            "saturation": saturation_notes,
            "codebook": codebook_notes,
            "agreement": agreement_notes,
            "comparisons": comparison_notes,
            "metrics": _no_disagreement_notes(layout, traced, with_rows, no_label),
            "attribution": _uncoded_notes(coded_systems, with_rows, claimless, evidence)
            + (closed if pp_all is None else []),
            # a system partly closed-book: said of Table 8's columns, none without a Table 8
            "retrieval_quality": closed + _part_closed_notes(mixed) if pp_all is not None else [],
            **review_notes,
        },
        reopen=reopen,
    )


def _check_comparison_inputs(layout: StudyLayout, path: Path, data: dict[str, Any]) -> None:
    """Refuse ``comparisons/<ds>.json`` computed from other traces or labels than ``data/`` holds.

    Not a study step, it stays as it was when a label is corrected and ``failcodes run`` brings
    the rest up to date: its F1 difference (+0.333) was shown beside metrics that make it
    -0.333, exit 0. ``compare --format json`` and the demo record the digests of what they read.
    """
    recorded = _digests(data)
    ds = path.stem
    now = [p for p in (layout.traces(ds), layout.labels(ds)) if p.is_file()]
    changed = [str(p.relative_to(layout.root)) for p in _unlike(now, recorded or {})]
    if not changed:
        return
    why = (
        f"was computed from other data than {listed(changed)} holds now (a label corrected?)"
        if recorded
        else f"records no digest of the traces and labels it was computed from (written by an "
        f"older failcodes, or by hand), so it cannot be checked against {listed(changed)}"
    )
    raise InputError(
        f"{why}: the report would show its tests beside the metrics of the data as it is; "
        f"compute it again (failcodes compare --traces {layout.traces(ds)} --labels "
        f"{layout.labels(ds)} --format json > {path}), or delete it",
        path=path,
    )


def _digests(record: object) -> dict[str, str] | None:
    """The ``sha256`` ({path: digest} of what it read) a saved result records; None: none."""
    found = record.get("sha256") if isinstance(record, dict) else None
    return found if isinstance(found, dict) else None


def _unlike(files: Iterable[Path], recorded: Mapping[str, str]) -> list[Path]:
    """The files whose bytes are none of those ``recorded``."""
    return [p for p in files if file_sha256(p) not in recorded.values()]


def _rank_gaps(layout: StudyLayout, name: str) -> str | None:
    """Claims of a data set's disagreements whose ranks skip within the study's ``top_k``.

    ``attribute`` says it on its first line (:class:`~failcodes.attribution.RankGaps`), which
    the report did not: Table 8 and Figure 1 read the top-k passages of each claim as k,
    where a claim ranked 1, 3, 5 had one passage judged under ``top_k = 2``. None outside a
    study, without a ``top_k`` or a disagreements file.

    The line is ``attribute``'s own, read from its ``notes.json``
    (:class:`~failcodes.attribution.AttributeNotes`) when that attributed this data set's
    disagreements under the study's ``top_k``; an attribution without one (an earlier
    failcodes'), or of another file or ``top_k``, is counted again from the disagreements.
    """
    from failcodes.attribution import RankGaps
    from failcodes.disagreementio import iter_claim_ranks

    path = layout.disagreements(name)
    if not layout.study_file.is_file():
        return None
    from failcodes.study.config import load_study

    try:
        top_k = load_study(layout.root).judge.top_k
    except FailcodesError:  # said where the study file is read
        return None
    if top_k is None:
        return None
    folder = layout.attribution(name)
    notes = _attribute_notes(folder)
    same = notes is not None and (folder / notes.source).resolve() == path.resolve()
    if notes is not None and same and notes.top_k == top_k:  # attribute's own count
        return notes.rank_gaps
    if not path.is_file():
        return None
    gaps = RankGaps(top_k)
    for claim, ranks in iter_claim_ranks(path):
        gaps.add_ranks(claim, ranks)
    return gaps.line()


def _top_k_caption(notes: Mapping[str, AttributeNotes | None]) -> str:
    """Table 8's passages cut at ``top_k``, in its caption's words ('' when none was cut).

    Table 8 counts the units the judge coded, each claim's top ``k`` passages under ``[judge]
    top_k`` (``attribute --top-k``): with ``top_k = 1`` and two passages a claim it read n=2
    over 4 passages retrieved, captioned "units retrieved for the disagreements' claims".
    """
    cuts = {name: n.top_k for name, n in notes.items() if n is not None}
    if not any(k is not None for k in cuts.values()):
        return ""
    if len(set(cuts.values())) == 1:
        k = next(iter(cuts.values()))
        return (
            f"; each claim's top {k} passage(s) alone (top_k = {k}): a passage ranked below "
            "was not judged and is not counted"
        )
    return (
        "; each claim's top k passages alone (top_k per data set: "
        + ", ".join(f"{name} {'all' if k is None else k}" for name, k in sorted(cuts.items()))
        + "): a passage ranked below was not judged and is not counted"
    )


def _attribute_notes(folder: Path) -> AttributeNotes | None:
    """``attribute``'s ``notes.json`` in ``folder`` (None: none there, an earlier failcodes').

    One that does not validate is one line naming it and its field.
    """
    from failcodes.tableio import read_model_if_exists

    what = "not attribute's notes (failcodes attribute writes it; attribute again)"
    return read_model_if_exists(folder / ATTRIBUTION_NOTES, AttributeNotes, what=what)


def _study_agreements(layout: StudyLayout) -> set[str]:
    """The ``[[agreements]]`` names of the study file (none outside a study, or unloadable)."""
    if not layout.study_file.is_file():
        return set()
    from failcodes.study.config import load_study

    with contextlib.suppress(FailcodesError):  # said where the study file is read
        return {a.name for a in load_study(layout.root).agreements}
    return set()


def _check_agreement_inputs(path: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Refuse ``agreement/<name>.json`` computed from a file that has changed since.

    Written by ``failcodes agree -o`` (no study step, so ``failcodes run`` leaves it), it
    stayed when a rating was corrected: Cohen 0.600 shown where the ratings now give 0.800,
    exit 0. ``agree`` records the digest of each file it read and the command; a file not
    there now cannot be checked, which is said (the lines returned). A file inside the study
    is recorded from the study's root (``path``'s folder's parent): checked where it moved.
    """
    if not rows:
        return []
    recorded = _digests(rows[0])
    root = path.parent.parent
    command = rows[0].get("command") or "failcodes agree FILE ..."
    where = f" in {root}" if recorded and any(not Path(p).is_absolute() for p in recorded) else ""
    again = f"compute it again{where} ({command} -o {path}), or delete it"
    if recorded is None:
        raise InputError(
            "records no digest of the file it was computed from (written by an older "
            f"failcodes, or by hand), so it cannot be checked against that file: {again}",
            path=path,
        )
    changed = [p for p in recorded if (root / p).is_file() and _unlike([root / p], recorded)]
    if changed:
        raise InputError(
            f"was computed from {listed(changed)} as it was then, changed since (a rating "
            f"corrected?): the report would show the old agreement; {again}",
            path=path,
        )
    gone = [p for p in recorded if not (root / p).is_file()]
    return [f"agreement/{path.name}: computed from {p}, not there now: not checked" for p in gone]


def _comparisons_frame(rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The comparisons table; its mapping, unit and n columns only where a file gives them."""
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    return frame.drop(columns=[c for c in ("mapping", "unit", "n") if frame[c].isna().all()])


def _attribution_caption(
    layout: StudyLayout, with_rows: Mapping[str, object], metric_levels: Mapping[str, set[str]]
) -> tuple[str, set[str]]:
    """What the attribution summary's disagreements are: their error mapping; their levels.

    The metrics tables show every mapping of ``[metrics]``; the disagreements attributed are
    one mapping's (``[disagreements]``), named nowhere. The levels (``sentence``, ``claim``)
    word Tables 8-9's captions (:data:`failcodes.report.build.ROWS_CAPTION`). Claims over
    metrics that count sentences (``[disagreements] level = "claim"`` alone) say their label
    rule, which the run box's Data line, the metrics', does not: each claim of a sentence
    labelled an error was a disagreement where it was not flagged (sentence labels alone:
    A 3 claims where its sentences give 1, unsaid).
    """
    mappings = {}
    levels: set[str] = set()
    for name in with_rows:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, StopIteration):
            with layout.disagreements(name).open("rb") as handle:
                first = json.loads(next(line for line in handle if line.strip()))
            level = str(first["level"])
            rule = ""
            if level == "claim" and metric_levels.get(name) == {"sentence"}:
                rule = (
                    ": a claim's own label, else its sentence's; the P/R/F1 table counts sentences"
                )
            mappings[name] = f"{first['mapping']} ({level} level{rule})"
            levels.add(level)
    text = ""
    if len(set(mappings.values())) == 1:
        text = f"; error mapping {next(iter(mappings.values()))}"
    elif mappings:
        text = "; error mapping per data set: " + ", ".join(f"{k} {v}" for k, v in mappings.items())
    return text, levels


def _shared_disagreements(
    layout: StudyLayout, in_sets: dict[tuple[str, ...], dict[str, str]]
) -> int:
    """How many disagreements recur in another data set: same system, ids, kind and text.

    Ids alone were counted: two data sets each numbering its questions q1.. and naming its
    system A, with other sentences ("drug q1s1 ..." in one, "pill q1s1 ..." in the other),
    were said to share 3 disagreements "(overlapping data sets?)". The text (the sentence and
    its claims) of the disagreements whose ids recur is read from each data set's
    disagreements file (streamed once, only when some ids recur); one whose text cannot be
    read (the file gone or edited since the attribution) counts as shared, as before.
    """
    repeated = [sets for sets in in_sets.values() if len(sets) > 1]
    wanted: dict[str, set[str]] = {}
    for sets in repeated:
        for name, item in sets.items():
            wanted.setdefault(name, set()).add(item)
    texts = {
        name: _disagreement_texts(layout.disagreements(name), items)
        for name, items in wanted.items()
    }
    shared = 0
    for sets in repeated:
        seen = [texts[name].get(item) for name, item in sets.items()]
        shared += None in seen or len(set(seen)) < len(seen)
    return shared


def _disagreement_texts(path: Path, items: AbstractSet[str]) -> dict[str, object]:
    """The sentence and claim texts of the disagreements ``items`` (ids) of ``path``."""
    from failcodes.columnar import ExactReaderNeededError
    from failcodes.disagreementio import iter_disagreement_records, read_disagreements

    found: dict[str, object] = {}

    def take(records: Iterable[Any]) -> None:
        for rec in records:
            if rec.id in items:
                found[rec.id] = (rec.sentence, tuple(c.claim for c in rec.claims))

    with contextlib.suppress(OSError, FailcodesError):
        try:
            take(iter_disagreement_records(path))
        except ExactReaderNeededError:  # Parquet, or a line the fast reader cannot vouch for
            take(read_disagreements(path))
    return found


def _no_disagreement_notes(
    layout: StudyLayout,
    traced: dict[str, list[str]],
    with_rows: dict[str, set[str]],
    no_label: Mapping[str, set[str]] | None = None,
) -> list[str]:
    """Say which data sets and systems had no disagreement, so nothing of them was coded.

    Without it a data set whose disagreements file is empty had no attribution summary and no
    Tables 8-9 with no word (as if the judge had not been run), and a system with none was
    simply absent from the summary, its "all" row summing the others. A system no label
    applies to (``no_label``: labels of other systems alone) has none because nothing of it
    is scored, which "0 disagreements" alone read as agreeing with every label.
    """
    notes = []
    for dataset, systems in sorted(traced.items()):
        path = layout.disagreements(dataset)
        if not path.exists():
            continue  # not computed yet: nothing to say
        if dataset not in with_rows:
            with path.open("rb") as handle:
                if any(line.strip() for line in handle):
                    continue  # disagreements not attributed yet
            notes.append(
                f"{dataset}: no disagreement between its systems' verdicts and the labels "
                f"({path.relative_to(layout.root).as_posix()} is empty): nothing was judged or "
                "attributed, so it has no attribution summary and no Tables 8-9"
            )
            continue
        none = [s for s in systems if s not in with_rows[dataset]]
        if none and "" not in with_rows[dataset]:  # "": a table without systems
            unscored = sorted(set(none) & (no_label or {}).get(dataset, set()))
            why = (
                f"; no label applies to {', '.join(unscored)}: nothing of "
                f"{'it' if len(unscored) == 1 else 'them'} was scored"
                if unscored
                else ""
            )
            notes.append(
                f"{dataset}: no disagreement for {', '.join(none)}: nothing of "
                f"{'it' if len(none) == 1 else 'them'} was judged, so the attribution summary "
                f"has no row of {'it' if len(none) == 1 else 'them'} (0 disagreements){why}"
            )
    return notes


@dataclass
class _Given:
    """The systems a Table 8 column of provided evidence pools (:func:`_provided_caption`)."""

    given: set[str] = field(default_factory=set)  # evidence provided for every claim
    retrieved: set[str] = field(default_factory=set)  # retrieved (a retriever name shared)
    partly: dict[str, tuple[int, int]] = field(default_factory=dict)  # system -> (given, of)


def _given_share(counts: Counter[str]) -> tuple[int, int]:
    """A system's disagreements with evidence provided, of those with a passage judged."""
    judged = {s: n for s, n in counts.items() if not set(s.split("+")) <= CITING_SOURCES}
    given = sum(n for s, n in judged.items() if EvidenceSource.PROVIDED in s.split("+"))
    return given, sum(judged.values())


def _provided_caption(groups: Mapping[str, _Given]) -> str:
    """Table 8's columns of evidence given with the item, in its caption's words.

    A system whose evidence is ``provided`` (a cited abstract, a fact-check article given to
    the verifier) retrieved nothing: its column counts the passages it was given, which the
    caption called "units retrieved ... per retriever". ``groups``: each such column, the
    systems it pools whose evidence was given, those whose evidence was retrieved (a
    retriever name both share), and those given it for some claims alone: such a column was
    captioned "evidence provided" as a whole (a system given evidence for its q3 claims
    alone had its retriever's column of q1, q2 passages called provided too).
    """
    given = sorted(c for c, g in groups.items() if not g.retrieved and not g.partly)
    text = (
        f"; {', '.join(given)}: evidence provided (given with the item, not retrieved): n "
        "counts the passages given with the disagreements' claims"
        if given
        else ""
    )
    bodies: dict[str, list[str]] = {}  # a clause -> the columns it names
    for column, g in sorted(groups.items()):
        if not g.retrieved and not g.partly:
            continue
        body = "".join(
            [
                f" for {', '.join(sorted(g.given))}" if g.given else "",
                *(
                    f"{',' if g.given or i else ''} for {k} of {system}'s {n} disagreements with "
                    "a judged passage (retrieved for the others)"
                    for i, (system, (k, n)) in enumerate(sorted(g.partly.items()))
                ),
                f", retrieved for {', '.join(sorted(g.retrieved))}" if g.retrieved else "",
                # a partly given system's passages: which column holds the given ones is not
                # known here (per_passage.csv has no evidence column)
                f": n {'may count' if g.partly else 'counts'} both, the passages given and "
                "those retrieved for the disagreements' claims",
            ]
        )
        bodies.setdefault(body, []).append(column)
    for body, columns in bodies.items():
        text += f"; {', '.join(columns)}: evidence provided (given with the item, not retrieved)"
        text += body
    return text


#: How :func:`_part_closed_notes` names a disagreement's evidence that was not retrieved.
_CITING_WORDS = {
    EvidenceSource.NONE.value: "evidence none: closed-book",
    EvidenceSource.POST_HOC.value: "evidence post-hoc: its passages are citations",
}


def _part_closed_notes(mixed: Mapping[str, Mapping[str, Counter[str]]]) -> list[str]:
    """Say which systems have part of their disagreements closed-book (or post-hoc cited).

    A system whose claims are partly closed-book (evidence ``none``: a pipeline that
    retrieves for some claims only) has a Table 8 column of its retrieved claims' units; its
    closed-book disagreements add none to it (and are never blamed on retrieval), which
    nothing on the page said: ``attribute`` says it on its first line alone.
    """
    notes = []
    for dataset, systems in sorted(mixed.items()):
        for system, counts in sorted(systems.items()):
            cites = {s: n for s, n in counts.items() if set(s.split("+")) <= CITING_SOURCES}
            cited, other = sum(cites.values()), sum(counts.values()) - sum(cites.values())
            if cited and other:
                kinds = sorted({k for s in cites for k in s.split("+")})
                what = " or ".join(_CITING_WORDS[k] for k in kinds)
                notes.append(
                    f"{dataset}: {cited} of {system}'s {cited + other} disagreements have no "
                    f"passage judged as retrieved ({what}): Table 8 counts the units of its "
                    f"other {other} alone, and {'that one is' if cited == 1 else 'those are'} "
                    "never blamed on retrieval (docs/attribution.md)"
                )
    return notes


def _closed_book_notes(evidence: Mapping[str, Mapping[str, AbstractSet[str]]]) -> list[str]:
    """Say which systems have no Table 8 column because their evidence was never retrieved.

    A closed-book system (evidence ``none``) or a post-hoc citing one has no passage judged:
    a data set of such systems had no Table 8 column and nothing on the page said why (its
    attribution reasons alone say "closed-book").
    """
    notes = []
    for dataset, systems in sorted(evidence.items()):
        by_source: dict[str, list[str]] = {}
        for system, sources in sorted(systems.items()):
            if sources and sources <= CITING_SOURCES:
                by_source.setdefault("/".join(sorted(sources)), []).append(system)
        for source, named in sorted(by_source.items()):
            what = "closed-book" if source == "none" else "its passages are citations"
            one = len(named) == 1
            it = "it" if one else "them"
            notes.append(
                f"{dataset}: evidence {source} ({what}) for {', '.join(named)}: no passage of "
                f"{it} is judged as retrieved, so Table 8 counts no unit of {it} and has no "
                f"column for {it} ({'its' if one else 'their'} disagreements are never blamed "
                "on retrieval: docs/attribution.md)"
            )
    return notes


def _uncoded_notes(
    coded_systems: Mapping[tuple[str, str], set[str]],
    with_rows: Mapping[str, set[str]],
    claimless: Mapping[str, set[str]],
    evidence: Mapping[str, Mapping[str, AbstractSet[str]]],
) -> list[str]:
    """Say which systems with disagreements have no row in a coded table (Table 8 or 9).

    A system whose disagreements' claims retrieved no passage (every passage cell empty or a
    missing mark) or gave no reasoning has no unit to code: its retriever's (verifier's)
    column was left out of Table 8 (9) without a word, though the attribution summary blames
    its disagreements on retrieval. A system whose every disagreement is a sentence it made no
    claim for (``claimless``: attributed undetermined) is said so: "its claims retrieved
    none" read as if it had claims.
    """
    notes = []
    what = {
        "per_passage": ("a passage", "retrieved none", "Table 8", "retriever"),
        "per_trace": ("a reasoning", "gave none", "Table 9", "verifier"),
    }
    for (dataset, kind), systems in sorted(coded_systems.items()):
        attributed = with_rows.get(dataset, set())
        # a closed-book (or post-hoc) system has no passage to judge: said by _closed_book_notes
        cites = (
            {s for s, e in evidence.get(dataset, {}).items() if e and e <= CITING_SOURCES}
            if kind == "per_passage"
            else set()
        )
        missing = sorted(attributed - systems - cites - {""})
        if not missing or "" in attributed:  # "": a table without systems
            continue
        unit, why, table, group = what[kind]
        none = sorted(claimless.get(dataset, set()) & set(missing))
        some = [m for m in missing if m not in none]
        for named, cause in (
            (some, f"has {unit} coded (its claims {why}, or the judge coded none)"),
            (none, "has a claim (each is a sentence it made no claim for: undetermined)"),
        ):
            if named:
                notes.append(
                    f"{dataset}: no disagreement of {', '.join(named)} {cause}: {table} counts "
                    f"no unit of {'it' if len(named) == 1 else 'them'}, and a {group} no other "
                    "system uses has no column there"
                )
    return notes


def _cost_text(cost: float, unpriced: set[str]) -> str:
    """The run box's cost: a judge run with no price counted $0 (its summary's cost is 0)."""
    if not unpriced:
        return f"${cost:.4f}"
    known = f"; ${cost:.4f} for the others" if cost else ""
    return (
        f"unknown: no price for {', '.join(sorted(unpriced))} (judge with --prices FILE or "
        f"--price-as KEY to price it){known}"
    )


def _endpoint(summary: RunSummary | None, endpoints: dict[str, str]) -> None:
    """Where the judge of a run's ``summary.json`` was called, credentials redacted.

    An LLM judge without a base URL called its vendor's API; with one, a compatible server
    (which a vendor's model name alone would not tell). The offline judge calls nothing.
    """
    from failcodes.redact import redact_url

    if summary is None or summary.coder_kind is not CoderKind.LLM:
        return
    url, provider = summary.base_url, summary.provider
    where = redact_url(url) if url else f"the vendor's API{f' ({provider})' if provider else ''}"
    endpoints[summary.judge] = str(where)


def _panel_rows(folder: Path, run: str) -> list[dict[str, Any]]:
    """The inter-judge agreement rows of a panel run (``panel.json``), if it is one."""
    from failcodes.judge.panelrun import read_panel

    panel = read_panel(folder)
    if panel is None:
        return []
    return [
        {
            "run": run,
            "members": " + ".join(panel.members),
            "dimension": r.dimension,
            "code": r.code or "-",
            "statistic": r.statistic,
            "value": r.value,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            # the report's rows named no method: a panel's intervals are Wald's (no bootstrap),
            # which its "near the ceiling" warning alone implied
            "interval": (r.ci_method or "not recorded") if r.ci_low is not None else "-",
            "n_units": r.n_units,
            "warning": r.warning or r.undefined_reason,
        }
        for r in panel.agreement
    ]


def _panel_rule_rows(folder: Path, run: str) -> list[dict[str, Any]]:
    """How many units of a panel run each consensus rule decided (``panel.json``)."""
    from failcodes.judge.panelrun import read_panel
    from failcodes.panel import decided_counts, uncertain_units

    panel = read_panel(folder)
    if panel is None:
        return []
    counts = panel.decided or decided_counts(panel.units)  # a file from before the rule
    return [
        {
            "run": run,
            "members": len(panel.members),
            "primary judge": panel.primary or "(none)",
            "unanimous": counts.get("unanimous", 0),
            "majority": counts.get("majority", 0),
            "tie, primary's code": counts.get("primary", 0),
            "undecided": counts.get("undecided", 0),
            # a consensus code its member doubted read as certain (a file before: 0)
            "on a doubted code": len(uncertain_units(panel.units)),
            "warning": " ".join(panel.warnings) or None,
        }
    ]


def _quote_rows(folder: Path, run: str, seen: _RunFacts | None) -> list[dict[str, Any]]:
    """Per judge of a run (each panel member, or the run's judge): per-dimension quote checks.

    ``seen``: what its ``annotations.jsonl`` holds (None: there is none).
    """
    from failcodes.judge.panelrun import read_panel

    panel = read_panel(folder)
    if panel is not None:
        shares = panel.quotes
    elif seen is not None:
        shares = seen.quotes
    else:
        return []
    return [
        {
            "run": run,
            "judge": q.coder,
            "dimensions coded": q.dimensions_coded,
            "quoted": q.quoted,
            "quote found": q.verified,
            "share verified": None if q.share_verified is None else round(q.share_verified, 3),
        }
        for q in shares
    ]


CorrectedAttribution = list[tuple[str, pd.DataFrame, pd.DataFrame]]


def _corrected(
    root: Path,
    humans: list[Annotation],
    stale_reviews: int,
    cb: Codebook | None,
    inputs_files: list[Path],
    widened: Mapping[tuple[str, object, str], tuple[str, ...]],
    shares: list[CorrectedShare],
) -> tuple[
    dict[UnitKind, list[tuple[str, pd.DataFrame]]],
    CorrectedAttribution,
    dict[str, list[str]],
    dict[UnitKind, list[str]],
]:
    """Corrected Tables 8-9 (and Figure 1) for each review plan with pulled reviews.

    A retrieval plan next to an ``attribution.jsonl`` also corrects the attribution
    (:func:`_corrected_attribution`).

    Also one note per plan that cannot correct honestly, keyed by :func:`corrected_notes_key`:
    a stale plan (its coded table changed since it was drawn, e.g. by ``failcodes recode``
    after a codebook bump) is skipped with the exact command that redraws it. ``humans`` are
    the reviews on the coded table's codebook version (made under it, or migrated to it,
    :mod:`failcodes.reviewversions`); the ``stale`` others are left out, said in a note.
    Last, per part, each plan's :func:`review_skew` (``Plan 'p': ...``): human vs judge
    agreement is over the same reviews.
    """
    plan_files = sorted(plans_dir(root).glob("*.json"))
    notes: dict[str, list[str]] = {}
    skews: dict[UnitKind, list[str]] = {}
    attributions: CorrectedAttribution = []
    if not plan_files or not (humans or stale_reviews) or cb is None:
        return {}, attributions, notes, skews
    current = [a for a in humans if (a.codebook.name, a.codebook.version) == (cb.name, cb.version)]
    out: dict[UnitKind, list[tuple[str, pd.DataFrame]]] = {}
    plans = [(path, read_plan(path)) for path in plan_files]
    # reviews of units no plan of their part holds (a reviewer coded extra units by hand):
    # never in the corrected shares (not a random sample); said once per part, as
    # `review status` says them
    outside_ids = {
        part: human_codes(current, part).keys()
        - set().union(*(p.estimation_ids() | p.targeted_ids() for _, p in plans if p.part is part))
        for part in {p.part for _, p in plans}
    }
    outside = {part: len(ids) for part, ids in outside_ids.items()}
    # of them, units of no plan's data at all (another study's or run's review file): they
    # read as units of this study picked by hand
    foreign = {
        part: len(ids - set().union(*(p.unit_strata.keys() for _, p in plans if p.part is part)))
        for part, ids in outside_ids.items()
    }
    for part, count in sorted(outside.items(), key=lambda kv: kv[0].value):
        if count:
            notes.setdefault(corrected_notes_key(part), []).append(
                _outside_text(count, foreign[part])
            )
    for path, plan in plans:
        source = plan_source(plan, root, path)
        if not source.is_file():
            raise InputError(f"the plan's coded table {plan.source} is missing", path=path)
        why = stale_reason(plan, file_sha256(source)) or splits_reason(
            plan, _panel_splits(root, plan)
        )
        coded = read_frame(source) if why is None else None
        if coded is not None:
            why = draw_reason(plan, coded)
        if why is not None or coded is None:
            notes.setdefault(corrected_notes_key(plan.part), []).append(
                f"{why}; redraw it with: {redraw_command(plan, str(root))}"
            )
            continue
        reviews = human_codes(current, plan.part)
        progress = match_reviews(plan, reviews)
        if progress.estimation_reviewed == 0:
            continue
        repeated, differ, coders = repeated_reviews(current, plan.part, plan.estimation_ids())
        # an adjudicated review beside the reviewers' own counts where it is (human_codes)
        settling = [f"{c}'s (named like a consensus) where it has one, else " for c in coders]
        which = next((s for c, s in zip(coders, settling, strict=True) if settles(c)), "")
        # (a dimension the first review left without a code: the next review's, human_codes)
        which += "the first coder by name (a dimension it left empty: the next coder's code)"
        if repeated:  # double coding: one review per unit enters the estimates; say which
            notes.setdefault(corrected_notes_key(plan.part), []).append(
                f"Assumed: {repeated} unit(s) of plan {plan.name!r} reviewed more than once "
                f"({', '.join(coders)}; {differ} with different codes): the corrected shares "
                f"count one review per unit, {which}, and leave the others out"
            )
        # reviews migrated from a version where a step took one code (v1 -> v2): a
        # co-occurring code is missing from them, so the step's shares may undercount
        migrated = {
            unit: widened[(unit, plan.part, ann.coder)]
            for unit, ann in reviews.items()
            if (unit, plan.part, ann.coder) in widened
        }
        sampled = [migrated[unit] for unit in plan.estimation_ids() & migrated.keys()]
        steps = sorted({step for taken in sampled for step in taken})
        narrow = len(sampled)
        if narrow:
            notes.setdefault(corrected_notes_key(plan.part), []).append(
                f"Assumed: {narrow} review(s) of plan {plan.name!r} were migrated from an "
                f"earlier codebook version; {_widened_text(steps, 'that version', cb.version)}"
            )
        rows = corrected_rows(coded, plan, reviews, cb.part(plan.part), narrow=migrated)
        if prefix := _row_prefix(root, plan):  # 'bm25' of which data set? as Table 8 names it
            for row in rows:
                row["system"] = f"{prefix}{row['system']}"
        by = GROUP_COLUMN[plan.part]
        missing = progress.estimation_planned - progress.estimation_reviewed
        # drawn units a reviewer answered without codes (skipped, not assessable): "not yet"
        # hid that the reviewer had looked and given up, which is not missing at random
        unscored = len(
            {a.unit_id for a in current if a.unit_kind is plan.part}
            & plan.estimation_ids() - reviews.keys()
        )
        skew = review_skew(coded, plan, set(reviews), judge_doubts(root, plan)) if missing else None
        if skew is not None:  # not missing at random: the shares lean toward the reviewed
            notes.setdefault(corrected_notes_key(plan.part), []).append(
                f"Plan {plan.name!r}: {skew}"
            )
            skews.setdefault(plan.part, []).append(f"Plan {plan.name!r}: {skew}")
        judge_stratified = StratifyBy.CODE in plan.stratify
        human = "judge-stratified human" if judge_stratified else "human-only"
        # who reviewed: the demo's simulated reviewer read as a person's review, unnamed
        coders = sorted({reviews[u].coder for u in plan.estimation_ids() & reviews.keys()})
        caption = (
            f"Corrected shares (%), plan {plan.name!r}: judge-only, {human} and "
            f"corrected ({CORRECTED_POINT}; {ESTIMAND}) with 95% CIs per {by}, the human codes by "
            f"{', '.join(coders)}; "
            f"{progress.estimation_reviewed} of "
            f"{progress.estimation_planned} sampled units reviewed"
            + (
                f" ({missing - unscored} not yet"
                + (
                    f", {unscored} answered with no code (skipped or not assessable: counted "
                    "as not drawn, which assumes they are missing at random)"
                    if unscored
                    else ", counted as not drawn, which assumes they are missing at random"
                )
                + ")"
                if missing
                else ""
            )
            + (f"; {skew}" if skew is not None else "")
            + (
                f"; {progress.targeted_reviewed} targeted reviews kept out"
                if progress.targeted_reviewed
                else ""
            )
            + (
                f"; {_outside_text(outside[plan.part], foreign[plan.part])}"
                if outside[plan.part]
                else ""
            )
            + (
                f"; {repeated} unit(s) reviewed more than once ({differ} with different "
                f"codes): {which} counted"
                if repeated
                else ""
            )
            + (
                f"; {narrow} review(s) made when {', '.join(steps)} took one code: a "
                "co-occurring code may be missing there (those shares may undercount)"
                if narrow
                else ""
            )
            + _judged_text(
                sum(reviews[u].judge_shown for u in plan.estimation_ids() & reviews.keys()),
                progress.estimation_reviewed,
            )
            + _unplanned_text(root, plan, [p for _, p in plans])
        )
        table = corrected_table(rows, by, judge_stratified=judge_stratified)
        if skew is not None:  # beside every cell: its interval may not cover
            table["note"] = [
                "; ".join(
                    x for x in ("the missing reviews are not missing at random (caption)", n) if x
                )
                for n in table["note"].fillna("")
            ]
        shares.extend(corrected_shares(rows, plan, [str(n) for n in table["note"].fillna("")]))
        out.setdefault(plan.part, []).append((caption + dash_clause(table), table))
        inputs_files.extend([path, source])
        items = source.parent / ATTRIBUTION_ITEMS
        if plan.part is UnitKind.RETRIEVAL and items.is_file():
            attributions.append(_corrected_attribution(plan, source, items, reviews, cb))
            inputs_files.append(items)
    return out, attributions, notes, skews


def _not_drawn(root: Path, humans: Sequence[Annotation]) -> tuple[set[str], set[str], set[str]]:
    """Reviewed units of a planned part that no plan draws at random: targeted, outside, picked.

    All are left out of human vs judge agreement. Targeted units were picked where the judge
    is likely wrong; units outside every plan of their part were picked by a reviewer (a plan's
    random draw is what the agreement speaks for); picked ones are the estimation units of a
    plan that is not its seed's draw (:func:`hand_picked`: 14 units reviewers flagged read
    percent 0.000 for the judge). A part with no plan keeps every review.
    """
    drawn: dict[UnitKind, set[str]] = {}
    aimed: dict[UnitKind, set[str]] = {}
    chosen: dict[UnitKind, set[str]] = {}
    for path in sorted(plans_dir(root).glob("*.json")):
        plan = read_plan(path)
        into = chosen if hand_picked(root, path, plan) else drawn
        into.setdefault(plan.part, set()).update(plan.estimation_ids())
        drawn.setdefault(plan.part, set())
        aimed.setdefault(plan.part, set()).update(plan.targeted_ids())
    targeted: set[str] = set()
    outside: set[str] = set()
    picked: set[str] = set()
    for a in humans:
        if a.unit_kind not in drawn or a.unit_id in drawn[a.unit_kind]:
            continue
        if a.unit_id in chosen.get(a.unit_kind, set()):
            picked.add(a.unit_id)
        else:
            (targeted if a.unit_id in aimed[a.unit_kind] else outside).add(a.unit_id)
    return targeted, outside, picked


def hand_picked(root: Path, path: Path, plan: Any) -> str | None:
    """Why ``plan`` (not stale) is not its seed's draw, with the redraw (None when it is).

    The corrected shares' note (reviewplan.draw_reason); `review status` says it too.
    """
    if plan.drawn_sha256 == draw_digest(plan.seed, plan.estimation_ids()):
        return None
    source = plan_source(plan, root, path)
    if not source.is_file() or stale_reason(plan, file_sha256(source)) is not None:
        return None  # said in the corrected shares' notes
    why = draw_reason(plan, read_frame(source))
    return None if why is None else f"{why}; redraw it with: {redraw_command(plan, str(root))}"


def _unplanned(
    root: Path, humans: Sequence[Annotation], judge_files: Sequence[Path], cb: Codebook
) -> list[str]:
    """One note per part reviewed with no review plan: its units were not drawn at random.

    Human vs judge agreement then speaks for the units reviewed only: alice's review of the 6
    units the judge coded partial_entity (of the 20 it coded) read percent 0.333 beside no
    word, where a plan's units reviewed outside its random draw are left out and said. A part
    whose every unit the judge coded was reviewed (a census) needs no draw: no note.
    """
    planned = {read_plan(p).part for p in plans_dir(root).glob("*.json")}
    out = []
    for part in (UnitKind.RETRIEVAL, UnitKind.VERIFICATION):
        units = {a.unit_id for a in humans if a.unit_kind is part and a.status is Status.SCORED}
        if units and part not in planned and not _census(units, part, judge_files, cb):
            out.append(
                f"no review plan of the {part.value} part: its {len(units)} reviewed unit(s) "
                "were not drawn at random (picked by hand, or the units the judge flagged?), so "
                "human vs judge agreement there, and its interval, is over the units reviewed, "
                "not the units the judge codes (draw them with `failcodes review plan`)"
            )
    return out


def _census(
    units: AbstractSet[str], part: UnitKind, judge_files: Sequence[Path], cb: Codebook
) -> bool:
    """Whether ``units`` hold every unit of ``part`` the judge runs coded (read until one not)."""
    from failcodes.annotationio import iter_annotations
    from failcodes.judge.panelrun import consensus_annotations

    for path in judge_files:  # a panel's folder: its consensus (what a review answers)
        coded = consensus_annotations(path, cb) if path.is_dir() else iter_annotations(path)
        if any(a.unit_kind is part and a.unit_id not in units for a in coded):
            return False
    return True


def _unequal_rates(root: Path, humans: Sequence[Annotation]) -> list[tuple[UnitKind, str]]:
    """One note (with its part) per reviewed plan whose strata were reviewed at different rates.

    Human vs judge agreement counts every reviewed unit once; a plan that gives a small
    stratum its 2 units (or takes it whole) draws it at a higher rate than the others, and a
    review done in one stratum first reviews it at a higher rate, so those units weigh more
    there than among the units the judge codes (the corrected shares weight the strata; the
    agreement does not): 6 of 40 judge-high and 2 of 4 judge-low units read percent 7/8 where
    the units' own rate is 42/44. Each agreement row of the part says so too
    (:data:`UNEVEN_WARNING`).
    """
    out = []
    for path in sorted(plans_dir(root).glob("*.json")):
        plan = read_plan(path)
        done = {a.unit_id for a in humans if a.unit_kind is plan.part and a.status is Status.SCORED}
        counts = Counter(
            u.stratum for u in plan.units if u.sample is Sample.ESTIMATION and u.unit_id in done
        )
        rates = [counts[s.key] / s.population for s in plan.strata if s.sampled]
        if counts and max(rates) > 1.5 * min(rates):
            out.append(
                (
                    plan.part,
                    f"plan {plan.name!r}: its strata's units were reviewed at different rates "
                    f"({min(rates):.3g} to {max(rates):.3g} of each stratum; drawn so, or reviewed "
                    "unevenly): human vs judge agreement counts each reviewed unit once, so the "
                    "strata reviewed at higher rates weigh more than their share of the units (the "
                    "corrected shares weight them)",
                )
            )
    return out


#: Said after a plan's :func:`review_skew` among the agreement notes, and in the warning of
#: each agreement row of that part: a reviewer who took only the units the judge flagged
#: uncertain read human vs judge percent 0.0 on 10 units, beside which nothing was said.
SKEWED_AGREEMENT = (
    "human vs judge agreement is over the same reviews, so it is the agreement on the units "
    "reviewed, not on the units the judge codes"
)
SKEWED_WARNING = "reviews not a random part of the plan's drawn units (note)"
#: In the warning of each agreement row of a part whose plan's strata were reviewed at
#: different rates (:func:`_unequal_rates`): the row counts each reviewed unit once, so it is
#: not the judge's agreement on the units it codes, and its interval is not one for that. A
#: plan of 50 drawn from 2,000 units by 4 systems x the judge's code (at least 2 a stratum:
#: the judge's 1s, on 6.7% of units, are 16% of those reviewed), a code on 2% of units, a
#: judge of sensitivity 0.9 and specificity 0.95: percent agreement's interval, unwarned on
#: its row, covered the units' 0.949 in 0.686 of 500 data sets (0.920 at prevalence 0.05;
#: ``bench/bench_s34_stats.py --parts 2``); 6 of 40 judge-high and 2 of 4 judge-low units
#: read percent 7/8 beside the units' 42/44.
UNEVEN_WARNING = (
    "strata reviewed at different rates, counted unweighted: the agreement on the units "
    "reviewed, not on the units the judge codes (note)"
)
#: In the warning of each agreement row over reviews made with the judge's codes pre-selected
#: (Label Studio predictions): 3 of 10 such reviews read percent 0.700 beside no word, the
#: section's note apart.
PRESET_WARNING = (
    "{} of {} reviews made with the judge's codes pre-selected: may lean toward it (note)"
)


def _row_prefix(root: Path, plan: ReviewPlan) -> str:
    """``<data set>/`` before a corrected table's rows when several data sets code its part.

    A plan corrects one data set's units: with two data sets both using bm25, a row 'bm25'
    did not say whose (Table 8's columns say 'ds/bm25' and 'ds2/bm25'). One data set: ''.
    """
    layout = StudyLayout.of(root)
    table = layout.per_passage if plan.part is UnitKind.RETRIEVAL else layout.per_trace
    if sum(table(d).is_file() for d in layout.attribution_datasets()) < 2:
        return ""
    return f"{PurePosixPath(plan.source).parent.name}/"


def _unplanned_text(root: Path, plan: ReviewPlan, plans: list[ReviewPlan]) -> str:
    """Which data set a plan's corrected table is of, when others of its part have none.

    With a second data set added after the draw ('ds2/bm25' 0.0% judge-only in Table 8),
    'bm25 corrected 100.0' read as bm25's, not ds's alone (its rows now say 'ds/bm25',
    :func:`_row_prefix`), and ds2 had no word that it stayed uncorrected.
    """
    layout = StudyLayout.of(root)
    table = layout.per_passage if plan.part is UnitKind.RETRIEVAL else layout.per_trace
    planned = {PurePosixPath(p.source).parent.name for p in plans if p.part is plan.part}
    others = [d for d in layout.attribution_datasets() if d not in planned and table(d).is_file()]
    if not others:
        return ""
    mine = PurePosixPath(plan.source).parent.name
    which = "Table 8" if plan.part is UnitKind.RETRIEVAL else "Table 9"
    return (
        f"; data set {mine} only: {', '.join(others)} has no review plan of this part (its "
        f"columns of {which} are judge-coded, uncorrected)"
    )


def _outside_agreement_text(count: int) -> str:
    """The note on reviews of units outside every plan, left out of human vs judge agreement."""
    return (
        f"{count} reviewed unit(s) outside every review plan (picked by hand, not drawn at "
        "random) are left out of human vs judge agreement"
    )


def _targeted_text(count: int) -> str:
    """The note on targeted review units left out of human vs judge agreement."""
    return (
        f"{count} targeted review unit(s) (picked where the judge may be wrong, not drawn at "
        "random) are left out of human vs judge agreement: over them it is not the judge's "
        "agreement on the units it codes"
    )


def _outside_text(count: int, foreign: int = 0) -> str:
    """The note on reviews of units outside every review plan (left out of the estimates)."""
    return (
        f"{count} reviews of units outside the review plan are left out of the corrected "
        "shares (not a random sample"
        + (
            f"; {foreign} of them no unit of the plan's data: another study's or run's reviews?"
            if foreign
            else ""
        )
        + ")"
    )


#: In the captions of the corrected tables: the estimator of the printed point (PPI++'s, tuned
#: on the same reviewed units, is biased low: docs/statistics.md), which the .md/.tex/.csv
#: files carry without the section's method note.
CORRECTED_POINT = "post-stratified by the judge's code"

#: In the captions of the corrected tables, which their .md/.tex/.csv files carry without the
#: section's method note: the interval is of the population share (as ppi-python's), and
#: the point can lie where no count of the table's units could, unsaid in the table files.
ESTIMAND = (
    "PPI's estimand and interval: the share in the population the units are a sample of, "
    "not a count of these units"
)


def _corrected_attribution(
    plan: ReviewPlan, source: Path, items: Path, reviews: dict[str, Annotation], cb: Codebook
) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """Figure 1 corrected: each item's stage from the reviewers' codes, corrected per system."""
    coded = read_frame(source)
    claim_units: dict[tuple[str, str], list[str]] = {}
    for system, claim, unit in zip(
        coded["system"], coded["claim_id"], coded["unit_id"], strict=True
    ):
        claim_units.setdefault((str(system), str(claim)), []).append(str(unit))
    high = cb.high_quality_codes(UnitKind.RETRIEVAL)
    sample = plan.estimation_ids()
    flags = {uid: is_all_high(ann, high) for uid, ann in reviews.items() if uid in sample}
    pairs = human_attributions(read_models_jsonl(items, ItemAttribution), claim_units, flags)
    rows = attribution_rows(pairs, plan)
    coders = sorted({reviews[u].coder for u in flags})
    reviewed = sum(p.human is not None and bool(p.units) for p in pairs)
    caption = (
        f"Attribution corrected by human review (%), plan {plan.name!r}: judge-only, human-only "
        f"and corrected ({CORRECTED_POINT}; {ESTIMAND}) shares of each system's disagreements "
        "with 95% CIs; "
        f"{reviewed} of {sum(bool(p.units) for p in pairs)} judge-coded items fully reviewed "
        f"(by {', '.join(coders) or 'nobody'})"
        + _judged_text(sum(reviews[u].judge_shown for u in flags), len(flags))
    )
    table = corrected_attribution_table(rows)
    return caption + dash_clause(table), table, attribution_numbers(rows)


def _judged_text(shown: int, reviewed: int) -> str:
    """The caption's words for reviews made with the judge's codes pre-selected ('' if none)."""
    if not shown:
        return ""
    return (
        f"; {shown} of {reviewed} reviews made with the judge's codes pre-selected (Label "
        "Studio predictions, push --judged): a reviewer who keeps them agrees with the judge "
        "more than a blind one may, so the human and corrected shares may lean toward the judge"
    )


def _error_counts(table: pd.DataFrame | None, cb: Codebook | None, kind: str) -> dict[str, int]:
    """Counts of each low-quality subcode among scored rows (for the attribution figure).

    A dimension coded ``not_assessable`` (a passage without source metadata) is no error: it
    was counted as one, so a study of such passages drew "retrieval: not_assessable 12" as its
    most frequent error subcode beside dominant-error tables that said none was coded.
    """
    if table is None or cb is None:
        return {}

    part = cb.part(UnitKind(kind))
    scored = table[table["status"] == "scored"]
    out: dict[str, int] = {}
    for dim in part.dimensions:
        if dim.id not in scored:
            continue
        for code, n in _carried(scored, dim).items():
            if code not in (dim.high_quality_code, NOT_ASSESSABLE):
                out[str(code)] = out.get(str(code), 0) + int(n)
    return out


def _carried(table: pd.DataFrame, dim: Dimension) -> pd.Series:
    """How many rows of a coded table (or its tally) carry each code of ``dim``.

    The most frequent first, ties in order of first appearance (as ``value_counts`` orders).

    A multi-label step's cell joins its set (``overreach|conflict_synthesis_failure``): it
    counts once for each of its codes, as Table 9 counts them (the joined text was counted as
    a code of its own).
    """
    column = table[dim.id]
    weights = row_weights(table) if is_tally(table) or REPEAT in table else None
    if not dim.multi_label:
        return value_counts(column, weights)
    codes = column.map(cell_codes).explode()
    if weights is not None:
        weights = weights.loc[codes.index]
    return value_counts(codes, weights)


def _saturation(folder: Path) -> tuple[list[int] | None, list[str]]:
    """The first saturation project's accumulation curve, and a status line per round of each.

    A study with two projects (retrieval and reasoning) showed the first one's curve and
    notes only, the other project unsaid: every project's lines are given, and the ones
    not drawn say so.
    """
    if not folder.is_dir():
        return None, []
    from failcodes.saturation.status import project_status
    from failcodes.saturation.store import ProjectStore

    curve: list[int] | None = None
    drawn: str | None = None
    notes: list[str] = []
    for project in sorted(p for p in folder.iterdir() if p.is_dir()):
        store = ProjectStore(project)
        if not store.config_path.exists():
            continue
        st = project_status(store)
        if drawn is None:
            drawn = st.name
            curve = [p.new_patterns for p in st.accumulation] or None
            shown = " (its accumulation curve is the figure)" if curve else ""
        else:
            shown = f" (not drawn: the figure is project {drawn!r}'s)"
        notes.append(
            f"Project {st.name!r} ({st.kind}){shown}: {st.used_units} of {st.pool_size} pool "
            f"units used, codebook versions {st.versions}; stop rule: "
            f"{st.stop.rounds_without_new} of {st.stop.k} consecutive rounds without a new "
            "pattern" + (" (saturated)" if st.stop.saturated else "") + _thin(st.stop) + "."
        )
        for r in st.rounds:
            unscored = r.coded - r.scored
            notes.append(
                f"Round {r.number} ({r.phase.value}): {r.coded} units coded by {r.judge}"
                + (f" ({unscored} unscored: no valid answer)" if unscored else "")
                + "; "
                f"proposer {r.proposer}"
                + (" (heuristic baseline)" if r.proposer_kind is CoderKind.HEURISTIC else "")
                + f"; {r.open_proposals} proposals awaiting review, {r.decided} decided"
                + ("" if r.new_patterns is None else f", {r.new_patterns} accepted")
            )
    return curve, notes


def _thin(stop: Any) -> str:
    """The rounds the stop rule left out (too few scored units), as a clause; '' if none."""
    if not stop.thin_rounds:
        return ""
    rounds = ", ".join(str(n) for n in stop.thin_rounds)
    return (
        f"; not counted: round(s) {rounds} (the judge scored fewer than {stop.min_scored} of "
        "the round's units, half the batch size)"
    )


def _compact(dist: pd.DataFrame) -> pd.DataFrame:
    """``system, claims, <verdict> = "n (p%)"`` for verdicts that occur (Table 5 shape)."""
    out = pd.DataFrame({"system": dist["system"], "claims": dist["n_claims"]})
    for v in Verdict:
        if v.value in dist and dist[v.value].sum() > 0:
            out[v.value] = [
                f"{n} ({100 * (p or 0.0):.1f}%)"
                for n, p in zip(dist[v.value], dist[f"{v.value}_share"], strict=True)
            ]
    return out


def _frequencies(tables: list[pd.DataFrame], cb: Codebook) -> dict[str, int]:
    """How many scored rows carry each subcode (all parts), for the codebook table."""
    out: dict[str, int] = {}
    for table in tables:
        scored = table[table["status"] == "scored"]
        for part in cb.parts:
            for dim in part.dimensions:
                if dim.id in scored:
                    for code, n in _carried(scored, dim).items():
                        out[str(code)] = out.get(str(code), 0) + int(n)
    return out


def p_text(value: float | None) -> str | None:
    """A p-value as papers print it: three decimals, or '<0.001'."""
    if value is None:
        return None
    return "<0.001" if value < 0.001 else f"{value:.3f}"


#: Per-code statistics shown for human vs judge: percent, Cohen's kappa beside the
#: prevalence-robust AC1 and PABAK (each row also gives each coder's prevalence of the code).
REVIEW_CODE_STATS = ("percent", "cohen", "gwet_ac1", "pabak")
#: The source of the rows comparing reviewers with each other (human vs judge rows are apart).
REVIEWERS_SOURCE = "human review: reviewer vs reviewer"
REVIEW_BOOTSTRAP = 1000


def _review_versions(
    layout: StudyLayout, review_files: list[Path], cb: Codebook | None
) -> ReviewVersions | None:
    """The pulled reviews brought to ``cb``'s version (:mod:`failcodes.reviewversions`).

    The lineage is the study's (``<name>.v<N>.yaml`` beside its codebook, its saturation
    projects, the bundled versions), as ``failcodes recode`` reads it. None without reviews
    or a codebook to bring them to.
    """
    if not review_files or cb is None:
        return None
    from failcodes.reviewversions import bring_reviews
    from failcodes.study.recode import lineage

    files = {
        str(p.relative_to(layout.root)): read_models_jsonl(p, Annotation) for p in review_files
    }
    for path in review_files:
        people_only(path, files[str(path.relative_to(layout.root))])
        _known_codes(path, files[str(path.relative_to(layout.root))], cb)
    one_spelling({p: files[str(p.relative_to(layout.root))] for p in review_files})
    _one_review_two_names(layout.root, files)
    try:  # the folder holding the study's codebook files: the study's own root
        books = lineage(layout.root / f"{cb.name}.yaml", cb, layout)
    except FailcodesError as exc:  # a codebook file of the lineage that does not load
        raise InputError(f"the codebook lineage of the reviews: {exc.one_line()}") from None
    return bring_reviews(files, cb, books)


def _one_review_two_names(root: Path, files: Mapping[str, list[Annotation]]) -> None:
    """Refuse one Label Studio annotation held under two coder names (:func:`review_twice`)."""
    from failcodes.annotations import review_twice

    held = [(name, k) for name, reviews in files.items() for k in range(len(reviews))]
    found = review_twice((f"in {n}", files[n][k]) for n, k in held)
    if found is None:
        return
    from failcodes.jsonio import iter_jsonl

    name, i = held[found[0]]
    raise InputError(
        f"{found[1]}; keep one file (name the user with `labelstudio import --user ID=EMAIL`)",
        path=root / name,
        line=next(n for k, (n, _) in enumerate(iter_jsonl(root / name)) if k == i),
        field="coder",
    )


def _names_unchecked(reviews: Sequence[Annotation]) -> str | None:
    """What the report assumes of two reviewer names it cannot tell apart (None: nothing).

    :func:`_one_review_two_names` tells one Label Studio annotation under two names by its
    lead time. Reviews made by hand (or converted) have none: two names that gave the same
    codes on every unit both reviewed may be one person's file under two names, or two people
    who agree, and two people may share a time stamp too, so they are counted as two
    reviewers and that is said (two names that differ on a shared unit are not one copy).
    """
    by_name: dict[str, dict[str, Annotation]] = {}
    for ann in reviews:
        by_name.setdefault(ann.coder, {})[ann.unit_id] = ann
    names = sorted(by_name)
    pairs = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            one, two = by_name[first], by_name[second]
            shared = sorted(one.keys() & two.keys())
            copy = shared and all(one[u].codes == two[u].codes for u in shared)
            if copy and any(x[u].lead_time_s is None for u in shared for x in (one, two)):
                pairs.append((first, second, len(shared)))
    if not pairs:
        return None
    first, second, n = pairs[0]
    more = f" ({len(pairs) - 1} more such pair(s) of names)" if len(pairs) > 1 else ""
    return (
        f"Assumed: reviewers {first!r} and {second!r} are two people: on the {n} unit(s) both "
        "reviewed they gave the same codes, and their reviews carry no Label Studio lead time "
        "(made by hand or converted), so one person's reviews under two names cannot be told "
        f"from two reviewers who agree; counted as two reviewers{more}"
    )


def _known_codes(path: Path, reviews: list[Annotation], cb: Codebook) -> None:
    """Refuse a review made under ``cb`` whose code is not one of its dimension's.

    It read as none of the dimension's codes: a hand-written 'Exact entity' for exact_entity
    put the human and corrected exact_entity shares at 0.0 where the reviewer agreed with the
    judge's 50% (with a judge run: "ratings ['Exact entity'] are not in the category list",
    naming no file, line or field).
    """
    known_dimensions(path, reviews, cb)  # a dimension named otherwise ('Scope'): no code there
    lists = cb.code_lists()
    for i, ann in enumerate(reviews):
        found = None if ann.codebook.hash != cb.hash else foreign_code(ann, lists)
        if found is None:  # another version's reviews are migrated (or stale) first
            continue
        from failcodes.jsonio import iter_jsonl

        dim, code, known = found
        line = next(n for j, (n, _) in enumerate(iter_jsonl(path)) if j == i)
        raise InputError(
            f"{code!r} is not a code of {dim} in {cb.name} v{cb.version}{unseen_note(code)} "
            f"(valid: {', '.join(known)})",
            path=path,
            line=line,
            field=f"codes.{dim}",
        )


def _version_notes(versions: ReviewVersions) -> list[str]:
    """One note per review file with reviews made under another version."""
    target = versions.target
    notes = []
    for name, got in versions.files.items():
        if got.repeated:
            where = ", ".join(sorted(got.repeated_in))
            untimed = (
                f"; {got.untimed} of them beside a review with no created_at (written by "
                "hand?), so of unknown order: there the one read later counts (files by name, "
                "lines in order), not the one made later"
                if got.untimed
                else ""
            )
            notes.append(
                f"{name}: {got.repeated} review(s) of units the same coder reviewed again "
                f"(in {where}): the latest review of each counts, once{untimed}"
            )
        if not got.migrated and not got.stale and not got.superseded:
            continue
        made = ", ".join(f"v{v}" for v in sorted(got.versions))
        text = (
            f"{name}: reviews made under {target.name} {made}, the codebook is now "
            f"v{target.version}"
        )
        if got.migrated:
            text += f"; {got.migrated} migrated to v{target.version} through the migration map"
        if got.widened:
            text += f"; {_widened_text(sorted(got.widened), made, target.version)}"
        if got.superseded:
            text += (
                f"; {got.superseded} reviewed again under v{target.version} by the same coder "
                "(that review counts)"
            )
        if got.stale:
            # each reason once: a review stale for two reasons holds both, joined with '; '
            reasons = sorted({r for why in got.stale.values() for r in why.split("; ")})
            shown = "; ".join(reasons[:2]) + (
                f" (and {len(reasons) - 2} more)" if len(reasons) > 2 else ""
            )
            text += (
                f"; {len(got.stale)} stale, left out of the agreement and the corrected tables "
                f"({shown})"
            )
        notes.append(text)
    return notes


def _widened_text(steps: list[str], made: str, version: int) -> str:
    """What a migrated review's widened steps mean for the numbers read from them."""
    return (
        f"{', '.join(steps)} took one code under {made} and may take several under "
        f"v{version}: a co-occurring code the reviewer could not give is missing, so those "
        "steps' human and corrected shares may undercount codes, and their agreement with "
        "the judge compares possibly incomplete sets"
    )


def _study_codebook_path(layout: StudyLayout) -> Path | None:
    """The codebook file the study file names.

    None outside a study, or for a study file that does not load (the report has already
    said what it needed of it).
    """
    if not layout.study_file.is_file():
        return None
    from failcodes.study.config import load_study, resolve_path

    try:
        return resolve_path(load_study(layout.root).codebook, layout.root)
    except FailcodesError:
        return None


def _reopen(layout: StudyLayout, versions: ReviewVersions) -> list[ReopenUnits]:
    """The units of each file's stale reviews, per kind, to review again under the new version.

    Each is found among the study's disagreements (the units its judge runs coded), with the
    judge run whose codes the new review tasks pre-select. Each data set's disagreements are
    read once for every file and kind (they were read once per review file, kind and data
    set, the whole file each time).
    """
    from failcodes.disagreementio import read_disagreement_traces

    wanted = {
        (name, kind): units
        for name in versions.files
        for kind in UnitKind
        if (units := versions.stale_units(name, kind))
    }
    if not wanted:
        return []
    kinds = {kind for _, kind in wanted}
    ids = {
        kind: {u for (_, k), units in wanted.items() if k is kind for u in units} for kind in kinds
    }
    found: dict[UnitKind, dict[str, Unit]] = {kind: {} for kind in kinds}
    first: dict[UnitKind, dict[str, int]] = {kind: {} for kind in kinds}  # unit -> data set
    sets = layout.datasets()
    for i, ds in enumerate(sets):
        path = layout.disagreements(ds)
        if not path.is_file():
            continue
        traces = read_disagreement_traces(path)
        for kind in kinds:
            held = {u.id: u for u in build_units(traces, kind) if u.id in ids[kind]}
            found[kind].update(held)
            for u in held:
                first[kind].setdefault(u, i)

    def judged(kind: UnitKind, units: list[str]) -> Path | None:
        # the judge run of the first data set holding one of the file's units
        at = min((first[kind][u] for u in units if u in first[kind]), default=None)
        return None if at is None else layout.judge_current(sets[at], judge_kind(kind))

    return [
        ReopenUnits(
            review=name,
            kind=kind,
            units=[found[kind][u] for u in units if u in found[kind]],
            missing=[u for u in units if u not in found[kind]],
            judged=judged(kind, units),
            codebook=_study_codebook_path(layout),
        )
        for (name, kind), units in wanted.items()
    ]


def _check_study_datasets(layout: StudyLayout) -> None:
    """Refuse a study folder holding outputs of a data set its study file does not name.

    The report reads the folder: a data set removed from ``failcodes.toml`` (or renamed: its
    old name's outputs stay) was shown beside the others as this study's, its P/R/F1 rows,
    verdicts and attribution from the last run that had it, exit 0. Outside a study (no study
    file, or one that does not load: said where it is read) nothing is checked.
    """
    if not layout.study_file.is_file():
        return
    from failcodes.study.config import load_study

    try:
        study = load_study(layout.root)
    except FailcodesError:
        return
    named = {d.name for d in study.datasets}
    extra = [name for name in layout.datasets() if name not in named]
    if not extra:
        _check_unplanned_outputs(layout, study)
        return
    traces = {trace_dataset(p): p for p in layout.trace_files()}
    found: list[str] = []
    for name in extra:
        paths = [
            traces.get(name),
            layout.metrics(name),
            layout.judge_dir / name,
            layout.attribution(name),
        ]
        found += [str(p.relative_to(layout.root)) for p in paths if p is not None and p.exists()]
    shown = listed(found)
    raise InputError(
        f"the study file names no data set {', '.join(repr(n) for n in extra)}, but the folder "
        f"holds its outputs ({shown}): the report would show them as this study's (a data set "
        "removed or renamed in the study file keeps its old outputs); delete them, or name the "
        "data set again",
        path=layout.study_file,
    )


def _check_unplanned_outputs(layout: StudyLayout, study: StudyFile) -> None:
    """Refuse judge runs and attributions of a named data set the study's plan no longer has.

    A label corrected so that a data set has no disagreement left, a kind taken out of
    ``[judge] kinds``, or a data set's traces ingests (labels only now: its traces, metrics and
    disagreements too), leaves the earlier run's outputs: the report showed them as this
    study's (2 disagreements of sysC attributed, its Table 8 column and panel agreement, where
    its metrics now count none), exit 0, every planned step finished.
    """
    from failcodes.study.plan import has_traces, plan_work

    try:
        names = {s.name for s in plan_work(study, layout)}
    except FailcodesError:  # said where the plan is made (run, the changed steps)
        return
    found: list[str] = []
    for ds in study.datasets:
        none = f"attribute {ds.name}" not in names  # nothing of it is judged or attributed
        traced = has_traces(study, ds.name)  # else labels only: nothing is measured either
        gone = "no disagreement with a claim now" if traced else "labels only now"
        measured = [layout.traces(ds.name), layout.metrics(ds.name), layout.disagreements(ds.name)]
        for out in ([] if traced else measured) + [layout.attribution(ds.name)] * none:
            if out.exists():
                found.append(f"{out.relative_to(layout.root)} ({gone})")
        for kind in JUDGE_KINDS:
            if {f"judge {kind} {ds.name}", f"recode {kind} {ds.name}"} & names:
                continue
            why = f"no {'passage' if kind == 'retrieval' else kind} to judge now"
            why = "not in [judge] kinds" if kind not in study.judge.kinds else why
            why = ("no disagreement now" if traced else gone) if none else why
            # the judge run and its re-code runs, all at once (one named after the other)
            runs = [
                layout.judge_run(ds.name, kind),
                *dict(layout.judge_recode_runs(ds.name, kind)).values(),
            ]
            found += [f"{run.relative_to(layout.root)} ({why})" for run in runs if run.is_dir()]
    if found:
        raise InputError(
            "the folder holds outputs of an earlier run that the study's plan no longer has: "
            f"{listed(found)}; the report would show their codes and counts as this study's; "
            "delete them (or move them out of the study folder), or plan them again",
            path=layout.study_file,
        )


def _judged_once(found: Iterable[tuple[Path, Annotation]]) -> list[Annotation]:
    """One judge annotation per unit and judge, though several data sets coded the unit.

    A unit's id is its content (the claim and the passage or reasoning), so two data sets of
    one study (the same questions run through two pipelines sharing a retriever) hold the same
    unit, and each judge run codes it. Both annotations entered the agreement with the review
    as one judge rating the unit twice, and the report stopped naming neither file. The same
    codes are one annotation; different codes (the judge answered the same unit two ways,
    e.g. uncached) are refused naming both files, as there is no telling which one to compare.
    """
    seen: dict[tuple[str, str], tuple[Path, Annotation]] = {}
    for path, a in found:
        key = (a.unit_id, a.coder)
        if key not in seen:
            seen[key] = (path, a)
            continue
        first_path, first = seen[key]
        if (first.status, first.codes, first.code_sets) != (a.status, a.codes, a.code_sets):
            raise InputError(
                f"the judge {a.coder!r} coded unit {a.unit_id!r} (reviewed) one way in "
                f"{first_path} and another in this file, which both hold it (the same claim "
                "and text in two data sets): the review cannot be compared with both; judge "
                "the data sets with the judge's cache on, so a unit gets one answer",
                path=path,
            )
    return [a for _, a in seen.values()]


def _by_coder(annotations: Iterable[Annotation]) -> dict[str, list[Annotation]]:
    """Annotations per coder, coders in the order first seen."""
    out: dict[str, list[Annotation]] = {}
    for a in annotations:
        out.setdefault(a.coder, []).append(a)
    return out


def _shared(people: Mapping[str, list[Annotation]]) -> bool:
    """Whether two of the coders annotated a unit in common."""
    seen: set[str] = set()
    for anns in people.values():
        units = {a.unit_id for a in anns}
        if units & seen:
            return True
        seen |= units
    return False


def _panel_splits(root: Path, plan: Any) -> set[str]:
    """The units a judge panel split on in the plan's data set and part (none without one)."""
    from failcodes.judge.panelrun import read_panel

    dataset = PurePosixPath(plan.source).parent.name
    panel = read_panel(StudyLayout.of(root).judge_run(dataset, plan.part.value))
    return set() if panel is None else set(panel.split_units)


def _review_agreement(
    humans: list[Annotation],
    judge_files: list[Path],
    cb: Codebook,
    widened: Mapping[tuple[str, object, str], tuple[str, ...]],
    skewed: AbstractSet[str] = frozenset(),
    uneven: AbstractSet[str] = frozenset(),
) -> tuple[list[dict[str, Any]], dict[str, str], list[str], str, list[str]]:
    """Human review vs judge on the units the humans coded.

    Rows for the agreement table: each reviewer against each judge, per dimension and per
    code (percent, Cohen, AC1, PABAK, each coder's prevalence of the code), 95% CIs from
    1,000 unit resamples, seed 0; with two or more reviewers, the reviewers against each other
    in rows of their own (they entered one Fleiss with the judge, in a row captioned human vs
    judge). Also ``{code: "kappa [low, high]"}`` for the codebook table when exactly one
    human and one judge are compared (otherwise the table lists each pair), and the reviewed
    unit ids no judge annotation holds. A row of a step that reviews migrated from an earlier
    version coded with one code (``widened``: (unit, kind, coder) -> steps) says so in its
    warning: it compares possibly incomplete sets. Last, reviews made with another judge's
    codes pre-selected than those compared (:func:`~failcodes.coderagreement.other_judge_shown`).
    A row of a dimension in ``skewed`` (a part whose reviews are not a random part of a plan's
    drawn units, :func:`review_skew`) says so in its warning, and its codebook-table kappa is
    starred; so does a row over reviews made with the judge's codes pre-selected
    (:data:`PRESET_WARNING`), and a row of a dimension in ``uneven`` (a part whose plan's
    strata were reviewed at different rates, :func:`_unequal_rates`; :data:`UNEVEN_WARNING`).
    Last, the reviewed units every judge left unscored (no valid answer): they are in no human
    vs judge row, which is over the units the judge answered.
    """
    # (coder, step) -> migrated reviews narrow there
    narrow = Counter((coder, step) for (_, _, coder), steps in widened.items() for step in steps)
    from failcodes.coderagreement import annotation_agreement, degenerate, other_judge_shown
    from failcodes.judge.panelrun import consensus_annotations

    # (coder, part) -> reviews made with the judge's codes pre-selected, of all reviews made
    shown: Counter[tuple[str, object]] = Counter(
        (a.coder, a.unit_kind) for a in humans if a.judge_shown
    )
    made: Counter[tuple[str, object]] = Counter((a.coder, a.unit_kind) for a in humans)
    part_of = {dim.id: part.id for part, dim in cb.dimensions()}
    reviewed = {a.unit_id for a in humans}
    machine = _judged_once(
        (p, a)
        for p in judge_files  # a panel's folder: its consensus (no review was compared)
        for a in (consensus_annotations(p, cb) if p.is_dir() else read_models_jsonl(p, Annotation))
        if a.unit_id in reviewed
    )
    judged = {a.unit_id for a in machine}
    unjudged = [u for u in dict.fromkeys(a.unit_id for a in humans) if u not in judged]
    answered = {a.unit_id for a in machine if a.status is Status.SCORED}
    unanswered = [
        u
        for u in dict.fromkeys(a.unit_id for a in humans if a.status is Status.SCORED)
        if u in judged and u not in answered
    ]
    if not humans or not machine:
        return [], {}, unjudged, "", unanswered
    options: dict[str, Any] = {
        "categories": cb.code_lists(),
        "codebook_hash": cb.hash,
        "n_bootstrap": REVIEW_BOOTSTRAP,
        "seed": 0,
        "multi_label": [d.id for _, d in cb.dimensions() if d.multi_label],
    }
    people = _by_coder(humans)
    judges = _by_coder(machine)
    # each reviewer vs each judge on the reviewer's own units: the judge's codes of units only
    # another reviewer saw were counted as single-rated (bob's 12 of 20 read n_single_rated 8)
    results = [
        (JUDGE_SOURCE, r)
        for mine in people.values()
        for theirs in judges.values()
        if (here := [a for a in theirs if a.unit_id in {m.unit_id for m in mine}])
        for r in annotation_agreement([*mine, *here], **options)
        if r.scope in ("dimension", "code")
    ]
    # a review named like a consensus settles the others: one more reviewer, it raised their
    # agreement (alice and bob's Fleiss -0.021 read 0.308 beside their adjudication)
    raters = {c: anns for c, anns in people.items() if not settles(c)}
    if len(raters) > 1 and _shared(raters):
        results += [
            (REVIEWERS_SOURCE, r)
            for r in annotation_agreement([a for a in humans if a.coder in raters], **options)
            if r.scope == "dimension"
        ]
    rows: list[dict[str, Any]] = []
    per_code: dict[str, list[str]] = {}
    pabak = {
        (r.coders, r.dimension, r.code): r.result.value
        for _, r in results
        if r.scope == "code" and r.result.statistic == "pabak"
    }
    for source, r in results:
        if r.scope == "dimension" or (
            r.scope == "code" and r.result.statistic in REVIEW_CODE_STATS
        ):
            who = " vs ".join(r.coders)
            subject = r.dimension if r.scope == "dimension" else f"{r.dimension}: {r.code}"
            if r.sets:  # a multi-label dimension: compared on the code sets
                subject = f"{subject} [code sets]"
            row = {
                "source": source,
                "subject": subject,
                "coders": who,
                **r.result.model_dump(include={*AGREEMENT_COLUMNS, "n_single_rated"}),
            }
            if r.prevalence is not None:
                row["prevalence"] = ", ".join(f"{c} {p:.2f}" for c, p in r.prevalence.items())
                flag = degenerate(r.prevalence)
                if flag and r.result.statistic == "cohen" and r.result.value is not None:
                    row["beside"] = f"({flag})"
            migrated = sum(narrow[(c, r.dimension or "")] for c in r.coders)
            kind = part_of.get(r.dimension or "")
            preset = sum(shown[(c, kind)] for c in r.coders)
            row["warning"] = "; ".join(
                x
                for x in (
                    row.get("warning"),
                    f"{migrated} review(s) migrated from an earlier codebook version, "
                    f"where {r.dimension} took one code: the sets compared may be "
                    "incomplete"
                    if migrated
                    else "",
                    UNEVEN_WARNING if r.dimension in uneven else "",
                    SKEWED_WARNING if r.dimension in skewed else "",
                    PRESET_WARNING.format(preset, sum(made[(c, kind)] for c in r.coders))
                    if preset
                    else "",
                )
                if x
            ) or row.get("warning")
            rows.append(row)
        if r.scope == "code" and r.result.statistic == "cohen" and r.code is not None:
            v = r.result
            text = "–" if v.value is None else f"{v.value:.2f}"
            if v.value is not None and v.ci_low is not None and v.ci_high is not None:
                text += f" [{v.ci_low:.2f}, {v.ci_high:.2f}]"
                flag = degenerate(r.prevalence)
                robust = pabak.get((r.coders, r.dimension, r.code))
                if flag:  # Cohen 0.00 [0.00, 0.00] where the reviewer agreed on 4 of 6 units
                    text += f" ({flag}" + ("" if robust is None else f"; PABAK {robust:.2f}") + ")"
                # the agreement table's warning (few units, a zero-width or boundary interval)
                # was left out of the codebook table: 0.50 [0.00, 1.00] from 4 units, unmarked
                preset = sum(shown[(c, part_of.get(r.dimension or ""))] for c in r.coders)
                marked = r.dimension in skewed or r.dimension in uneven
                text += " *" if v.warning or marked or preset else ""
            per_code.setdefault(r.code, []).append(text)
    single = {code: texts[0] for code, texts in per_code.items() if len(texts) == 1}
    other = other_judge_shown([*humans, *machine])
    return rows, single if len(single) == len(per_code) else {}, unjudged, other, unanswered
