"""The one retry loop of every provider call (judge modes, RtV verdict judge, saturation).

Transient failures (:class:`RetryableProviderError`: 429, 5xx, timeouts, connection errors)
are retried with :class:`~failcodes.judge.limits.RetryPolicy`'s backoff, honouring the
server's retry-after; after the last attempt a :class:`~failcodes.errors.ProviderError` says
how many were made. The loop is tenacity's ``AsyncRetrying``; sleeping is asynchronous (an
event loop keeps serving other calls while one waits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tenacity import AsyncRetrying, RetryCallState, RetryError, retry_if_exception_type
from tenacity import stop_after_attempt as stop_after

from failcodes.errors import ProviderError
from failcodes.judge.limits import RetryPolicy, Sleep
from failcodes.judge.providers.base import (
    LLMProvider,
    ProviderReply,
    ProviderRequest,
    RetryableProviderError,
)


def _waiter(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        retry_after = exc.retry_after if isinstance(exc, RetryableProviderError) else None
        return policy.wait(state.attempt_number, retry_after)

    return wait


async def complete_with_retry(
    provider: LLMProvider,
    request: ProviderRequest,
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
    before_attempt: Callable[[], Awaitable[None]] | None = None,
    on_retry: Callable[[], None] | None = None,
) -> tuple[ProviderReply, int]:
    """Send ``request``, retrying transient failures; return the reply and the attempts made.

    ``before_attempt`` runs before every attempt (rate limiters, call counters);
    ``on_retry`` after every failed attempt that will be retried.
    """
    attempts = 0

    async def attempt() -> ProviderReply:
        nonlocal attempts
        attempts += 1
        if before_attempt is not None:
            await before_attempt()
        return await provider.complete(request)

    retrying = AsyncRetrying(
        stop=stop_after(policy.max_attempts),
        wait=_waiter(policy),
        retry=retry_if_exception_type(RetryableProviderError),
        sleep=sleep,
        before_sleep=(lambda _state: on_retry()) if on_retry is not None else None,
    )
    try:
        reply: ProviderReply = await retrying(attempt)
    except RetryError as err:
        last = err.last_attempt.exception()
        raise ProviderError(
            f"{provider.spec}: giving up after {attempts} attempts: {last}"
        ) from last
    return reply, attempts
