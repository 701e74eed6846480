"""The replay cache: one claim per nonce while it is fresh, bounded without forgetting."""

from __future__ import annotations

import threading

import pytest

from dagpilot.serve.replay import CacheFull, NonceCache


def test_a_nonce_is_claimed_once() -> None:
    cache = NonceCache()
    assert cache.claim("k:aa", expires_at_s=100, now_s=0)
    assert not cache.claim("k:aa", expires_at_s=100, now_s=50)
    assert cache.claim("k:bb", expires_at_s=100, now_s=50)


def test_an_expired_nonce_is_forgotten() -> None:
    cache = NonceCache()
    cache.claim("k:aa", expires_at_s=100, now_s=0)
    cache.claim("k:bb", expires_at_s=300, now_s=0)
    cache.claim("k:cc", expires_at_s=400, now_s=150)  # forgets aa on the way
    assert len(cache) == 2
    assert cache.claim("k:aa", expires_at_s=500, now_s=150)


def test_a_full_cache_refuses_rather_than_forgets() -> None:
    cache = NonceCache(capacity=2)
    cache.claim("a", 100, 0)
    cache.claim("b", 100, 0)
    with pytest.raises(CacheFull):
        cache.claim("c", 100, 1)
    assert not cache.claim("a", 100, 1)  # still remembered
    assert cache.claim("c", 300, 101)  # a and b expired: room again


def test_concurrent_claims_of_one_nonce_let_exactly_one_through() -> None:
    cache = NonceCache()
    results: list[bool] = []
    start = threading.Barrier(8)

    def claim() -> None:
        start.wait()
        results.append(cache.claim("same", 100, 0))
    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]
