"""A pod's PodRef uid is never another live pod's: pods deleted before a new one arrives do not
hand it a number in use (it was len() of the numbers held, so a new pod took the newest live
pod's number: two pending PodRefs with one uid, and a placement of one resolving to the other's
name, which crashed the serve scheduler's fallback in the throughput bench)."""

from __future__ import annotations

from dagpilot.live.kube_api import Resource
from dagpilot.live.pods import decode_pod
from dagpilot.live.watcher import Change
from tests.live.objects import pod
from tests.live.test_view import _view


def test_a_new_pod_after_a_deletion_gets_a_number_of_its_own() -> None:
    view, _ = _view(pods=[pod("a", uid="u-a"), pod("b", uid="u-b", version=2)])
    view.feed(Change(Resource.PODS, "DELETED", decode_pod(pod("a", uid="u-a", version=3))))
    view.feed(Change(Resource.PODS, "ADDED", decode_pod(pod("c", uid="u-c", version=4))))
    view.sync()
    refs = view.pending
    assert [ref.task.id for ref in refs] == ["b", "c"]
    assert len({ref.uid for ref in refs}) == 2
    assert [view.pod_key(ref) for ref in refs] == ["ns/b", "ns/c"]
