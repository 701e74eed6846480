"""Running statistics by hand, merge equivalence, normalisation rules and the saved form."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from dagpilot.state.context import EncodeContext
from dagpilot.state.encode import observe
from dagpilot.state.normaliser import CLIP_STD, Normaliser, NormaliserError, RunningStats
from dagpilot.state.schema import FEATURE_SCHEMA_VERSION, GRAPH, GROUPS, NODE, PAIR, POSITION
from tests.state.sim_views import busy_default, sim_env


def test_mean_and_std_by_hand() -> None:
    stats = RunningStats.of([[1.0, 10.0], [3.0, 10.0], [5.0, 40.0]])
    assert stats.count == 3
    assert stats.mean.tolist() == [3.0, 20.0]
    # population variance: (4 + 0 + 4) / 3 and (100 + 100 + 400) / 3
    assert stats.std == pytest.approx([np.sqrt(8 / 3), np.sqrt(200)])


def test_merging_in_any_order_equals_one_pass() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(50.0, 7.0, size=(1000, 3)) * np.array([1.0, 1e-3, 1e6])
    whole = RunningStats.of(data)
    parts = [RunningStats.of(chunk) for chunk in np.array_split(data, [1, 300, 301, 700])]
    sequential = RunningStats.empty(3)
    for part in parts:
        sequential = sequential.merge(part)
    tree = parts[0].merge(parts[1]).merge(parts[2].merge(parts[3].merge(parts[4])))
    for merged in (sequential, tree):
        assert merged.count == whole.count
        np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12)
        np.testing.assert_allclose(merged.m2, whole.m2, rtol=1e-9)


def test_merging_with_nothing_changes_nothing() -> None:
    stats = RunningStats.of([[1.0], [2.0]])
    assert stats.merge(RunningStats.empty(1)) is stats
    assert RunningStats.empty(1).merge(stats) is stats
    assert RunningStats.of(np.empty((0, 1))).count == 0


def trained(rows: list[list[float]]) -> Normaliser:
    stats = dict(Normaliser.fresh().stats)
    stats[NODE.name] = RunningStats.of(np.array(rows))
    return Normaliser(stats)


def node_rows(values: dict[str, list[float]], count: int) -> np.ndarray:
    rows = np.zeros((count, NODE.dim))
    for name, column in values.items():
        rows[:, NODE.index(name)] = column
    return rows


def test_scalars_are_z_scored_and_clipped_and_flags_pass_through() -> None:
    rows = node_rows({"cpu_free_cores": [2.0, 4.0, 6.0, 8.0], "not_ready": [0, 1, 0, 1],
                      "mbpi": [0.5] * 4}, 4)
    normaliser = trained(rows.tolist())
    probe = node_rows({"cpu_free_cores": [5.0, 5.0 + np.sqrt(5), 1000.0],
                       "not_ready": [1, 0, 1], "mbpi": [0.5, 0.7, 0.5]}, 3)
    out = normaliser.apply(NODE, probe)
    assert out.dtype == np.float32
    cpu, flag, mbpi = (NODE.index(n) for n in ("cpu_free_cores", "not_ready", "mbpi"))
    # mean 5, population std sqrt(5)
    assert out[:, cpu] == pytest.approx([0.0, 1.0, CLIP_STD])
    assert out[:, flag].tolist() == [1.0, 0.0, 1.0]
    assert out[:, mbpi] == pytest.approx([0.0, 0.2, 0.0])  # never varied: centred, not scaled


def test_a_fresh_normaliser_changes_nothing() -> None:
    values = np.arange(NODE.dim * 2, dtype=np.float64).reshape(2, NODE.dim) * 3.7
    assert np.array_equal(Normaliser.fresh().apply(NODE, values), values.astype(np.float32))


def test_json_round_trip_is_exact() -> None:
    _, view = sim_env()
    normaliser = Normaliser.fresh().update(observe(view, list(view.pending)[:5]))
    back = Normaliser.from_json(normaliser.to_json())
    for name, stats in normaliser.stats.items():
        assert back.stats[name].count == stats.count
        assert np.array_equal(back.stats[name].mean, stats.mean)
        assert np.array_equal(back.stats[name].m2, stats.m2)


def saved(edit: dict[str, object]) -> str:
    raw = json.loads(Normaliser.fresh().to_json())
    raw.update(edit)
    return json.dumps(raw)


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "not valid JSON"),
    ("[1, 2]", "not a dagpilot normaliser"),
    (saved({"schema_version": FEATURE_SCHEMA_VERSION + 1}), "feature schema"),
    (saved({"groups": {}}), "lacks group"),
])
def test_refuses_unusable_statistics(text: str, message: str) -> None:
    with pytest.raises(NormaliserError, match=message):
        Normaliser.from_json(text)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("features", ["renamed"], "features differ"),
    ("count", -1, "bad count"),
    ("mean", [0.0], "wrong length"),
    ("m2", [-1.0] * NODE.dim, "negative"),
])
def test_refuses_a_corrupt_group(field: str, value: object, message: str) -> None:
    raw = json.loads(Normaliser.fresh().to_json())
    raw["groups"][NODE.name][field] = value
    with pytest.raises(NormaliserError, match=message):
        Normaliser.from_json(json.dumps(raw))


def test_normalising_an_observation() -> None:
    env, view = sim_env("builtin:mix:3", "builtin:default")
    raw = observe(view, list(view.pending)[:6])
    normaliser = Normaliser.fresh().update(raw)
    done = normaliser.normalise(raw)
    assert done.normalised and normaliser.normalise(done) is done
    flags = NODE.passthrough
    assert np.array_equal(done.node_features[:, flags], raw.node_features[:, flags])
    varied = ~flags & (raw.node_features.std(axis=0) > 1e-3)
    assert np.abs(done.node_features[:, varied].mean(axis=0)).max() < 1e-4
    assert np.array_equal(done.pair_features, raw.pair_features)  # all one-hot
    padding = ~raw.graph_valid
    assert (done.graph_features[padding] == 0).all()
    assert (done.graph_positions[padding] == 0).all()
    with pytest.raises(ValueError, match="raw observations"):
        normaliser.update(done)
    del env


def test_graph_padding_does_not_enter_the_statistics() -> None:
    _, view = sim_env()
    raw = observe(view, list(view.pending)[:3])
    normaliser = Normaliser.fresh().update(raw)
    assert normaliser.stats[GRAPH.name].count == int(raw.graph_valid.sum())
    assert normaliser.stats[POSITION.name].count == int(raw.graph_valid.sum())
    assert normaliser.stats[NODE.name].count == len(view.nodes)


def test_a_group_of_flags_only_is_copied_as_it_is() -> None:
    """PAIR holds one-hot flags only: no statistics apply, the values come back as float32
    copies, as the general path gives them."""
    assert PAIR.passthrough.all()
    flags = (np.random.default_rng(0).random((2, 5, PAIR.dim)) < 0.3).astype(np.float32)
    stats = Normaliser({group.name: RunningStats.of(
        np.random.default_rng(1).random((4, group.dim))) for group in GROUPS})
    out = stats.apply(PAIR, flags)
    assert out.dtype == np.float32 and np.array_equal(out, flags)
    assert not np.shares_memory(out, flags)


def test_updating_with_many_observations_at_once_is_updating_with_each_up_to_rounding() -> None:
    env, view, scheduler = busy_default("builtin:mix:40", 2)
    context, observations = EncodeContext(), []
    for _ in range(40):
        observations.append(observe(view, list(itertools.islice(view.pending, 8)), context))
        view, _, done, _ = env.step(scheduler.decide(view))
        if done:
            break
    one_by_one = Normaliser.fresh()
    for observation in observations:
        one_by_one = one_by_one.update(observation)
    at_once = Normaliser.fresh().update_all(observations)
    for name, stats in one_by_one.stats.items():
        assert at_once.stats[name].count == stats.count > 0
        assert np.allclose(at_once.stats[name].mean, stats.mean, rtol=1e-12, atol=1e-12)
        assert np.allclose(at_once.stats[name].m2, stats.m2, rtol=1e-9, atol=1e-9)
    assert Normaliser.fresh().update_all([]).to_json() == Normaliser.fresh().to_json()
