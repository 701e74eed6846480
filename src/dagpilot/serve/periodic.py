"""A function called every `period_s` on a daemon thread until `close`: how the serving side
follows files that change under it (the registry's `current`, the canary plan)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Periodic:
    def __init__(self, name: str, period_s: float, call: Callable[[], object]) -> None:
        self.name, self.period_s, self._call = name, period_s, call
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self._call()
