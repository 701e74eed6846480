"""Normalised node rows kept between decisions equal normalising afresh, decision by decision;
the row comparison under them is exact."""

from __future__ import annotations

import numpy as np

from dagpilot.state.context import EncodeContext
from dagpilot.state.encode import observe
from dagpilot.state.normalised_nodes import NormalisedNodes
from dagpilot.state.normaliser import Normaliser
from dagpilot.state.row_changes import RowChanges
from tests.state.sim_views import busy_default


def test_kept_rows_equal_normalising_afresh_at_every_decision() -> None:
    env, view, scheduler = busy_default("builtin:mix:30", 2)
    context, kept = EncodeContext(), NormalisedNodes(full_rows=0)  # the kept rows, not all
    trained = Normaliser.fresh()
    for decision in range(200):
        raw = observe(view, tuple(view.pending)[:4], context)
        if decision < 20:  # statistics that move early on, then stay frozen as in serving
            trained = trained.update(raw)
        mine, afresh = kept.normalise(trained, raw), trained.normalise(raw)
        for group, array in mine.arrays().items():
            assert np.array_equal(array, afresh.arrays()[group]), (decision, group)
        mine.node_features[:] = -1.0  # the caller's array: the next call cannot see this
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    assert decision > 150


def test_rows_differ_bit_for_bit() -> None:
    changes = RowChanges()
    rows = np.zeros((6, 3), dtype=np.float32)
    rows[2, 1] = np.nan
    assert changes.since_last(rows) is None  # nothing to compare with yet
    same = rows.copy()
    assert changes.since_last(same).tolist() == []  # the same NaN is the same value
    same[4, 0] = -0.0  # equals 0.0 but is another bit pattern: changed (recomputing is safe)
    same[1, 2] = 1.0
    assert changes.since_last(same).tolist() == [1, 4]
    assert changes.since_last(same).tolist() == []
    assert changes.since_last(same + 1.0, share=0.5) is None  # every row: a full pass
    assert changes.since_last(np.zeros((5, 3), dtype=np.float32)) is None  # another shape
