"""Bring a study's judge runs onto the study's codebook version (``failcodes recode STUDY``).

When the study file's codebook is a newer version than the one a judge run was coded under
(``saturate`` accepted a proposal, or the study file points at a new version), the run's
journal cannot simply be resumed: it refuses a different codebook. Instead each judged kind
gets a **re-code run** ``judge/<dataset>/<kind>.v<NNNN>/`` (see
:meth:`~failcodes.study.layout.StudyLayout.judge_recode_run`), an ordinary judge run folder
under the new version: which units are **re-coded** through the judge engine
(:func:`failcodes.judge.run_judge`) and which **migrated** without a call
(:func:`failcodes.migration.migrate`), ``recode.jsonl`` written last, and a **judge panel**
re-coded member by member (:func:`recode_panel`): docs/study.md ("After a codebook bump").

The re-coding engine is :mod:`failcodes.recoding` (the saturation loop's too); this module
says where a study keeps its units, earlier annotations and codebook lineage. The run mode of
the study's ``[judge]`` (per unit, grouped, batch, cascade) is the caller's: the ``judge``
functions carry it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from failcodes.annotations import Annotation
from failcodes.codebook import (
    Codebook,
    CodebookRef,
    MigrationMap,
    UnitKind,
    bundled_dir,
    bundled_for,
    lineage_files,
    load,
    migration_path,
)
from failcodes.errors import CodebookError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.judge import Journal, RunSummary, export_run, read_annotations, read_summary
from failcodes.judge.journal import JOURNAL_NAME, PANEL_FILE, refuse_stale_ids
from failcodes.judge.run import ANNOTATIONS_NAME
from failcodes.migration import added_rules, finer_codes
from failcodes.recoding import (
    JudgeFn,
    RecodeEntry,
    RecodeMethod,
    RecodeResult,
    RecodeWork,
    append_entries,
    code_work,
    judge_together,
    plan_work,
    read_entries,
    recode,
    unscored,
)
from failcodes.study.config import StudyFile, resolve_path
from failcodes.study.layout import RECODE_ENTRIES, StudyLayout
from failcodes.units import Unit, disagreement_traces

if TYPE_CHECKING:
    from failcodes.judge.panelrun import Member

UNIT_KINDS = {"retrieval": UnitKind.RETRIEVAL, "reasoning": UnitKind.VERIFICATION}


def study_codebook(study: StudyFile, layout: StudyLayout) -> tuple[Path, Codebook]:
    """The study file's codebook (path and content)."""
    path = resolve_path(study.codebook, layout.root)
    return path, load(path)


def member_runs(run_dir: Path) -> dict[str | None, Path]:
    """The folders holding a run's annotations: ``{None: run_dir}``, or per panel member."""
    from failcodes.judge.panelrun import panel_folders

    folders = panel_folders(run_dir)
    if folders is None:
        return {None: run_dir}
    runs: dict[str | None, Path] = {}
    runs.update(folders)
    return runs


def run_codebook(run_dir: Path) -> CodebookRef | None:
    """The codebook a run's exported annotations cite (first line), None when not exported.

    For a panel run, its first member's.
    """
    path = next(iter(member_runs(run_dir).values())) / ANNOTATIONS_NAME
    try:
        with path.open(encoding="utf-8") as fh:
            line = fh.readline()
    except (OSError, UnicodeDecodeError):  # a sniffer: the annotations' reader reports it
        return None
    try:
        return CodebookRef.model_validate(json.loads(line)["codebook"])
    except (ValueError, KeyError, TypeError):
        return None


def needs_recode(layout: StudyLayout, dataset: str, kind: str, newest: Codebook) -> bool:
    """True when the data set's judge run of ``kind`` is coded under an older version."""
    ref = run_codebook(layout.judge_run(dataset, kind))
    return ref is not None and ref.name == newest.name and ref.version < newest.version


