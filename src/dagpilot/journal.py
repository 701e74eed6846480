"""The decision journal: what each decision saw, chose and why, and later how it turned out.

One JSON object per line, each with `kind`: "decision" (a scheduler's choice: the model
version, the observation's key figures, the mask size, the action, the explanation), "outcome"
(the bind's result, keyed by the pod's uid), "finished" (how the pod ended), "unschedulable",
"shadow" (what dagpilot would have chosen for a
pod another scheduler places), "shadow_outcome" (where that scheduler put it) and
"feedback" (a finished pod's real use, from the node agent: write_feedback). The serving
side writes it; the online adapter and `dagpilot shadow report` read it.

Bounded and rotated: when a write would take the file past `max_bytes`, the file becomes
`NAME.1` (`NAME.1` becomes `NAME.2`, ...) and the oldest beyond `keep` is deleted, so the
journal never holds more than about `(keep + 1) * max_bytes`. Readers take the files oldest
first; a line that does not parse (a write cut short by a crash) is skipped and counted.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput

DEFAULT_MAX_BYTES = 16 << 20
DEFAULT_KEEP = 4
MAX_LINE_BYTES = 1 << 20  # a record larger than this is a bug; refused rather than written


class Journal:
    """Appends records as JSON lines, from any thread; rotates by size."""

    def __init__(self, path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 keep: int = DEFAULT_KEEP) -> None:
        if max_bytes < 1024 or keep < 1:
            raise ValueError("a journal needs max_bytes >= 1024 and keep >= 1")
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self.written = 0
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._size = self._file.tell()

    def write(self, kind: str, record: Mapping[str, Any]) -> None:
        """One record of `kind`, stamped with the wall clock (`t`, Unix seconds)."""
        line = json.dumps({"kind": kind, "t": round(time.time(), 6), **record},
                          separators=(",", ":"), allow_nan=False, default=str).encode() + b"\n"
        if len(line) > MAX_LINE_BYTES:
            raise ValueError(f"journal record of {len(line)} bytes (kind {kind})")
        with self._lock:
            if self._size and self._size + len(line) > self.max_bytes:
                self._rotate()
            self._file.write(line)
            self._file.flush()
            self._size += len(line)
            self.written += 1

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def _rotate(self) -> None:
        self._file.close()
        for index in range(self.keep, 0, -1):
            older = rotated(self.path, index)
            if index == self.keep:
                older.unlink(missing_ok=True)
            else:
                newer = rotated(self.path, index + 1)
                if older.exists():
                    os.replace(older, newer)
        os.replace(self.path, rotated(self.path, 1))
        self._file = self.path.open("ab")
        self._size = 0


def write_feedback(journal: Journal, record: Mapping[str, Any]) -> None:
    """A finished pod's `feedback` record (the node agent's, docs/LIVE.md "Per-task
    feedback"): what it used by its cgroup and by eBPF, the prediction, the waste ratio and
    the recommendation for its task class."""
    journal.write("feedback", record)


def rotated(path: Path, index: int) -> Path:
    return path.with_name(f"{path.name}.{index}")


@dataclass
class Reading:
    records: list[dict[str, Any]]
    skipped: int  # lines that did not parse


def read(path: Path) -> Reading:
    """Every record of the journal at `path` and its rotated files, oldest first.
    InvalidInput when there is no journal there at all."""
    files = sorted((p for p in path.parent.glob(f"{path.name}.*")
                    if p.name[len(path.name) + 1:].isdigit()),
                   key=lambda p: -int(p.name[len(path.name) + 1:]))
    if path.exists():
        files.append(path)
    if not files:
        raise InvalidInput(str(path), "", "", "no decision journal here")
    records: list[dict[str, Any]] = []
    skipped = 0
    for file in files:
        for record in _lines(file):
            if record is None:
                skipped += 1
            else:
                records.append(record)
    return Reading(records, skipped)


def _lines(path: Path) -> Iterator[dict[str, Any] | None]:
    try:
        with path.open("rb") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    yield None
                    continue
                yield record if isinstance(record, dict) and "kind" in record else None
    except OSError as error:
        raise InvalidInput(str(path), "", "", f"cannot read: {error.strerror}") from None
