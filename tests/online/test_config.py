"""config.yaml: the seed's keys and the trigger's; every bad key or value named."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagpilot.core.errors import InvalidInput
from dagpilot.online.config import load_config

SEED = """online_learning:
  enable: true
  max_retries: 3
  rollback_on_failure: true
  cooldown_minutes: 60
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_the_seed_keys_alone_give_the_trigger_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, SEED))
    assert (config.enable, config.max_retries, config.rollback_on_failure,
            config.cooldown_minutes) == (True, 3, True, 60.0)
    assert (config.trigger.consecutive, config.trigger.ratio) == (5, 1.3)
    assert config.adapter.budget_s == 90.0
    assert config.adapter.validation_seeds == 10
    assert (config.adapter.horizon_h, config.adapter.gate_horizon_h) == (0.1, 1.0)
    assert (config.adapter.objective, config.adapter.teacher) == ("imitation", "physics-rules")
    assert config.adapter.load == 0.8


def test_the_objective_and_load_are_configurable(tmp_path: Path) -> None:
    text = SEED + "adapter:\n  objective: ppo\n  teacher: kube-default\n  load: 0.4\n"
    adapter = load_config(write(tmp_path, text)).adapter
    assert (adapter.objective, adapter.teacher, adapter.load) == ("ppo", "kube-default", 0.4)


def test_the_trigger_and_adapter_are_configurable(tmp_path: Path) -> None:
    text = SEED + "  trigger:\n    consecutive: 7\n    ratio: 1.5\nadapter:\n  budget_s: 30\n"
    config = load_config(write(tmp_path, text))
    assert (config.trigger.consecutive, config.trigger.ratio) == (7, 1.5)
    assert config.adapter.budget_s == 30.0


@pytest.mark.parametrize(("text", "field", "words"), [
    (SEED + "  max_retry: 3\n", "online_learning.max_retry", "unknown key"),
    (SEED.replace("  cooldown_minutes: 60\n", ""), "online_learning.cooldown_minutes",
     "missing"),
    (SEED.replace("enable: true", "enable: yes please"), "online_learning.enable",
     "true or false"),
    (SEED.replace("max_retries: 3", "max_retries: 0"), "online_learning.max_retries",
     "whole number in 1..100"),
    (SEED.replace("max_retries: 3", "max_retries: 2.5"), "online_learning.max_retries",
     "whole number"),
    (SEED.replace("cooldown_minutes: 60", "cooldown_minutes: -1"),
     "online_learning.cooldown_minutes", "at least 0"),
    (SEED + "  trigger:\n    ratio: 1.0\n", "online_learning.trigger.ratio", "above 1"),
    (SEED + "  trigger:\n    ratio: .nan\n", "online_learning.trigger.ratio", "above 1"),
    (SEED + "  trigger:\n    window: 3\n", "online_learning.trigger.window", "unknown key"),
    (SEED + "adapter:\n  budget_s: 0\n", "adapter.budget_s", "at least 1"),
    (SEED + "adapter:\n  gate_horizon_h: 0\n", "adapter.gate_horizon_h", "above 0"),
    (SEED + "adapter:\n  gate_replays: 0\n", "adapter.gate_replays", "whole number in 1..16"),
    (SEED + "adapter:\n  objective: reinforce\n", "adapter.objective",
     "one of imitation, ppo"),
    (SEED + "adapter:\n  teacher: oracle\n", "adapter.teacher", "expected one of"),
    (SEED + "adapter:\n  teacher: tetris\n", "adapter.teacher", "expected one of"),
    (SEED + "adapter:\n  load: 0\n", "adapter.load", "above 0"),
    (SEED + "adapter:\n  imitation_epochs: 0\n", "adapter.imitation_epochs",
     "whole number in 1..256"),
    (SEED + "extra: 1\n", "extra", "unknown key"),
    ("- a list\n", "(document)", "mapping"),
    ("adapter: {}\n", "online_learning", "missing"),
])
def test_a_bad_key_or_value_is_named(tmp_path: Path, text: str, field: str,
                                     words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InvalidInput) as caught:
        load_config(path)
    assert caught.value.field == field
    assert words in caught.value.message
    assert caught.value.file == str(path)


def test_a_file_that_is_not_yaml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not YAML"):
        load_config(write(tmp_path, "online_learning: [\n"))