def lineage(codebook_path: Path, newest: Codebook, layout: StudyLayout) -> dict[int, Codebook]:
    """Every version of the study's codebook, by version.

    The study's own, then the files ``<name>.v<N>.yaml`` beside it, then the study's
    saturation projects (the first found of a version wins), then the bundled ones, which
    fill only versions that must be the study's ancestors: every version when the study's
    codebook is itself a bundled version (same hash), else only versions below all the
    study's own. A bundled version between the study's own ones may be another branch: a
    saturation round makes its own version 2 from version 1, which is not the bundled
    version 2 (same name and number, other codes); composed into the path it would carry
    annotations through codes the study never had.
    """
    from failcodes.saturation.store import ProjectStore

    books: dict[int, Codebook] = {newest.version: newest}
    for version, path in (
        lineage_files(codebook_path.parent, newest.name).get(newest.name, {}).items()
    ):
        if version not in books:
            books[version] = load(path)
    if layout.saturation_dir.is_dir():
        for project in sorted(layout.saturation_dir.iterdir()):
            store = ProjectStore(project)
            if not store.config_path.is_file():
                continue
            for version in store.versions():
                if version not in books and store.codebook(version).name == newest.name:
                    books[version] = store.codebook(version)
    ancestry = bundled_for(newest.ref()) is not None
    lowest = min(books)
    for version, path in lineage_files(bundled_dir(), newest.name).get(newest.name, {}).items():
        if version not in books and (ancestry or version < lowest):
            books[version] = load(path)
    return books


def _previous(
    layout: StudyLayout, dataset: str, kind: str, version: int, member: str | None
) -> dict[str, Annotation]:
    """The newest earlier annotation of every unit: the judge run, then older re-code runs.

    For a panel ``member``, that member's annotations (a member the earlier panel did not
    have, or an earlier run that was no panel, has none: its units are coded anew).
    """
    latest: dict[str, Annotation] = {}
    sources = [layout.judge_run(dataset, kind)]
    sources += [p for v, p in layout.judge_recode_runs(dataset, kind) if v < version]
    for run in sources:
        folder = member_runs(run).get(member)
        if folder is not None and (folder / JOURNAL_NAME).is_file():
            latest.update({a.unit_id: a for a in read_annotations(folder)})
    return latest


def input_units(study: StudyFile, layout: StudyLayout, dataset: str, kind: str) -> dict[str, Unit]:
    """The units of the study's input for one judged kind, by id.

    Its disagreements, cut as its ``[judge]`` says (``top_k``). A run folder may hold units of
    an earlier input (another ``top_k``, other data): its journal keeps them, but the re-code
    plans, exports (:func:`failcodes.judge.export_run`'s ``only``) and counts these alone.
    """
    from failcodes.disagreementio import read_disagreements

    dis = layout.disagreements(dataset)
    if not dis.is_file():
        raise InputError("no disagreements file: run the study first", path=dis)
    traces = disagreement_traces(read_disagreements(dis))
    return {u.id: u for u in study.judge.units(traces, UNIT_KINDS[kind])}


def _export_input(work: RecodeWork) -> None:
    """Export a re-code run with nothing left to do on its input's units alone.

    The run holds the units of an earlier input too (re-coded then): exported, a report's quote
    checks, the attribution and the retrieval-quality shares counted them.
    """
    if (work.run_dir / JOURNAL_NAME).is_file():  # the summary's other_units counted again
        export_run(work.run_dir, read_summary(work.run_dir), only=set(work.units))


@dataclass(frozen=True)
class PanelSeat:
    """One member of the study's judge panel: its 1-based place and its name in the panel."""

    index: int
    name: str


