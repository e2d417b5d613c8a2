"""The judge engine's classic entry point, kept for users: :class:`JudgeEngine`.

The engine is now split by concern: :class:`~failcodes.judge.unitjudge.UnitJudge` judges one
unit (request, cache key, the one retry loop, annotation, price), a
:class:`~failcodes.judge.session.Session` runs many over a journal (resume, dedupe, budget,
workers, the summary), :mod:`failcodes.judge.modes` says how they are sent and
:mod:`failcodes.judge.run` opens and closes a run. :class:`JudgeEngine` binds a judge to an
already open journal, for callers that manage the journal themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from failcodes.codebook import Codebook
from failcodes.judge.cache import ResponseCache
from failcodes.judge.estimate import CostEstimate, estimate_units
from failcodes.judge.execute import executor
from failcodes.judge.journal import Journal
from failcodes.judge.limits import Sleep
from failcodes.judge.modes import Batch, Grouped, PerUnit
from failcodes.judge.pricing import PriceTable
from failcodes.judge.session import ProgressCallback, Session
from failcodes.judge.settings import JudgeSettings
from failcodes.judge.summary import RunSummary
from failcodes.judge.unitjudge import Coder, UnitJudge
from failcodes.units import Unit, UnitKind


class JudgeEngine:
    """A :class:`UnitJudge` over an open journal: run units in a mode, or estimate them."""

    def __init__(
        self,
        coder: Coder,
        codebook: Codebook,
        kind: UnitKind,
        *,
        journal: Journal,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        settings: JudgeSettings | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.judge = UnitJudge(
            coder, codebook, kind, cache=cache, prices=prices, settings=settings, sleep=sleep
        )
        self.journal = journal

    async def run(
        self,
        units: Iterable[Unit],
        on_progress: ProgressCallback | None = None,
        *,
        mode: PerUnit | Grouped | Batch | None = None,
    ) -> RunSummary:
        """Judge every unit not yet journaled (raises BudgetExceededError on a budget stop)."""
        mode = mode or PerUnit()
        session = Session(self.journal, self.judge, mode=mode.name, on_progress=on_progress)
        execute = executor(session, mode)
        with session.opened():
            await execute(units)
        return session.summary

    def estimate(
        self, units: Iterable[Unit], mode: PerUnit | Grouped | Batch | None = None
    ) -> CostEstimate:
        """Estimate tokens and cost of judging ``units`` (journal and cache hits are free)."""
        return estimate_units(self.judge, self.journal, units, mode)
