"""A run refuses, before it starts, what it cannot simulate: no nodes, figures that are NaN,
infinite, negative or out of range, settings out of their ranges; each an InvalidInput naming
the node, job or task and the field (issue 14, defect 5). Both simulators call the same check."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dagpilot.core.config import SimSettings, StorageQosSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Cluster, Job, Resources
from dagpilot.native import simulate_native
from dagpilot.sim import simulate
from dagpilot.sim.input_checks import check_inputs
from tests.sim.helpers import FirstFit, cluster, node, settings, task

NAN, INF = float("nan"), float("inf")


def jobs_with(**fields: Any) -> list[Job]:
    """One job of one task, built without the loaders' rules (which refuse these figures too)."""
    return [Job("j", (dataclasses.replace(task("t", 10.0), **fields),))]


def cluster_with(**fields: Any) -> Cluster:
    return cluster(dataclasses.replace(node("n"), **fields))


@pytest.mark.parametrize(("jobs", "nodes", "record", "field"), [
    (jobs_with(runtime_s=NAN), cluster(node("n")), "job j, task t", "runtime_s"),
    (jobs_with(runtime_s=-1.0), cluster(node("n")), "job j, task t", "runtime_s"),
    (jobs_with(runtime_s=INF), cluster(node("n")), "job j, task t", "runtime_s"),
    (jobs_with(instance_runtimes_s=(1.0, NAN), instances=2), cluster(node("n")),
     "job j, task t", "instance_runtimes_s[1]"),
    (jobs_with(requests=Resources(NAN, 1)), cluster(node("n")), "job j, task t",
     "requests.cpu"),
    (jobs_with(requests=Resources(1.0, -5)), cluster(node("n")), "job j, task t",
     "requests.memory"),
    (jobs_with(io_intensity=1.5), cluster(node("n")), "job j, task t", "io_intensity"),
    ([dataclasses.replace(jobs_with()[0], arrival_s=NAN)], cluster(node("n")), "job j",
     "arrival_s"),
    ([dataclasses.replace(jobs_with()[0], arrival_s=-60.0)], cluster(node("n")), "job j",
     "arrival_s"),
    (jobs_with(), cluster_with(allocatable=Resources(NAN, 2**34)), "node n", "allocatable.cpu"),
    (jobs_with(), cluster_with(cpu_speed=0.0), "node n", "cpu_speed"),
    (jobs_with(), cluster_with(cpu_speed=NAN), "node n", "cpu_speed"),
    (jobs_with(), cluster_with(memory_bandwidth_bytes_s=-1), "node n",
     "memory_bandwidth_bytes_s"),
])
def test_a_bad_figure_is_refused_naming_its_record_and_field(
        jobs: list[Job], nodes: Cluster, record: str, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_inputs(jobs, nodes, SimSettings())
    assert (caught.value.record, caught.value.field) == (record, field)
    assert "is not a number" in caught.value.message


def test_a_cluster_without_nodes_is_refused_by_both_simulators() -> None:
    empty = Cluster("empty", ())
    for run in (lambda: simulate(jobs_with(), empty, FirstFit(), settings(), seed=0),
                lambda: simulate_native(jobs_with(), empty, settings(), 0)):
        with pytest.raises(InvalidInput, match="cluster empty: field 'nodes': the cluster has no "
                                               "nodes"):
            run()


@pytest.mark.parametrize(("changes", "field"), [
    ({"sample_interval_s": 1e-9}, "sim.sample_interval_s"),
    ({"sample_interval_s": 0.0}, "sim.sample_interval_s"),
    ({"poll_interval_s": NAN}, "sim.poll_interval_s"),
    ({"startup_sigma": NAN}, "sim.startup_sigma"),
    ({"submit_latency_s": -100.0}, "sim.submit_latency_s"),
    ({"startup_slots_per_node": -1}, "sim.startup_slots_per_node"),
    ({"horizon_s": NAN}, "sim.horizon_s"),
    ({"storage": StorageQosSettings(drift_interval_s=1e-6)}, "sim.storage.drift_interval_s"),
])
def test_settings_out_of_range_are_refused_by_both_simulators(changes: dict[str, Any],
                                                               field: str) -> None:
    bad = dataclasses.replace(settings(), **changes)
    for run in (lambda: simulate(jobs_with(), cluster(node("n")), FirstFit(), bad, seed=0),
                lambda: simulate_native(jobs_with(), cluster(node("n")), bad, 0)):
        with pytest.raises(InvalidInput) as caught:
            run()
        assert (caught.value.file, caught.value.field) == ("settings", field)
