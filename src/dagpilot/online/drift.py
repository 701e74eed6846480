"""The drift trigger: N finished tasks of one class in a row, each slower than R x its prediction.

It reads the decision journal (dagpilot.journal): `feedback` records (the node agent's, one per
finished pod: `runtime_s`, `actual` and `predicted` use, `task_class`) and the `decision`
records they join by pod uid. A task's slowdown is its runtime over the predicted runtime when
the prediction has one (`predicted.runtime_s`), else its CPU time over the predicted CPU time
(the work it took). Its class is the feedback's `task_class` or, when the node agent had none,
the task-name family of the decision's task (`mProject_00012` -> `mProject`). Records not later
than `since_t` (the last fine-tune's start) are ignored, so one streak fires once.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dagpilot.online.config import Trigger

_INDEX_SUFFIX = re.compile(r"([-_.]?\d+)+$")


@dataclass(frozen=True)
class Slowdown:
    """One finished task: its class, actual / predicted, and when it was recorded."""

    task_class: str
    ratio: float
    t: float


@dataclass(frozen=True)
class Drift:
    """A fired trigger: the class, the streak's length, its median slowdown and its span."""

    task_class: str
    count: int
    ratio: float
    first_t: float
    last_t: float


def task_family(name: str) -> str:
    """A task name without its trailing index (`stage-3-7` -> `stage`); the name itself when it
    is nothing but an index."""
    return _INDEX_SUFFIX.sub("", name) or name


def slowdowns(records: Iterable[Mapping[str, Any]], since_t: float = float("-inf")
              ) -> list[Slowdown]:
    """Every feedback record after `since_t` with a usable prediction, in journal order."""
    families: dict[str, str] = {}
    found = []
    for record in records:
        kind = record.get("kind")
        if kind == "decision" and isinstance(record.get("uid"), str):
            families[record["uid"]] = task_family(str(record.get("task", "")))
        elif kind == "feedback" and _number(record.get("t")) > since_t:
            slow = _slowdown(record, families)
            if slow is not None:
                found.append(slow)
    return found


def detect(found: Iterable[Slowdown], trigger: Trigger) -> Drift | None:
    """The first class whose streak of slow tasks reaches `trigger.consecutive`; a task of the
    class that ran within `trigger.ratio` of its prediction ends the streak."""
    streaks: dict[str, list[Slowdown]] = {}
    for slow in found:
        streak = streaks.setdefault(slow.task_class, [])
        if slow.ratio > trigger.ratio:
            streak.append(slow)
        else:
            streak.clear()
        if len(streak) >= trigger.consecutive:
            return Drift(slow.task_class, len(streak),
                         statistics.median(s.ratio for s in streak), streak[0].t, streak[-1].t)
    return None


def _slowdown(record: Mapping[str, Any], families: Mapping[str, str]) -> Slowdown | None:
    task_class = record.get("task_class") or families.get(str(record.get("pod_uid")), "")
    predicted, actual = record.get("predicted"), record.get("actual")
    if not isinstance(task_class, str) or not task_class or not isinstance(predicted, Mapping):
        return None
    expected = _number(predicted.get("runtime_s"))
    observed = _number(record.get("runtime_s"))
    if not expected > 0 and isinstance(actual, Mapping):
        expected = _number(predicted.get("cpu_seconds"))
        observed = _number(actual.get("cpu_seconds"))
    if not (expected > 0 and observed >= 0):
        return None
    return Slowdown(task_class, observed / expected, _number(record.get("t")))


def _number(value: Any) -> float:
    """A finite number from a record, NaN for anything else (every comparison then fails)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return math.nan
