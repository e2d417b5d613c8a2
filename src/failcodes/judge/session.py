"""One invocation of a judge run over its journal: resume, dedupe, budget, workers, summary.

Every run mode goes through a :class:`Session`: it binds the run identity to the journal
(refusing to resume a different run), drops units already journaled or repeated, opens the
journal session, runs work items on concurrent workers with a budget reservation per item
(``--budget`` stops scheduling new calls before the run's spend, earlier invocations' and
this one's, would cross the limit; calls in flight finish and are committed), commits each
outcome at once and counts it in the one :class:`~failcodes.judge.summary.RunSummary`, and
closes the journal session with its outcome and totals whatever happens.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar, runtime_checkable

from failcodes.errors import BudgetExceededError
from failcodes.judge.journal import Journal
from failcodes.judge.prompts import group_prompt_hash
from failcodes.judge.summary import RunSummary
from failcodes.judge.unitjudge import Outcome, UnitJudge
from failcodes.units import Unit

ProgressCallback = Callable[[int, int], None]
T = TypeVar("T")

#: Units of a :class:`CountedUnits` stream checked against the journal at once (resuming).
PENDING_CHUNK = 512


@runtime_checkable
class CountedUnits(Protocol):
    """Distinct units read one at a time (from a file), counted before the first is given.

    A session judges them without holding them: it counts them (and those its journal
    already holds) first, for the summary and the progress, then takes them one by one.
    """

    def __len__(self) -> int:
        """How many distinct units the stream gives."""

    def held(self, unit_ids: Iterable[str]) -> int:
        """How many of ``unit_ids`` (distinct) are among the stream's units."""

    def __iter__(self) -> Iterator[Unit]:
        """The units, each once, in the order a built list of them has."""


def unique(units: Iterable[Unit]) -> Iterator[Unit]:
    """``units`` without repeated ids (first seen kept)."""
    seen: set[str] = set()
    for unit in units:
        if unit.id not in seen:
            seen.add(unit.id)
            yield unit


