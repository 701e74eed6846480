"""The hard-constraint filters, one module each, registered here by name.

A new filter is one new module and one line below. The PCIe root-complex rule is not a filter
(it judges a node against the others): see `decide/pcie.py`.
"""

from __future__ import annotations

from dagpilot.decide.filters.base import Filter, SpecFilter
from dagpilot.decide.filters.gpu_model import GpuModel
from dagpilot.decide.filters.node_affinity import NodeAffinity
from dagpilot.decide.filters.node_ready import NodeReady
from dagpilot.decide.filters.node_resources_fit import NodeResourcesFit
from dagpilot.decide.filters.node_unschedulable import NodeUnschedulable
from dagpilot.decide.filters.taint_toleration import TaintToleration

FILTERS: dict[str, Filter] = {
    "NodeUnschedulable": NodeUnschedulable(),
    "NodeReady": NodeReady(),
    "NodeResourcesFit": NodeResourcesFit(),
    "GpuModel": GpuModel(),
    "TaintToleration": TaintToleration(),
    "NodeAffinity": NodeAffinity(),
}

DEFAULT_FILTERS = ("NodeUnschedulable", "NodeReady", "NodeResourcesFit", "GpuModel",
                   "TaintToleration", "NodeAffinity")
"""kube-scheduler's default filters that apply here, in its order, with GpuModel standing in
for the GPU product node selector that real GPU pods carry."""


def filters(names: tuple[str, ...] = DEFAULT_FILTERS) -> tuple[Filter, ...]:
    return tuple(FILTERS[name] for name in names)


__all__ = ["DEFAULT_FILTERS", "FILTERS", "Filter", "SpecFilter", "filters"]
