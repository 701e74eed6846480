"""The reference view's own rules beyond the contract: a change that the contract forbids is
refused with a clear error, and the old snapshot is left as it was."""

from __future__ import annotations

import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.snapshot import ClusterSnapshot, NodeSnapshot
from dagpilot.core.types import Resources
from tests.core.view_conformance import CLUSTER, conformance_pods, gpu_node


def test_a_change_leaves_the_old_snapshot_as_it_was() -> None:
    pods = conformance_pods()
    before = ClusterSnapshot.of(CLUSTER, pods)
    after = before.bound(Placement(pods[0], "n-a"))
    assert before.nodes[0].allocated == Resources() and len(before.pending) == 4
    assert after.nodes[0].allocated.cpu == 1 and len(after.pending) == 3


@pytest.mark.parametrize(("placement", "message"), [
    (lambda pods: Placement(pods[0], "nowhere"), "no node 'nowhere'"),
    (lambda pods: Placement(pods[2], "n-a"), "does not fit"),
    (lambda pods: Placement(pods[2], "n-gpu", (0, 0)), "GPUs"),
])
def test_a_bind_the_contract_forbids_is_refused(placement: object, message: str) -> None:
    pods = conformance_pods()
    with pytest.raises(ValueError, match=message):
        ClusterSnapshot.of(CLUSTER, pods).bound(placement(pods))  # type: ignore[operator]


def test_a_pod_bound_twice_a_cordoned_spec_by_with_node_and_a_busy_node_removed_are_refused(
        ) -> None:
    pods = conformance_pods()
    view = ClusterSnapshot.of(CLUSTER, pods).bound(Placement(pods[0], "n-a"))
    with pytest.raises(ValueError, match="is not pending"):
        view.bound(Placement(pods[0], "n-b"))
    with pytest.raises(ValueError, match="with_spec"):
        view.with_node("n-a", spec=CLUSTER.nodes[1])
    with pytest.raises(ValueError, match="still runs"):
        view.with_inventory(CLUSTER.nodes[1:])
    with pytest.raises(ValueError, match="never goes back"):
        view.at(10.0).at(5.0)


def test_free_gpus_default_to_those_left_after_the_allocated_ones() -> None:
    assert NodeSnapshot(gpu_node()).free_gpus == (0, 1, 2, 3)
    assert NodeSnapshot(gpu_node(), Resources(0, 0, 3, "A100")).free_gpus == (3,)
    assert NodeSnapshot(gpu_node(), free_gpus=(1,)).free_gpus == (1,)


def test_nodes_that_are_not_the_clusters_are_refused() -> None:
    with pytest.raises(ValueError, match="cluster's nodes"):
        ClusterSnapshot(0.0, CLUSTER, (NodeSnapshot(CLUSTER.nodes[1]),))
