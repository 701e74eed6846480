"""Hard placement rules of a pod that dagpilot's filters do not implement.

kube-scheduler never binds a pod against a required rule. dagpilot's filters (docs/
SCHEDULERS.md) cover resources, readiness, cordons, GPU models, taints and node affinity, but
not these:
- required inter-pod affinity or anti-affinity
  (`spec.affinity.podAffinity/podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`:
  InterPodAffinity);
- topology spread constraints with `whenUnsatisfiable: DoNotSchedule` (PodTopologySpread);
- host ports (`ports[].hostPort` of a container or init container: NodePorts).

So the custom scheduler leaves such a pod unscheduled with this message as its reason
(docs/SERVING.md). It never places the pod as if the rule were not there. The preferred forms
of these rules are kube-scheduler's scores, and dagpilot's policy scores instead of them.
"""

from __future__ import annotations

from typing import Any

ADVICE = "dagpilot does not implement it; create such pods with schedulerName default-scheduler"


def unsupported_rule(spec: dict[str, Any]) -> str | None:
    """The first required rule of `spec` that dagpilot cannot honour, as a message, or None."""
    affinity = spec.get("affinity")
    if isinstance(affinity, dict):
        for kind in ("podAffinity", "podAntiAffinity"):
            rules = affinity.get(kind)
            if isinstance(rules, dict) and rules.get(
                    "requiredDuringSchedulingIgnoredDuringExecution"):
                return f"required {_words(kind)} (spec.affinity.{kind}): {ADVICE}"
    for index, constraint in enumerate(_list(spec.get("topologySpreadConstraints"))):
        if isinstance(constraint, dict) and constraint.get(
                "whenUnsatisfiable") == "DoNotSchedule":
            return (f"topology spread with whenUnsatisfiable: DoNotSchedule "
                    f"(spec.topologySpreadConstraints[{index}]): {ADVICE}")
    for group in ("initContainers", "containers"):
        for index, container in enumerate(_list(spec.get(group))):
            for port in _list(container.get("ports") if isinstance(container, dict) else None):
                if isinstance(port, dict) and port.get("hostPort"):
                    return f"a host port (spec.{group}[{index}].ports): {ADVICE}"
    return None


def _words(kind: str) -> str:
    return "pod anti-affinity" if kind == "podAntiAffinity" else "pod affinity"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
