"""Bring coded units onto a newer codebook version: the one re-coding engine.

Used by a study's re-code (``failcodes recode STUDY``, :mod:`failcodes.study.recode`) and by
the saturation loop's (``saturate recode``, :mod:`failcodes.saturation.recode`). Each caller
says where the units and their earlier annotations are, how an annotation reaches the newest
version (its lineage) and which units a codebook change flags; the engine does the rest:

* :func:`plan_work` sorts every unit not on the newest version: **re-code** (never coded, a
  flag newer than its annotation, a code the migration map cannot carry, a change that
  touches its codes) or **migrate** (its codes carried through the map, no call);
* :func:`code_work` re-codes through a :data:`JudgeFn` (the judge engine:
  :class:`EngineJudge`; its journal commits each finished unit, so a killed re-code
  resumes without paying twice), optionally commits the migrated units to the same journal,
  and returns one :class:`RecodeEntry` per unit;
* :func:`append_entries` writes them last, in one atomic step: the entries file marks the
  re-code complete, so nothing is half-written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from failcodes.annotations import Annotation, Status
from failcodes.codebook import Codebook, MigrationMap
from failcodes.contract import FrozenModel
from failcodes.errors import CodebookError, InputError
from failcodes.fileio import atomic_write_text
from failcodes.migration import migrate
from failcodes.units import Unit

if TYPE_CHECKING:
    from failcodes.judge import JudgeJob, Mode, PriceTable
    from failcodes.judge.unitjudge import Coder

    #: One judge engine run: its units, its coder, its job (:func:`failcodes.judge.run_judge`).
    JudgeRun = tuple[list[Unit], Coder, JudgeJob]

#: ``judge(units, codebook, run_dir)`` codes every unit under ``codebook`` into ``run_dir``
#: (resuming what is there) and returns their annotations (see :class:`EngineJudge`).
JudgeFn = Callable[[list[Unit], Codebook, Path], list[Annotation]]
#: The migration map that carries an annotation to the newest version. A
#: :class:`~failcodes.errors.CodebookError` means the unit is re-coded instead; any other error
#: (a lineage the caller cannot complete) stops the plan.
PathFn = Callable[[Annotation], MigrationMap]
#: Why a unit's codes must be coded again although the map carries them: ``(before, after)``
#: -> reasons (none: migrate ``after``).
TouchFn = Callable[[Annotation, Annotation], list[str]]

NOT_CODED = "not coded before"
CARRIED = "codes carried by the migration map"


def _now() -> datetime:
    return datetime.now(UTC)


class RecodeMethod(StrEnum):
    """How a unit reached the newest version."""

    RECODED = "recoded"  # coded again by the judge
    MIGRATED = "migrated"  # carried by the migration map, no call


class RecodeEntry(FrozenModel):
    """One unit brought onto a newer version (a line of ``recoded.jsonl`` / ``recode.jsonl``)."""

    unit_id: str
    from_version: int
    to_version: int
    method: RecodeMethod
    coder: str | None = Field(description="The judge that re-coded it (None when migrated).")
    reason: str
    annotation: Annotation
    member: str | None = Field(
        default=None, description="The judge panel member whose annotation this is (panels)."
    )
    at: datetime = Field(default_factory=_now)


class RecodeWork(FrozenModel):
    """What bringing one run's units onto the newest version needs (nothing written)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    codebook: Codebook = Field(description="The newest version: every unit ends on it.")
    units: dict[str, Unit] = Field(description="The units the judge may code, by id.")
    recode: dict[str, str] = Field(description="Unit id -> why it is coded again.")
    migrated: dict[str, Annotation] = Field(description="Unit id -> its migrated annotation.")
    from_versions: dict[str, int] = Field(description="Unit id -> its version (0: never coded).")
    run_dir: Path = Field(description="The judge's run folder (its journal).")
    entries_path: Path = Field(description="The entries file, written last.")
    member: str | None = Field(default=None, description="The judge panel member (panels).")

    @property
    def version(self) -> int:
        """The newest version's number."""
        return self.codebook.version

    @property
    def empty(self) -> bool:
        """True when nothing is left to do."""
        return not self.recode and not self.migrated


class RecodeResult(FrozenModel):
    """What a finished re-code did."""

    version: int
    recoded: int
    migrated: int
    path: Path | None = Field(description="The entries file written (None: nothing to do).")
    unscored: int = Field(
        default=0,
        description="Re-coded units the judge gave no valid answer for: no code on the new "
        "version (counted in recoded).",
    )

    def unscored_note(self) -> str:
        """``; N of the re-coded unscored: ...`` to end the re-code's line ('' when none)."""
        return f"; {self.unscored} of the re-coded {UNSCORED_WORDS}" if self.unscored else ""


