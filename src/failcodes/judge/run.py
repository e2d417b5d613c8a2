"""Judge units into a run directory: the one place that opens a run's journal and cache.

A run directory holds ``journal.sqlite`` (the source of truth, resumable) and, after every
invocation, ``annotations.jsonl`` and ``summary.json`` exported from it (written
atomically). :func:`run_judge` (and its coroutine :func:`run_judge_async`) opens the journal
and the response cache, builds the :class:`~failcodes.judge.unitjudge.UnitJudge` and the
:class:`~failcodes.judge.session.Session`, executes the run mode (:mod:`failcodes.judge.modes`),
exports, and closes everything; :func:`estimate_run` prices the same run without calling
anything.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import shutil
import sqlite3
from collections.abc import Callable, Coroutine, Iterable, Sequence, Set
from contextlib import closing
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from failcodes.annotations import Annotation
from failcodes.errors import BudgetExceededError, ConfigError, FailcodesError
from failcodes.fileio import made_dir, write_json, write_jsonl
from failcodes.judge.cascade import FIRST_DIR, coded_by, keep_confident, split
from failcodes.judge.estimate import CostEstimate, estimate_units
from failcodes.judge.execute import executor
from failcodes.judge.job import JudgeJob
from failcodes.judge.journal import (
    JOURNAL_NAME,
    PANEL_FILE,
    Journal,
    RunIdentityError,
    check_identity,
    iter_journal,
)
from failcodes.judge.modes import Cascade, PerUnit
from failcodes.judge.providers.base import DirectCoder, LLMProvider
from failcodes.judge.session import CountedUnits, ProgressCallback, Session
from failcodes.judge.summary import CascadeInfo, RunSummary
from failcodes.runlock import FolderLockedError, folder_lock
from failcodes.units import Unit

ANNOTATIONS_NAME = "annotations.jsonl"
SUMMARY_NAME = "summary.json"
ESTIMATE_NAME = "estimate.json"

Coder = LLMProvider | DirectCoder
P = ParamSpec("P")
R = TypeVar("R")


def export_run(
    run_dir: str | Path, summary: RunSummary | None = None, *, only: Set[str] | None = None
) -> Path:
    """Export the journal's annotations (and the summary) as JSONL/JSON files.

    Streams from the journal to a temp file (memory stays flat), then renames it into place.
    ``only``: the unit ids of the run's latest input, when its journal holds others (judged
    from an earlier ``--from`` or ``--top-k``): they stay in the journal (a later input may
    hold them again), left out of ``annotations.jsonl`` and counted in the summary's
    ``other_units``. Exported, they were read with the input's own: a report's quote checks
    counted them, a panel's agreement and consensus took them in.
    """
    run = Path(run_dir)
    out = run / ANNOTATIONS_NAME
    journal = Journal(run)
    try:
        write_jsonl(out, journal.annotation_texts(only))
        if summary is not None and only is not None:
            summary.other_units = sum(1 for unit in journal.iter_ids() if unit not in only)
    finally:
        journal.close()
    if summary is not None:
        write_json(run / SUMMARY_NAME, summary)
    return out


def _this_input(journal: Journal, units: Iterable[Unit]) -> tuple[Iterable[Unit], set[str] | None]:
    """``units`` (a list, unless a counted stream), and this input's unit ids if need be.

    The ids when the journal holds units of another input (None: every journaled unit is
    one of ``units``); a stream is read once more for its ids only then.
    """
    if not isinstance(units, CountedUnits):
        units = list(units)
    total = journal.totals().units
    if not total:
        return units, None
    if isinstance(units, CountedUnits):
        if units.held(journal.iter_ids()) == total:
            return units, None
        return units, {u.id for u in units}
    ids = {u.id for u in units}
    return units, None if all(u in ids for u in journal.iter_ids()) else ids


def discard_if_untouched(run_dir: str | Path) -> bool:
    """Remove a run folder that a failed first invocation made and left empty-handed.

    A judge that could not reach its endpoint (or failed before its first answer) leaves a
    folder with an empty journal; kept, it would look like a run to resume or report. Removed
    only when nothing was spent or coded: no summary, or one with no answered call (no
    tokens), no committed unit, no cost, no submitted batch and no cascade stage. Returns
    whether it was removed.

    Checked and removed under the folder's own write lock: a second judge started on the
    same new folder fails on that lock while the first is judging (with no summary yet) and
    must not remove the first one's run from under it.
    """
    run = Path(run_dir)
    if not run.is_dir():
        return False
    try:
        with folder_lock(run, what="judge run"):
            return _discard_unlocked(run)
    except FolderLockedError:
        return False  # another process is working in it


def _discard_unlocked(run: Path) -> bool:
    try:
        from failcodes.tableio import read_model_if_exists

        summary = read_model_if_exists(run / SUMMARY_NAME, RunSummary, what="not a run summary")
    except (FailcodesError, OSError, ValueError):
        return False  # unreadable: leave it for the user to look at
    if summary is not None and (
        summary.input_tokens  # a call that got an answer (attempts that failed count in calls)
        or summary.output_tokens
        or summary.journal_units
        or summary.journal_cost_usd
        or summary.batches
        or summary.cascade is not None
        or (run / FIRST_DIR).exists()
    ):
        return False
    shutil.rmtree(run, ignore_errors=True)
    return True


def write_estimate(run_dir: str | Path, estimate: CostEstimate) -> Path:
    """Keep a run's pre-run estimate beside it (``estimate.json``), for estimate vs actual."""
    path = Path(run_dir) / ESTIMATE_NAME
    write_json(path, estimate)
    return path


