"""What the scheduler predicted for each pod, for the waste ratio: a JSON-lines file.

One object per line: {"pod_uid": "...", "task_class": "...", "cpu_seconds": N,
"peak_memory_bytes": N, "io_bytes": N}; the three figures are optional (absent: no waste ratio
for that resource). Whoever places the pods writes it (a DaemonSet mounts it); the agent
re-reads it when its modification time changes. A missing file means no predictions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file

from .right_sizing import Usage

MAX_BYTES = 64 << 20
_FIGURES = ("cpu_seconds", "peak_memory_bytes", "io_bytes")


@dataclass(frozen=True, slots=True)
class Prediction:
    task_class: str
    usage: Usage


def parse_predictions(path: Path, text: str) -> dict[str, Prediction]:
    """pod uid -> Prediction; InvalidInput naming the line and field of a bad record."""
    predictions: dict[str, Prediction] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = f"line {number}"
        try:
            item = json.loads(line)
        except ValueError as error:
            raise InvalidInput(str(path), record, "", f"not JSON: {error}") from None
        if not isinstance(item, dict):
            raise InvalidInput(str(path), record, "", "expected an object")
        uid, task_class = item.get("pod_uid"), item.get("task_class", "")
        if not isinstance(uid, str) or not uid:
            raise InvalidInput(str(path), record, "pod_uid", "expected a non-empty string")
        if not isinstance(task_class, str):
            raise InvalidInput(str(path), record, "task_class", "expected a string")
        figures = [_figure(item, name, path, record) for name in _FIGURES]
        predictions[uid] = Prediction(task_class, Usage(*figures))
    return predictions


def _figure(item: dict[str, object], name: str, path: Path, record: str) -> float:
    value = item.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e18:
        raise InvalidInput(str(path), record, name, f"expected a number >= 0, got {value!r}")
    return float(value)


@dataclass
class PredictionFile:
    """The file, re-read only when it changes."""

    path: Path | None
    _stamp: tuple[int, int] | None = None
    _cached: dict[str, Prediction] = field(default_factory=dict)

    def current(self) -> dict[str, Prediction]:
        if self.path is None:
            return {}
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (status.st_mtime_ns, status.st_size)
        if stamp != self._stamp:
            text = read_file(self.path, MAX_BYTES).decode(errors="replace")
            self._cached = parse_predictions(self.path, text)
            self._stamp = stamp
        return self._cached