#: What an unscored unit is, said beside every count that includes it.
UNSCORED_WORDS = (
    "unscored: the judge gave no valid answer, so they hold no code (counted above, never "
    "coded again by a re-code)"
)


def unscored(entries: Sequence[RecodeEntry]) -> int:
    """The re-coded entries whose annotation holds no code (the judge gave no valid answer)."""
    return sum(
        e.method is RecodeMethod.RECODED and e.annotation.status is not Status.SCORED
        for e in entries
    )


def sort_unit(
    ann: Annotation, path: PathFn, *, flags: Sequence[str] = (), touched: TouchFn | None = None
) -> str | Annotation:
    """Why ``ann``'s unit must be coded again (a reason), or its annotation on the new version.

    In order: a codebook change flagged it (``flags``), the map cannot carry its codes (a
    split or removed code, a dimension new in the version), ``touched`` names a change to its
    codes; otherwise its codes are carried.
    """
    if flags:
        return "; ".join(flags)
    try:
        outcome = migrate(ann, path(ann))
    except CodebookError as exc:
        return f"no migration from v{ann.codebook.version}: {exc.one_line()}"
    if outcome.needs_recoding:
        return "; ".join(f"{d}: {why}" for d, why in outcome.recode.items())
    reasons = [] if touched is None else touched(ann, outcome.annotation)
    return "; ".join(reasons) if reasons else outcome.annotation


def plan_work(
    stale: Mapping[str, Annotation | None],
    *,
    codebook: Codebook,
    units: Mapping[str, Unit],
    run_dir: Path,
    entries_path: Path,
    path: PathFn,
    flags: Callable[[str, Annotation], list[str]] | None = None,
    touched: TouchFn | None = None,
    member: str | None = None,
) -> RecodeWork:
    """Sort the units of ``stale`` (unit id -> its newest annotation, None: never coded).

    Every unit of ``stale`` is re-coded or migrated (:func:`sort_unit`), in ``stale``'s order;
    the units it re-codes must be in ``units``.
    """
    recode: dict[str, str] = {}
    migrated: dict[str, Annotation] = {}
    from_versions: dict[str, int] = {}
    for uid, ann in stale.items():
        if ann is None:
            recode[uid], from_versions[uid] = NOT_CODED, 0
            continue
        from_versions[uid] = ann.codebook.version
        flagged = [] if flags is None else flags(uid, ann)
        out = sort_unit(ann, path, flags=flagged, touched=touched)
        if isinstance(out, str):
            recode[uid] = out
        else:
            migrated[uid] = out
    return RecodeWork(
        codebook=codebook,
        units=dict(units),
        recode=recode,
        migrated=migrated,
        from_versions=from_versions,
        run_dir=run_dir,
        entries_path=entries_path,
        member=member,
    )


def code_work(
    work: RecodeWork,
    judge: JudgeFn,
    *,
    coder_name: str,
    journal_migrated: bool = False,
    judged: bool = False,
) -> list[RecodeEntry]:
    """Re-code ``work.recode`` with ``judge``; the entries of every unit (not written).

    With ``journal_migrated`` the migrated units are committed to the judge's journal too (no
    tokens, no cost; one by one, so a kill loses nothing) and the run exported, so the run
    folder holds every unit on the new version (``annotations.jsonl``: those of
    ``work.units``). ``judged``: :func:`judge_together` coded them; their annotations are read
    from the run folder, no judge is run again (a second run would spend a second budget).
    """
    units = _to_code(work)
    if not units:
        fresh = {}
    else:
        made = (
            judged_in(work.run_dir, units) if judged else judge(units, work.codebook, work.run_dir)
        )
        fresh = {a.unit_id: a for a in made}
    lost = [u.id for u in units if u.id not in fresh]
    if lost:
        raise InputError(
            f"the judge returned no annotation for {len(lost)} unit(s), e.g. {lost[0]} "
            "(budget reached? run again to resume)",
            path=work.run_dir,
        )
    if journal_migrated:
        _journal_migrated(work)

    def entry(
        uid: str, method: RecodeMethod, coder: str | None, reason: str, annotation: Annotation
    ) -> RecodeEntry:
        return RecodeEntry(
            unit_id=uid,
            from_version=work.from_versions[uid],
            to_version=work.version,
            method=method,
            coder=coder,
            reason=reason,
            annotation=annotation,
            member=work.member,
        )

    entries = [
        entry(uid, RecodeMethod.RECODED, coder_name, why, fresh[uid])
        for uid, why in sorted(work.recode.items())
    ]
    entries += [
        entry(uid, RecodeMethod.MIGRATED, None, CARRIED, ann)
        for uid, ann in sorted(work.migrated.items())
    ]
    return entries


