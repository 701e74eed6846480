"""The upstream versions the sandbox builds, in one place (docs/LIVE.md says why each)."""

from __future__ import annotations

KUBERNETES = "v1.35.4"
"""kube-apiserver and kube-scheduler; pinned in go/go.mod with its staging modules."""

ETCD = "v3.6.5"
"""etcd's server, the version k8s.io/kubernetes v1.35.4 requires (go/go.mod)."""

KWOK = "v0.8.0"
ARGO = "v4.0.5"
"""Argo's workflow-controller: the newest v4 release the Go module proxy serves here."""

KWOK_PACKAGE = f"sigs.k8s.io/kwok/cmd/kwok@{KWOK}"
ARGO_MODULE = "github.com/argoproj/argo-workflows/v4"
ARGO_PACKAGE = f"{ARGO_MODULE}/cmd/workflow-controller@{ARGO}"