def plan_kind(
    study: StudyFile,
    layout: StudyLayout,
    dataset: str,
    kind: str,
    *,
    member: PanelSeat | None = None,
) -> RecodeWork:
    """Which units of one judged kind to re-code and which to migrate (nothing written).

    With ``member``: that panel member's units (its own earlier codes, its own folder).
    """
    from failcodes.judge.panelrun import member_dir

    cb_path, newest = study_codebook(study, layout)
    units = input_units(study, layout, dataset, kind)
    runs = [layout.judge_run(dataset, kind), layout.judge_recode_run(dataset, kind, newest.version)]
    runs += [p for _, p in layout.judge_recode_runs(dataset, kind)]
    for run in runs:  # an earlier failcodes' ids: not coded anew
        refuse_stale_ids(run, units.values)
    root = layout.judge_recode_run(dataset, kind, newest.version)
    run_dir = root if member is None else member_dir(root, member.index, member.name)
    name = None if member is None else member.name
    done = {e.unit_id for e in read_entries(root / RECODE_ENTRIES) if e.member == name}
    previous = _previous(layout, dataset, kind, newest.version, name)
    stale: dict[str, Annotation | None] = {}
    for uid in sorted(units):
        ann = previous.get(uid)
        if uid in done or (
            ann is not None
            and ann.codebook.name == newest.name
            and ann.codebook.hash == newest.hash
        ):
            continue  # already on the study's version
        stale[uid] = ann
    books: dict[int, Codebook] = {}

    def lineage_books() -> dict[int, Codebook]:
        if not books:  # read once, when a unit needs it
            books.update(lineage(cb_path, newest, layout))
        return books

    def path(ann: Annotation) -> MigrationMap:
        ref = ann.codebook
        if ref.name != newest.name or ref.version >= newest.version:
            raise InputError(
                f"unit {ann.unit_id} is coded under {ref}, which is not an older version of "
                f"the study's codebook {newest.ref()}",
                path=cb_path,
            )
        return path_from(ref)

    # per codebook, not per unit: a codebook diff per unit was most of a 6,000-trace study's
    # re-code plan (issue 30)
    @cache
    def path_from(ref: CodebookRef) -> MigrationMap:
        have = lineage_books()
        missing = [v for v in range(ref.version, newest.version) if v not in have]
        try:
            if missing:
                known = ", ".join(str(v) for v in sorted(have))
                raise CodebookError(f"version {missing[0]} not found (have: {known})")
            return migration_path(list(have.values()), ref.version, newest.version)
        except CodebookError as exc:
            raise InputError(
                f"no migration path from {ref} to version {newest.version} ({exc.one_line()}); "
                f"put the older versions ({newest.name}.v<N>.yaml) beside the codebook",
                path=cb_path,
            ) from None

    @cache
    def added_from(version: int) -> tuple[set[str], set[str]]:
        return added_rules(lineage_books(), version, newest.version)

    def touched(before: Annotation, after: Annotation) -> list[str]:
        # the same rule as saturate's re-code flags: a new subcode re-partitions its
        # dimension, a new leaf may fit the units coded with its subcode
        return finer_codes(after, added_from(before.codebook.version))

    return plan_work(
        stale,
        codebook=newest,
        units=units,
        run_dir=run_dir,
        entries_path=root / RECODE_ENTRIES,
        path=path,
        touched=touched,
        member=name,
    )


def recode_kind(work: RecodeWork, judge: JudgeFn, *, coder_name: str) -> RecodeResult:
    """Re-code ``work.recode`` with ``judge``, commit the migrated units, then ``recode.jsonl``.

    The migrated units go into the re-code run's journal too, so the run folder holds every
    unit on the new version (what ``attribute``, ``labelstudio export`` and ``report`` read);
    ``annotations.jsonl`` holds the study's input's units alone (``work.units``), even with
    nothing to do.
    """
    result = recode(work, judge, coder_name=coder_name, journal_migrated=True)
    if work.empty:
        _export_input(work)
    return result


