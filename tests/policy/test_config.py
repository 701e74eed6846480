"""PolicyConfig: saved with the model, and refused when it cannot be built."""

from __future__ import annotations

import pytest

from dagpilot.policy import PolicyConfig, PolicyConfigError


def test_a_config_round_trips_through_its_dict() -> None:
    config = PolicyConfig(d_model=48, heads=3, layers=1, max_candidates=8)
    assert PolicyConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(("raw", "message"), [
    ({"d_model": 64, "colour": "blue"}, "unknown policy settings: colour"),
    ({"node_dim": 45}, "node_dim = 45"),
    ({"d_model": 30, "heads": 4}, "not a multiple of heads"),
    ({"layers": 0}, "layers must be a positive integer"),
    ({"layers": True}, "layers must be a positive integer"),
])
def test_a_config_this_code_cannot_build_is_refused(raw: dict[str, object],
                                                    message: str) -> None:
    with pytest.raises(PolicyConfigError, match=message):
        PolicyConfig.from_dict(raw)
