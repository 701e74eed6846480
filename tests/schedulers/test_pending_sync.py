"""PendingSync: new pods found at the tail; anything else asks for a rebuild."""

from __future__ import annotations

from dagpilot.schedulers.pending_sync import PendingSync
from tests.schedulers.views import job, pods_of, task

WORK = job("J", [task(f"t{i}", 1, 1) for i in range(5)])
PODS = pods_of(WORK, [f"t{i}" for i in range(5)])


def test_tail_additions_and_taken_pods() -> None:
    sync = PendingSync()
    assert sync.changes(PODS[:2]) == (PODS[:2], False)
    assert sync.changes(PODS[:2]) == ([], False)
    sync.taken(PODS[0])
    assert sync.changes([PODS[1], *PODS[2:4]]) == (PODS[2:4], False)


def test_pods_leaving_unannounced_or_joining_mid_list_force_a_rebuild() -> None:
    sync = PendingSync()
    sync.changes(PODS[:3])
    assert sync.changes([PODS[0], PODS[2]]) == ([PODS[0], PODS[2]], True)  # PODS[1] left
    assert sync.changes([PODS[3], PODS[0], PODS[2]]) == ([PODS[3], PODS[0], PODS[2]], True)
    # Placed but the placement was not applied: the pod comes back, at the tail or by rebuild.
    sync.taken(PODS[2])
    assert sync.changes([PODS[3], PODS[0], PODS[2]]) == ([PODS[2]], False)
    sync.taken(PODS[0])
    assert sync.changes([PODS[3], PODS[0], PODS[2]])[1]
