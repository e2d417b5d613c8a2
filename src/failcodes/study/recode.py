"""Bring a study's judge runs onto the study's codebook version (``failcodes recode STUDY``).

When the study file's codebook is a newer version than the one a judge run was coded under
(``saturate`` accepted a proposal, or the study file points at a new version), the run's
journal cannot simply be resumed: it refuses a different codebook. Instead each judged kind
gets a **re-code run** ``judge/<dataset>/<kind>.v<NNNN>/`` (see
:meth:`~failcodes.study.layout.StudyLayout.judge_recode_run`), an ordinary judge run folder
under the new version:

* units whose codes the lineage's migration map cannot carry (a split or removed code, a
  dimension new in the version), units coded on a dimension that gained a subcode, units
  coded with a subcode that gained a leaf (the same rule as ``saturate``'s re-code flags),
  and units never coded are **re-coded** through the judge engine
  (:func:`failcodes.judge.run_judge`: journal, cache, budget; a killed re-code resumes
  without paying twice);
* every other unit is **migrated** without a call (:func:`failcodes.migration.migrate`) and
  committed to the same journal with no tokens and no cost.

``recode.jsonl`` (one :class:`~failcodes.saturation.models.RecodeEntry` per unit: from
which version, re-coded or migrated, by which judge, why) is written last, atomically; from
then on :meth:`~failcodes.study.layout.StudyLayout.judge_current` names this run, which is
what ``attribute``, ``labelstudio export`` and ``report`` read. The old run is kept as it was.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from failcodes.annotations import Annotation
from failcodes.codebook import Codebook, CodebookRef, CodeLevel, UnitKind, migration_path
from failcodes.errors import CodebookError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.judge.journal import JOURNAL_NAME
from failcodes.migration import migrate
from failcodes.saturation.models import RecodeEntry, RecodeMethod
from failcodes.study.config import StudyFile, resolve_path
from failcodes.study.layout import RECODE_ENTRIES, StudyLayout, judge_kind
from failcodes.units import Unit

#: ``judge(units, codebook, run_dir)`` codes every unit into ``run_dir`` (resuming what is
#: there) and returns their annotations (see :func:`failcodes.saturation.recode.judge_with_engine`).
JudgeFn = Callable[[list[Unit], Codebook, Path], list[Annotation]]

UNIT_KINDS = {"retrieval": UnitKind.RETRIEVAL, "reasoning": UnitKind.VERIFICATION}


def study_codebook(study: StudyFile, layout: StudyLayout) -> tuple[Path, Codebook]:
    """The study file's codebook (path and content)."""
    from failcodes.codebook import load

    path = resolve_path(study.codebook, layout.root)
    return path, load(path)


