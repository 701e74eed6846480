"""deploy/ as the objects `kubectl apply -k deploy/` would send, for the tests.

A kustomization here lists `resources` (files and folders) and nothing else; `render` refuses
any other field rather than render it wrongly (extend it, or the test, if deploy/ needs more).
`in_namespace` moves the namespaced objects into another namespace (metadata, ServiceAccount
subjects, webhook services), as `kustomize edit set namespace` would for a test namespace.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

DEPLOY = REPO / "deploy"
KNOWN = {"apiVersion", "kind", "resources"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass",
                  "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                  "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
                  "CustomResourceDefinition", "StorageClass"}
Object = dict[str, Any]


def render(folder: Path = DEPLOY) -> list[Object]:
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    unknown = set(kustomization) - KNOWN
    assert not unknown, f"{folder}/kustomization.yaml: fields this renderer lacks: {unknown}"
    objects: list[Object] = []
    for entry in kustomization.get("resources", []):
        path = folder / entry
        if path.is_dir():
            objects += render(path)
        else:
            objects += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return objects


def in_namespace(objects: list[Object], namespace: str) -> list[Object]:
    moved = []
    for original in objects:
        item = copy.deepcopy(original)
        if item["kind"] not in CLUSTER_SCOPED:
            item["metadata"]["namespace"] = namespace
        for subject in item.get("subjects", []):
            if subject.get("kind") == "ServiceAccount":
                subject["namespace"] = namespace
        for webhook in item.get("webhooks", []):
            service = webhook.get("clientConfig", {}).get("service")
            if service is not None:
                service["namespace"] = namespace
        moved.append(item)
    return moved


def named(objects: list[Object], kind: str, name: str) -> Object:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} in deploy/"
    return found[0]


def collection(item: Object) -> str:
    """The API path of the collection `item` is created in."""
    group_version = item["apiVersion"]
    plural = PLURALS[item["kind"]]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    namespace = item["metadata"].get("namespace")
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


PLURALS = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "Role": "roles",
           "RoleBinding": "rolebindings", "ClusterRole": "clusterroles",
           "ClusterRoleBinding": "clusterrolebindings", "ConfigMap": "configmaps",
           "Secret": "secrets", "Service": "services", "Deployment": "deployments",
           "DaemonSet": "daemonsets", "MutatingWebhookConfiguration":
           "mutatingwebhookconfigurations", "ValidatingWebhookConfiguration":
           "validatingwebhookconfigurations", "ValidatingAdmissionPolicy":
           "validatingadmissionpolicies", "ValidatingAdmissionPolicyBinding":
           "validatingadmissionpolicybindings", "PriorityClass": "priorityclasses",
           "Lease": "leases", "PodDisruptionBudget": "poddisruptionbudgets"}
