"""A file read again when it changes (the submission keys, the run history).

Each `current()` stats the path (following links: a Secret volume swaps its `..data` link, so
the key file's inode changes); a new (device, inode, size, mtime) is read and parsed. A file
that fails to read or parse leaves the previous contents in force and is logged once per
change, as a model that fails to load leaves the previous one serving.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from dagpilot.core.errors import DagpilotError
from dagpilot.core.reading.files import read_file

log = logging.getLogger(__name__)

T = TypeVar("T")
Stamp = tuple[int, int, int, int]


class WatchedFile(Generic[T]):
    def __init__(self, path: Path, parse: Callable[[bytes, str], T], max_bytes: int) -> None:
        """Reads `path` now: a file that does not load at start is the caller's error."""
        self.path = path
        self._parse = parse
        self._max_bytes = max_bytes
        self._lock = threading.Lock()
        self._value = self._load()
        self._tried: Stamp | None = _stamp(path)
        self.reloads = 0  # successful re-reads after the first

    def current(self) -> T:
        with self._lock:
            try:
                stamp = _stamp(self.path)
            except OSError as error:
                if self._tried is not None:
                    log.error("%s: %s; keeping what was read before", self.path, error)
                    self._tried = None
                return self._value
            if stamp != self._tried:
                self._tried = stamp
                try:
                    self._value = self._load()
                    self.reloads += 1
                    log.info("%s: read again", self.path)
                except DagpilotError as error:
                    log.error("%s; keeping what was read before", error)
            return self._value

    def _load(self) -> T:
        name = str(self.path)
        return self._parse(read_file(name, self._max_bytes), name)


def _stamp(path: Path) -> Stamp:
    info = os.stat(path)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns
