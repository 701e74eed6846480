"""The network as distance classes: which zone and rack each node is in, and what distance
level (bands.distance_level of a measured RTT) each topological relation has.

Asking the view for the RTT of every pair would cost 5,000 calls per node a job runs on. The
RTT of two nodes follows their relation (the same node, the same rack, two racks of one zone,
two zones), so one measured pair per relation (and per pair of zones) gives every pair's level.
The levels still come from measured RTTs: a flat network whose cross-rack RTT is near its
same-rack RTT maps cross-rack pairs to the same-rack level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dagpilot.core.view import ClusterView
from dagpilot.state import bands
from dagpilot.state.schema import DISTANCES

Ints = npt.NDArray[np.int64]
SAME_NODE, SAME_RACK, CROSS_RACK, CROSS_ZONE = range(len(DISTANCES))


@dataclass(frozen=True)
class NetworkTopology:
    zone: Ints  # (nodes,) zone id
    cell: Ints  # (nodes,) rack id, unique across zones (racks are named within a zone)
    same_node: int  # the distance level of each relation
    same_rack: int
    cross_rack: int
    cross_zone: Ints  # (zones, zones) level between two zones; the diagonal is cross_rack

    @classmethod
    def of(cls, view: ClusterView, same_rack_rtt_ms: float) -> NetworkTopology:
        specs = view.cluster.nodes
        zone = _ids([spec.zone for spec in specs])
        cell = _ids([(spec.zone, spec.rack) for spec in specs])

        def level(a: int, b: int) -> int:
            rtt = view.rtt_ms(specs[a].name, specs[b].name)
            return int(bands.distance_level(rtt, same_rack_rtt_ms))

        same_rack = _two_in_one_rack(cell)
        cross_rack = _two_racks_of_one_zone(zone, cell)
        zones = int(zone.max()) + 1 if len(zone) else 0
        first_of_zone = [int(np.flatnonzero(zone == z)[0]) for z in range(zones)]
        cross_rack_level = level(*cross_rack) if cross_rack else CROSS_RACK
        cross_zone = np.full((zones, zones), cross_rack_level, dtype=np.int64)
        for a in range(zones):
            for b in range(zones):
                if a != b:
                    cross_zone[a, b] = level(first_of_zone[a], first_of_zone[b])
        return cls(zone, cell, level(0, 0) if len(specs) else SAME_NODE,
                   level(*same_rack) if same_rack else SAME_RACK, cross_rack_level, cross_zone)


def _ids(keys: Sequence[object]) -> Ints:
    """Dense integer ids of keys, numbered in order of first appearance."""
    numbering: dict[object, int] = {}
    return np.array([numbering.setdefault(key, len(numbering)) for key in keys], dtype=np.int64)


def _two_in_one_rack(cell: Ints) -> tuple[int, int] | None:
    crowded = np.flatnonzero(np.bincount(cell) >= 2) if len(cell) else np.empty(0, np.int64)
    if not len(crowded):
        return None
    a, b = np.flatnonzero(cell == crowded[0])[:2].tolist()
    return a, b


def _two_racks_of_one_zone(zone: Ints, cell: Ints) -> tuple[int, int] | None:
    for z in np.unique(zone).tolist():
        members = np.flatnonzero(zone == z)
        cells, first = np.unique(cell[members], return_index=True)
        if len(cells) >= 2:
            return int(members[first[0]]), int(members[first[1]])
    return None
