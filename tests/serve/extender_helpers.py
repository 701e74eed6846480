"""ExtenderArgs as kube-scheduler sends them, for the extender's tests."""

from __future__ import annotations

import json
from typing import Any

from dagpilot.core.types import Cluster
from dagpilot.live.inventory import node_manifest


def pod(name: str = "p", cpu: str = "2", namespace: str = "team",
        uid: str = "u-1", version: str = "7") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": uid,
                         "resourceVersion": version,
                         "creationTimestamp": "2026-12-01T12:00:00Z"},
            "spec": {"schedulerName": "dagpilot-extender", "containers": [
                {"name": "main", "image": "busybox",
                 "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
            "status": {"phase": "Pending"}}


def by_names(names: list[str], the_pod: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"Pod": the_pod or pod(), "Nodes": None, "NodeNames": names}).encode()


def by_objects(cluster: Cluster, names: list[str] | None = None,
               the_pod: dict[str, Any] | None = None) -> bytes:
    items = [node_manifest(spec) for spec in cluster.nodes
             if names is None or spec.name in names]
    return json.dumps({"Pod": the_pod or pod(), "Nodes": {"items": items},
                       "NodeNames": None}).encode()
