"""The native core gives the Python simulator's RunRecord for kube-default, bit for bit: the
same pods on the same nodes at the same times, the same samples, kills, restarts, decisions and
event count, whatever the physics, faults, overheads, cluster size or workload."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from dagpilot.clusters import load_cluster
from dagpilot.core.config import FaultSettings, SimSettings, StorageQosSettings
from dagpilot.core.types import Job
from dagpilot.native import _core, available, simulate, supports
from dagpilot.native.run import simulate_native
from dagpilot.schedulers import SCHEDULERS
from dagpilot.sim.record import RunRecord
from dagpilot.sim.run import simulate as simulate_python
from dagpilot.workloads import load
from dagpilot.workloads.arrivals import ArrivalSpec, assign_arrivals

BASE = SimSettings(horizon_s=3 * 3600.0)
# Faults and storage collapses every few node-hours: kills, restarts, NotReady bindings.
STRESS = dataclasses.replace(BASE, faults=FaultSettings(rate_per_node_hour=0.5),
                             storage=StorageQosSettings(collapse_rate_per_hour=2.0))
# The CWS cluster's overheads: requests held to the next poll, one start-up slot, queueSize.
CWS_LIKE = dataclasses.replace(STRESS, release_at_poll=True, startup_slots_per_node=1,
                               engine_queue_size=4)
SETTINGS = {"base": BASE, "stress": STRESS, "cws-like": CWS_LIKE,
            "physics-off": BASE.without_physics()}


def poisson(pool: list[Job], cluster_spec: str, seed: int, horizon_s: float,
            load_share: float = 0.9) -> tuple[list[Job], object]:
    cluster = load_cluster(cluster_spec)
    jobs = assign_arrivals(pool, ArrivalSpec("poisson", load_share), cluster.capacity.cpu,
                           np.random.default_rng(seed), horizon_s)
    return jobs, cluster


def assert_same(python: RunRecord, native: RunRecord) -> None:
    for name in ("jobs", "pods", "samples"):
        ours, theirs = getattr(native, name), getattr(python, name)
        pairs = enumerate(zip(ours, theirs, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), None)
        assert first is None, f"{name}[{first}]: native {ours[first]} != python {theirs[first]}"
        assert len(ours) == len(theirs), name
    for name in ("oom_kills", "fault_kills", "restarts", "decisions", "events", "end_s",
                 "scheduler", "seed", "physics", "interrupted"):
        assert getattr(native, name) == getattr(python, name), name


def both(jobs: list[Job], cluster: object, settings: SimSettings, seed: int) -> RunRecord:
    python = simulate_python(jobs, cluster, SCHEDULERS["kube-default"](), settings, seed)
    native = simulate_native(jobs, cluster, settings, seed)
    assert_same(python, native)
    return native


@pytest.fixture(scope="module")
def mix() -> list[Job]:
    return load("builtin:mix:60")


@pytest.mark.parametrize("name", list(SETTINGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_builtin_mix_on_the_default_cluster(mix: list[Job], name: str, seed: int) -> None:
    jobs, cluster = poisson(mix, "builtin:default", seed, SETTINGS[name].horizon_s)
    record = both(jobs, cluster, SETTINGS[name], seed)
    assert record.events > 5000 and len(record.pods) > 2000  # a run with a backlog
    if name in ("base", "stress"):
        assert record.oom_kills > 0
    if name in ("stress", "cws-like"):
        assert record.fault_kills > 0


def test_small_cluster_under_stress(mix: list[Job]) -> None:
    jobs, cluster = poisson(mix, "builtin:scale-10", 3, STRESS.horizon_s)
    both(jobs, cluster, STRESS, 3)


def test_large_cluster_partial_node_search(mix: list[Job]) -> None:
    """1,000 nodes: kube-scheduler scores only the first feasible nodes from a rotating start."""
    settings = dataclasses.replace(STRESS, horizon_s=900.0)
    jobs, cluster = poisson(mix, "builtin:scale-1000", 4, settings.horizon_s)
    record = both(jobs, cluster, settings, 4)
    assert record.decisions > 5000


def test_real_workflows_from_wfcommons(traces: Path) -> None:
    jobs = load(f"wfformat:{traces / 'wfinstances' / 'makeflow'}")[:6]
    spaced = [dataclasses.replace(job, arrival_s=600.0 * i) for i, job in enumerate(jobs)]
    both(spaced, load_cluster("builtin:default"), SimSettings(), 5)


def test_alibaba_dags_arriving_at_load(traces: Path) -> None:
    pool = load(f"alibaba:{traces / 'alibaba-v2018-dags'}")[:400]
    jobs, cluster = poisson(pool, "builtin:default", 6, 3600.0)
    both(jobs, cluster, dataclasses.replace(STRESS, horizon_s=3600.0), 6)


def test_an_interrupted_run_records_the_same_partial_run(mix: list[Job]) -> None:
    """Ctrl-C (here raised from the progress callback) ends both runs at the same step."""
    jobs, cluster = poisson(mix, "builtin:default", 7, BASE.horizon_s)

    def interrupt(share: float) -> None:
        if share > 0.3:
            raise KeyboardInterrupt

    python = simulate_python(jobs, cluster, SCHEDULERS["kube-default"](), BASE, 7,
                             progress=interrupt)
    native = simulate_native(jobs, cluster, BASE, 7, progress=interrupt)
    assert native.interrupted
    assert any(pod.outcome == "unfinished" for pod in native.pods)
    assert_same(python, native)


def test_tie_breaks_draw_the_bits_numpy_draws() -> None:
    ours, theirs = np.random.default_rng(11), np.random.default_rng(11)
    ranges = [*np.random.default_rng(12).integers(1, 10_000, 5_000).tolist(), 2, 1, 2**32]
    assert [_core.draw_below(ours, n) for n in ranges] == [int(theirs.integers(n))
                                                           for n in ranges]
    assert ours.random() == theirs.random()  # the generators end in the same state


def test_simulate_runs_kube_default_natively_and_the_others_in_python(
        mix: list[Job], monkeypatch: pytest.MonkeyPatch) -> None:
    assert available()
    assert supports(SCHEDULERS["kube-default"]())
    assert not supports(SCHEDULERS["load-aware"]())
    jobs, cluster = poisson(mix, "builtin:default", 8, 1800.0)
    settings = dataclasses.replace(BASE, horizon_s=1800.0)
    calls: list[str] = []
    monkeypatch.setattr("dagpilot.native.simulate_native",
                        lambda *args, **kwargs: calls.append("native") or simulate_native(
                            *args, **kwargs))
    simulate(jobs, cluster, SCHEDULERS["kube-default"](), settings, 8)
    simulate(jobs, cluster, SCHEDULERS["load-aware"](), settings, 8)
    assert calls == ["native"]
    monkeypatch.setenv("DAGPILOT_NATIVE", "0")
    assert not available()
    simulate(jobs, cluster, SCHEDULERS["kube-default"](), settings, 8)
    assert calls == ["native"]


def test_a_mispacked_column_is_an_error_naming_it(mix: list[Job]) -> None:
    from dagpilot.native import pack
    from dagpilot.native.kube_statics import kube_statics

    jobs, cluster = poisson(mix, "builtin:default", 9, 600.0)
    classes, statics = kube_statics(jobs, cluster)
    tables = pack.tables(jobs, cluster, BASE, classes, np.zeros(len(jobs)))
    tables["tasks"]["runtime_s"] = tables["tasks"]["runtime_s"].astype(np.float32)
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match=r"tasks\.runtime_s"):
        _core.run(pack.params(BASE), tables, statics, list, lambda _: None,
                  lambda *_: None, rng, None)
