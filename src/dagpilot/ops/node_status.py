"""What the API server and Prometheus say about a node: its conditions, its Lease in
kube-node-lease, and the ping mesh's loss to and from it.

The kubelet renews its Lease every 10 s (a quarter of leaseDurationSeconds, 40 s by default);
a Lease older than its duration means the kubelet cannot reach the API server or is not
running, which the node lifecycle controller then reports as Ready=Unknown. Conditions other
tools set (node-problem-detector's KernelDeadlock, ReadonlyFilesystem) name their cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from dagpilot.core.echo import printable
from dagpilot.live.node_agent import metric_names as m
from dagpilot.ops.findings import Cause, Finding

LEASE_NAMESPACE = "kube-node-lease"
DEFAULT_LEASE_DURATION_S = 40
LOSS_THRESHOLD = 0.5  # share of failed connects that is a broken path, not a lost packet

KUBELET_COMMAND = ("systemctl status kubelet; journalctl -u kubelet --since -15min | "
                   "grep -i -e lease -e 'connection refused' -e timeout -e x509")
# A condition that is True when something is wrong: its cause and the next command.
BAD_WHEN_TRUE: Mapping[str, tuple[Cause, str]] = {
    "NetworkUnavailable": ("network", "kubectl -n kube-system get pods -o wide "
                                      "--field-selector spec.nodeName={node}  # the CNI pod"),
    "KernelDeadlock": ("kernel", "journalctl -k -b | grep -i -e 'blocked for more' -e lockup"),
    "ReadonlyFilesystem": ("storage", "findmnt -o TARGET,OPTIONS | grep -w ro"),
    "DiskPressure": ("storage", "df -h /var/lib/kubelet /var/lib/containerd; df -i"),
    "MemoryPressure": ("node", "free -m; ps aux --sort=-rss | head"),
    "PIDPressure": ("node", "ps -e --no-headers | wc -l; cat /proc/sys/kernel/pid_max"),
}


def unix_s(stamp: object) -> float | None:
    """An RFC 3339 time of the API (Time or MicroTime) as Unix seconds; None when absent."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def conditions(node: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    found = (node.get("status") or {}).get("conditions") or []
    return {str(c.get("type")): c for c in found if isinstance(c, dict)}


def condition_findings(node_name: str, node: Mapping[str, Any]) -> list[Finding]:
    found = []
    for kind, condition in sorted(conditions(node).items()):
        if kind in BAD_WHEN_TRUE and condition.get("status") == "True":
            cause, command = BAD_WHEN_TRUE[kind]
            found.append(Finding(cause, f"condition {kind}=True", (_condition_line(condition),),
                                 command.format(node=node_name)))
    return found


def _condition_line(condition: Mapping[str, Any]) -> str:
    parts = [f"{condition.get('type')}={condition.get('status')}"]
    for key in ("reason", "message", "lastTransitionTime"):
        if condition.get(key):
            parts.append(f"{key} {printable(str(condition[key]))}")
    return "; ".join(parts)


def ready_line(node: Mapping[str, Any]) -> str:
    ready = conditions(node).get("Ready")
    return _condition_line(ready) if ready else "no Ready condition"


def lease_finding(node_name: str, lease: Mapping[str, Any] | None,
                  now_s: float) -> tuple[Finding | None, str]:
    """A network finding when the Lease is missing or stale, and a line of what it shows."""
    if lease is None:
        return (Finding("network", "no node Lease",
                        (f"no Lease {LEASE_NAMESPACE}/{node_name}: the kubelet never "
                         "registered one, or cannot reach the API server",), KUBELET_COMMAND),
                "no Lease")
    spec = lease.get("spec") or {}
    duration = spec.get("leaseDurationSeconds") or DEFAULT_LEASE_DURATION_S
    renewed = unix_s(spec.get("renewTime"))
    if renewed is None:
        return (Finding("network", "node Lease never renewed",
                        (f"Lease {LEASE_NAMESPACE}/{node_name} has no renewTime",),
                        KUBELET_COMMAND), "Lease without renewTime")
    age = now_s - renewed
    line = f"Lease renewed {age:.0f} s ago (duration {duration} s, holder " \
           f"{printable(str(spec.get('holderIdentity', '')))})"
    if age <= duration:
        return None, line
    return Finding("network", "node Lease not renewed", (line,), KUBELET_COMMAND), line


def ping_findings(node_name: str,
                  loss: list[tuple[dict[str, str], float]]) -> tuple[list[Finding], str]:
    """Network findings from dagpilot_ping_loss_ratio series to and from the node."""
    towards = {labels.get(m.SRC, ""): value for labels, value in loss
               if labels.get(m.DST) == node_name}
    outwards = {labels.get(m.DST, ""): value for labels, value in loss
                if labels.get(m.SRC) == node_name}
    found = []
    for direction, peers, command in (
            ("to", towards, f"from a peer: mtr -rwc 20 {node_name}"),
            ("from", outwards, "on the node: ip -s link; ip route; mtr -rwc 20 PEER")):
        lossy = {peer: value for peer, value in peers.items() if value >= LOSS_THRESHOLD}
        if lossy:
            worst = sorted(lossy.items(), key=lambda item: -item[1])[:5]
            found.append(Finding(
                "network", f"ping mesh: {len(lossy)} of {len(peers)} peers lose connects "
                           f"{direction} {node_name}",
                tuple(f"{m.PING_LOSS_RATIO} {direction} {printable(peer)}: {value:.2f}"
                      for peer, value in worst), command))
    line = (f"ping mesh: {len(towards)} peers measure the node, it measures {len(outwards)}"
            if towards or outwards else "ping mesh: no series for this node")
    return found, line