class Session:
    """One invocation of a run (see the module docstring)."""

    def __init__(
        self,
        journal: Journal,
        judge: UnitJudge,
        *,
        mode: str,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.journal = journal
        self.judge = judge
        self.mode = mode
        self.on_progress = on_progress
        self.summary = judge.new_summary(units=0, already_done=0, mode=mode)
        #: Units this invocation has to judge (set by :meth:`pending`).
        self.total = 0
        self._reserved = 0.0
        self._in_flight = 0
        #: When the budget stopped scheduling: (spent, set aside, calls in flight, next call).
        self._stop = (0.0, 0.0, 0, 0.0)
        self._budget_hit = False
        #: What the run's earlier invocations spent (counted against ``--budget``).
        self._spent_before = 0.0
        self._started = time.monotonic()

    def pending(self, units: Iterable[Unit]) -> Iterable[Unit]:
        """The units still to judge: deduplicated, minus those already journaled.

        A :class:`CountedUnits` stream stays a stream: what is pending is given one unit at
        a time, checked against the journal a chunk at a time (only when the journal held
        some of its units when the session started).
        """
        if isinstance(units, CountedUnits):
            already = units.held(self.journal.iter_ids())
            self.count_input(len(units), already)
            return self._undone(units) if already else iter(units)
        done = self.journal.done_ids()
        unique_units = list(unique(units))
        todo = [u for u in unique_units if u.id not in done]
        self.count_input(len(unique_units), len(unique_units) - len(todo))
        return todo

    def from_cache(self, units: Iterable[Unit]) -> list[Unit]:
        """Record the units the response cache answers as asked alone; return the others.

        What a grouped run (by direct calls or in batches) does before it groups: a unit
        answered in the cache is not sent again inside a group.
        """
        judge = self.judge
        if judge.cache is None:
            return list(units)
        rest: list[Unit] = []
        for unit in units:
            out = judge.from_cache(unit, judge.key(judge.user(unit)))
            if out is None:
                rest.append(unit)
            else:
                self.record(out)
        return rest

    def _undone(self, units: Iterable[Unit]) -> Iterator[Unit]:
        """``units`` without those the journal holds, asked a chunk at a time."""
        it = iter(units)
        while chunk := list(itertools.islice(it, PENDING_CHUNK)):
            yield from self._not_journaled(chunk)

    def _not_journaled(self, chunk: list[Unit]) -> list[Unit]:
        done = self.journal.present([u.id for u in chunk])
        return [u for u in chunk if u.id not in done]

    def count_input(self, units: int, already_done: int) -> None:
        """Count units seen (and how many were already journaled) in the summary."""
        self.summary.units += units
        self.summary.already_done += already_done
        self.total += units - already_done

    @contextmanager
    def opened(self) -> Iterator[RunSummary]:
        """Bind the run identity, open the journal session, and close it with its outcome."""
        self._started = time.monotonic()
        meta = {**self.judge.meta(), "mode": self.mode}
        if self.judge.is_llm and self.mode.endswith("grouped"):  # a group template is shown too
            meta["group_prompt_hash"] = group_prompt_hash()
        self.summary.other_endpoints = self.journal.bind(meta)
        self.summary.other_shapes = self.journal.other_shapes(meta, self.mode)
        # the budget is the run's: what its earlier invocations spent counts (a rerun after a
        # budget stop spent the budget again, $150.83 on a run given --budget 100, and the
        # stop's advice, a larger --budget, spent a larger one again)
        if self.judge.settings.budget_usd is not None:
            self._spent_before = self.journal.totals().cost_usd
        self.journal.start_session()
        outcome = "finished"
        try:
            yield self.summary
        except BudgetExceededError:
            outcome = "budget"
            raise
        except BaseException as exc:
            outcome = f"error: {type(exc).__name__}"
            raise
        finally:
            self.close(outcome)

    def close(self, outcome: str) -> None:
        """Finish the journal session: elapsed time, journal totals, outcome."""
        s = self.summary
        s.elapsed_s = time.monotonic() - self._started
        totals = self.journal.totals()
        s.journal_units = totals.units
        s.journal_cost_usd = totals.cost_usd
        self.journal.finish_session(outcome, s.model_dump(mode="json"))

    def record(self, out: Outcome) -> None:
        """Commit one outcome to the journal now and count it."""
        self.journal.record(
            out.annotation,
            tokens=out.tokens,
            raw_request=out.raw_request,
            raw_response=out.raw_response,
            cache_hit=out.cache_hit,
            attempts=out.attempts,
            blobs=self.judge.blobs,
        )
        if not self.summary.judged and self.judge.is_llm:  # its first unit: named at once
            self.journal.judged_at(self.judge.base_url or "", self.mode)
        self.summary.add(out.annotation, out.tokens, cache_hit=out.cache_hit)

    def progress(self) -> None:
        """Report progress to the callback, if any."""
        if self.on_progress is not None:
            self.on_progress(self.summary.judged, self.total)

    async def drive(
        self,
        items: Iterable[T],
        handle: Callable[[T], Awaitable[list[Outcome]]],
        *,
        reserve: Callable[[T], float] | None = None,
        workers: int = 1,
    ) -> None:
        """Run ``handle`` over ``items`` on ``workers`` concurrent workers, committing outcomes.

        With a budget, ``reserve(item)`` (USD) is set aside before each item; when the spent
        plus reserved cost would cross the budget, no new item starts, the items in flight
        finish and are committed, then :class:`BudgetExceededError` is raised. The first
        error of a worker stops the others (what is committed stays) and is raised.
        """
        queue = iter(items)
        budget = self.judge.settings.budget_usd if self.judge.is_llm else None
        before = self._spent_before
        state: dict[str, BaseException | bool | None] = {"error": None, "stop": False}

        async def worker() -> None:
            while not state["stop"]:
                item = next(queue, None)
                if item is None:
                    return
                cost = 0.0
                if budget is not None and reserve is not None:
                    cost = reserve(item)
                    if before + self.summary.cost_usd + self._reserved + cost > budget:
                        if not self._budget_hit:  # what stopped scheduling, said at the end
                            now = before + self.summary.cost_usd
                            self._stop = (now, self._reserved, self._in_flight, cost)
                        self._budget_hit = True
                        state["stop"] = True
                        return
                self._reserved += cost
                self._in_flight += 1
                try:
                    outcomes = await handle(item)
                except Exception as exc:  # stop everyone, keep what is committed
                    if state["error"] is None:
                        state["error"] = exc
                    state["stop"] = True
                    return
                finally:
                    self._reserved -= cost
                    self._in_flight -= 1
                for out in outcomes:
                    self.record(out)
                self.progress()

        await asyncio.gather(*(worker() for _ in range(max(1, workers))))
        error = state["error"]
        if isinstance(error, BaseException):
            raise error
        if self._budget_hit:
            s = self.summary
            s.stopped_by_budget = True
            spent = f"${s.cost_usd:.4f}"
            if before:
                spent += f" (the run's total ${before + s.cost_usd:.4f}: ${before:.4f} before)"
            raise BudgetExceededError(
                f"{self._stop_reason(budget or 0.0, spent)}; "
                f"{s.judged} units judged and committed, {self.total - s.judged} left "
                "(rerun with a larger --budget to resume: it bounds the run's total)"
            )

    def _stop_reason(self, budget: float, spent: str) -> str:
        """Why scheduling stopped: the budget reached, or crossed only with calls in flight.

        Each call sets aside its input and expected output tokens until it is paid: with
        --concurrency 8 a small budget stopped at a third of it, and "reached" was not so.
        """
        now, reserved, flying, cost = self._stop
        if not flying or now + cost > budget:
            return (
                f"budget of ${budget:.4f} reached after spending {spent} (the next call, at "
                f"its input and expected output tokens, ${cost:.4f}, would cross it)"
            )
        return (
            f"budget of ${budget:.4f} would be exceeded by the calls in flight: scheduling "
            f"stopped at ${now:.4f} spent, with ${reserved:.4f} set aside for {flying} call(s) "
            f"in flight and ${cost:.4f} for the next (each sets aside its input and expected "
            f"output tokens until it is paid); {spent} spent once they finished"
        )
