"""Why a pod went where it went, in the three forms a decision leaves behind: the Scheduled
Event's message, the pod's `dagpilot.io/decision` annotation and the journal's record.

The explanation is the placement's: the (at most) 3 best-scored nodes with their scores, and
how many nodes each filter rejected (a node that fails two filters counts for both).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from dagpilot.core.scheduler import Placement

DECISION_ANNOTATION = "dagpilot.io/decision"
EVENT_MESSAGE_LIMIT = 1000  # the API server keeps Events' messages short (1 KiB)
_PLUGIN = re.compile(r"(?:^|; )([A-Za-z][A-Za-z0-9]*): ")  # Status.__str__: "Plugin: reasons"


def rejected_by_filter(placement: Placement) -> dict[str, int]:
    """How many nodes each filter (plugin) rejected, from the placement's reasons."""
    counts: Counter[str] = Counter()
    # nodes rejected for the same reasons share one text: each distinct text is read once
    for reasons, nodes in Counter(reasons for _, reasons in placement.rejected).items():
        for plugin in set(_PLUGIN.findall(reasons)):
            counts[plugin] += nodes
    return dict(sorted(counts.items()))


def explanation(placement: Placement) -> dict[str, Any]:
    return {"top": [[node, round(score, 4)] for node, score in placement.alternatives[:3]],
            "rejected": rejected_by_filter(placement)}


def annotation(placement: Placement, source: str, version: str | None) -> str:
    """The `dagpilot.io/decision` annotation: who decided (model or fallback), with what."""
    return json.dumps({"source": source, "model": version, "node": placement.node,
                       "score": round(placement.score, 4), **explanation(placement)},
                      separators=(",", ":"))


def event_message(pod_key: str, placement: Placement, source: str,
                  version: str | None) -> str:
    """kube-scheduler's "Successfully assigned ns/pod to node", then dagpilot's reasons."""
    who = f"model {version}" if source == "model" else f"fallback kube-default ({source})"
    text = f"Successfully assigned {pod_key} to {placement.node} by {who}"
    top = ", ".join(f"{node} {score:.3f}" for node, score in placement.alternatives[:3])
    if top:
        text += f"; top nodes: {top}"
    rejected = rejected_by_filter(placement)
    if rejected:
        text += "; rejected: " + ", ".join(f"{count} by {name}"
                                           for name, count in rejected.items())
    return text[:EVENT_MESSAGE_LIMIT]
