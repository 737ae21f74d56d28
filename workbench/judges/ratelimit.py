"""Client-side rate limiting: token buckets for requests and tokens per minute, plus pauses.

Both buckets refill continuously (rate/60 per second) up to a capacity of one
minute's allowance, the way the providers meter. A request estimated larger
than the token bucket's capacity waits for a full bucket rather than forever.
`pause(seconds)` holds every caller back, e.g. after a 429 with Retry-After.
The clock and the sleep function are injectable so tests never sleep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class TokenBucket:
    def __init__(self, per_minute: float, *, now: float, capacity: float | None = None):
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be positive, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = float(capacity if capacity is not None else per_minute)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until `amount` is available (0 if it is now)."""
        self.refill(now)
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need - 1e-6 else (need - self.level) / self.rate

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)

    def give_back(self, amount: float) -> None:
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits shared by all workers of a run.

    `acquire(tokens)` waits (FIFO) until a request of about `tokens` tokens may
    be sent; `settle(estimated, actual)` corrects the token bucket once the real
    usage is known; `pause(seconds)` stops everyone for a while.
    """

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.clock, self.sleep = clock, sleep
        now = clock()
        self.requests = TokenBucket(requests_per_minute, now=now) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute, now=now) if tokens_per_minute else None
        self.paused_until = 0.0
        self._lock: asyncio.Lock | None = None
        self.waited = 0.0  # total seconds callers were held back (for reports and tests)

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None or self.paused_until > self.clock()

    def pause(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, self.clock() + max(0.0, seconds))

    def _wait(self, tokens: float) -> float:
        now = self.clock()
        wait = max(0.0, self.paused_until - now)
        if self.requests is not None:
            wait = max(wait, self.requests.wait_for(1, now))
        if self.tokens is not None:
            wait = max(wait, self.tokens.wait_for(tokens, now))
        return wait

    async def acquire(self, tokens: int = 0) -> None:
        if not self.active:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one waiter at a time keeps the order fair
            while True:
                wait = self._wait(tokens)
                if wait <= 1e-6:  # below clock resolution: waiting would not move the clock
                    break
                self.waited += wait
                await self.sleep(wait)
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        if self.tokens is None:
            return
        if actual < estimated:
            self.tokens.give_back(estimated - actual)
        elif actual > estimated:
            self.tokens.level -= actual - estimated  # may go negative: later callers wait it off
