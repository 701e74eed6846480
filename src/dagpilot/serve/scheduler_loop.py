"""The custom scheduler's loop: sync the view, decide, assume, bind; never block a pod.

One thread owns the view. Each round it applies what the watches brought (`sync`; a new
metrics sample is encoded into the model then, between decisions: `Decider.prepare`), collects
the binds that came back (a failed one is forgotten, so the pod is pending again), and, while
this replica leads, decides for the pods the unschedulable queue lets through: each placement
is assumed in the view at once (the next decision already counts it) and bound by the binder's
threads. When nothing can be placed, the pods left are marked unschedulable (PodScheduled=False
and a FailedScheduling Event, kube-scheduler's message) and held back until the cluster changes
and their backoff ends. A bind that fails for a passing reason (a timeout, 5xx, 429, RBAC) puts
the pod in a retry backoff of its own; a pod deleted or bound meanwhile (404, 409) is dropped.
The loop sleeps only when there is nothing to do, until an event arrives or a backoff ends.
With a journal, each decision is followed by its bind's outcome and, when the watch shows the
pod Succeeded or Failed, a "finished" record.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dagpilot.core.view import PodRef
from dagpilot.decide.decoder import Decoder
from dagpilot.journal import Journal
from dagpilot.live.pods import PodRecord
from dagpilot.serve.binder import BOUND, CONFLICT, GONE, Binder, BindRequest, BindResult
from dagpilot.serve.decisions import FALLBACK, UNSCHEDULABLE, Choice, Decider
from dagpilot.serve.explanation import annotation, event_message
from dagpilot.serve.journal_records import decision_record, outcome_record
from dagpilot.serve.leader import AlwaysLeader, LeaderElector
from dagpilot.serve.scheduler_view import PinnedView, SchedulerView
from dagpilot.serve.serve_metrics import SchedulerMetrics, fallback_reason
from dagpilot.serve.unschedulable import UnschedulableQueue, unschedulable_message

log = logging.getLogger(__name__)

KEEP_DECIDED = 100_000  # pods whose end is awaited for the journal; the oldest are forgotten


@dataclass(frozen=True)
class LoopConfig:
    decisions_per_round: int = 64  # then sync again, so new events are not kept waiting
    idle_wait_s: float = 1.0  # the longest sleep with nothing to do (leadership is re-read)


class SchedulerLoop:
    def __init__(self, view: SchedulerView, decider: Decider, binder: Binder, *,
                 leader: LeaderElector | AlwaysLeader, metrics: SchedulerMetrics,
                 journal: Journal | None = None, config: LoopConfig = LoopConfig()) -> None:
        self.view = view
        self.decider = decider
        self.binder = binder
        self.leader = leader
        self.metrics = metrics
        self.journal = journal
        self.config = config
        self.unschedulable = UnschedulableQueue()
        self.retries = UnschedulableQueue(initial_s=0.2, max_s=5.0)
        self.outcomes: dict[str, int] = {"model": 0, "fallback": 0, "unschedulable": 0}
        self.dropped = 0  # placements of pods no longer pending when they came to be bound
        self._decoder = Decoder()  # the filters' reasons, for unschedulable messages
        self._token = -1
        # the view the decisions read, pinned again per decision; None after the fallback
        # decided (a policy call past its deadline may still be reading it)
        self._pinned: PinnedView | None = None
        self._prepared = 0  # the view's signal samples the model was prepared for
        self._cluster = view.cluster
        self._decided: dict[str, str] = {}  # API uid -> namespace/name, until the pod ends
        self._told: dict[str, str] = {}  # API uid -> why it is refused, as the pod was told
        self._ended: queue.SimpleQueue[PodRecord] = queue.SimpleQueue()
        if journal is not None:
            view.pod_listener = self._seen

    def run(self, stop: threading.Event) -> None:
        """Rounds until `stop` is set."""
        while not stop.is_set():
            if self.round() == 0:
                self._idle(stop)

    def round(self) -> int:
        """One round; the decisions made."""
        view = self.view
        view.wakeup.clear()
        view.sync()
        if view.samples != self._prepared and self.leader.is_leader:
            self._prepared = view.samples  # new metrics: encoded now, not in the next decision
            self.decider.prepare(view)
        for result in self.binder.done():
            self._settled(result)
        self._record_ends()
        self._note_changes()
        leading = self.leader.is_leader
        self.metrics.leader.set(1 if leading else 0)
        self._serving_gauges()
        if not leading:
            return 0
        self._tell_refused()
        made = 0
        while made < self.config.decisions_per_round:
            eligible = self._eligible()
            if not eligible:
                break
            choice = self.decider.decide(self._pin(eligible))
            if choice.version is None:  # the fallback's: a late policy call may still read it
                self._pinned = None
            self._count(choice)
            made += 1
            if choice.placement is None:
                self._hold(eligible)
                break
            self._bind(choice)
        self._serving_gauges()
        return made

    # --- one round's parts -------------------------------------------------------------

    def _eligible(self) -> Sequence[PodRef]:
        if not self.unschedulable and not self.retries:  # nothing held back: every pod
            return self.view.pending
        now = time.monotonic()
        return [pod for pod in self.view.pending
                if self.unschedulable.eligible(pod.uid, now)
                and self.retries.eligible(pod.uid, now)]

    def _pin(self, eligible: Sequence[PodRef]) -> PinnedView:
        """The view with `eligible` pending: the last decision's object when the model made
        that decision (its call has returned), so what the decoder keeps about the view (the
        reasons nodes reject a pod spec) carries over; a new one after the fallback's."""
        pinned = self._pinned
        if pinned is None:
            pinned = self._pinned = PinnedView(self.view, eligible)
            return pinned
        return pinned.pin(eligible)

    def _count(self, choice: Choice) -> None:
        self.outcomes[choice.outcome] += 1
        self.metrics.decisions.labels(choice.outcome).inc()
        self.metrics.decision_seconds.observe(choice.decision_s)
        if choice.outcome == FALLBACK or (choice.outcome == UNSCHEDULABLE and choice.reason):
            self.metrics.fallbacks.labels(fallback_reason(choice.reason)).inc()

    def _bind(self, choice: Choice) -> None:
        assert choice.placement is not None
        placement, view = choice.placement, self.view
        key, uid = view.pod_key(placement.pod), view.api_uid(placement.pod)
        if key is None:  # not this view's pod: a bug of the policy, not of the pod
            log.error("placement of unknown pod %s dropped", placement.pod.name)
            return
        try:
            view.assume(placement.pod, placement.node)
        except ValueError as error:  # bound, deleted or its node gone since the round began
            log.info("placement of %s dropped: %s", key, error)
            self.dropped += 1
            return
        self.unschedulable.release(placement.pod.uid)
        self.retries.release(placement.pod.uid)
        namespace, name = key.split("/", 1)
        source = "model" if choice.outcome != FALLBACK else choice.reason or FALLBACK
        self.binder.bind(BindRequest(placement, namespace, name, uid,
                                     annotation(placement, choice.outcome, choice.version),
                                     event_message(key, placement, source, choice.version)))
        if self.journal is not None:
            self.journal.write("decision", decision_record(view, choice, key, uid, placement))
            if uid is not None:
                if len(self._decided) >= KEEP_DECIDED:
                    del self._decided[next(iter(self._decided))]
                self._decided[uid] = key

    def _seen(self, record: PodRecord) -> None:
        """The watchers' threads: a pod that ended (the loop journals it if it decided it)."""
        if record.terminal:
            self._ended.put(record)

    def _record_ends(self) -> None:
        """The decision's later outcome: how the pod ended, and where."""
        while True:
            try:
                record = self._ended.get_nowait()
            except queue.Empty:
                return
            key = self._decided.pop(record.uid, None)
            if key is not None and self.journal is not None:
                self.journal.write("finished", {"pod": key, "uid": record.uid,
                                                "phase": record.phase, "node": record.node})

    def _settled(self, result: BindResult) -> None:
        request = result.request
        self.metrics.binds.labels(result.result).inc()
        self.metrics.bind_seconds.observe(result.bind_s)
        if self.journal is not None:
            self.journal.write("outcome", outcome_record(
                request.uid, f"{request.namespace}/{request.name}", result.result,
                result.detail, result.bind_s))
        if result.result == BOUND:
            return
        pod = request.placement.pod
        self.view.forget(pod)
        if result.result in (GONE, CONFLICT):  # the watch will show it deleted or bound
            log.info("bind of %s/%s dropped (%s): %s", request.namespace, request.name,
                     result.result, result.detail)
            return
        log.warning("bind of %s/%s failed (%s), retried after a backoff: %s",
                    request.namespace, request.name, result.result, result.detail)
        self.retries.hold(pod.uid, time.monotonic(), result.detail)
        self.retries.cluster_changed()  # a retry waits for its backoff, not for a change

    def _hold(self, pods: Sequence[PodRef]) -> None:
        """Nothing fits: each pod is held back, with kube-scheduler's message when new."""
        view, now = self.view, time.monotonic()
        every = range(len(view.cluster.nodes))
        messages: dict[int, str] = {}  # by Task: a fan-out's pods share theirs
        for pod in pods:
            message = messages.get(id(pod.task))
            if message is None:
                rejected = self._decoder.rejected(view, pod.task, every)
                message = messages[id(pod.task)] = unschedulable_message(
                    len(view.cluster.nodes), rejected)
            if self.unschedulable.hold(pod.uid, now, message):
                key = view.pod_key(pod)
                if key is not None:
                    namespace, name = key.split("/", 1)
                    self.binder.mark_unschedulable(namespace, name, message)
                    if self.journal is not None:
                        self.journal.write("unschedulable", {"pod": key,
                                                             "uid": view.api_uid(pod),
                                                             "message": message})

    def _tell_refused(self) -> None:
        """The pods the view refuses (they do not parse, or have a required rule dagpilot
        cannot honour: live/unsupported.py) get PodScheduled=False and a FailedScheduling
        Event with why, once per reason, counted as unschedulable."""
        refused = self.view.refused
        for uid in [uid for uid in self._told if uid not in refused]:
            del self._told[uid]
        for uid, (key, why) in refused.items():
            if self._told.get(uid) == why:
                continue
            self._told[uid] = why
            self.outcomes[UNSCHEDULABLE] += 1
            self.metrics.decisions.labels(UNSCHEDULABLE).inc()
            namespace, name = key.split("/", 1)
            self.binder.mark_unschedulable(namespace, name, why)
            if self.journal is not None:
                self.journal.write("unschedulable", {"pod": key, "uid": uid, "message": why})

    def _note_changes(self) -> None:
        """A node added, changed or freed: held pods may fit now (after their backoff)."""
        view = self.view
        self._token, rows = view.changed_nodes(self._token)
        if view.cluster is not self._cluster or rows is None or len(rows) > 0:
            self._cluster = view.cluster
            self.unschedulable.cluster_changed()
        if self.unschedulable or self.retries:
            pending = {pod.uid for pod in view.pending}
            self.unschedulable.keep_only(pending)
            self.retries.keep_only(pending)

    def _serving_gauges(self) -> None:
        self.metrics.queue_depth.set(len(self.view.pending))
        self.metrics.unschedulable.set(len(self.unschedulable))
        self.metrics.refused.set(len(self.view.refused))
        serving = self.decider.source.current()
        self.metrics.serving(serving.version if serving is not None else None)

    def _idle(self, stop: threading.Event) -> None:
        wait = self.config.idle_wait_s
        for ready in (self.unschedulable.next_ready_s(), self.retries.next_ready_s()):
            if ready is not None:
                wait = min(wait, max(0.0, ready - time.monotonic()))
        if self.binder.in_flight:
            wait = min(wait, 0.01)  # a failed bind brings no watch event: look again soon
        if not stop.is_set():
            self.view.wakeup.wait(wait)
