"""The adapter's alerts and metrics: a log line, a Prometheus text file, a Kubernetes Event.

prometheus_client is for serve and the node agent only (.importlinter): the adapter writes the
text exposition format itself into `online.prom` beside its state, atomically, for the node
exporter's textfile collector (or any scraper of files). The Event (reason
`OnlineAdapterRolledBack`, type Warning) goes through live/kube_api.py when a kubeconfig is
given; a refused Event is logged, never fatal: the rollback has happened already.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dagpilot.core.errors import DagpilotError
from dagpilot.online.breaker import BreakerState, Opened

log = logging.getLogger(__name__)

METRICS_FILE = "online.prom"
COMPONENT = "dagpilot-online"


def write_metrics(folder: Path, state: BreakerState, counts: Mapping[str, int],
                  now: float) -> Path:
    """dagpilot_online_* gauges and counters in the text format (one file, replaced whole)."""
    lines = [
        "# HELP dagpilot_online_breaker_open 1 while the breaker's cooldown runs",
        "# TYPE dagpilot_online_breaker_open gauge",
        f"dagpilot_online_breaker_open {int(now < state.cooldown_until)}",
        "# HELP dagpilot_online_cooldown_until_seconds when the cooldown ends (Unix seconds)",
        "# TYPE dagpilot_online_cooldown_until_seconds gauge",
        f"dagpilot_online_cooldown_until_seconds {state.cooldown_until:.3f}",
        "# HELP dagpilot_online_consecutive_failures failed fine-tunes in a row",
        "# TYPE dagpilot_online_consecutive_failures gauge",
        f"dagpilot_online_consecutive_failures {state.failures}",
        "# HELP dagpilot_online_rollbacks_total rollbacks by the circuit breaker",
        "# TYPE dagpilot_online_rollbacks_total counter",
        f"dagpilot_online_rollbacks_total {state.rollbacks}",
        "# HELP dagpilot_online_finetunes_total fine-tunes by result",
        "# TYPE dagpilot_online_finetunes_total counter",
        *(f'dagpilot_online_finetunes_total{{result="{result}"}} {count}'
          for result, count in sorted(counts.items()))]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / METRICS_FILE
    scratch = folder / f".{METRICS_FILE}.tmp"
    scratch.write_text("\n".join(lines) + "\n")
    os.replace(scratch, target)
    return target


def breaker_message(opened: Opened) -> str:
    until = datetime.fromtimestamp(opened.cooldown_until, UTC).isoformat(timespec="seconds")
    back = (f"rolled back to {opened.rolled_back_to}" if opened.rolled_back_to
            else "no rollback (none needed or rollback_on_failure is false)")
    return (f"circuit breaker open: {opened.failures} failed fine-tunes in a row; {back}; "
            f"no fine-tune until {until}")


def alert(opened: Opened, kubeconfig: Path | None, namespace: str) -> None:
    message = breaker_message(opened)
    log.error("dagpilot online: %s", message)
    if kubeconfig is not None:
        send_event(kubeconfig, namespace, message)


def send_event(kubeconfig: Path, namespace: str, message: str) -> None:
    from dagpilot.live.kube_api import KubeApi  # noqa: PLC0415  (the optional live extra)

    try:
        KubeApi(kubeconfig).create_event(namespace, event(namespace, message))
    except DagpilotError as error:  # KubeApiError, or a kubeconfig that does not load
        log.warning("no Kubernetes Event for the breaker: %s", error)


def event(namespace: str, message: str) -> dict[str, Any]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{COMPONENT}.", "namespace": namespace},
            "involvedObject": {"apiVersion": "v1", "kind": "Namespace", "name": namespace},
            "type": "Warning", "reason": "OnlineAdapterRolledBack", "message": message[:1000],
            "source": {"component": COMPONENT}, "reportingComponent": COMPONENT,
            "reportingInstance": COMPONENT, "firstTimestamp": now, "lastTimestamp": now,
            "count": 1}
