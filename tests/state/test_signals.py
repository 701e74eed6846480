from __future__ import annotations

import numpy as np

from dagpilot.core.types import NodeSpec, Resources
from dagpilot.core.view import SIGNAL_COLUMNS, NodeSignals, signal_columns
from dagpilot.state import signals as sig
from tests.schedulers.views import cluster_view, with_node


def test_columns_hold_each_nodes_signals_under_their_names() -> None:
    view = cluster_view([NodeSpec("a", Resources(4, 2**30)), NodeSpec("b", Resources(4, 2**30))])
    view = with_node(view, "a", signals=NodeSignals(
        15.0, cpu_used=1.5, memory_used=10, memory_current=18, membw_utilisation=0.4,
        io_await_ms=3.0, placed_since_sample=Resources(2.0, 7, 1)))
    view = with_node(view, "b", signals=NodeSignals(30.0, io_await_ms=9.0))
    read = sig.read(view)
    assert sig.COLUMNS == SIGNAL_COLUMNS
    assert read.columns[:, 0].tolist() == [15.0, 1.5, 10, 18, 0.4, 3.0, 2.0, 7, 1]
    assert read.column(sig.AWAIT_MS).tolist() == [3.0, 9.0]
    assert read.column(sig.SAMPLED_S).tolist() == [15.0, 30.0]
    assert read.column(sig.PLACED_GPUS).tolist() == [1.0, 0.0]
    assert read.of_nodes(np.array([1])).column(sig.AWAIT_MS).tolist() == [9.0]
    assert not read.columns.flags.writeable


def test_no_nodes_give_empty_columns() -> None:
    assert signal_columns([]).shape == (len(SIGNAL_COLUMNS), 0)
