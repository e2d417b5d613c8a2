"""Executing a run mode over an open session (per unit, grouped by claim, or batch).

:func:`executor` returns the coroutine function that judges units in the mode; a mode that
does not fit the judge (grouping with the offline baseline, batch with a budget) raises a
:class:`~failcodes.errors.ConfigError` here, before the journal session opens.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from failcodes.judge.batch import BatchRun
from failcodes.judge.grouping import GroupJudge, groups_by_claim
from failcodes.judge.modes import Batch, Grouped, PerUnit
from failcodes.judge.session import Session
from failcodes.judge.unitjudge import Outcome
from failcodes.units import Unit

Execute = Callable[[Iterable[Unit]], Awaitable[None]]


def executor(session: Session, mode: PerUnit | Grouped | Batch) -> Execute:
    """The coroutine function that runs ``mode`` over ``session``."""
    judge, tally = session.judge, session.summary
    workers = judge.settings.limits.concurrency if judge.is_llm else 1
    if isinstance(mode, Batch):
        return BatchRun(session, mode).run
    if isinstance(mode, Grouped):
        groups = GroupJudge(judge)
        size = max(1, mode.size)

        async def grouped(units: Iterable[Unit]) -> None:
            # a unit the cache answers is not sent again in a group (as in batch mode and as
            # the dry run counts it): 512 units cached by a batch run went out again in 52
            # grouped calls where the dry run said 0
            await session.drive(
                groups_by_claim(session.from_cache(session.pending(units)), size),
                lambda g: groups.judge_group(g, tally),
                reserve=groups.reserve_usd,
                workers=workers,
            )

        return grouped

    async def one(unit: Unit) -> list[Outcome]:
        return [await judge.judge(unit, tally)]

    async def per_unit(units: Iterable[Unit]) -> None:
        await session.drive(
            session.pending(units),
            one,
            reserve=lambda u: judge.reserve_usd(judge.user(u)),
            workers=workers,
        )

    return per_unit
