"""How far each node is from where a job's pods run: the nearest and the farthest of them.

A pod of a communication group (a shuffle, an all-reduce) slows with its group's worst pair
RTT, and data moves faster between neighbours, so a candidate node is judged by its distance
level to the job's running pods: the minimum (is it next to them?) and the maximum (how far
would the group spread?). Worked out per relation, not per pair, so the cost is a few numpy
passes over the nodes however many nodes the job runs on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.state.schema import DISTANCES, PAIR
from dagpilot.state.topology import NetworkTopology

Ints = npt.NDArray[np.int64]
NONE = -1  # the job runs nowhere yet


@dataclass(frozen=True, slots=True)
class JobDistance:
    nearest: Ints  # (nodes,) distance level to the nearest node of the job, or NONE
    farthest: Ints  # (nodes,) distance level to the farthest node of the job, or NONE


def job_distance(topology: NetworkTopology, hosts: Ints) -> JobDistance:
    """Levels from every node to the hosts (node indices where the job's pods run)."""
    nodes = len(topology.zone)
    if not len(hosts):
        empty = np.full(nodes, NONE, dtype=np.int64)
        return JobDistance(empty, empty.copy())
    candidates = _relation_levels(topology, hosts)
    present = candidates >= 0
    nearest = np.where(present, candidates, np.iinfo(np.int64).max).min(axis=0)
    farthest = np.where(present, candidates, NONE).max(axis=0)
    return JobDistance(nearest, farthest)


def distance_features(topology: NetworkTopology, hosts: Ints) -> npt.NDArray[np.float32]:
    """(nodes, PAIR.dim): one-hot distance levels to the nearest and the farthest host; all
    zero when the job runs nowhere yet."""
    nodes = len(topology.zone)
    out = np.zeros((nodes, PAIR.dim), dtype=np.float32)
    if len(hosts):
        distance = job_distance(topology, hosts)
        every = np.arange(nodes)
        out[every, distance.nearest] = 1.0  # a job with hosts has a level everywhere
        out[every, len(DISTANCES) + distance.farthest] = 1.0
    return out


def _relation_levels(topology: NetworkTopology, hosts: Ints) -> Ints:
    """(5, nodes): the level of each relation a node has to some host, or -1 where it has none:
    it is a host, another host is in its rack, a host is in another rack of its zone, and the
    nearest and the farthest other zone holding a host."""
    zone, cell = topology.zone, topology.cell
    nodes = len(zone)
    is_host = np.zeros(nodes, dtype=np.bool_)
    is_host[hosts] = True
    per_cell = np.bincount(cell[hosts], minlength=int(cell.max()) + 1)
    per_zone = np.bincount(zone[hosts], minlength=int(zone.max()) + 1)
    others_in_rack = per_cell[cell] - is_host
    in_other_racks = per_zone[zone] - per_cell[cell]
    host_zones = per_zone > 0
    zone_levels = topology.cross_zone.copy()
    np.fill_diagonal(zone_levels, -1)  # the own zone is counted by the rack rows
    near_zone = np.where(host_zones[None, :] & (zone_levels >= 0), zone_levels,
                         np.iinfo(np.int64).max).min(axis=1)
    far_zone = np.where(host_zones[None, :], zone_levels, -1).max(axis=1)
    near_zone = np.where(near_zone == np.iinfo(np.int64).max, -1, near_zone)
    return np.stack([
        np.where(is_host, topology.same_node, -1),
        np.where(others_in_rack > 0, topology.same_rack, -1),
        np.where(in_other_racks > 0, topology.cross_rack, -1),
        near_zone[zone],
        far_zone[zone],
    ])
