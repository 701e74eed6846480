"""Prometheus polled in a thread, once per scrape interval; the newest complete sample kept.

A round whose queries fail keeps the previous sample (its readings age, so the view counts
missed scrapes) and is counted and logged: once when the failure starts or changes, once when
it ends. Prometheus being down or slow never stops the view and never puts a value in it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from dagpilot.live.errors import PrometheusError
from dagpilot.live.prometheus import Prometheus, SignalQuery, SignalSample, default_queries

log = logging.getLogger(__name__)


@dataclass
class PollHealth:
    polls: int = 0
    failures: int = 0
    last_error: PrometheusError | None = None  # None while the last round succeeded


class SignalPoller:
    def __init__(self, prometheus: Prometheus, interval_s: float = 5.0,
                 queries: tuple[SignalQuery, ...] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.prometheus = prometheus
        self.interval_s = interval_s
        self.queries = queries if queries is not None else default_queries()
        self.clock = clock
        self.health = PollHealth()
        self.latest: SignalSample | None = None  # replaced whole: readers see one round
        self.rounds = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prometheus", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, deadline_s: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(deadline_s)

    def poll(self) -> SignalSample | None:
        """One round now; the new sample, or None when it failed (see `health`)."""
        try:
            sample = self.prometheus.sample(self.queries, self.clock())
        except PrometheusError as error:
            self._failed(error)
            return None
        if self.health.last_error is not None:
            log.info("%s answers again", self.prometheus.url)
        self.health.last_error = None
        self.latest = sample
        with self.rounds:
            self.health.polls += 1
            self.rounds.notify_all()
        return sample

    def wait_rounds(self, count: int, deadline_s: float) -> bool:
        """Whether `count` more rounds succeeded within the deadline (for tests and tools)."""
        target = self.health.polls + count
        with self.rounds:
            return self.rounds.wait_for(lambda: self.health.polls >= target, deadline_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.poll()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def _failed(self, error: PrometheusError) -> None:
        self.health.failures += 1
        if self.health.last_error is None or str(self.health.last_error) != str(error):
            log.warning("%s; the signals keep their last sample times and age", error)
        self.health.last_error = error