def read_summary(run_dir: str | Path) -> RunSummary | None:
    """Read the ``summary.json`` of the latest invocation of a run, if any."""
    from failcodes.tableio import read_model_if_exists

    return read_model_if_exists(Path(run_dir) / SUMMARY_NAME, RunSummary, what="not a run summary")


def read_annotations(run_dir: str | Path) -> list[Annotation]:
    """Read every annotation of a run (from its journal, which is left untouched)."""
    return list(iter_journal(run_dir))


def refuse_another_run(job: JudgeJob, coder: Coder) -> None:
    """Refuse a run folder that holds another run (judge, model, kind, codebook) untouched.

    The run's own bind makes this check under the folder's lock, after the lock file is
    written and the journal opened (its -wal made and removed); made first, from the journal
    read as an immutable file, a refused run or dry run leaves the folder as it was. A
    journal this cannot read is left to the run's own open to name.
    """
    run = Path(job.run_dir)
    if (run / PANEL_FILE).is_file():  # its consensus is what attribute and report read
        meta = job.unit_judge(coder, None).meta()
        raise RunIdentityError(run, "judge", {"judge": "a judge panel (panel.json)"}, meta)
    stored = _stored_meta(run)
    if stored is not None:
        check_identity(run, stored, job.unit_judge(coder, None).meta())


def refuse_single_run(run_dir: Path, panel: str) -> None:
    """Refuse a judge panel's run into a folder holding one judge's run (its journal).

    The panel's ``panel.json`` then stood beside the other judge's codes, and every reader
    took the panel's: a judge changed in a study's ``[judge]`` was said nowhere.
    """
    stored = _stored_meta(Path(run_dir))
    if stored is not None:
        judge = {"judge": stored.get("judge", "one judge")}
        raise RunIdentityError(Path(run_dir), "judge", judge, {"judge": panel})


def _stored_meta(run: Path) -> dict[str, str] | None:
    """The meta of ``run``'s journal, read as an immutable file (None: no journal read)."""
    path = run / JOURNAL_NAME
    if not path.is_file():
        return None
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            return {str(k): str(v) for k, v in db.execute("SELECT key, value FROM meta")}
    except sqlite3.Error:
        return None


async def _run_in(
    units: Iterable[Unit], coder: Coder, job: JudgeJob, on_progress: ProgressCallback | None
) -> RunSummary:
    """Open the job's journal (and the cache), run its mode in one session, export, close."""
    mode = job.mode
    if isinstance(mode, Cascade):
        raise ConfigError("a cascade's stages cannot be cascades themselves")
    session: Session | None = None
    current: set[str] | None = None
    try:
        with job.opened(coder) as (journal, judge):
            units, current = _this_input(journal, units)
            candidate = Session(journal, judge, mode=mode.name, on_progress=on_progress)
            execute = executor(candidate, mode)
            with candidate.opened():  # binds the run: another run's folder is refused here,
                session = candidate  # its summary.json and annotations.jsonl left as they are
                await execute(units)
    finally:
        if session is not None:
            export_run(job.run_dir, session.summary, only=current)
    return session.summary


