"""The end-to-end benchmark's stream, its twin-like simulator settings and the JCT it reads
from a Workflow (bench/end_to_end_jct.py runs them on the sandbox)."""

from __future__ import annotations

import numpy as np
import pytest

from dagpilot.bench import end_to_end
from dagpilot.bench.end_to_end import StreamSpec
from dagpilot.bench.harness import ARRIVAL_STREAM
from dagpilot.bench.offered_load import cpu_equivalent_cores
from dagpilot.clusters import load_cluster
from dagpilot.core.config import SimSettings
from dagpilot.core.errors import SpecError
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import poisson

SPEC = StreamSpec(jobs=6, load=0.8, seed=0, max_pods=64, max_critical_s=12_000)


def test_the_stream_is_the_pools_poisson_arrivals_as_the_harness_draws_them() -> None:
    mix, cluster = load("builtin:mix"), load_cluster("builtin:small")
    jobs = end_to_end.stream(mix, cluster, SPEC, 3.0)
    pool = end_to_end.pool_of(mix, SPEC)
    rng = np.random.default_rng((0, ARRIVAL_STREAM))
    expected = poisson(pool, 0.8, cpu_equivalent_cores(pool, cluster, 3.0), rng)[:6]
    assert [(j.id, j.arrival_s) for j in jobs] == [(j.id, j.arrival_s) for j in expected]
    assert all(sum(t.instances for t in j.tasks) <= 64 and j.critical_path_s <= 12_000
               for j in jobs)
    assert not any(j.id.startswith("spark-etl") for j in jobs)  # 100+ pods each
    assert end_to_end.stream(mix, cluster, SPEC, 3.0) == jobs  # fixed seed


def test_a_stream_longer_than_the_pool_is_refused_naming_the_limits() -> None:
    with pytest.raises(SpecError, match="at most 3 pods"):
        end_to_end.pool_of(load("builtin:mix"), StreamSpec(20, 0.8, 0, 3, 1e9))


def test_twin_settings_turn_off_only_what_the_twin_does_not_run() -> None:
    base = SimSettings()
    twin = end_to_end.twin_settings(base)
    assert twin.physics.enabled and not twin.physics.faults
    assert twin.physics.memory_bandwidth and twin.physics.gpu_pcie and twin.physics.storage_io
    assert twin.storage.drift_sigma == 0 and twin.storage.collapse_rate_per_hour == 0
    assert twin.startup_median_s == base.startup_median_s


def _workflow(phase: str, finished: str | None) -> dict[str, object]:
    status = {"phase": phase, **({"finishedAt": finished} if finished else {})}
    return {"metadata": {"creationTimestamp": "2026-12-01T10:00:00Z"}, "status": status}


def test_a_workflows_jct_is_creation_to_finish_times_the_scale() -> None:
    assert end_to_end.workflow_jct_s(_workflow("Succeeded", "2026-12-01T10:01:05Z"),
                                     100.0) == 6_500.0
    assert end_to_end.workflow_jct_s(_workflow("Failed", "2026-12-01T10:01:05Z"), 100) is None
    assert end_to_end.workflow_jct_s(_workflow("Running", None), 100) is None
    assert end_to_end.workflow_jct_s({}, 100) is None


def test_ratios_pair_the_jobs_both_finished() -> None:
    mine = {"a": 10.0, "b": None, "c": 30.0}
    theirs = {"a": 20.0, "b": 5.0, "c": 20.0}
    assert end_to_end.paired_ratio(mine, theirs) == 1.0  # (10 + 30) / (20 + 20)
    assert end_to_end.paired_ratio({"a": None}, theirs) is None
    assert end_to_end.summary(mine) == {"jobs": 3, "finished": 2, "avg_jct_s": 20.0,
                                        "p95_jct_s": 29.0}


def test_the_prediction_covers_every_job_of_the_stream() -> None:
    cluster = load_cluster("builtin:small")
    jobs = end_to_end.stream(load("builtin:mix"), cluster, SPEC, 3.0)[:3]
    settings = end_to_end.twin_settings(SimSettings())
    prediction = end_to_end.predict(jobs, cluster, "kube-default", settings, 0)
    assert set(prediction.jcts) == {job.id for job in jobs}
    assert all(jct is not None and jct >= job.critical_path_s
               for job, jct in zip(jobs, prediction.jcts.values(), strict=True))
