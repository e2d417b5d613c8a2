"""Retry policy and rate limits (requests and tokens per minute) for the judge engine."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

#: Bounds of the options that set these (issue 29): past them a run hangs on one call (an
#: hour's timeout, a batch polled an hour apart, 100 attempts of a failing call with
#: back-off) or opens more connections than an endpoint takes.
MAX_CONCURRENCY = 1024
MAX_ATTEMPTS = 100
MAX_WAIT_S = 3600.0

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How the engine retries transient provider failures and invalid answers.

    Waits grow exponentially from ``initial_wait`` up to ``max_wait`` (with jitter); a
    server's retry-after is honoured instead, capped at ``max_retry_after``. Tests use
    :meth:`no_wait`.
    """

    max_attempts: int = 6
    initial_wait: float = 1.0
    max_wait: float = 60.0
    max_retry_after: float = 300.0
    jitter: float = 0.25
    invalid_answer_retries: int = 2

    @classmethod
    def no_wait(cls, *, max_attempts: int = 6, invalid_answer_retries: int = 2) -> RetryPolicy:
        """A policy that never sleeps (retry-after included): for tests."""
        return cls(
            max_attempts=max_attempts,
            initial_wait=0.0,
            max_wait=0.0,
            max_retry_after=0.0,
            jitter=0.0,
            invalid_answer_retries=invalid_answer_retries,
        )

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            return float(min(retry_after, self.max_retry_after))
        base = min(self.initial_wait * float(2 ** (attempt - 1)), self.max_wait)
        return base * (1 + self.jitter * random.random())


class RateLimiter:
    """A token bucket: ``per_minute`` units refill continuously; bursts up to ``burst``.

    ``acquire(n)`` waits until ``n`` units are available. Requests larger than the bucket
    are let through once the bucket is full (so a single huge request cannot deadlock).
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("per_minute must be positive")
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_seconds, 1.0)
        self._tokens = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` units can be spent, then spend them."""
        async with self._lock:
            need = min(amount, self.capacity)
            self._refill()
            while self._tokens < need:
                await self._sleep((need - self._tokens) / self.rate)
                self._refill()
            self._tokens -= amount


@dataclass(frozen=True)
class Limits:
    """Concurrency and per-minute limits of one run (None: unlimited)."""

    concurrency: int = 8
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
