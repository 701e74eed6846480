from __future__ import annotations

import numpy as np
import pytest

from dagpilot.core.view import ClusterView
from dagpilot.state import bands
from dagpilot.state.calibration import Calibration
from dagpilot.state.job_distance import NONE, job_distance
from dagpilot.state.topology import NetworkTopology
from tests.state.sim_views import sim_env

SAME_RACK_MS = Calibration().same_rack_rtt_ms
Network = tuple[ClusterView, NetworkTopology]


@pytest.fixture(scope="module")
def network() -> Network:
    _, view = sim_env(cluster="builtin:default")  # 48 nodes, 6 racks of 8, 2 zones
    return view, NetworkTopology.of(view, SAME_RACK_MS)


def brute_force(view: ClusterView, hosts: list[int]) -> tuple[list[int], list[int]]:
    names = [spec.name for spec in view.cluster.nodes]
    nearest, farthest = [], []
    for name in names:
        levels = [int(bands.distance_level(view.rtt_ms(name, names[h]), SAME_RACK_MS))
                  for h in hosts]
        nearest.append(min(levels))
        farthest.append(max(levels))
    return nearest, farthest


def test_measured_relation_levels_of_the_builtin_cluster(network: Network) -> None:
    _, topology = network
    assert (topology.same_node, topology.same_rack, topology.cross_rack) == (0, 1, 2)
    assert topology.cross_zone.tolist() == [[2, 3], [3, 2]]
    assert topology.cell.tolist() == [n // 8 for n in range(48)]


@pytest.mark.parametrize("hosts", [[0], [0, 1], [0, 8], [0, 30], [5, 13, 40, 41], [47]])
def test_nearest_and_farthest_match_every_pair_measured(
        network: Network, hosts: list[int]) -> None:
    view, topology = network
    distance = job_distance(topology, np.array(hosts))
    nearest, farthest = brute_force(view, hosts)
    assert distance.nearest.tolist() == nearest
    assert distance.farthest.tolist() == farthest


def test_a_handful_of_hand_checked_levels(network: Network) -> None:
    _, topology = network
    distance = job_distance(topology, np.array([0]))
    # itself, its rack, another rack of zone-a, a rack of zone-b
    assert distance.nearest[[0, 1, 8, 30]].tolist() == [0, 1, 2, 3]
    two = job_distance(topology, np.array([0, 1]))
    assert two.nearest[0] == 0 and two.farthest[0] == 1  # the other host shares its rack


def test_a_job_that_runs_nowhere_has_no_distance(network: Network) -> None:
    _, topology = network
    distance = job_distance(topology, np.array([], dtype=np.int64))
    assert (distance.nearest == NONE).all() and (distance.farthest == NONE).all()
