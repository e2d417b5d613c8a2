"""Bring every coded unit of a saturation project onto the newest codebook version.

After a review accepts proposals, the new version flags the units it touches
(``recode.jsonl``, see :func:`failcodes.saturation.changes.recode_flags`). ``saturate recode``
then re-codes the **flagged** units under the newest version through the judge engine
(:func:`failcodes.judge.run_judge`) and **migrates** every other unit without a call
(:func:`failcodes.migration.migrate`; a code the map cannot carry sends the unit to the judge),
into ``recode/vNNNN/judge/`` and, when every unit is done, ``recode/vNNNN/recoded.jsonl`` (one
:class:`~failcodes.recoding.RecodeEntry` per unit) in one atomic step: docs/saturation.md, step
7 ("Re-code"). The re-coding engine is the study's (:mod:`failcodes.recoding`); this module
says where a project keeps its units, annotations and flags. The project's annotations
(:meth:`ProjectStore.all_annotations`) include these entries after the rounds, so the newest
annotation of every unit is then on the newest version, which ``saturate status`` shows.
"""

from __future__ import annotations

from failcodes.annotations import Annotation
from failcodes.codebook import migration_path
from failcodes.recoding import JudgeFn, RecodeResult, RecodeWork, plan_work, recode
from failcodes.saturation.rounds import latest_annotations
from failcodes.saturation.store import ProjectStore, SaturationError


def plan_recode(store: ProjectStore) -> RecodeWork:
    """Which units must be re-coded and which can be migrated to the newest version."""
    newest = store.codebook()
    lineage = [store.codebook(v) for v in store.versions()]
    flagged: dict[str, list[tuple[int, str]]] = {}
    for flag in store.recode_flags():
        text = f"v{flag.new_version} {flag.dimension}: {flag.reason}"
        flagged.setdefault(flag.unit_id, []).append((flag.new_version, text))
    stale: dict[str, Annotation | None] = {
        uid: ann
        for uid, ann in latest_annotations(store).items()
        if ann.codebook.version < newest.version
    }

    def flags(uid: str, ann: Annotation) -> list[str]:
        # flagged by a version newer than its annotation
        return [text for version, text in flagged.get(uid, []) if version > ann.codebook.version]

    entries_path = store.recoded_path(newest.version)
    work = plan_work(
        stale,
        codebook=newest,
        units={u.id: u for u in store.pool() if u.id in stale},
        run_dir=entries_path.parent / "judge",
        entries_path=entries_path,
        path=lambda ann: migration_path(lineage, ann.codebook.version, newest.version),
        flags=flags,
    )
    missing = [uid for uid in sorted(work.recode) if uid not in work.units]
    if missing:
        raise SaturationError(
            f"{len(missing)} flagged unit(s) are not in the pool (e.g. {missing[0]})",
            path=store.pool_path,
        )
    return work


def recode_project(store: ProjectStore, judge: JudgeFn, *, coder_name: str) -> RecodeResult:
    """Re-code the flagged units with ``judge(units, codebook, run_dir)``, migrate the rest.

    ``judge`` must code every unit it is given under ``codebook`` into ``run_dir`` (resuming
    what is there) and return their annotations
    (:class:`failcodes.recoding.EngineJudge` builds one from the judge engine). Nothing
    is written to the project until every unit is done.
    """
    return recode(plan_recode(store), judge, coder_name=coder_name)