def run_codebook(run_dir: Path) -> CodebookRef | None:
    """The codebook a run's exported annotations cite (first line), None when not exported."""
    from failcodes.judge.run import ANNOTATIONS_NAME

    path = run_dir / ANNOTATIONS_NAME
    try:
        with path.open(encoding="utf-8") as fh:
            line = fh.readline()
    except OSError:
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
    saturation projects, then the bundled ones (the first found of a version wins).
    """
    from failcodes.codebook import bundled_dir, lineage_files, load
    from failcodes.saturation.store import ProjectStore

    books: dict[int, Codebook] = {newest.version: newest}
    for folder in (codebook_path.parent, bundled_dir()):
        for version, path in lineage_files(folder, newest.name).get(newest.name, {}).items():
            if version not in books:
                books[version] = load(path)
        if folder != codebook_path.parent or not layout.saturation_dir.is_dir():
            continue
        for project in sorted(layout.saturation_dir.iterdir()):
            store = ProjectStore(project)
            if not store.config_path.is_file():
                continue
            for version in store.versions():
                if version not in books and store.codebook(version).name == newest.name:
                    books[version] = store.codebook(version)
    return books


def _added_rules(books: dict[int, Codebook], old: int, new: int) -> tuple[set[str], set[str]]:
    """Dimensions that gained a subcode and subcodes that gained a leaf, from ``old`` to ``new``."""
    from failcodes.codebook import DiffKind, diff

    dims: set[str] = set()
    parents: set[str] = set()
    final = books[new].codes()
    for v in range(old, new):
        for change in diff(books[v], books[v + 1]).of_kind(DiffKind.ADDED):
            if change.level is CodeLevel.SUBCODE:
                dims.add(change.dimension)
            elif change.level is CodeLevel.LEAF:
                for leaf in change.new:
                    info = final.get(leaf)
                    if info is not None and info.subcode is not None:
                        parents.add(info.subcode)
    return dims, parents


@dataclass(frozen=True)
class RecodeWork:
    """What bringing one judged kind onto the newest version needs (nothing written)."""

    dataset: str
    kind: str
    codebook: Codebook
    run_dir: Path
    units: dict[str, Unit]
    recode: dict[str, str]  # unit id -> why it is coded again
    migrated: dict[str, Annotation]
    from_versions: dict[str, int]  # 0: never coded

    @property
    def empty(self) -> bool:
        """True when nothing is left to do."""
        return not self.recode and not self.migrated


def _previous(layout: StudyLayout, dataset: str, kind: str, version: int) -> dict[str, Annotation]:
    """The newest earlier annotation of every unit: the judge run, then older re-code runs."""
    from failcodes.judge import read_annotations

    latest: dict[str, Annotation] = {}
    sources = [layout.judge_run(dataset, kind)]
    sources += [p for v, p in layout.judge_recode_runs(dataset, kind) if v < version]
    for run in sources:
        if (run / JOURNAL_NAME).is_file():
            latest.update({a.unit_id: a for a in read_annotations(run)})
    return latest


def _done(path: Path) -> set[str]:
    if not path.is_file():
        return set()
    return {
        RecodeEntry.model_validate_json(line).unit_id
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


def plan_kind(study: StudyFile, layout: StudyLayout, dataset: str, kind: str) -> RecodeWork:
    """Which units of one judged kind to re-code and which to migrate (nothing written)."""
    from failcodes.dataio import read_disagreements
    from failcodes.units import build_units, disagreement_traces

    cb_path, newest = study_codebook(study, layout)
    dis = layout.disagreements(dataset)
    if not dis.is_file():
        raise InputError("no disagreements file: run the study first", path=dis)
    traces = disagreement_traces(read_disagreements(dis))
    units = {u.id: u for u in build_units(traces, UNIT_KINDS[kind], top_k=study.judge.top_k)}
    run_dir = layout.judge_recode_run(dataset, kind, newest.version)
    done = _done(run_dir / RECODE_ENTRIES)
    previous = _previous(layout, dataset, kind, newest.version)
    books: dict[int, Codebook] | None = None
    recode: dict[str, str] = {}
    migrated: dict[str, Annotation] = {}
    from_versions: dict[str, int] = {}
    for uid in sorted(units):
        if uid in done:
            continue
        ann = previous.get(uid)
        if ann is None:
            recode[uid], from_versions[uid] = "not coded before", 0
            continue
        ref = ann.codebook
        if ref.name == newest.name and ref.hash == newest.hash:
            continue  # already on the study's version
        if ref.name != newest.name or ref.version >= newest.version:
            raise InputError(
                f"unit {uid} is coded under {ref}, which is not an older version of the "
                f"study's codebook {newest.ref()}",
                path=cb_path,
            )
        from_versions[uid] = ref.version
        if books is None:
            books = lineage(cb_path, newest, layout)
        missing = [v for v in range(ref.version, newest.version) if v not in books]
        try:
            if missing:
                have = ", ".join(str(v) for v in sorted(books))
                raise CodebookError(f"version {missing[0]} not found (have: {have})")
            mapping = migration_path(list(books.values()), ref.version, newest.version)
        except CodebookError as exc:
            raise InputError(
                f"no migration path from {ref} to version {newest.version} ({exc.one_line()}); "
                f"put the older versions ({newest.name}.v<N>.yaml) beside the codebook",
                path=cb_path,
            ) from None
        try:
            outcome = migrate(ann, mapping)
        except CodebookError as exc:
            recode[uid] = f"no migration from v{ref.version}: {exc.one_line()}"
            continue
        if outcome.needs_recoding:
            recode[uid] = "; ".join(f"{d}: {why}" for d, why in outcome.recode.items())
            continue
        dims, parents = _added_rules(books, ref.version, newest.version)
        codes = outcome.annotation.codes
        touched = [f"{d}: new subcode" for d in sorted(dims) if codes.get(d) is not None]
        touched += [f"{d}: {c} gained a leaf" for d, c in sorted(codes.items()) if c in parents]
        if touched:
            recode[uid] = "; ".join(touched)
        else:
            migrated[uid] = outcome.annotation
    return RecodeWork(
        dataset=dataset,
        kind=judge_kind(kind),
        codebook=newest,
        run_dir=run_dir,
        units=units,
        recode=recode,
        migrated=migrated,
        from_versions=from_versions,
    )


@dataclass(frozen=True)
class KindResult:
    """What bringing one judged kind onto the newest version did."""

    dataset: str
    kind: str
    version: int
    recoded: int
    migrated: int
    run_dir: Path | None  # None: nothing to do


def recode_kind(work: RecodeWork, judge: JudgeFn, *, coder_name: str) -> KindResult:
    """Re-code ``work.recode`` with ``judge``, commit the migrated units, then ``recode.jsonl``."""
    from failcodes.judge import Journal, export_run

    version = work.codebook.version
    if work.empty:
        return KindResult(work.dataset, work.kind, version, 0, 0, None)
    run = work.run_dir
    units = [work.units[uid] for uid in sorted(work.recode)]
    fresh = {a.unit_id: a for a in judge(units, work.codebook, run)} if units else {}
    lost = [u.id for u in units if u.id not in fresh]
    if lost:
        raise InputError(
            f"the judge returned no annotation for {len(lost)} unit(s), e.g. {lost[0]} "
            "(budget reached? run again to resume)",
            path=run,
        )
    run.mkdir(parents=True, exist_ok=True)
    journal = Journal(run)
    try:
        present = journal.present(sorted(work.migrated))
        for uid, ann in sorted(work.migrated.items()):
            if uid not in present:  # committed one by one: a kill here loses nothing
                journal.record_uncalled(ann)
    finally:
        journal.close()
    export_run(run)
    entries = [
        RecodeEntry(
            unit_id=uid,
            from_version=work.from_versions[uid],
            to_version=version,
            method=RecodeMethod.RECODED,
            coder=coder_name,
            reason=why,
            annotation=fresh[uid],
        )
        for uid, why in sorted(work.recode.items())
    ]
    entries += [
        RecodeEntry(
            unit_id=uid,
            from_version=work.from_versions[uid],
            to_version=version,
            method=RecodeMethod.MIGRATED,
            coder=None,
            reason="codes carried by the migration map",
            annotation=ann,
        )
        for uid, ann in sorted(work.migrated.items())
    ]
    path = run / RECODE_ENTRIES
    previous = path.read_text(encoding="utf-8") if path.is_file() else ""
    text = previous + "".join(e.model_dump_json() + "\n" for e in entries)
    atomic_write_text(path, text, fsync=True)
    return KindResult(work.dataset, work.kind, version, len(work.recode), len(work.migrated), run)


def judged(study: StudyFile, layout: StudyLayout) -> list[tuple[str, str]]:
    """``(dataset, kind)`` of every judge run the study has (in study-file order)."""
    return [
        (ds.name, kind)
        for ds in study.datasets
        for kind in study.judge.kinds
        if (layout.judge_run(ds.name, kind) / JOURNAL_NAME).is_file()
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

    @property
    def stale(self) -> int:
        """Units not on the study's codebook version."""
        return sum(n for v, n in self.versions.items() if v != self.study_version)


