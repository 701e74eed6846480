"""Node features on real simulated views, and the bands end to end on hand-made signals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dagpilot.core.scheduler import Placement
from dagpilot.core.types import Disk, DiskKind, NodeSpec, Resources
from dagpilot.core.view import ClusterView, NodeSignals
from dagpilot.state import signals as sig
from dagpilot.state.context import EncodeContext
from dagpilot.state.node_features import node_features
from dagpilot.state.schema import NODE
from tests.schedulers.views import cluster_view, with_node
from tests.state.sim_views import sim_env

GIB = 2**30


def features(view: ClusterView, context: EncodeContext) -> dict[str, np.ndarray]:
    statics = context.nodes(view)
    array = node_features(view, statics, sig.read(view), context.streaks,
                          context.calibration)
    assert array.shape == (len(view.nodes), NODE.dim) and array.dtype == np.float32
    return {name: array[:, NODE.index(name)] for name in NODE.names}


def test_features_of_the_small_builtin_cluster() -> None:
    _, view = sim_env()
    f = features(view, EncodeContext())
    # node-0000 c16 network disk, -0001 c32 network, -0002 A100 x8 on two complexes (NVMe),
    # -0003 c16, -0004 c64 NVMe, -0005 V100 x8
    assert f["cpu_allocatable_cores"].tolist() == [16, 32, 64, 16, 64, 48]
    assert f["cpu_free_share"].tolist() == [1.0] * 6
    assert f["memory_free_gib"].tolist() == [64, 128, 512, 64, 256, 384]
    assert f["gpus_free"].tolist() == [0, 0, 8, 0, 0, 8]
    assert f["gpus_free_best_complex"].tolist() == [0, 0, 4, 0, 0, 4]
    assert f["gpu_model_A100"].tolist() == [0, 0, 1, 0, 0, 0]
    assert f["gpu_model_V100"].tolist() == [0, 0, 0, 0, 0, 1]
    assert f["gpu_model_other"].sum() == 0
    assert f["disk_network"].tolist() == [1, 1, 0, 1, 0, 0]
    assert f["disk_nvme"].tolist() == [0, 0, 1, 0, 1, 1]
    assert f["await_level_0"].tolist() == [1.0] * 6  # idle disks at their nominal await
    assert f["await_log2_ratio"].tolist() == [0.0] * 6
    assert f["mbpi_band_none"].tolist() == [1.0] * 6
    assert f["not_ready"].tolist() == [0.0] * 6
    assert f["signal_scrapes_missed"].tolist() == [view.now_s // 15.0] * 6
    one_hots = [name for name in NODE.names if name.startswith(("await_level_", "mbpi_band_"))]
    assert sum(f[name] for name in one_hots).tolist() == [2.0] * 6


def test_a_placement_counts_as_load_until_the_next_sample() -> None:
    env, view = sim_env()
    context = EncodeContext()
    before = features(view, context)
    pod = view.pending[0]  # 1 core, a Spark scan
    view, _, _, info = env.step(Placement(pod, "node-0001"))  # node-0001 has 32 cores
    assert info.placed and view.nodes[1].signals.sampled_s == 0.0
    after = features(view, context)
    assert after["cpu_used_effective_share"][1] == pytest.approx(1 / 32)
    assert after["placed_since_sample_cpu_share"][1] == pytest.approx(1 / 32)
    assert after["cpu_free_cores"][1] == before["cpu_free_cores"][1] - 1
    assert after["memory_current_effective_share"][1] == pytest.approx(
        pod.requests.memory / (128 * GIB))
    untouched = [0, 2, 3, 4, 5]
    assert (after["cpu_used_effective_share"][untouched] == 0).all()
    # Time moves on, still before the next scrape: the placed pod still counts.
    while view.now_s < 15.0:
        view, _, _, _ = env.step(None)
        if view.nodes[1].signals.sampled_s == 0.0:
            assert features(view, context)["placed_since_sample_cpu_share"][1] == pytest.approx(
                1 / 32)
    # The scrape: usage now shows the pod (0.75 of its core busy); nothing is counted twice.
    assert view.nodes[1].signals.sampled_s == 15.0
    sampled = features(view, context)
    assert sampled["placed_since_sample_cpu_share"][1] == 0.0
    assert sampled["cpu_used_effective_share"][1] == pytest.approx(
        view.nodes[1].signals.cpu_used / 32)
    assert sampled["signal_scrapes_missed"][1] == (view.now_s - 15.0) // 15.0


def test_binding_gpus_on_both_complexes_shrinks_the_best_complex() -> None:
    _, view = sim_env()
    fake = cluster_view([state.spec for state in view.nodes])  # the same six nodes, by hand
    one_bound_on_each_complex = (1, 2, 3, 5, 6, 7)
    fake = with_node(fake, "node-0002", free_gpus=one_bound_on_each_complex,
                     allocated=Resources(0, 0, 2, "A100"))
    f = features(fake, EncodeContext())
    assert f["gpus_free"][2] == 6 and f["gpus_free_best_complex"][2] == 3
    assert f["gpus_free_best_complex"][5] == 4  # the V100 node is untouched


def network_node(name: str) -> NodeSpec:
    return NodeSpec(name, Resources(16, 64 * GIB), disk=Disk(DiskKind.NETWORK))


def signalled(view: ClusterView, name: str, **fields: object) -> ClusterView:
    return with_node(view, name, signals=NodeSignals(**fields))  # type: ignore[arg-type]


def test_bands_end_to_end_on_hand_made_signals() -> None:
    view = cluster_view([network_node("a"), network_node("b"), network_node("c")], now_s=40.0)
    view = signalled(view, "a", sampled_s=30.0, io_await_ms=45.0, membw_utilisation=0.9,
                     memory_used=10 * GIB, memory_current=19 * GIB)
    view = signalled(view, "b", sampled_s=0.0, io_await_ms=50.0, membw_utilisation=0.6,
                     memory_used=10 * GIB, memory_current=18 * GIB)
    view = with_node(view, "c", ready=False)
    f = features(view, EncodeContext())
    assert f["await_level_2"].tolist() == [1, 1, 0]  # 45 ms and 50 ms alike
    assert f["await_level_0"].tolist() == [0, 0, 1]
    assert f["mbpi"] == pytest.approx([6 / 7, 3 / 7, 0.0])
    assert f["mbpi_band_saturated"].tolist() == [1, 0, 0]
    assert f["mbpi_band_none"].tolist() == [0, 1, 1]
    assert f["page_cache_ratio"] == pytest.approx([1.9, 1.8, 1.0])
    assert f["page_cache_polluted"].tolist() == [1, 0, 0]
    assert f["not_ready"].tolist() == [0, 0, 1]
    assert f["signal_scrapes_missed"].tolist() == [0, 2, 2]  # 10 s and 40 s old
    assert f["signals_stale"].tolist() == [0, 1, 1]


def test_await_over_threshold_three_samples_running_sets_the_sustained_flag() -> None:
    context = EncodeContext()
    base = cluster_view([network_node("a"), network_node("b")])
    flags = []
    for sample, (await_a, await_b) in enumerate([(50, 60), (45, 8), (51, 70), (51, 70)]):
        view = dataclasses.replace(base, now_s=15.0 * sample + 1)
        view = signalled(view, "a", sampled_s=15.0 * sample, io_await_ms=float(await_a))
        view = signalled(view, "b", sampled_s=15.0 * sample, io_await_ms=float(await_b))
        f = features(view, context)
        flags.append((f["await_congested_samples"].tolist(), f["await_sustained"].tolist()))
    assert flags == [([1, 1], [0, 0]), ([2, 0], [0, 0]), ([3, 1], [1, 0]), ([4, 2], [1, 0])]


def test_a_fresh_context_per_call_never_sees_three_samples() -> None:
    view = signalled(cluster_view([network_node("a")], now_s=31.0), "a", sampled_s=30.0,
                     io_await_ms=80.0)
    for _ in range(4):
        assert features(view, EncodeContext())["await_sustained"].tolist() == [0]
