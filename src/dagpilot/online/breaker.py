"""The circuit breaker: `max_retries` failed fine-tunes in a row open it.

A fine-tune fails when the gate refuses it, when it crashes or overruns its budget, or when a
published model's live rates turn out worse than its predecessor's. The first failure of a run
of failures remembers the model serving then: the last stable one. When the run reaches
`max_retries`, the breaker opens: with `rollback_on_failure` the registry's `current` goes back
to that stable version (registry.rollback, verified as serving loads it), no fine-tune starts
for `cooldown_minutes`, and the alert goes out (online.alert). A success (a published model
whose live check passed) closes the run. The state is a JSON file, so a restarted adapter keeps
its count, its stable version, its cooldown, and the journal time up to which feedback has been
acted on (so it does not fire again on a drift it already handled).
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from dagpilot.core.errors import InvalidInput
from dagpilot.registry import read_current, rollback

log = logging.getLogger(__name__)


@dataclass
class BreakerState:
    failures: int = 0  # consecutive failed fine-tunes
    stable: str | None = None  # serving before the current run of failures began
    cooldown_until: float = 0.0  # Unix seconds
    rollbacks: int = 0
    opened: int = 0
    pending: str | None = None  # published, its live check not done
    predecessor: str | None = None  # serving before `pending`
    acted_until_t: float | None = None  # feedback up to this journal time has been acted on


@dataclass(frozen=True)
class Opened:
    """What the breaker did when it opened."""

    failures: int
    rolled_back_to: str | None
    cooldown_until: float


class Breaker:
    def __init__(self, path: Path, models: Path, *, max_retries: int, rollback_on_failure: bool,
                 cooldown_minutes: float) -> None:
        self.path = path
        self.models = models
        self.max_retries = max_retries
        self.rollback_on_failure = rollback_on_failure
        self.cooldown_s = cooldown_minutes * 60.0
        self.state = _load(path)

    def cooling(self, now: float) -> bool:
        return now < self.state.cooldown_until

    def failed(self, now: float, serving_before: str | None) -> Opened | None:
        """Count one failure; `serving_before` is the version that served when the failed
        fine-tune began. Returns what opening did, when it opened."""
        if self.state.failures == 0:
            self.state.stable = serving_before
        self.state.failures += 1
        opened = None
        if self.state.failures >= self.max_retries:
            opened = self._open(now)
        self._save()
        return opened

    def succeeded(self) -> None:
        self.state.failures, self.state.stable = 0, None
        self._save()

    def published(self, version: str, predecessor: str | None) -> None:
        self.state.pending, self.state.predecessor = version, predecessor
        self._save()

    def settled(self) -> None:
        self.state.pending = self.state.predecessor = None
        self._save()

    def acted_on(self, t: float) -> None:
        """Feedback up to journal time `t` has been acted on: never read for drift again."""
        self.state.acted_until_t = t
        self._save()

    def _open(self, now: float) -> Opened:
        target = self.state.stable
        rolled = None
        if self.rollback_on_failure and target is not None and read_current(self.models) != target:
            rollback(self.models, target)
            rolled = target
            self.state.rollbacks += 1
        self.state.cooldown_until = now + self.cooldown_s
        self.state.opened += 1
        count = self.state.failures
        self.state.failures, self.state.stable = 0, None
        self.state.pending = self.state.predecessor = None
        return Opened(count, rolled, self.state.cooldown_until)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_name(f".{self.path.name}.tmp")
        scratch.write_text(json.dumps(asdict(self.state), indent=1))
        os.replace(scratch, self.path)


def _load(path: Path) -> BreakerState:
    if not path.exists():
        return BreakerState()
    try:
        data = json.loads(path.read_text())
        state = BreakerState(**data)
    except (OSError, ValueError, TypeError) as error:
        raise InvalidInput(str(path), "", "", f"not the adapter's breaker state ({error}); "
                           "remove it to start with a closed breaker") from None
    acted = state.acted_until_t
    if acted is not None and (isinstance(acted, bool) or not isinstance(acted, int | float)
                              or not math.isfinite(acted)):
        raise InvalidInput(str(path), "", "acted_until_t", "not a finite journal time; remove "
                           "the field to re-read the whole journal")
    return state
