"""Stacked node features: each view's block is what its own context computes, bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np

from dagpilot.state.context import EncodeContext
from dagpilot.state.lane_nodes import stackable, stacked_node_features
from dagpilot.state.schema import NODE
from tests.schedulers.views import cluster_view
from tests.state.sim_views import busy_default, sim_env
from tests.state.test_node_features import network_node, signalled


def test_each_lane_gets_its_own_contexts_rows_bit_for_bit() -> None:
    """Three busy episodes on builtin:default, driven by kube-default at different paces
    (the views differ in clock, load, scrapes and congestion), over 300 decision points."""
    lanes = [busy_default(pool, seed) for pool, seed in (
        ("builtin:mix:20", 1), ("builtin:mix:20", 2), ("builtin:spark-etl:8", 3))]
    views = [view for _, view, _ in lanes]
    alone = [EncodeContext() for _ in lanes]
    together = [EncodeContext() for _ in lanes]
    compared = changed = 0
    last = None
    for _ in range(300):
        live = [lane for lane, view in enumerate(views) if view is not None]
        if not live:
            break
        stacked = stacked_node_features([views[lane] for lane in live],
                                        [together[lane] for lane in live])
        assert stacked is not None and stacked.shape == (len(live), 48, NODE.dim)
        for block, lane in zip(stacked, live, strict=True):
            expected = alone[lane].node_features(views[lane])
            assert block.dtype == expected.dtype and np.array_equal(block, expected)
            compared += 1
        if last is not None and stacked.shape == last.shape:
            changed += int(not np.array_equal(stacked, last))
        last = stacked
        for lane in live:
            env, view, scheduler = lanes[lane]
            view, _, done, _ = env.step(scheduler.decide(view))
            views[lane] = None if done else view
            lanes[lane] = (env, view, scheduler)
    assert compared > 600 and changed > 100


def test_views_of_different_node_counts_are_not_stacked() -> None:
    _, small = sim_env()  # builtin:small: 6 nodes
    _, default = busy_default("builtin:mix:20", 1)[:2]
    contexts = [EncodeContext(), EncodeContext()]
    assert not stackable([small, default], contexts)
    assert stacked_node_features([small, default], contexts) is None
    assert stackable([default, default], contexts)
    assert not stackable([default, default], [EncodeContext(), EncodeContext(
        full_pass_nodes=10)])  # beyond the full pass: node memory, one context at a time


def test_each_lane_counts_its_own_congestion_streaks() -> None:
    """Two lanes of hand-made samples (the busy runs above never congest a disk): each lane's
    streaks and sustained flags are its own context's, sample by sample."""
    base = cluster_view([network_node("a"), network_node("b")])
    awaits = [[(50, 60), (45, 8), (51, 70), (51, 70)], [(8, 70), (60, 70), (60, 9), (70, 80)]]
    alone, together = [EncodeContext(), EncodeContext()], [EncodeContext(), EncodeContext()]
    streak = NODE.index("await_congested_samples")
    seen = []
    for sample in range(4):
        views = []
        for lane in awaits:
            view = dataclasses.replace(base, now_s=15.0 * sample + 1)
            for name, await_ms in zip("ab", lane[sample], strict=True):
                view = signalled(view, name, sampled_s=15.0 * sample, io_await_ms=float(await_ms))
            views.append(view)
        stacked = stacked_node_features(views, together)
        assert stacked is not None
        for block, view, context in zip(stacked, views, alone, strict=True):
            assert np.array_equal(block, context.node_features(view))
        seen.append(stacked[:, :, streak].tolist())
    assert seen[-1] == [[4, 2], [3, 1]]