def _journal_migrated(work: RecodeWork) -> None:
    from failcodes.judge import Journal, export_run, read_summary

    work.run_dir.mkdir(parents=True, exist_ok=True)
    journal = Journal(work.run_dir)
    try:
        present = journal.present(sorted(work.migrated))
        for uid, ann in sorted(work.migrated.items()):
            if uid not in present:
                journal.record_uncalled(ann)
    finally:
        journal.close()
    # ``work.units``: the input's; the journal may keep an earlier input's, left out. The
    # judge's summary counted the migrated units among them (other_units): counted again
    export_run(work.run_dir, read_summary(work.run_dir), only=set(work.units))


def read_entries(path: Path) -> list[RecodeEntry]:
    """The entries of an entries file (none when it is absent), each line checked.

    A torn line, a field of the wrong type, an unknown field: one line naming the file, the
    line and the field.
    """
    from failcodes.tableio import read_models_jsonl

    if not path.exists() and not path.is_symlink():
        return []
    return read_models_jsonl(path, RecodeEntry)


def append_entries(path: Path, entries: Sequence[RecodeEntry]) -> None:
    """Append ``entries`` to the entries file in one atomic step (it marks the re-code done)."""
    previous = read_entries(path)  # checked: a damaged file is not carried on
    text = "".join(e.model_dump_json() + "\n" for e in [*previous, *entries])
    atomic_write_text(path, text, fsync=True)


def recode(
    work: RecodeWork, judge: JudgeFn, *, coder_name: str, journal_migrated: bool = False
) -> RecodeResult:
    """Do ``work`` (:func:`code_work`), then write its entries (:func:`append_entries`)."""
    if work.empty:
        return RecodeResult(version=work.version, recoded=0, migrated=0, path=None)
    entries = code_work(work, judge, coder_name=coder_name, journal_migrated=journal_migrated)
    append_entries(work.entries_path, entries)
    return RecodeResult(
        version=work.version,
        recoded=len(work.recode),
        migrated=len(work.migrated),
        path=work.entries_path,
        unscored=unscored(entries),
    )


@dataclass(frozen=True)
class EngineJudge:
    """A :data:`JudgeFn` over the judge engine's public API.

    ``make_mode`` builds the run mode (per unit, grouped, batch, cascade) for each call; a
    cascade's first judge is a client closed at the end of a run, so each run gets its own.
    """

    spec: str
    base_url: str | None = None
    cache_path: Path | None = None
    settings: Any = None
    make_mode: Callable[[], Mode] | None = None
    timeout: float = 120.0
    temperature: float | None = None
    prices: PriceTable | None = None

    def run(self, units: list[Unit], codebook: Codebook, run_dir: Path) -> JudgeRun:
        """The judge engine's run of ``units`` into ``run_dir`` (for :func:`run_judges`)."""
        from failcodes.judge import JudgeJob, PerUnit, make_coder

        coder = make_coder(
            self.spec, base_url=self.base_url, timeout=self.timeout, temperature=self.temperature
        )
        job = JudgeJob(
            codebook,
            units[0].kind,
            run_dir,
            mode=PerUnit() if self.make_mode is None else self.make_mode(),
            cache_path=self.cache_path,
            prices=self.prices,
            settings=self.settings,
        )
        return units, coder, job

    def __call__(self, units: list[Unit], codebook: Codebook, run_dir: Path) -> list[Annotation]:
        """Code ``units`` into ``run_dir`` (resuming what is there); their annotations."""
        from failcodes.judge import run_judge

        run_judge(*self.run(units, codebook, run_dir))
        return judged_in(run_dir, units)


def judged_in(run_dir: Path, units: Sequence[Unit]) -> list[Annotation]:
    """The annotations of ``units`` that the judge run in ``run_dir`` holds."""
    from failcodes.judge import read_annotations

    wanted = {u.id for u in units}
    return [a for a in read_annotations(run_dir) if a.unit_id in wanted]


def judge_together(works: Sequence[RecodeWork], judges: Sequence[JudgeFn]) -> bool:
    """Re-code each work's units with its judge (a panel's members), all at the same time.

    As a panel judges (:func:`failcodes.judge.run.run_judges`): each member within its own
    limits (concurrency, rates, budget), so two judges take about one judge's time, not the
    sum (issue 30). False, nothing done, when fewer than two have units to code or a judge is
    not the engine's (:func:`code_work` then codes each in turn). The annotations are in each
    work's run folder: :func:`code_work` with ``judged=True`` reads them there.
    """
    from failcodes.judge.run import run_judges

    todo = [(w, j) for w, j in zip(works, judges, strict=True) if w.recode]
    runs = [
        j.run(_to_code(w), w.codebook, w.run_dir) for w, j in todo if isinstance(j, EngineJudge)
    ]
    if len(todo) < 2 or len(runs) < len(todo):
        return False
    run_judges(runs)
    return True


def _to_code(work: RecodeWork) -> list[Unit]:
    return [work.units[uid] for uid in sorted(work.recode)]
