"""`dagpilot ops diagnose-node NODE`: why a node is NotReady, by cause (network, storage,
kernel), each with its evidence and the command to run next.

The API server gives the node's conditions and its Lease; Prometheus (optional) the ping
mesh's loss; files copied from the node (optional) its kernel log and diskstats. What was not
given is said in `checked`, so "no finding" never hides "not looked at".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dagpilot.core.errors import SpecError
from dagpilot.core.reading.files import read_file
from dagpilot.live.kube_api import KubeApi, Raw, Resource
from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.prometheus import Prometheus
from dagpilot.ops import disk_stalls, kernel_log, node_status
from dagpilot.ops.findings import CAUSES, Finding

MAX_LOG_BYTES = 256 << 20
MAX_DISKSTATS_BYTES = 16 << 20
NOTHING_FOUND_COMMAND = ("give what was not checked: --kernel-log (journalctl -k -b > FILE), "
                         "--diskstats (cat /proc/diskstats; sleep 5; cat /proc/diskstats), "
                         "--prometheus URL")


@dataclass(frozen=True)
class Sources:
    """What to look at besides the API server."""

    prometheus: Prometheus | None = None
    kernel_log: Path | None = None
    diskstats: Sequence[Path] = ()
    diskstats_interval_s: float = 5.0


@dataclass(frozen=True)
class Diagnosis:
    node: str
    ready: str  # the Ready condition as a line
    not_ready: bool  # Ready is absent or not True
    findings: tuple[Finding, ...]
    checked: tuple[str, ...] = field(default=())  # what was looked at, and what not

    def by_cause(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: CAUSES.index(f.cause))


def diagnose(api: KubeApi, node_name: str, sources: Sources,
             now_s: float | None = None) -> Diagnosis:
    node = _node(api, node_name)
    lease = api.read_lease(node_status.LEASE_NAMESPACE, node_name)
    loss = (sources.prometheus.query(m.PING_LOSS_RATIO)
            if sources.prometheus is not None else None)
    return assess(node_name, node, lease, loss, sources,
                  now_s=time.time() if now_s is None else now_s)


def assess(node_name: str, node: Raw, lease: Raw | None,
           loss: list[tuple[dict[str, str], float]] | None, sources: Sources, *,
           now_s: float) -> Diagnosis:
    """The diagnosis from what was fetched (no I/O but the given files)."""
    found = node_status.condition_findings(node_name, node)
    lease_found, lease_line = node_status.lease_finding(node_name, lease, now_s)
    found += [lease_found] if lease_found is not None else []
    checked = [f"conditions and Lease: {lease_line}"]
    if loss is None:
        checked.append("ping mesh: not checked (no --prometheus)")
    else:
        ping_found, ping_line = node_status.ping_findings(node_name, loss)
        found += ping_found
        checked.append(ping_line)
    if sources.kernel_log is None:
        checked.append("kernel log: not checked (no --kernel-log)")
    else:
        text = read_file(sources.kernel_log, MAX_LOG_BYTES).decode("utf-8", "replace")
        found += kernel_log.findings(text.splitlines())
        checked.append(f"kernel log: {len(text.splitlines())} lines of {sources.kernel_log}")
    if not sources.diskstats:
        checked.append("diskstats: not checked (no --diskstats)")
    else:
        taken = [snapshot for path in sources.diskstats for snapshot in disk_stalls.snapshots(
            read_file(path, MAX_DISKSTATS_BYTES).decode("ascii", "replace"), str(path))]
        found += disk_stalls.findings(taken, sources.diskstats_interval_s,
                                      ", ".join(map(str, sources.diskstats)))
        checked.append(f"diskstats: {len(taken)} snapshots "
                       f"{sources.diskstats_interval_s:g} s apart")
    ready = node_status.conditions(node).get("Ready") or {}
    return Diagnosis(node_name, node_status.ready_line(node), ready.get("status") != "True",
                     tuple(found), tuple(checked))


def _node(api: KubeApi, name: str) -> Raw:
    for node in api.list_all(Resource.NODES).items:
        if (node.get("metadata") or {}).get("name") == name:
            return node
    raise SpecError(name, f"no node of that name on {api.server}")