def recode_status(study: StudyFile, layout: StudyLayout) -> list[KindStatus]:
    """Per judged kind: the run downstream steps read and the versions of its units."""
    from failcodes.judge import read_annotations

    _, newest = study_codebook(study, layout)
    rows: list[KindStatus] = []
    for dataset, kind in judged(study, layout):
        run = layout.judge_current(dataset, kind)
        versions = Counter(a.codebook.version for a in read_annotations(run))
        methods: Counter[str] = Counter()
        for v, path in layout.judge_recode_runs(dataset, kind):
            if v == newest.version:
                for line in (path / RECODE_ENTRIES).read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        methods[RecodeEntry.model_validate_json(line).method.value] += 1
        rows.append(
            KindStatus(
                dataset=dataset,
                kind=kind,
                run_dir=run,
                versions=dict(sorted(versions.items())),
                recoded=methods[RecodeMethod.RECODED.value],
                migrated=methods[RecodeMethod.MIGRATED.value],
                study_version=newest.version,
            )
        )
    return rows


__all__ = [
    "JudgeFn",
    "KindResult",
    "KindStatus",
    "RecodeWork",
    "judged",
    "lineage",
    "needs_recode",
    "plan_kind",
    "recode_kind",
    "recode_status",
    "run_codebook",
    "study_codebook",
]
