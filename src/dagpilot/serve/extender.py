"""The extender's answers: kube-scheduler's filter and prioritize calls from `Agent.rank`.

- The pod. The view's own PodRef when the view has the pod pending (its Workflow's job and
  task, so the policy sees the DAG); otherwise (the watch has not shown it yet) the pod of the
  request as a single-task job (live/pods.py reads it as the watch would).
- The nodes. The view is the state (allocation, free GPUs, signals): kube-scheduler sends no
  pods. The nodes of the request are those dagpilot answers about: feasible ones pass (filter)
  and get a score (prioritize); the others fail with the reasons of the filters that rejected
  them, in FailedAndUnresolvableNodes when no preemption can help (every reason unresolvable:
  a taint, a selector, a cordon), else in FailedNodes; a node the view does not know (yet)
  fails as resolvable. Node objects (a scheduler without nodeCacheCapable) must read as a
  NodeSpec (live/inventory.py), else that node fails with the reason.
- One scheduling cycle, one picture: kube-scheduler calls prioritize right after filter for
  the same pod, in one cycle on one snapshot of its own; the filter's ranking answers it, even
  when events arrived in between (in a backlog one always has: the last pod's bind), as the
  cycle's snapshot would. Any other call applies the events first and ranks again unless
  none arrived since the same pod's last ranking.
- One request at a time (a lock): the view is fed by one thread and the network is not
  re-entrant; kube-scheduler's cycle is serial anyway.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dagpilot.core.errors import InvalidInput
from dagpilot.core.status import Code, Status
from dagpilot.core.view import ClusterView, PodRef
from dagpilot.decide.ranking import Ranking
from dagpilot.live.inventory import node_spec
from dagpilot.live.pods import decode_pod, pod_ref
from dagpilot.serve.extender_scores import integer_score_array
from dagpilot.serve.extender_wire import (
    ExtenderArgs,
    filter_result,
    parse_args,
)

log = logging.getLogger(__name__)

Rank = Callable[[ClusterView, PodRef], Ranking]
Refresh = Callable[[], int]  # applies what the feeds brought; how many events that was
PendingPod = Callable[[str], PodRef | None]  # the view's PodRef of a pending namespace/name
NOT_IN_VIEW = "not in dagpilot's view of the cluster (yet)"
ANSWERS_KEPT = 1024
_FIRST_REQUEST_UID = 1 << 40  # PodRefs made from requests, apart from the view's own numbers


@dataclass(frozen=True, slots=True)
class Answer:
    """One call and what it answered (the newest ANSWERS_KEPT are kept, for tests and logs)."""

    verb: str
    pod: str  # namespace/name
    passing: tuple[str, ...] = ()
    scores: tuple[tuple[str, int], ...] = ()

    def best(self) -> frozenset[str]:
        """The nodes of the highest score (prioritize)."""
        top = max((score for _, score in self.scores), default=None)
        return frozenset(node for node, score in self.scores if score == top)


class Extender:
    def __init__(self, view: ClusterView, rank: Rank, refresh: Refresh = lambda: 0,
                 pending_pod: PendingPod = lambda key: None) -> None:
        self.view = view
        self._rank = rank
        self._refresh = refresh
        self._pending_pod = pending_pod
        self._lock = threading.Lock()
        self._uids = itertools.count(_FIRST_REQUEST_UID)
        self._last: tuple[tuple[str, str], Ranking] | None = None
        self._filtered: tuple[str, str] | None = None  # the pod the last call filtered
        self.answers: deque[Answer] = deque(maxlen=ANSWERS_KEPT)
        self.calls: Counter[str] = Counter()

    def filter(self, body: bytes) -> dict[str, Any]:
        """The ExtenderFilterResult for a filter call's body; InvalidInput when it is bad."""
        args = parse_args(body, "filter")
        with self._lock:
            ranking, key = self._ranking(args, "filter")
            feasible = set(ranking.feasible)
            reasons = dict(ranking.rejected)
            passing: list[str] = []
            failed: dict[str, str] = {}
            unresolvable: dict[str, str] = {}
            for name, unreadable in _requested(args):
                if unreadable is not None:
                    failed[name] = unreadable
                elif name in feasible:
                    passing.append(name)
                elif name in reasons:
                    statuses = reasons[name]
                    into = unresolvable if _unresolvable(statuses) else failed
                    into[name] = "; ".join(str(status) for status in statuses)
                else:
                    failed[name] = NOT_IN_VIEW
            self.calls["filter"] += 1
            self.answers.append(Answer("filter", key, tuple(passing)))
        return filter_result(args, passing, failed, unresolvable)

    def prioritize(self, body: bytes) -> dict[str, int]:
        """The HostPriorityList for a prioritize call's body, as {Host: Score} in the
        request's order (extender_wire.priority_json writes it), of the nodes that score
        above 0; InvalidInput when the body is bad.

        A node left out is one that is not feasible, unknown, or scored 0: kube-scheduler adds
        nothing for a node missing from the list, exactly as for a 0 (prioritizeNodes in
        k8s.io/kubernetes pkg/scheduler/schedule_one.go), and at 1,000 nodes most nodes
        score 0, so the list both sides write and read is a fraction of the nodes."""
        args = parse_args(body, "prioritize")
        with self._lock:
            ranking, key = self._ranking(args, "prioritize")
            probability = dict(zip(ranking.feasible, ranking.scores, strict=True))
            readable = [name for name, unreadable in _requested(args) if unreadable is None]
            integers = integer_score_array(np.fromiter(
                (probability.get(name, 0.0) for name in readable), dtype=np.float64,
                count=len(readable))).tolist()
            scores = {name: score for name, score in zip(readable, integers, strict=True)
                      if score}
            self.calls["prioritize"] += 1
            self.answers.append(Answer("prioritize", key, scores=tuple(scores.items())))
        return scores

    def _ranking(self, args: ExtenderArgs, verb: str) -> tuple[Ranking, str]:
        metadata = args.pod["metadata"]
        key = f"{metadata.get('namespace', '')}/{metadata['name']}"
        version = (str(metadata.get("uid", "")), str(metadata.get("resourceVersion", "")))
        known = version != ("", "") and self._last is not None and self._last[0] == version
        same_cycle = known and verb == "prioritize" and self._filtered == version
        self._filtered = version if verb == "filter" else None
        if same_cycle or (self._refresh() == 0 and known):
            assert self._last is not None
            return self._last[1], key
        ranking = self._rank(self.view, self._pod(args, key))
        self._last = (version, ranking)
        return ranking, key

    def _pod(self, args: ExtenderArgs, key: str) -> PodRef:
        known = self._pending_pod(key)
        if known is not None:
            return known
        record = decode_pod(args.pod)
        if record.error is not None:
            error = record.error
            raise InvalidInput("extender request", f"pod {key}", f"Pod.{error.field}",
                               error.message)
        ref = pod_ref(record, next(self._uids), None, None)
        if ref is None:  # decode_pod gives a task whenever it gives no error
            raise InvalidInput("extender request", f"pod {key}", "Pod", "unreadable")
        return ref


def _requested(args: ExtenderArgs) -> list[tuple[str, str | None]]:
    """The request's nodes, each once, with why its Node object cannot be read (or None)."""
    if args.node_objects is None:  # names only (nodeCacheCapable): nothing to read
        return list(dict.fromkeys(args.node_names).items())
    seen: dict[str, str | None] = {}
    objects = args.node_objects or ()
    for index, name in enumerate(args.node_names):
        if name in seen:
            continue
        seen[name] = _unreadable(objects[index]) if args.node_objects is not None else None
    return list(seen.items())


def _unreadable(node: dict[str, Any]) -> str | None:
    try:
        node_spec(node, "extender request")
    except InvalidInput as error:
        return f"dagpilot cannot read this Node: {error}"
    return None


def _unresolvable(statuses: tuple[Status, ...]) -> bool:
    return bool(statuses) and all(status.code is Code.UNRESOLVABLE for status in statuses)
