"""A policy call with a deadline: the answer in time, or DeadlinePassed and the loop moves on.

Python cannot stop a call, so the call runs in one worker thread and the caller waits at most
`deadline_s` for it. A call past its deadline is abandoned: whatever it returns or raises
later is dropped, and until it has returned the runner is `busy` (every decision meanwhile goes
to the fallback at once instead of queueing behind it). The abandoned call may still be reading
the live view while the loop moves on; it reads a pinned pending list (scheduler_view) and its
result is never used, so a torn read can only make it fail, harmlessly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

Result = TypeVar("Result")

DEFAULT_DEADLINE_S = 0.1


class DeadlinePassed(Exception):
    """The call did not return within its deadline (it may still be running)."""


class PolicyBusy(Exception):
    """An earlier call past its deadline has not returned yet."""


class DeadlineRunner:
    def __init__(self, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        if not deadline_s > 0:
            raise ValueError("a deadline must be positive")
        self.deadline_s = deadline_s
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dagpilot-policy")
        self._late: Future[object] | None = None
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        with self._lock:
            if self._late is not None and self._late.done():
                self._late = None
            return self._late is not None

    def call(self, function: Callable[[], Result]) -> Result:
        """`function()`'s result or exception; DeadlinePassed after `deadline_s`, PolicyBusy
        while an abandoned call still runs."""
        if self.busy:
            raise PolicyBusy("an earlier policy call past its deadline is still running")
        future = self._pool.submit(function)
        try:
            return future.result(timeout=self.deadline_s)
        except FutureTimeout:
            with self._lock:
                self._late = future  # type: ignore[assignment]
            raise DeadlinePassed(f"no decision within {self.deadline_s * 1000:g} ms") from None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
