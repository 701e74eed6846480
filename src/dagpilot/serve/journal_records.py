"""What the custom scheduler and shadow mode write to the decision journal (dagpilot.journal).

A decision record names the pod (namespace/name, API uid, job, task), who decided (source:
model or fallback, with the reason), the model version, the mask size (feasible pairs out of
candidates x nodes), the action (the flat index into that grid, the node, the GPUs), the
observation's key figures (nodes, candidates, jobs, the cluster's CPU and memory in use, the
chosen node's and the pod's raw features) and the explanation (top 3 nodes and how many nodes
each filter rejected); during a canary, the node set that took the pod (`node_set`: stable or
canary, whose model decided) and the pod's cohort. An outcome record follows when the bind's
result is known.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagpilot.core.scheduler import Placement
from dagpilot.core.view import ClusterView
from dagpilot.serve.decisions import Choice
from dagpilot.serve.explanation import explanation


def _rounded(values: Any) -> list[float]:
    return [round(float(v), 5) for v in np.asarray(values).ravel().tolist()]


def cluster_figures(view: ClusterView) -> dict[str, Any]:
    allocatable, allocated = view.resource_arrays()
    total = np.asarray(allocatable, dtype=np.float64).sum(axis=0)
    used = np.asarray(allocated, dtype=np.float64).sum(axis=0)
    share = np.divide(used, total, out=np.zeros_like(used), where=total > 0)
    return {"nodes": len(view.cluster.nodes), "pending": len(view.pending),
            "used_share": _rounded(share[:3])}  # cpu, memory, GPUs


def decision_record(view: ClusterView, choice: Choice, key: str, uid: str | None,
                    placement: Placement) -> dict[str, Any]:
    pod = placement.pod
    record: dict[str, Any] = {
        "pod": key, "uid": uid, "job": pod.job.id, "task": pod.task.id,
        "instance": pod.instance, "source": choice.outcome, "model": choice.version,
        "reason": choice.reason, "node": placement.node, "gpus": list(placement.gpus),
        "score": round(placement.score, 5), "decision_ms": round(choice.decision_s * 1e3, 3),
        "observation": cluster_figures(view), "explanation": explanation(placement)}
    if choice.node_set is not None:  # a canary is active: whose nodes, whose pod
        record["node_set"], record["cohort"] = choice.node_set, choice.cohort
    decision = choice.decision
    if decision is not None and decision.policy_input is not None:
        policy_input = decision.policy_input
        candidates, nodes = policy_input.shape
        record["mask"] = {"feasible": int(policy_input.feasible.sum()),
                          "candidates": candidates, "nodes": nodes}
        record["action"] = decision.action
        raw = decision.raw
        if raw is not None:
            candidate, node = divmod(decision.action, nodes)
            record["observation"].update(
                candidates=candidates, jobs=len({pod.job.id for pod in raw.candidates}),
                node_features=_rounded(raw.node_features[node]),
                task_features=_rounded(raw.task_features[candidate]))
    return record


def outcome_record(uid: str | None, key: str, result: str, detail: str,
                   bind_s: float) -> dict[str, Any]:
    return {"pod": key, "uid": uid, "result": result, "detail": detail[:300],
            "bind_ms": round(bind_s * 1e3, 3)}
