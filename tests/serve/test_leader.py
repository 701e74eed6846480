"""Leader election against an in-memory Lease store with the API server's one rule (a write at
an old resourceVersion is a 409), on a hand-driven clock: one leader at a time, a follower
takes over within lease duration + one retry period of the leader's last renewal, a leader that
cannot renew stops leading before anyone can take over, and a release hands over at once."""

from __future__ import annotations

import copy
from typing import Any, cast

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi
from dagpilot.serve.leader import LeaderElector, LeaseConfig

DURATION, RENEW, RETRY = 6.0, 4.0, 1.0


class Leases:
    def __init__(self) -> None:
        self.stored: dict[str, Any] | None = None
        self.version = 0
        self.down = False  # the API server unreachable

    def _check(self) -> None:
        if self.down:
            raise KubeApiError("fake", "unreachable")

    def read_lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        self._check()
        return copy.deepcopy(self.stored)

    def create_lease(self, namespace: str, lease: dict[str, Any]) -> dict[str, Any]:
        self._check()
        if self.stored is not None:
            raise KubeApiError("fake", "exists", 409)
        return self._store(lease)

    def replace_lease(self, namespace: str, lease: dict[str, Any]) -> dict[str, Any]:
        self._check()
        assert self.stored is not None
        if lease["metadata"].get("resourceVersion") != self.stored["metadata"]["resourceVersion"]:
            raise KubeApiError("fake", "conflict", 409)
        return self._store(lease)

    def _store(self, lease: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.stored = copy.deepcopy(lease)
        self.stored["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.stored)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def electors(store: Leases, clock: Clock) -> tuple[LeaderElector, LeaderElector]:
    api = cast(KubeApi, store)
    return tuple(LeaderElector(api, LeaseConfig("ns", name, lease_duration_s=DURATION,
                                                renew_deadline_s=RENEW,
                                                retry_period_s=RETRY), clock)
                 for name in ("a", "b"))  # type: ignore[return-value]


def tick(clock: Clock, *replicas: LeaderElector) -> None:
    for replica in replicas:
        replica.try_once()
    clock.now += RETRY


def test_one_leader_and_a_takeover_within_duration_plus_one_retry() -> None:
    store, clock = Leases(), Clock()
    a, b = electors(store, clock)
    for _ in range(20):
        tick(clock, a, b)
        assert a.is_leader and not b.is_leader
    died = clock.now - RETRY  # a's last renewal was at the start of the last tick
    while not b.is_leader:
        tick(clock, b)  # a is dead: it tries no more
        assert clock.now - died <= DURATION + 2 * RETRY
    assert clock.now - RETRY - died <= DURATION + RETRY
    assert store.stored is not None and store.stored["spec"]["holderIdentity"] == "b"
    assert store.stored["spec"]["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_stops_before_a_follower_can_take_over() -> None:
    store, clock = Leases(), Clock()
    a, b = electors(store, clock)
    tick(clock, a, b)
    store.down = True
    lost_at = None
    for _ in range(int(DURATION / RETRY) + 3):
        tick(clock, a)
        if lost_at is None and not a.is_leader:
            lost_at = clock.now
    assert lost_at is not None
    store.down = False
    while not b.is_leader:
        assert clock.now >= lost_at  # never two leaders: b leads only after a stopped
        tick(clock, b)
    assert not a.is_leader


def test_a_released_lease_is_taken_at_the_next_try() -> None:
    store, clock = Leases(), Clock()
    a, b = electors(store, clock)
    tick(clock, a, b)
    a.close(release=True)
    assert not a.is_leader
    tick(clock, b)
    assert b.is_leader
