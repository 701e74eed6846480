from __future__ import annotations

import numpy as np

from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import NodeSignals
from dagpilot.state import signals as sig
from tests.schedulers.views import cluster_view, with_node


def test_rows_follow_the_nodes_signals_objects() -> None:
    view = cluster_view([NodeSpec("a", Resources(4, 2**30)), NodeSpec("b", Resources(4, 2**30))])
    view = with_node(view, "a", signals=NodeSignals(
        15.0, cpu_used=1.5, memory_used=10, memory_current=18, membw_utilisation=0.4,
        io_await_ms=3.0, placed_since_sample=Resources(2.0, 7, 1)))
    table = sig.SignalTable()
    first = table.read(view.nodes)
    assert first.columns[:, 0].tolist() == [15.0, 1.5, 10, 18, 0.4, 3.0, 2.0, 7, 1]
    assert first.columns[:, 1].tolist() == [0.0] * len(sig.COLUMNS)
    assert not first.columns.flags.writeable
    view = with_node(view, "b", signals=NodeSignals(30.0, io_await_ms=9.0))
    second = table.read(view.nodes)
    assert second.column(sig.AWAIT_MS).tolist() == [3.0, 9.0]
    assert second.column(sig.SAMPLED_S).tolist() == [15.0, 30.0]
    assert first.column(sig.AWAIT_MS).tolist() == [3.0, 0.0]  # earlier reads stay as they were
    fewer = table.read(view.nodes[:1])
    assert fewer.columns.shape == (len(sig.COLUMNS), 1)
    assert second.of_nodes(np.array([1])).column(sig.AWAIT_MS).tolist() == [9.0]
