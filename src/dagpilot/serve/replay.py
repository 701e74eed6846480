"""The replay cache: a signature is accepted once.

A nonce (key id and MAC) is kept until its timestamp falls out of the freshness window, after
which the timestamp check refuses it anyway; so the cache holds at most the signatures of one
window. It is bounded: when full of live entries it refuses new ones (the endpoint answers
503) rather than forgetting one that could then be replayed.
"""

from __future__ import annotations

import heapq
import threading

DEFAULT_CAPACITY = 100_000


class CacheFull(Exception):
    """Every remembered signature is still fresh: accepting more would forget one."""


class NonceCache:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._expiries: list[tuple[float, str]] = []
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, nonce: str, expires_at_s: float, now_s: float) -> bool:
        """True the first time `nonce` is claimed; False for a replay. Check and insert are one
        step, so two copies of a request sent at once cannot both pass."""
        with self._lock:
            self._forget_expired(now_s)
            if nonce in self._seen:
                return False
            if len(self._seen) >= self.capacity:
                raise CacheFull(f"{len(self._seen)} signatures still fresh")
            self._seen.add(nonce)
            heapq.heappush(self._expiries, (expires_at_s, nonce))
            return True

    def __len__(self) -> int:
        return len(self._seen)

    def _forget_expired(self, now_s: float) -> None:
        while self._expiries and self._expiries[0][0] < now_s:
            _, nonce = heapq.heappop(self._expiries)
            self._seen.discard(nonce)
