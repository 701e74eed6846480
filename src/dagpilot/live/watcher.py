"""One resource kept current: list, then watch from the list's resourceVersion, in a thread.

The informer pattern of client-go, small: a list hands the sink every object (`Relist`), then
each watch event follows (`Change`); a watch that ends at the server's timeout is resumed from
the last resourceVersion seen (bookmarks included), and one the server no longer has (410
Gone) is replaced by a new list. A failure (refused, timed out, a broken stream) is retried
after a backoff that doubles from `first_delay_s` up to `max_delay_s` and starts again after
any success: reconnects never stop, and never come faster than the backoff allows.

A resource the server does not serve (404: no Argo CRD on this cluster) is, with `absent_ok`,
an empty list, asked for again every `absent_retry_s`.

Each raw object is turned into the view's record by `decode` in this thread, so the reader's
`sync` applies ready records. The thread's CPU time (reading the stream, parsing the JSON,
decoding) is kept in `cpu_s`, for the benchmark's events-per-second figure.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import Gone, KubeApi, Raw, Resource, Selectors, retryable

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Relist:
    """Every object of the resource as listed: what is not among them is gone."""

    resource: Resource
    records: list[Any]


@dataclass(frozen=True, slots=True)
class Change:
    resource: Resource
    type: str  # ADDED, MODIFIED or DELETED
    record: Any


Sink = Callable[[Relist | Change], None]
Decode = Callable[[Raw], Any]


@dataclass
class WatchHealth:
    """What a watcher has done: for the view's health and the benchmark."""

    lists: int = 0
    events: int = 0
    gone: int = 0
    failures: int = 0  # failed requests since the start
    consecutive_failures: int = 0
    last_error: KubeApiError | None = None
    cpu_s: float = 0.0  # CPU time of the watcher's thread so far
    synced: threading.Event = field(default_factory=threading.Event)  # first list delivered


class Watcher:
    def __init__(self, api: KubeApi, resource: Resource, decode: Decode, sink: Sink, *,
                 first_delay_s: float = 0.2, max_delay_s: float = 5.0,
                 absent_ok: bool = False, absent_retry_s: float = 30.0,
                 selectors: Selectors | None = None) -> None:
        self.api = api
        self.resource = resource
        self.decode = decode
        self.sink = sink
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.absent_ok = absent_ok  # a resource the server does not serve (Argo's CRD) is empty
        self.absent_retry_s = absent_retry_s
        self.selectors = selectors  # part of the resource only (a node pool, a namespace)
        self.health = WatchHealth()
        self._stop = threading.Event()
        self._started_cpu = 0.0
        self._thread = threading.Thread(target=self._run, name=f"watch-{resource.value}",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, deadline_s: float = 5.0) -> None:
        self.signal_stop()
        self.api.stop_watches()
        self.join(deadline_s)

    def signal_stop(self) -> None:
        """Asks the thread to end (then `api.stop_watches()` unblocks its watch)."""
        self._stop.set()

    def join(self, deadline_s: float = 5.0) -> None:
        if self._thread.is_alive():
            self._thread.join(deadline_s)

    def _run(self) -> None:
        self._started_cpu = time.thread_time()
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    version = self._list()
                version = self._watch(version)
                self.health.consecutive_failures = 0
            except Gone as gone:
                log.info("watch of %s: %s; listing again", self.resource.value, gone)
                self.health.gone += 1
                version = None
            except KubeApiError as error:
                if self.absent_ok and error.status == 404:
                    self._absent(error)
                else:
                    self._failed(error)
            except Exception:  # a bug must not end the feed silently: log it, keep going
                log.exception("watch of %s failed", self.resource.value)
                self._failed(KubeApiError(self.api.server, "unexpected failure (logged)"))

    def _list(self) -> str:
        listing = self.api.list_all(self.resource, self.selectors)
        records = [self.decode(item) for item in listing.items]
        self.sink(Relist(self.resource, records))
        self.health.cpu_s = time.thread_time() - self._started_cpu
        self.health.lists += 1
        self.health.consecutive_failures = 0
        self.health.synced.set()
        return listing.resource_version

    def _watch(self, version: str) -> str:
        for event in self.api.watch(self.resource, version, self._stop, self.selectors):
            if self._stop.is_set():
                break
            version = event.resource_version or version
            if event.type == "BOOKMARK":
                continue
            self.sink(Change(self.resource, event.type, self.decode(event.object)))
            self.health.events += 1
            self.health.cpu_s = time.thread_time() - self._started_cpu
            self.health.consecutive_failures = 0
        return version

    def _absent(self, error: KubeApiError) -> None:
        if not self.health.synced.is_set():
            log.info("%s are not served (%s): watching none, asking again every %g s",
                     self.resource.value, error.message, self.absent_retry_s)
            self.sink(Relist(self.resource, []))
            self.health.synced.set()
        self._stop.wait(self.absent_retry_s)

    def _failed(self, error: KubeApiError) -> None:
        health = self.health
        health.failures += 1
        health.consecutive_failures += 1
        if health.last_error is None or str(health.last_error) != str(error):
            log.warning("watch of %s: %s (retrying%s)", self.resource.value, error,
                        "" if retryable(error) else "; this will not pass by itself")
        health.last_error = error
        delay = min(self.max_delay_s,
                    self.first_delay_s * 2 ** min(health.consecutive_failures - 1, 16))
        self._stop.wait(delay)
