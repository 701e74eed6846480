from __future__ import annotations

import re

import numpy as np
import pytest

from dagpilot.state.encode import observe
from dagpilot.state.schema import (
    FEATURE_SCHEMA_VERSION,
    GRAPH,
    GROUPS,
    NODE,
    PAIR,
    POSITION,
    TASK,
    Feature,
    FeatureGroup,
    Kind,
)
from tests.conftest import REPO
from tests.state.sim_views import sim_env


def test_array_dimensions_are_the_schemas() -> None:
    _, view = sim_env("builtin:mix:3", "builtin:small")
    candidates = list(view.pending)[:4]
    observation = observe(view, candidates)
    assert observation.node_features.shape == (len(view.nodes), NODE.dim)
    assert observation.task_features.shape == (4, TASK.dim)
    assert observation.pair_features.shape[1:] == (len(view.nodes), PAIR.dim)
    assert observation.graph_features.shape[0] == 4
    assert observation.graph_features.shape[2] == GRAPH.dim
    assert observation.graph_positions.shape[2] == POSITION.dim
    assert observation.schema_version == FEATURE_SCHEMA_VERSION


def test_group_and_feature_names_are_unique_and_kinds_known() -> None:
    assert len({group.name for group in GROUPS}) == len(GROUPS)
    for group in GROUPS:
        assert len(set(group.names)) == group.dim
        assert all(re.fullmatch(r"[a-z0-9_]+", n, flags=re.IGNORECASE) for n in group.names)
        assert group.passthrough.tolist() == [f.kind is Kind.FLAG for f in group.features]
    assert isinstance(FEATURE_SCHEMA_VERSION, int)
    with pytest.raises(ValueError, match="repeats"):
        FeatureGroup("bad", (Feature("x", "u"), Feature("x", "u")))


def test_stack_refuses_missing_and_unknown_columns() -> None:
    columns = dict.fromkeys(POSITION.names, 1.0)
    assert POSITION.stack(columns, 2).tolist() == [[1.0] * POSITION.dim] * 2
    with pytest.raises(ValueError, match="missing"):
        POSITION.stack({**columns, "depth_share": 0.0, "extra": 0.0}, 1)
    del columns["depth_share"]
    with pytest.raises(ValueError, match="depth_share"):
        POSITION.stack(columns, 1)


def test_fixed_columns_come_pre_stacked_and_cannot_be_given_twice() -> None:
    fixed = POSITION.fixed({"depth_share": [1.0, 2.0]}, 2)
    rest = {name: 5.0 for name in POSITION.names if name != "depth_share"}
    out = POSITION.stack(rest, 2, fixed)
    assert out[:, POSITION.index("depth_share")].tolist() == [1.0, 2.0]
    assert out[:, POSITION.index("b_level_share")].tolist() == [5.0, 5.0]
    assert fixed.array[:, POSITION.index("b_level_share")].tolist() == [0.0, 0.0]  # untouched
    with pytest.raises(ValueError, match="twice"):
        POSITION.stack({**rest, "depth_share": 0.0}, 2, fixed)
    with pytest.raises(ValueError, match="unknown"):
        POSITION.fixed({"nope": 1.0}, 2)


def test_stack_keeps_schema_order_whatever_the_dict_order() -> None:
    columns = {name: float(i) for i, name in reversed(list(enumerate(POSITION.names)))}
    assert np.array_equal(POSITION.stack(columns, 1)[0], np.arange(POSITION.dim))


def test_every_feature_is_documented() -> None:
    text = (REPO / "docs" / "STATE.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"`([A-Za-z0-9_*]+)`", text))
    families = [token[:-1] for token in quoted if token.endswith("_*")]
    missing = [f"{group.name}.{name}" for group in GROUPS for name in group.names
               if name not in quoted and not any(name.startswith(f) for f in families)]
    assert not missing, f"features missing from docs/STATE.md: {missing}"


def test_documented_dimensions_are_the_schemas() -> None:
    text = (REPO / "docs" / "STATE.md").read_text(encoding="utf-8")
    for shape in (f"(N, {NODE.dim})", f"(C, {TASK.dim})", f"(J, N, {PAIR.dim})",
                  f"(C, K, {GRAPH.dim})", f"(C, K, {POSITION.dim})"):
        assert shape in text, f"docs/STATE.md does not give the shape {shape}"
