"""A task's physical profile as `dagpilot.io/` pod annotations, both ways: the renderer writes
them on the pods it places, the sandbox's hardware twin reads them back to run the physics.

`dagpilot.io/runtime` is the nominal runtime as a Go duration ("90s", "1m30s", "2.5s"): kwok's
stages read the same annotation when the twin is off.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from dagpilot.core.errors import InvalidInput
from dagpilot.core.types import Resources, Task, TaskClass
from dagpilot.core.units import duration_s

PREFIX = "dagpilot.io/"
RUNTIME = f"{PREFIX}runtime"
EXIT_CODE = f"{PREFIX}exit-code"
MAX_RUNTIME_S = 365 * 86_400.0


@dataclass(frozen=True, slots=True)
class _Share:
    key: str
    field: str


SHARES = (_Share(f"{PREFIX}cpu-intensity", "cpu_intensity"),
          _Share(f"{PREFIX}membw-intensity", "membw_intensity"),
          _Share(f"{PREFIX}io-intensity", "io_intensity"),
          _Share(f"{PREFIX}comm-share", "comm_share"))
BYTES = {f"{PREFIX}peak-memory": "peak_memory", f"{PREFIX}read-bytes": "read_bytes",
         f"{PREFIX}written-bytes": "written_bytes"}
COMM_GROUP = f"{PREFIX}comm-group"
_DEFAULTS = {field.name: field.default for field in dataclasses.fields(Task)}
TASK_CLASS = f"{PREFIX}task-class"


def go_duration(seconds: float) -> str:
    """Seconds as a Go duration kwok and the twin both read ("12.5s")."""
    return f"{seconds:.6g}s"


def annotations_of(task: Task, runtime_s: float | None = None) -> dict[str, str]:
    """The annotations that carry `task`'s profile (defaults left out)."""
    notes = {RUNTIME: go_duration(task.runtime_s if runtime_s is None else runtime_s),
             TASK_CLASS: task.task_class.value}
    for share in SHARES:
        value = getattr(task, share.field)
        if value != _DEFAULTS[share.field]:
            notes[share.key] = repr(float(value))
    for key, field in BYTES.items():
        value = getattr(task, field)
        if value:
            notes[key] = str(int(value))
    if task.comm_group:
        notes[COMM_GROUP] = task.comm_group
    return notes


def task_of(task_id: str, notes: Mapping[str, str], requests: Resources,
            source: str) -> Task:
    """A one-instance Task from a pod's annotations and requests; InvalidInput names the pod
    (`source`) and the annotation that is wrong."""
    runtime = _runtime(notes.get(RUNTIME), source)
    fields: dict[str, object] = {}
    for share in SHARES:
        if share.key in notes:
            fields[share.field] = _number(notes[share.key], source, share.key, 0.0, 1.0)
    for key, field in BYTES.items():
        if key in notes:
            fields[field] = int(_number(notes[key], source, key, 0.0, 2.0**62))
    if TASK_CLASS in notes:
        try:
            fields["task_class"] = TaskClass(notes[TASK_CLASS])
        except ValueError:
            raise InvalidInput(source, "", f"metadata.annotations.{TASK_CLASS}",
                               f"one of {', '.join(c.value for c in TaskClass)}") from None
    group = notes.get(COMM_GROUP)
    return Task(id=task_id, name=task_id, runtime_s=runtime, requests=requests,
                comm_group=group or None, **fields)  # type: ignore[arg-type]


def _runtime(text: str | None, source: str) -> float:
    field = f"metadata.annotations.{RUNTIME}"
    if text is None:
        raise InvalidInput(source, "", field, "missing: the nominal runtime (e.g. 90s)")
    try:
        seconds = duration_s(text[:40])
    except ValueError:
        raise InvalidInput(source, "", field, "not a Go duration (e.g. 90s, 1m30s)") from None
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_RUNTIME_S:
        raise InvalidInput(source, "", field, f"outside 0 to {MAX_RUNTIME_S:.0f} s")
    return seconds


def _number(text: str, source: str, key: str, low: float, high: float) -> float:
    try:
        value = float(text[:40])
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # NaN fails too
        raise InvalidInput(source, "", f"metadata.annotations.{key}",
                           f"not a number from {low:g} to {high:g}")
    return value
