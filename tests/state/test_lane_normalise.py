"""Observations normalised together: each is what `Normaliser.normalise` gives it, bit for bit."""

from __future__ import annotations

import pytest

from dagpilot.state import EncodeContext, Normaliser, Observation, observe
from dagpilot.state.lane_normalise import normalise_lanes
from dagpilot.state.schema import NODE
from tests.state.same_observation import assert_same_observation
from tests.state.sim_views import busy_default


def _observations() -> list[Observation]:
    """Raw observations of three busy episodes at several decision points each, with every
    pending pod up to 2-10 a candidate: different candidate, job and graph counts."""
    found = []
    for pool, seed in (("builtin:mix:20", 1), ("builtin:mix:20", 2), ("builtin:spark-etl:8", 3)):
        env, view, scheduler = busy_default(pool, seed)
        context = EncodeContext()
        for step in range(60):
            if step % 20 == 0 and view.pending:
                found.append(observe(view, list(view.pending)[:2 + len(found) % 9], context))
            view, _, done, _ = env.step(scheduler.decide(view))
            if done:
                break
    return found


def test_each_lane_is_normalised_as_alone() -> None:
    observations = _observations()
    assert len({len(o.candidates) for o in observations}) > 1
    normaliser = Normaliser.fresh().update_all(observations)
    nodes = [normaliser.apply(NODE, o.node_features) for o in observations]
    together = normalise_lanes(normaliser, observations, nodes)
    for mine, observation in zip(together, observations, strict=True):
        assert_same_observation(mine, normaliser.normalise(observation))


def test_normalised_observations_are_refused() -> None:
    observations = _observations()[:2]
    normaliser = Normaliser.fresh().update_all(observations)
    done = [normaliser.normalise(o) for o in observations]
    with pytest.raises(ValueError, match="raw observations"):
        normalise_lanes(normaliser, done, [o.node_features for o in done])