def recode_panel(
    works: Sequence[RecodeWork],
    judges: Sequence[JudgeFn],
    members: Sequence[Member],
    kind: str,
) -> RecodeResult:
    """Re-code a judge panel, then write ``panel.json``, then ``recode.jsonl``.

    Each member's work is coded by that member, the members at the same time
    (:func:`~failcodes.recoding.judge_together`); ``recode.jsonl`` has one entry per unit and
    member.

    ``works``, ``judges`` and ``members`` go together (one per member, in panel order); the
    works come from :func:`plan_kind` with each member's :class:`PanelSeat`.
    """
    from failcodes.judge.panelrun import panel_report

    first = works[0]
    root = first.entries_path.parent
    done = all(w.empty for w in works)
    if done and not (root / PANEL_FILE).is_file():
        return RecodeResult(version=first.version, recoded=0, migrated=0, path=None)
    entries: list[RecodeEntry] = []
    judged = judge_together(works, judges)  # the members at once, as a panel judges
    for work, judge, member in zip(works, judges, members, strict=True):
        if work.empty:
            _export_input(work)
        else:
            entries += code_work(
                work, judge, coder_name=member.coder.spec, journal_migrated=True, judged=judged
            )
    ids = set(first.units)  # the study's input's units: an earlier input's left out
    summaries = []
    for work, member in zip(works, members, strict=True):
        journal = Journal(work.run_dir)
        try:
            totals = journal.totals()
            mine = sum(1 for unit in journal.iter_ids() if unit in ids)
        finally:
            journal.close()
        summaries.append(
            RunSummary(
                judge=member.coder.spec,
                coder_kind=member.coder.coder_kind,
                kind=UNIT_KINDS[kind],
                units=mine,
                already_done=mine,
                journal_units=totals.units,
                journal_cost_usd=totals.cost_usd,
                other_units=totals.units - mine,
            )
        )
    report = panel_report(
        root, list(members), first.codebook, UNIT_KINDS[kind], summaries, only=ids
    )
    atomic_write_text(root / PANEL_FILE, report.model_dump_json(indent=2) + "\n")
    if done:
        return RecodeResult(version=first.version, recoded=0, migrated=0, path=None)
    append_entries(first.entries_path, entries)
    return RecodeResult(
        version=first.version,
        recoded=sum(len(w.recode) for w in works),
        migrated=sum(len(w.migrated) for w in works),
        path=first.entries_path,
        unscored=unscored(entries),
    )


def judged(study: StudyFile, layout: StudyLayout) -> list[tuple[str, str]]:
    """``(dataset, kind)`` of every judge run the study has (in study-file order)."""
    return [
        (ds.name, kind)
        for ds in study.datasets
        for kind in study.judge.kinds
        if any(
            (run / JOURNAL_NAME).is_file()
            for run in member_runs(layout.judge_run(ds.name, kind)).values()
        )
    ]


@dataclass(frozen=True)
class KindStatus:
    """Which codebook versions one judged kind's current run holds."""

    dataset: str
    kind: str
    run_dir: Path
    versions: dict[int, int]  # version -> units
    recoded: int
    migrated: int
    study_version: int
    uncoded: int = 0  # units of the study's input the run does not hold

    @property
    def stale(self) -> int:
        """Units not on the study's codebook version (the uncoded too)."""
        return self.uncoded + sum(n for v, n in self.versions.items() if v != self.study_version)


def recode_status(study: StudyFile, layout: StudyLayout) -> list[KindStatus]:
    """Per judged kind: the run downstream steps read and the versions of its input's units.

    The units of the study's input alone (:func:`input_units`): a run's journal may keep an
    earlier input's.
    """
    _, newest = study_codebook(study, layout)
    rows: list[KindStatus] = []
    for dataset, kind in judged(study, layout):
        run = layout.judge_current(dataset, kind)
        ids = input_units(study, layout, dataset, kind).keys()
        # a unit counts under the oldest version any judge (panel member) holds it on
        oldest: dict[str, int] = {}
        for folder in member_runs(run).values():
            for a in read_annotations(folder):
                if a.unit_id in ids:
                    oldest[a.unit_id] = min(
                        oldest.get(a.unit_id, a.codebook.version), a.codebook.version
                    )
        versions = Counter(oldest.values())
        # per unit: re-coded when any judge (panel member) re-coded it, else migrated
        unit_methods: dict[str, str] = {}
        for v, path in layout.judge_recode_runs(dataset, kind):
            if v == newest.version:
                for entry in read_entries(path / RECODE_ENTRIES):
                    if entry.unit_id not in ids:
                        continue
                    if unit_methods.get(entry.unit_id) != RecodeMethod.RECODED.value:
                        unit_methods[entry.unit_id] = entry.method.value
        methods = Counter(unit_methods.values())
        rows.append(
            KindStatus(
                dataset=dataset,
                kind=kind,
                run_dir=run,
                versions=dict(sorted(versions.items())),
                recoded=methods[RecodeMethod.RECODED.value],
                migrated=methods[RecodeMethod.MIGRATED.value],
                study_version=newest.version,
                uncoded=len(ids) - len(oldest),
            )
        )
    return rows