async def run_judge_async(
    units: Iterable[Unit],
    coder: Coder,
    job: JudgeJob,
    *,
    on_progress: ProgressCallback | None = None,
) -> RunSummary:
    """Judge ``units`` with ``coder`` as ``job`` asks (resuming its run); return the summary.

    On a budget stop or a provider failure the finished units stay committed and exported,
    and the error propagates; the summary so far is still written to ``summary.json``.
    The coder's client (and a cascade's first judge's) is closed at the end.
    """
    mode = job.mode
    try:
        with folder_lock(made_dir(job.run_dir), what="judge run"):  # one writer per run folder
            if not isinstance(mode, Cascade):
                return await _run_in(units, coder, job, on_progress)
            return await _cascade(list(units), coder, job, mode, on_progress)
    finally:
        for c in (coder, mode.first if isinstance(mode, Cascade) else None):
            if isinstance(c, LLMProvider):
                await c.aclose()


async def _cascade(
    units: list[Unit],
    coder: Coder,
    job: JudgeJob,
    mode: Cascade,
    on_progress: ProgressCallback | None,
) -> RunSummary:
    """The three stages of a cascade (see :mod:`failcodes.judge.cascade`)."""
    run = job.run_dir
    first_job = job.at(run / FIRST_DIR, mode=PerUnit(), cached=False, settings=False)
    first = await _run_in(units, mode.first, first_job, None)
    firsts = {a.unit_id: a for a in read_annotations(run / FIRST_DIR)}
    escalate, kept = split(units, firsts)
    summary = await _run_in(escalate, coder, job.at(run, mode=mode.then), on_progress)
    main = Journal(run)
    try:
        keep_confident(main, firsts, kept)
        counts = coded_by(a for a in main.annotations() if a.unit_id in firsts)
    finally:
        main.close()
    summary.mode = mode.name
    summary.other_units = 0  # counted again below, over the whole cascade's units
    summary.cascade = CascadeInfo(
        first_judge=first.judge,
        first_coder_kind=first.coder_kind,
        first_units=first.units,
        kept=len(kept),
        escalated=len(escalate),
        coded_by=counts,
    )
    export_run(run, summary, only={u.id for u in units})
    return summary


def _synchronous(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """A blocking twin of the coroutine function ``fn``.

    Works inside a running event loop too (Jupyter): the coroutine then runs on its own
    thread with its own loop.
    """

    @functools.wraps(fn)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> R:
        job = functools.partial(asyncio.run, fn(*args, **kwargs))
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return job()
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(job).result()

    return blocking


#: Synchronous :func:`run_judge_async` (same arguments; usable inside Jupyter's loop).
run_judge = _synchronous(run_judge_async)


async def run_judges_async(
    runs: Sequence[tuple[Iterable[Unit], Coder, JudgeJob]],
) -> list[RunSummary]:
    """Several :func:`run_judge_async` runs at once (a panel's members); their summaries.

    Each run keeps its own limits (concurrency, per-minute rates, budget), so two judges
    take about the time of one. When one fails the others are cancelled (what they finished
    stays committed in their journals and is exported) and the first failure propagates;
    one stopped by its budget lets the others end their runs within their own budgets first
    (cancelled, their calls in flight were paid and lost: 6 made, 4 committed).
    """
    tasks = [asyncio.ensure_future(run_judge_async(u, c, j)) for u, c, j in runs]
    try:
        return list(await asyncio.gather(*tasks))
    except BudgetExceededError:
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


#: Synchronous :func:`run_judges_async`.
run_judges = _synchronous(run_judges_async)


def estimate_run(units: Iterable[Unit], coder: Coder, job: JudgeJob) -> CostEstimate:
    """Estimate ``job`` run with ``coder`` (``--dry-run``): one cost figure, nothing called.

    Nothing is written but the journal (opened to see what is already done).
    """
    with (
        folder_lock(made_dir(job.run_dir), what="judge run"),
        job.opened(coder) as (journal, judge),
    ):
        return estimate_units(judge, journal, units, job.mode)
