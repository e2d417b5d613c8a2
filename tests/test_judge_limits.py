import asyncio

import pytest

from failcodes.judge.limits import RateLimiter, RetryPolicy


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    async def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s


def test_rate_limiter_spaces_requests_after_the_burst() -> None:
    clock = Clock()
    # 60 per minute = 1 per second; burst of 5 s worth = 5 requests at once
    lim = RateLimiter(60, burst_seconds=5, clock=clock, sleep=clock.sleep)

    async def go() -> None:
        for _ in range(8):
            await lim.acquire(1)

    asyncio.run(go())
    # 5 free, then each next one waits exactly 1 s for a token to refill
    assert clock.sleeps == pytest.approx([1.0, 1.0, 1.0])
    assert clock.t == pytest.approx(3.0)


def test_token_limiter_lets_a_request_larger_than_the_bucket_through_once_full() -> None:
    clock = Clock()
    lim = RateLimiter(600, burst_seconds=1, clock=clock, sleep=clock.sleep)  # 10 tokens/s
    asyncio.run(lim.acquire(25))  # bucket full (10): goes through, leaves a debt of 15
    asyncio.run(lim.acquire(10))  # waits for -15 -> 10: 2.5 s
    assert clock.sleeps == pytest.approx([2.5])


def test_retry_policy_waits() -> None:
    p = RetryPolicy(initial_wait=1, max_wait=5, jitter=0, max_retry_after=30)
    assert [p.wait(a, None) for a in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert p.wait(1, 120) == 30  # retry-after honoured, capped
    assert RetryPolicy.no_wait().wait(3, 9) == 0
