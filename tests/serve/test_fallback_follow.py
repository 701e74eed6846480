"""The fallback follows a pending list that others change too: between two of its calls the
model places pods and held-back pods come back (the loop's pinned list), so a pod it queued may
be gone and an older one back. It places only pods pending now (a stale pod queued twice
crashed the scheduling loop with a TypeError from the queue's heap)."""

from __future__ import annotations

from dagpilot.core.snapshot import ClusterSnapshot
from dagpilot.core.view import PodRef
from dagpilot.serve.fallback import Fallback
from tests.sim.helpers import job, task
from tests.test_agent import filtered_cluster


def _pod(uid: int, created_s: float) -> PodRef:
    one = job(f"j{uid}", task("t", 30.0, cpu=1.0))
    return PodRef(uid, one, one.tasks[0], 0, created_s)


def test_a_pod_gone_meanwhile_is_never_placed_and_one_back_is() -> None:
    cluster = filtered_cluster()
    a, b, c, back = _pod(1, 0.0), _pod(2, 1.0), _pod(3, 2.0), _pod(4, 0.5)
    fallback = Fallback()
    first = fallback.decide(ClusterSnapshot.of(cluster, (a, b, c)))
    assert first is not None and first.pod is a  # the oldest
    # b was placed by the model; `back` (older than c) was held back and is eligible again:
    # as many pods as before, the newest one known, so only a rebuild sees the change
    second = fallback.decide(ClusterSnapshot.of(cluster, (back, c)))
    assert second is not None and second.pod is back
    third = fallback.decide(ClusterSnapshot.of(cluster, (c,)))
    assert third is not None and third.pod is c
