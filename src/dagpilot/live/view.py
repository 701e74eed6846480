"""LiveView: core.view.ClusterView of a real cluster, from watch-fed caches and Prometheus.

- Feeds. Three watchers (live/watcher.py: nodes, pods, Argo Workflows) decode objects into
  records in their threads and queue them; a SignalPoller (live/signal_poller.py) keeps the
  newest Prometheus sample. `sync()` applies what has arrived: between two syncs the view is
  one consistent picture (as kube-scheduler takes a snapshot of its cache at the start of each
  cycle), so a scheduler calls `sync()` and then decides. One thread reads and syncs.
- Nodes, allocation, free GPUs, signals: live/node_table.py. Allocated is the sum of the
  requests (live/pods.py) of the pods bound to a node and not Succeeded or Failed, pods being
  deleted included until they are gone, as kube-scheduler counts them.
- `pending`: the pods with no node, not terminal, not being deleted, without scheduling gates,
  of one of `schedulers` (None: any scheduler name), oldest first: by creationTimestamp, then
  the order the API server created them (the watch's order; a list's by resourceVersion).
  Such a pod that does not parse, or that has a required rule dagpilot cannot honour
  (live/unsupported.py), is in `refused` instead, with why: a scheduler tells its pod.
- assume / forget: a scheduler that binds a pod assumes it at once (allocated, off `pending`,
  placed since the sample) and forgets it when the bind fails; the watch confirms an
  assumption when it shows the pod bound, and overrides it when it shows another node.
- `placed_since_sample`: the requests of the pods bound to the node after its signals' sample
  time: bound when the view assumed them or saw them bound, or, for pods already bound when it
  listed them, by their PodScheduled time (whole seconds, rounded up).
- `rtt_ms`: the ping mesh's `dagpilot_rtt_seconds{src,dst}` (the mean of the two directions
  measured), else `topology_rtt_ms` of the two specs: the simulator's model, passed in by the
  caller (live/ may not import sim/; see live_view_of in the CLI).
- `changed_nodes`: from the allocation and readiness changes the events made (node_table).
- `now_s`: the wall clock (Unix seconds) at the last sync, never going back; sample times and
  creation times are Unix seconds too.
- Bad input never stops the view: a Node, Pod or Workflow that does not parse is logged (once
  per version) and counted in `skipped` under a reason, and left out (a node), or left
  unscheduled (a pod), or scheduled as single-task jobs (a workflow's pods). A pod bound to a
  node that is not in the cluster is counted too.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from dagpilot.core.types import Cluster, Job, NodeSpec
from dagpilot.core.view import PodRef
from dagpilot.live.errors import KubeApiError
from dagpilot.live.kube_api import KubeApi, Resource, Selectors, Timeouts, retryable
from dagpilot.live.node_table import LiveNode, NodeTable
from dagpilot.live.nodes import NodeRecord, decode_node
from dagpilot.live.pods import Amounts, PodDecoder, PodRecord, pod_ref, single_job
from dagpilot.live.prometheus import MEASURED, Prometheus, Reading, SignalSample
from dagpilot.live.signal_poller import SignalPoller
from dagpilot.live.watcher import Change, Relist, Watcher
from dagpilot.live.workflows import WorkflowDecoder, WorkflowRecord, task_of_node

log = logging.getLogger(__name__)

TopologyRtt = Callable[[NodeSpec, NodeSpec], float]
"""RTT in ms between two nodes that the mesh has not measured (the simulator's model)."""


@dataclass(frozen=True, slots=True)
class Counted:
    """A pod whose requests are allocated on a node."""

    node: str
    amounts: Amounts
    job_id: str
    bound_s: float


class LiveView:
    def __init__(self, topology_rtt_ms: TopologyRtt, *, schedulers: frozenset[str] | None = None,
                 poller: SignalPoller | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.topology_rtt_ms = topology_rtt_ms
        self.schedulers = schedulers
        self.poller = poller
        self.clock = clock
        self.table = NodeTable()
        self.skipped: Counter[str] = Counter()
        self.events_applied = 0
        self.apply_s = 0.0  # thread CPU time spent in sync
        self.watchers: list[Watcher] = []
        self.api: KubeApi | None = None
        self._queue: deque[Relist | Change] = deque()
        self._now = 0.0
        self._pods: dict[str, PodRecord] = {}
        self._workflows: dict[str, WorkflowRecord] = {}  # by namespace/name
        self._workflow_pods: dict[str, set[str]] = {}  # workflow key -> pod uids
        self._counted: dict[str, Counted] = {}
        self._assumed: dict[str, str] = {}  # uid -> node
        self._assumed_s: dict[str, float] = {}
        self._job_nodes: dict[str, Counter[str]] = {}
        self._pending: dict[str, tuple[float, int]] = {}  # uid -> order key, insertion order
        self._pending_sorted = True
        self._pending_view: tuple[PodRef, ...] | None = ()
        self._pending_uids: list[str] = []  # the view's pods' uids, in its order
        self._refused: dict[str, tuple[str, str]] = {}  # uid -> (namespace/name, why)
        self.samples = 0  # signal samples applied so far (each: new metrics on the nodes)
        self._refs: dict[str, PodRef] = {}
        self._singles: dict[str, Job] = {}
        self._numbers: dict[str, int] = {}
        self._uids: dict[int, str] = {}
        self._numbered = 0  # PodRef uids handed out; never reused (not len(_numbers), which
        # shrinks as pods go: a new pod then took a live pod's number, and a bind its name)
        self._keys: dict[str, str] = {}  # namespace/name -> uid
        self._order: dict[str, int] = {}  # uid -> arrival sequence
        self._sample: SignalSample | None = None
        self._logged: set[tuple[str, str, str]] = set()
        self._elsewhere: set[str] = set()  # pods counted on a node not in the cluster

    # --- lifecycle -----------------------------------------------------------------------

    @classmethod
    def connect(cls, kubeconfig: Path, topology_rtt_ms: TopologyRtt, *,
                prometheus_url: str | None = None, context: str | None = None,
                schedulers: frozenset[str] | None = None, timeouts: Timeouts | None = None,
                scrape_interval_s: float = 5.0, prometheus_timeout_s: float = 2.0,
                node_selector: str = "", namespace: str = "") -> LiveView:
        """A view of the cluster of a kubeconfig, not started yet (see `start`): its nodes
        (those `node_selector` picks, a label selector) and its pods and Workflows (those of
        `namespace` only, when given)."""
        poller = SignalPoller(Prometheus(prometheus_url, prometheus_timeout_s),
                              scrape_interval_s) if prometheus_url else None
        view = cls(topology_rtt_ms, schedulers=schedulers, poller=poller)
        view.api = KubeApi(kubeconfig, context, timeouts or Timeouts())
        nodes = Selectors(labels=node_selector)
        scoped = Selectors(fields=f"metadata.namespace={namespace}" if namespace else "")
        view.watchers = [
            Watcher(view.api, Resource.NODES, decode_node, view.feed, selectors=nodes),
            Watcher(view.api, Resource.PODS, PodDecoder(), view.feed, selectors=scoped),
            Watcher(view.api, Resource.WORKFLOWS, WorkflowDecoder(), view.feed, absent_ok=True,
                    selectors=scoped)]
        return view

    def start(self, deadline_s: float = 30.0) -> None:
        """Starts the feeds and returns once every watcher has listed (then syncs);
        KubeApiError when the server cannot be reached or trusted in time."""
        if self.api is not None:
            self.api.version()  # fails fast, with the reason, when the server is unusable
        for watcher in self.watchers:
            watcher.start()
        if self.poller is not None:
            self.poller.start()
        end = time.monotonic() + deadline_s
        for watcher in self.watchers:
            while not watcher.health.synced.wait(min(0.1, max(0.0, end - time.monotonic()))):
                error = watcher.health.last_error
                if (error is not None and not retryable(error)) or time.monotonic() >= end:
                    self.close()
                    raise error or KubeApiError(
                        self.api.server if self.api else "?",
                        f"no list of {watcher.resource.value} within {deadline_s:g} s")
        if self.poller is not None:
            self.poller.wait_rounds(1, max(0.0, end - time.monotonic()))
        self.sync()

    def close(self) -> None:
        for watcher in self.watchers:
            watcher.signal_stop()
        if self.api is not None:
            self.api.stop_watches()
        for watcher in self.watchers:
            watcher.join()
        if self.poller is not None:
            self.poller.stop()
        if self.api is not None:
            self.api.close()

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def feed(self, item: Relist | Change) -> None:
        """Queues a list or watch event for the next sync (the watchers' sink; any thread)."""
        self._queue.append(item)

    def sync(self) -> int:
        """Applies every queued event and the newest signal sample; the events applied."""
        started = time.thread_time()
        applied = 0
        queue = self._queue
        while queue:
            self._apply(queue.popleft())
            applied += 1
        if self.table.dirty and self.table.rebuild():
            self._recount()
            self._sample = None  # the new nodes take the current sample
        self._note_elsewhere()
        sample = self.poller.latest if self.poller is not None else None
        if sample is not self._sample and sample is not None:
            self._sample = sample
            self.samples += 1
            self.table.measure(sample.readings, [q.column for q in self.poller.queries]
                               if self.poller else list(MEASURED), sample.gpus_free)
        self._now = max(self._now, self.clock())
        self.events_applied += applied
        self.apply_s += time.thread_time() - started
        return applied

    # --- ClusterView ---------------------------------------------------------------------

    @property
    def now_s(self) -> float:
        return self._now

    @property
    def cluster(self) -> Cluster:
        return self.table.cluster

    @property
    def nodes(self) -> Sequence[LiveNode]:
        return self.table.nodes

    @property
    def pending(self) -> Sequence[PodRef]:
        if self._pending_view is None:
            if not self._pending_sorted:
                self._pending = dict(sorted(self._pending.items(), key=lambda item: item[1]))
                self._pending_sorted = True
            pairs = [(uid, ref) for uid in self._pending if (ref := self._ref(uid)) is not None]
            self._pending_uids = [uid for uid, _ in pairs]
            self._pending_view = tuple(ref for _, ref in pairs)
        return self._pending_view

    def job_nodes(self, job_id: str) -> Sequence[str]:
        return tuple(self._job_nodes.get(job_id, ()))

    def rtt_ms(self, node_a: str, node_b: str) -> float:
        measured = self._sample.rtt_s if self._sample is not None else {}
        found = [value for value in (measured.get((node_a, node_b)),
                                     measured.get((node_b, node_a))) if value is not None]
        if found and node_a != node_b:
            return 1000.0 * sum(found) / len(found)
        index = self.table.cluster.index
        return self.topology_rtt_ms(index[node_a], index[node_b])

    def finished_tasks(self, job_id: str) -> frozenset[str]:
        workflow = self._workflows.get(job_id)
        if workflow is not None and workflow.job is not None:
            return workflow.finished
        uid = self._keys.get(job_id)  # a single-task job is named as its pod
        pod = self._pods.get(uid) if uid is not None else None
        if uid is None or pod is None or pod.phase != "Succeeded":
            return frozenset()
        ref = self._ref(uid)
        return frozenset({ref.task.id}) if ref is not None and ref.job.id == job_id \
            else frozenset()

    def resource_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.table.resource_arrays()

    def ready_mask(self) -> np.ndarray:
        return self.table.ready_mask()

    def signal_arrays(self) -> np.ndarray:
        return self.table.signal_arrays()

    def changed_nodes(self, since: int) -> tuple[int, Sequence[int] | None]:
        return self.table.log.since(since)

    # --- a scheduler's bindings ----------------------------------------------------------

    def assume(self, pod: PodRef, node: str) -> None:
        """`pod` is being bound to `node`: counted there now, before the watch confirms it."""
        uid = self._uids.get(pod.uid)
        record = self._pods.get(uid) if uid is not None else None
        if uid is None or record is None or uid not in self._pending:
            raise ValueError(f"{pod.name} is not pending in this view")
        if node not in self.table.by_name:
            raise ValueError(f"no node {node!r} in the view's cluster")
        self._assumed[uid], self._assumed_s[uid] = node, self.clock()
        self._settle(uid)

    def forget(self, pod: PodRef) -> None:
        """The bind of an assumed pod failed: pending again (unless the watch saw it bound)."""
        uid = self._uids.get(pod.uid)
        if uid is not None and self._assumed.pop(uid, None) is not None:
            self._assumed_s.pop(uid, None)
            self._settle(uid)

    @property
    def refused(self) -> Mapping[str, tuple[str, str]]:
        """The pods that wait for one of `schedulers` but will not be placed, by API uid:
        (namespace/name, why: the parse error or the rule dagpilot cannot honour)."""
        return MappingProxyType(self._refused)

    def pending_pod(self, key: str) -> PodRef | None:
        """The PodRef of the pending pod namespace/name (one of `pending`), or None."""
        uid = self._keys.get(key)
        return self._ref(uid) if uid is not None and uid in self._pending else None

    def pod_key(self, pod: PodRef) -> str | None:
        """namespace/name of a PodRef this view gave."""
        uid = self._uids.get(pod.uid)
        record = self._pods.get(uid) if uid is not None else None
        return record.key if record is not None else None

    def job_ids(self) -> list[str]:
        """The jobs with pods bound now, and every parsed Workflow (pending pods name theirs)."""
        return sorted(set(self._job_nodes) | {key for key, workflow in self._workflows.items()
                                              if workflow.job is not None})

    def health(self) -> dict[str, object]:
        """The feeds' counters and last errors, and the skipped objects by reason."""
        feeds: dict[str, object] = {w.resource.value: {
            "lists": w.health.lists, "events": w.health.events, "gone": w.health.gone,
            "failures": w.health.failures, "cpu_s": round(w.health.cpu_s, 3),
            "last_error": str(w.health.last_error) if w.health.last_error else None}
            for w in self.watchers}
        if self.poller is not None:
            feeds["prometheus"] = {"polls": self.poller.health.polls,
                                   "failures": self.poller.health.failures,
                                   "last_error": str(self.poller.health.last_error)
                                   if self.poller.health.last_error else None}
        return {"feeds": feeds, "skipped": dict(self.skipped),
                "events_applied": self.events_applied}

    def readings(self, node: str) -> dict[str, Reading]:
        """The node's measured readings by column (a column without one is absent)."""
        found = self.table.by_name.get(node)
        return dict(found.measured) if found is not None else {}

    # --- applying events -----------------------------------------------------------------

    def _apply(self, item: Relist | Change) -> None:
        if item.resource is Resource.NODES:
            self._apply_nodes(item)
        elif item.resource is Resource.PODS:
            self._apply_pods(item)
        else:
            self._apply_workflows(item)

    def _apply_nodes(self, item: Relist | Change) -> None:
        if isinstance(item, Relist):
            for record in item.records:
                self._note_node(record)
            self.table.relist(item.records)
        elif item.type == "DELETED":
            self.table.remove(item.record.name)
        else:
            self._note_node(item.record)
            self.table.put(item.record)

    def _note_node(self, record: NodeRecord) -> None:
        if record.error is not None:
            self._skip("node_spec", f"node {record.name}", record.resource_version,
                       str(record.error))

    def _apply_pods(self, item: Relist | Change) -> None:
        if isinstance(item, Relist):
            listed = {record.uid for record in item.records}
            for uid in [uid for uid in self._pods if uid not in listed]:
                self._put_pod(uid, None)
            for record in sorted(item.records, key=_list_order):
                self._put_pod(record.uid, record)
        else:
            self._put_pod(item.record.uid, None if item.type == "DELETED" else item.record)

    def _put_pod(self, uid: str, record: PodRecord | None) -> None:
        old = self._pods.get(uid)
        if record is None:
            if old is None:
                return
            del self._pods[uid]
            if self._keys.get(old.key) == uid:
                del self._keys[old.key]
            self._assumed.pop(uid, None)
            self._assumed_s.pop(uid, None)
            self._unlink_workflow(uid, old)
        else:
            if record.error is not None:
                self._skip("pod_spec", f"pod {record.key}", record.resource_version,
                           str(record.error))
            self._pods[uid] = record
            self._keys[record.key] = uid
            if uid not in self._numbers:
                self._numbered += 1
                number = self._numbered
                self._numbers[uid], self._uids[number] = number, uid
                self._order[uid] = number
            if old is not None and old.workflow != record.workflow:
                self._unlink_workflow(uid, old)
            if record.workflow is not None:
                self._workflow_pods.setdefault(f"{record.namespace}/{record.workflow}",
                                               set()).add(uid)
        self._refs.pop(uid, None)
        self._singles.pop(old.key if old else "", None)
        self._settle(uid)
        if record is None:
            self._order.pop(uid, None)
            self._uids.pop(self._numbers.pop(uid, 0), None)

    def _unlink_workflow(self, uid: str, record: PodRecord) -> None:
        if record.workflow is not None:
            pods = self._workflow_pods.get(f"{record.namespace}/{record.workflow}")
            if pods is not None:
                pods.discard(uid)

    def _apply_workflows(self, item: Relist | Change) -> None:
        if isinstance(item, Relist):
            listed = {record.key for record in item.records}
            for key in [key for key in self._workflows if key not in listed]:
                self._put_workflow(key, None)
            for record in item.records:
                self._put_workflow(record.key, record)
        else:
            self._put_workflow(item.record.key, None if item.type == "DELETED" else item.record)

    def _put_workflow(self, key: str, record: WorkflowRecord | None) -> None:
        old = self._workflows.get(key)
        if record is None:
            self._workflows.pop(key, None)
        else:
            if record.error is not None:
                self._skip("workflow_dag", f"workflow {key}", record.resource_version,
                           str(record.error))
            self._workflows[key] = record
        if old is not None and record is not None and old.job is record.job:
            return  # the status moved on; the pods' jobs and tasks are the same
        for uid in list(self._workflow_pods.get(key, ())):
            self._refs.pop(uid, None)
            self._settle(uid)
        if record is None:
            self._workflow_pods.pop(key, None)

    # --- where each pod counts -------------------------------------------------------------

    def _settle(self, uid: str) -> None:
        """Puts a pod where its record and assumption say: counted on a node, pending or
        neither."""
        record = self._pods.get(uid)
        target: str | None = None
        bound_s = self.clock()
        if record is not None and record.error is None and not record.terminal:
            if record.node is not None:
                target = record.node
                if self._assumed.pop(uid, None) is not None:  # the watch confirmed it
                    bound_s = self._assumed_s.pop(uid, bound_s)
                elif record.scheduled_s is not None:
                    bound_s = min(bound_s, record.scheduled_s + 1.0)
            elif uid in self._assumed:
                target, bound_s = self._assumed[uid], self._assumed_s[uid]
        self._count(uid, record, target, bound_s)
        why: str | None = None
        if record is not None and target is None and self._waiting(record):
            why = _refusal(record)
            if why is not None:
                self._refused[uid] = (record.key, why)
            self._set_pending(uid, why is None)
        else:
            self._set_pending(uid, False)
        if why is None:
            self._refused.pop(uid, None)

    def _waiting(self, record: PodRecord) -> bool:
        """Unbound, not ended or going, not gated, and for one of this view's schedulers."""
        return (record.node is None and not record.terminal and not record.deleting
                and not record.gated
                and (self.schedulers is None or record.scheduler in self.schedulers))

    def _count(self, uid: str, record: PodRecord | None, target: str | None,
               bound_s: float) -> None:
        old = self._counted.get(uid)
        job_id = self._job_id(uid, record) if record is not None and target else ""
        if old is not None and record is not None and target == old.node \
                and old.amounts == record.amounts and old.job_id == job_id:
            return
        if old is not None:
            del self._counted[uid]
            self.table.count(old.node, uid, old.amounts, old.bound_s, -1)
            nodes = self._job_nodes[old.job_id]
            nodes[old.node] -= 1
            if nodes[old.node] <= 0:
                del nodes[old.node]
                if not nodes:
                    del self._job_nodes[old.job_id]
        if record is None or target is None:
            return
        if old is not None and old.node == target:
            bound_s = old.bound_s
        counted = Counted(target, record.amounts, job_id, bound_s)
        self._counted[uid] = counted
        if target not in self.table.by_name:
            self._elsewhere.add(uid)  # judged after this sync's nodes are in (see sync)
        self.table.count(target, uid, record.amounts, bound_s, 1)
        self._job_nodes.setdefault(job_id, Counter())[target] += 1

    def _note_elsewhere(self) -> None:
        for uid in self._elsewhere:
            counted, record = self._counted.get(uid), self._pods.get(uid)
            if counted is not None and record is not None \
                    and counted.node not in self.table.by_name:
                self._skip("pod_on_unknown_node", f"pod {record.key}", counted.node,
                           f"bound to node {counted.node!r}, which is not in the cluster")
        self._elsewhere.clear()

    def _recount(self) -> None:
        """After a new cluster: every counted pod's requests on its node again."""
        for uid, counted in self._counted.items():
            self.table.count(counted.node, uid, counted.amounts, counted.bound_s, 1)

    def _set_pending(self, uid: str, pending: bool) -> None:
        if pending:
            record = self._pods[uid]
            key = (record.created_s, self._order[uid])
            if uid in self._pending and uid in self._refs:
                return  # pending as it was
            if uid not in self._pending:
                last = next(reversed(self._pending.values()), None) if self._pending else None
                if last is not None and key < last:
                    self._pending_sorted = False
                self._pending[uid] = key
            self._pending_view = None
        elif self._pending.pop(uid, None) is not None:
            self._left_pending(uid)

    def _left_pending(self, uid: str) -> None:
        """The pending view without one pod, cut out in place: a rebuild would read every
        pending pod's ref again, once per placement of a standing backlog."""
        view = self._pending_view
        if view is None:
            return
        try:
            at = self._pending_uids.index(uid)
        except ValueError:
            return  # it had no ref, so it was not in the view
        del self._pending_uids[at]
        self._pending_view = view[:at] + view[at + 1:]

    def _job_id(self, uid: str, record: PodRecord) -> str:
        ref = self._ref(uid)
        return ref.job.id if ref is not None else record.key

    def _ref(self, uid: str) -> PodRef | None:
        ref = self._refs.get(uid)
        if ref is None:
            record = self._pods[uid]
            workflow = self._workflows.get(f"{record.namespace}/{record.workflow}") \
                if record.workflow else None
            if workflow is not None and workflow.job is not None and record.argo_node \
                    and task_of_node(workflow, record.argo_node)[0] is None \
                    and record.task is not None:
                self._skip("task_not_in_dag", f"pod {record.key}", record.argo_node,
                           f"Argo node {record.argo_node!r} is no task of the workflow's DAG; "
                           "scheduled as a single-task job")
            single = self._singles.get(record.key)
            if single is None and record.task is not None:
                single = self._singles[record.key] = single_job(record)
            ref = pod_ref(record, self._numbers[uid], workflow, single)
            if ref is None:
                return None
            if ref.job is not single:
                self._singles.pop(record.key, None)
            self._refs[uid] = ref
        return ref

    def _skip(self, reason: str, what: str, version: str, message: str) -> None:
        """Logs a bad object once per version, and counts it under `reason`."""
        key = (reason, what, version)
        if key in self._logged:
            return
        if len(self._logged) > 100_000:
            self._logged.clear()
        self._logged.add(key)
        self.skipped[reason] += 1
        log.warning("skipped %s (%s): %s", what, reason.replace("_", " "), message)


def _list_order(record: PodRecord) -> tuple[float, int, str]:
    """The order of a list's pods: creation time, then the API's creation order as far as the
    resourceVersion tells it."""
    version = record.resource_version
    return record.created_s, int(version) if version.isdigit() else 0, record.name


def _refusal(record: PodRecord) -> str | None:
    """Why a waiting pod will not be placed: it does not parse, or it has a rule dagpilot
    cannot honour; None when it will be."""
    if record.error is not None:
        return f"dagpilot cannot read this pod: {record.error}"
    return record.unsupported
