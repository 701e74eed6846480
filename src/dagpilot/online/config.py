"""The adapter's config.yaml: the seed's `online_learning:` keys plus the drift trigger's, and
an `adapter:` section for what the fine-tune and the gates run on.

    online_learning:
      enable: true            # false: `dagpilot online run` reads the journal and does nothing
      max_retries: 3          # consecutive failed fine-tunes before the circuit breaker opens
      rollback_on_failure: true   # the open breaker rolls back to the last stable model
      cooldown_minutes: 60    # no fine-tune for this long after the breaker opened
      trigger:
        consecutive: 5        # finished tasks of one class in a row ...
        ratio: 1.3            # ... each slower than this times its prediction
    adapter:                  # optional; every key optional
      workload: builtin:mlflow:4  # the scenarios replayed (recalibrated by the drift)
      cluster: builtin:small
      budget_s: 90            # the fine-tune's wall-clock budget, in its own process
      validation_seeds: 10    # held-back seeds of the paired JCT gate
      gate_horizon_h: 1.0     # hours of arrivals in each of them (the fine-tune's: horizon_h)
      gate_replays: 1         # simulator seeds each of them is replayed on (JCT: their mean)
      live_window: 200        # decisions per model the post-publish check compares
      load: 0.8               # arrival load of every replayed scenario (the training load)
      objective: imitation    # imitation (DAgger toward `teacher`) or ppo
      teacher: physics-rules  # the imitation objective's teacher: a baseline scheduler
      imitation_epochs: 8     # passes over the gathered labels per imitation round

An unknown key, a missing seed key or a value of the wrong type or range is an InvalidInput
naming the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dagpilot.core.errors import InvalidInput
from dagpilot.schedulers import SCHEDULERS
from dagpilot.schedulers.list_scheduler import ListScheduler

SECTION = "online_learning"
SEED_KEYS = ("enable", "max_retries", "rollback_on_failure", "cooldown_minutes")
OBJECTIVES = ("imitation", "ppo")


@dataclass(frozen=True)
class Trigger:
    consecutive: int = 5
    ratio: float = 1.3


@dataclass(frozen=True)
class AdapterSettings:
    workload: str = "builtin:mlflow:4"
    cluster: str = "builtin:small"
    budget_s: float = 90.0
    validation_seeds: int = 10
    live_window: int = 200
    horizon_h: float = 0.1  # hours of the pool's arrivals in each fine-tune scenario
    # Hours of arrivals in each of the gate's held-back scenarios. Longer than the fine-tune's:
    # the gate is outside its budget, and with few jobs an episode's JCT swings by tens of
    # percent on one changed placement, so 10 seeds' interval is wider than any gain. 1 h is
    # about 25 jobs of builtin:mlflow:4 at the training load (0.1 h: 2-4).
    gate_horizon_h: float = 1.0
    # Simulator seeds each held-back sequence is replayed on; the seed's JCT is their mean.
    # One changed placement reorders every later event, so one run is one draw of that chaos.
    gate_replays: int = 1
    scenarios: int = 2  # arrival sequences per fine-tune iteration
    replays: int = 2  # each replayed this many times (the input-driven baseline)
    lora_rank: int = 4
    learning_rate: float = 1e-3
    ppo_epochs: int = 2  # passes over each iteration's decisions
    # The arrival load of every replayed scenario: the reference, the fine-tune's, the gate's.
    load: float = 0.8
    # imitation: DAgger of the adapters toward `teacher` in the recalibrated world (states of
    # the adapted policy's own rollouts, labels from the teacher; cross-entropy, no variance
    # of returns); ppo: PPO on the episodes' JCT reward (online.finetune).
    objective: str = "imitation"
    teacher: str = "physics-rules"
    imitation_epochs: int = 8


@dataclass(frozen=True)
class OnlineConfig:
    enable: bool = True
    max_retries: int = 3
    rollback_on_failure: bool = True
    cooldown_minutes: float = 60.0
    trigger: Trigger = field(default_factory=Trigger)
    adapter: AdapterSettings = field(default_factory=AdapterSettings)


def load_config(path: Path) -> OnlineConfig:
    """The config at `path`, checked key by key."""
    file = str(path)
    try:
        document = yaml.safe_load(path.read_text())
    except OSError as error:
        raise InvalidInput(file, "", "", f"cannot read: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise InvalidInput(file, "", "", f"not YAML: {str(error)[:200]}") from None
    return parse_config(file, document)


def parse_config(file: str, document: Any) -> OnlineConfig:
    top = _mapping(file, "", document, {SECTION, "adapter"})
    if SECTION not in top:
        raise InvalidInput(file, "", SECTION, "missing: the adapter's settings live here")
    section = _mapping(file, SECTION, top[SECTION], {*SEED_KEYS, "trigger"})
    missing = [key for key in SEED_KEYS if key not in section]
    if missing:
        raise InvalidInput(file, SECTION, f"{SECTION}.{missing[0]}", "missing (the seed's keys "
                           f"are all required: {', '.join(SEED_KEYS)})")
    read = _Reader(file, SECTION, section)
    return OnlineConfig(
        enable=read.boolean("enable"),
        max_retries=read.integer("max_retries", 1, 100),
        rollback_on_failure=read.boolean("rollback_on_failure"),
        cooldown_minutes=read.number("cooldown_minutes", 0.0, 7 * 24 * 60),
        trigger=_trigger(file, section.get("trigger", {})),
        adapter=_adapter(file, top.get("adapter", {})))


def _trigger(file: str, value: Any) -> Trigger:
    where = f"{SECTION}.trigger"
    read = _Reader(file, where, _mapping(file, where, value, {"consecutive", "ratio"}))
    default = Trigger()
    return Trigger(consecutive=read.integer("consecutive", 1, 10_000, default.consecutive),
                   ratio=read.number("ratio", 1.0, 100.0, default.ratio, above=True))


def _adapter(file: str, value: Any) -> AdapterSettings:
    default = AdapterSettings()
    read = _Reader(file, "adapter", _mapping(file, "adapter", value,
                                             set(AdapterSettings.__dataclass_fields__)))
    return AdapterSettings(
        workload=read.text("workload", default.workload),
        cluster=read.text("cluster", default.cluster),
        budget_s=read.number("budget_s", 1.0, 3600.0, default.budget_s),
        validation_seeds=read.integer("validation_seeds", 2, 11, default.validation_seeds),
        live_window=read.integer("live_window", 1, 1_000_000, default.live_window),
        horizon_h=read.number("horizon_h", 0.0, 24.0, default.horizon_h, above=True),
        gate_horizon_h=read.number("gate_horizon_h", 0.0, 24.0, default.gate_horizon_h,
                                   above=True),
        gate_replays=read.integer("gate_replays", 1, 16, default.gate_replays),
        scenarios=read.integer("scenarios", 1, 64, default.scenarios),
        replays=read.integer("replays", 1, 16, default.replays),
        lora_rank=read.integer("lora_rank", 1, 64, default.lora_rank),
        learning_rate=read.number("learning_rate", 0.0, 1.0, default.learning_rate,
                                  above=True),
        ppo_epochs=read.integer("ppo_epochs", 1, 32, default.ppo_epochs),
        load=read.number("load", 0.0, 4.0, default.load, above=True),
        objective=read.choice("objective", OBJECTIVES, default.objective),
        teacher=read.choice("teacher", teacher_names(), default.teacher),
        imitation_epochs=read.integer("imitation_epochs", 1, 256, default.imitation_epochs))


def teacher_names() -> tuple[str, ...]:
    """The schedulers a teacher can be: list schedulers, whose queue can be rebuilt from any
    view (ListScheduler.resync), as the student's placements, not the teacher's, go through."""
    return tuple(sorted(name for name, make in SCHEDULERS.items()
                        if isinstance(make(), ListScheduler)))


def _mapping(file: str, where: str, value: Any, known: set[str]) -> Mapping[str, Any]:
    if value is None and where:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(file, where, where or "(document)",
                           f"expected a mapping of keys, got {type(value).__name__}")
    for key in value:
        if key not in known:
            name = f"{where}.{key}" if where else str(key)
            raise InvalidInput(file, where, name,
                               f"unknown key; known here: {', '.join(sorted(known))}")
    return value


@dataclass(frozen=True)
class _Reader:
    """Typed values of one section, each error naming its key."""

    file: str
    where: str
    values: Mapping[str, Any]

    def _get(self, key: str, default: Any) -> Any:
        value = self.values.get(key, default)
        if value is None:
            self._refuse(key, "has no value")
        return value

    def _refuse(self, key: str, message: str) -> None:
        raise InvalidInput(self.file, self.where, f"{self.where}.{key}", message)

    def boolean(self, key: str) -> bool:
        value = self._get(key, None)
        if not isinstance(value, bool):
            self._refuse(key, f"expected true or false, got {value!r}")
        return bool(value)

    def integer(self, key: str, low: int, high: int, default: int | None = None) -> int:
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self._refuse(key, f"expected a whole number in {low}..{high}, got {value!r}")
        return int(value)

    def number(self, key: str, low: float, high: float, default: float | None = None, *,
               above: bool = False) -> float:
        value = self._get(key, default)
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value) and (value > low if above else value >= low)
              and value <= high)
        if not ok:
            bound = f"above {low:g}" if above else f"at least {low:g}"
            self._refuse(key, f"expected a number {bound} and at most {high:g}, got {value!r}")
        return float(value)

    def choice(self, key: str, known: tuple[str, ...], default: str) -> str:
        value = self._get(key, default)
        if value not in known:
            self._refuse(key, f"expected one of {', '.join(known)}, got {value!r}")
        return str(value)

    def text(self, key: str, default: str) -> str:
        value = self._get(key, default)
        if not isinstance(value, str) or not value.strip():
            self._refuse(key, f"expected a non-empty string, got {value!r}")
        return str(value)
