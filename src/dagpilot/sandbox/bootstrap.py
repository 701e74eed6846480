"""What the API server must hold before the controllers start: namespaces, Argo's CRDs and
configmap, and the cluster's nodes as kwok Nodes; then the wait for every node to be Ready."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from dagpilot.core.types import Cluster
from dagpilot.live.inventory import node_manifest
from dagpilot.sandbox import build, rest, versions
from dagpilot.sandbox.components import ARGO_NAMESPACE, KWOK_NODE_LABEL
from dagpilot.sandbox.errors import SandboxError

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
KWOK_ANNOTATION = {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}


def argo_crds() -> list[dict[str, Any]]:
    """Argo's minimal CRDs, read from its module in the Go module cache (never copied here)."""
    result = subprocess.run([build.go_command(), "mod", "download", "-json",
                             f"{versions.ARGO_MODULE}@{versions.ARGO}"],
                            capture_output=True, text=True, check=False, cwd="/")
    try:
        folder = Path(json.loads(result.stdout)["Dir"]) / "manifests/base/crds/minimal"
    except (ValueError, KeyError):
        raise SandboxError("workflow-controller", "cannot find Argo's module in the Go module "
                           f"cache: {result.stderr.strip()[:300]}") from None
    return [yaml.safe_load(path.read_text()) for path in sorted(folder.glob("argoproj.io_*.yaml"))]


def create_crds(api: rest.Endpoint, crds: list[dict[str, Any]],
                deadline_s: float = 60.0) -> None:
    for crd in crds:
        rest.create(api, CRD_PATH, crd)
    deadline = time.monotonic() + deadline_s
    for crd in crds:
        name = crd["metadata"]["name"]
        while not _established(rest.get(api, f"{CRD_PATH}/{name}")):
            if time.monotonic() > deadline:
                raise SandboxError("kube-apiserver", f"CRD {name} not Established after "
                                                     f"{deadline_s:.0f} s")
            time.sleep(0.1)


def _established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def create_namespace(api: rest.Endpoint, name: str) -> None:
    rest.create(api, "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def create_argo(api: rest.Endpoint, configmap: dict[str, Any]) -> None:
    create_namespace(api, ARGO_NAMESPACE)
    create_crds(api, argo_crds())
    rest.create(api, f"/api/v1/namespaces/{ARGO_NAMESPACE}/configmaps", configmap)


def create_nodes(api: rest.Endpoint, cluster: Cluster) -> None:
    key, value = KWOK_NODE_LABEL
    for spec in cluster.nodes:
        rest.create(api, "/api/v1/nodes",
                    node_manifest(spec, {key: value}, KWOK_ANNOTATION))


def wait_nodes_ready(api: rest.Endpoint, names: set[str], deadline_s: float = 120.0) -> None:
    """Returns when every named node reports Ready=True (kwok's node stage sets it)."""
    deadline = time.monotonic() + deadline_s
    key, value = KWOK_NODE_LABEL
    waiting = set(names)
    while waiting:
        listing = rest.get(api, f"/api/v1/nodes?labelSelector={key}%3D{value}")
        ready = {node["metadata"]["name"] for node in listing.get("items", [])
                 if any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in (node.get("status") or {}).get("conditions") or [])}
        waiting = set(names) - ready
        if not waiting:
            return
        if time.monotonic() > deadline:
            sample = ", ".join(sorted(waiting)[:5])
            raise SandboxError("kwok", f"{len(waiting)} node(s) not Ready after "
                                       f"{deadline_s:.0f} s (e.g. {sample})")
        time.sleep(0.2)
