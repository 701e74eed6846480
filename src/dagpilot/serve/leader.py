"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.

Every replica runs the view and the loop; only the leader decides and binds. Each replica tries
every `retry_period_s` to take or renew the Lease `namespace/name`:
- no Lease: create it holding it (a 409 means another replica was first);
- held by another, and its record (holder, resourceVersion) has changed within
  `lease_duration_s` by this replica's own clock (dated from the look before the one that saw
  the change, so never late): follow;
- held by this replica, or by nobody, or not renewed for `lease_duration_s`: write it with this
  replica as holder and a new renewTime, at the resourceVersion read (a 409 means another
  replica wrote first: follow this round).
A leader that has not renewed for `renew_deadline_s` (renew_deadline_s + retry_period_s <
lease_duration_s) stops leading on its own before anyone else can take over, so two replicas
never both lead. A follower takes over
within lease_duration_s + retry_period_s of the leader's last renewal. `close(release=True)`
hands the Lease back on a clean shutdown (the next replica takes it at its next try).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaseConfig:
    namespace: str
    identity: str
    name: str = "dagpilot-scheduler"
    lease_duration_s: float = 15.0  # kube-scheduler's defaults
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0

    def __post_init__(self) -> None:
        # A follower may date a renewal up to one retry period early (see _attempt): the
        # leader must have stopped leading by then.
        if not (0 < self.retry_period_s < self.renew_deadline_s
                and self.renew_deadline_s + self.retry_period_s < self.lease_duration_s):
            raise ValueError("a Lease needs retry period < renew deadline and renew deadline "
                             "+ retry period < lease duration")


class LeaderElector:
    def __init__(self, api: KubeApi, config: LeaseConfig,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.config = config
        self.clock = clock
        self.transitions = 0  # times this replica became leader
        self._renewed_s: float | None = None  # our last successful write, our clock
        self._observed: tuple[str, str] | None = None  # (holder, resourceVersion) last seen
        self._observed_s = 0.0
        self._polled_s: float | None = None  # when the previous look began
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.changed = threading.Event()  # set whenever leadership is gained or lost

    @property
    def is_leader(self) -> bool:
        renewed = self._renewed_s
        return renewed is not None and self.clock() < renewed + self.config.renew_deadline_s

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dagpilot-leader", daemon=True)
        self._thread.start()

    def close(self, release: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if release and self.is_leader:
            self._release()
        self._renewed_s = None

    def try_once(self) -> bool:
        """One attempt to take or renew the Lease; whether this replica leads after it."""
        was = self.is_leader
        try:
            self._attempt()
        except KubeApiError as error:
            log.warning("lease %s/%s: %s", self.config.namespace, self.config.name,
                        error.message)
        now = self.is_leader
        if now != was:
            if now:
                self.transitions += 1
            log.info("%s %s the lease %s", self.config.identity,
                     "holds" if now else "lost", self.config.name)
            self.changed.set()
        return now

    def _run(self) -> None:
        while not self._stop.is_set():
            self.try_once()
            self._stop.wait(self.config.retry_period_s)

    def _attempt(self) -> None:
        config = self.config
        started = self.clock()
        lease = self.api.read_lease(config.namespace, config.name)
        if lease is None:
            try:
                self.api.create_lease(config.namespace, self._body(None, acquire=True))
            except KubeApiError as error:
                if error.status != 409:
                    raise
                return
            self._renewed_s = started
            return
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        version = str((lease.get("metadata") or {}).get("resourceVersion", ""))
        if self._observed != (holder, version):
            # The record changed after our previous look: date it from then, so that a
            # leader's death is noticed within lease_duration_s + retry_period_s.
            self._observed = (holder, version)
            self._observed_s = self._polled_s if self._polled_s is not None else started
        self._polled_s = started
        duration = float(spec.get("leaseDurationSeconds") or config.lease_duration_s)
        if holder and holder != config.identity and started < self._observed_s + duration:
            self._renewed_s = None
            return
        try:
            self.api.replace_lease(config.namespace, self._body(lease, acquire=holder !=
                                                                config.identity))
        except KubeApiError as error:
            if error.status != 409:
                raise
            self._renewed_s = None
            return
        self._renewed_s = started

    def _body(self, lease: dict[str, Any] | None, *, acquire: bool) -> dict[str, Any]:
        now = _micro_time()
        spec = dict((lease or {}).get("spec") or {})
        transitions = int(spec.get("leaseTransitions") or 0)
        spec.update(holderIdentity=self.config.identity, renewTime=now,
                    leaseDurationSeconds=max(1, round(self.config.lease_duration_s)))
        if acquire:
            spec.update(acquireTime=now, leaseTransitions=transitions + (lease is not None))
        metadata: dict[str, Any] = {"name": self.config.name,
                                    "namespace": self.config.namespace}
        if lease is not None:
            metadata["resourceVersion"] = lease["metadata"]["resourceVersion"]
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": metadata, "spec": spec}

    def _release(self) -> None:
        try:
            lease = self.api.read_lease(self.config.namespace, self.config.name)
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") \
                    != self.config.identity:
                return
            body = self._body(lease, acquire=False)
            body["spec"].update(holderIdentity="", leaseDurationSeconds=1)
            self.api.replace_lease(self.config.namespace, body)
        except KubeApiError as error:
            log.info("lease %s not released: %s", self.config.name, error.message)


def _micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AlwaysLeader:
    """One replica without election (--leader-elect=false)."""

    is_leader = True
    transitions = 1

    def __init__(self) -> None:
        self.changed = threading.Event()

    def start(self) -> None:
        pass

    def close(self, release: bool = True) -> None:
        del release
