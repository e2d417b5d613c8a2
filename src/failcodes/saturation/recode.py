"""Bring every coded unit of a saturation project onto the newest codebook version.

After a review accepts proposals, the new version flags the units it touches
(``recode.jsonl``, see :func:`failcodes.saturation.changes.recode_flags`). ``saturate recode``
then, for every unit whose newest annotation is on an older version:

* **flagged** units are coded again under the newest version through the judge engine
  (:func:`failcodes.judge.run_judge`: its journal commits each finished unit, so a killed
  re-code resumes without paying twice; response cache and ``--budget`` as for ``judge``);
* every other unit is **migrated** without a call: its codes are carried through the
  lineage's migration map (:func:`failcodes.migration.migrate`); a unit whose code the map
  cannot carry (a split or removed code) is re-coded instead.

The judge runs in ``recode/vNNNN/judge/``; when every unit is done, ``recode/vNNNN/
recoded.jsonl`` is written in one atomic step: one :class:`RecodeEntry` per unit (its new
annotation, the version it came from, and whether it was re-coded or migrated, by which
coder). The project's annotations (:meth:`ProjectStore.all_annotations`) include these
entries after the rounds, so the newest annotation of every unit is then on the newest
version, which ``saturate status`` shows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from failcodes.annotations import Annotation
from failcodes.codebook import Codebook, migration_path
from failcodes.contract import FrozenModel
from failcodes.errors import CodebookError
from failcodes.fileio import atomic_write_text
from failcodes.migration import migrate
from failcodes.saturation.models import RecodeEntry, RecodeMethod
from failcodes.saturation.store import ProjectStore, SaturationError
from failcodes.units import Unit

if TYPE_CHECKING:
    from failcodes.judge import Mode, PriceTable


class RecodeWork(FrozenModel):
    """What a re-code has to do (computed from the project's files, nothing written)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    version: int
    recode: dict[str, str] = Field(description="Unit id -> why it is coded again.")
    migrate: dict[str, Annotation] = Field(description="Unit id -> its migrated annotation.")
    from_versions: dict[str, int]


class RecodeResult(FrozenModel):
    """What a finished re-code did."""

    version: int
    recoded: int
    migrated: int
    path: str | None = Field(description="The recoded.jsonl written (None: nothing to do).")


def plan_recode(store: ProjectStore) -> RecodeWork:
    """Which units must be re-coded and which can be migrated to the newest version."""
    from failcodes.saturation.rounds import latest_annotations

    newest = store.codebook()
    lineage = [store.codebook(v) for v in store.versions()]
    flagged: dict[str, list[tuple[int, str]]] = {}
    for flag in store.recode_flags():
        text = f"v{flag.new_version} {flag.dimension}: {flag.reason}"
        flagged.setdefault(flag.unit_id, []).append((flag.new_version, text))
    recode: dict[str, str] = {}
    migrated: dict[str, Annotation] = {}
    from_versions: dict[str, int] = {}
    for uid, ann in latest_annotations(store).items():
        old = ann.codebook.version
        if old >= newest.version:
            continue
        from_versions[uid] = old
        reasons = [text for version, text in flagged.get(uid, []) if version > old]
        if reasons:  # flagged by a version newer than its annotation
            recode[uid] = "; ".join(reasons)
            continue
        try:
            outcome = migrate(ann, migration_path(lineage, old, newest.version))
        except CodebookError as exc:
            recode[uid] = f"no migration from v{old}: {exc.one_line()}"
            continue
        if outcome.needs_recoding:
            recode[uid] = "; ".join(f"{d}: {why}" for d, why in outcome.recode.items())
        else:
            migrated[uid] = outcome.annotation
    return RecodeWork(
        version=newest.version, recode=recode, migrate=migrated, from_versions=from_versions
    )


def recode_project(
    store: ProjectStore,
    judge: Callable[[list[Unit], Codebook, Path], list[Annotation]],
    *,
    coder_name: str,
) -> RecodeResult:
    """Re-code the flagged units with ``judge(units, codebook, run_dir)``, migrate the rest.

    ``judge`` must code every unit it is given under ``codebook`` into ``run_dir`` (resuming
    what is there) and return their annotations; :func:`judge_with_engine` builds one from
    the judge engine. Nothing is written to the project until every unit is done.
    """
    work = plan_recode(store)
    if not work.recode and not work.migrate:
        return RecodeResult(version=work.version, recoded=0, migrated=0, path=None)
    newest = store.codebook()
    path = store.recoded_path(work.version)
    by_id = {u.id: u for u in store.pool()}
    missing = [uid for uid in work.recode if uid not in by_id]
    if missing:
        raise SaturationError(
            f"{len(missing)} flagged unit(s) are not in the pool (e.g. {missing[0]})",
            path=store.pool_path,
        )
    units = [by_id[uid] for uid in sorted(work.recode)]
    fresh = {a.unit_id: a for a in judge(units, newest, path.parent / "judge")} if units else {}
    lost = [u.id for u in units if u.id not in fresh]
    if lost:
        raise SaturationError(
            f"the judge returned no annotation for {len(lost)} unit(s), e.g. {lost[0]}"
        )
    done = [
        (uid, RecodeMethod.RECODED, coder_name, work.recode[uid], fresh[uid])
        for uid in sorted(work.recode)
    ] + [
        (uid, RecodeMethod.MIGRATED, None, "codes carried by the migration map", ann)
        for uid, ann in sorted(work.migrate.items())
    ]
    entries = [
        RecodeEntry(
            unit_id=uid,
            from_version=work.from_versions[uid],
            to_version=work.version,
            method=method,
            coder=coder,
            reason=reason,
            annotation=annotation,
        )
        for uid, method, coder, reason, annotation in done
    ]
    previous = store.recode_entries_text(work.version)
    atomic_write_text(
        path, previous + "".join(e.model_dump_json() + "\n" for e in entries), fsync=True
    )
    return RecodeResult(
        version=work.version,
        recoded=len(work.recode),
        migrated=len(work.migrate),
        path=str(path),
    )


def judge_with_engine(
    spec: str,
    *,
    base_url: str | None = None,
    cache_path: Path | None = None,
    settings: Any = None,
    make_mode: Callable[[], Mode] | None = None,
    timeout: float = 120.0,
    temperature: float | None = None,
    prices: PriceTable | None = None,
) -> Callable[[list[Unit], Codebook, Path], list[Annotation]]:
    """A ``judge`` for :func:`recode_project` over the judge engine's public API.

    ``make_mode`` builds the run mode (per unit, grouped, batch, cascade) for each call; a
    cascade's first judge is a client closed at the end of a run, so each run gets its own.
    """
    from failcodes.judge import JudgeJob, PerUnit, make_coder, read_annotations, run_judge

    def judge(units: list[Unit], codebook: Codebook, run_dir: Path) -> list[Annotation]:
        coder = make_coder(spec, base_url=base_url, timeout=timeout, temperature=temperature)
        job = JudgeJob(
            codebook,
            units[0].kind,
            run_dir,
            mode=PerUnit() if make_mode is None else make_mode(),
            cache_path=cache_path,
            prices=prices,
            settings=settings,
        )
        run_judge(units, coder, job)
        wanted = {u.id for u in units}
        return [a for a in read_annotations(run_dir) if a.unit_id in wanted]

    return judge
