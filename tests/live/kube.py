"""Small helpers of the live tests: the admin endpoint, namespaces that clean up after
themselves (nothing garbage-collects without a controller manager), waits with deadlines."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from dagpilot.sandbox import components, rest
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState

T = TypeVar("T")
WORKFLOWS = "/apis/argoproj.io/v1alpha1/namespaces/{ns}/workflows"


def admin(state: SandboxState) -> rest.Endpoint:
    return components.api_endpoint(Layout(Path(state.kubeconfig).parent), state.ports["apiserver"])


def wait_for(what: str, probe: Callable[[], T | None], deadline_s: float = 60.0,
             poll_s: float = 0.2) -> T:
    """The first truthy value `probe` returns; AssertionError naming `what` at the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {deadline_s:.0f} s")
        time.sleep(poll_s)


@contextmanager
def namespace(api: rest.Endpoint, prefix: str) -> Iterator[str]:
    """A fresh namespace; on exit its Workflows and pods are deleted, then it is finalised."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    rest.create(api, "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        rest.request(api, "DELETE", WORKFLOWS.format(ns=name))
        rest.request(api, "DELETE", f"/api/v1/namespaces/{name}/pods?gracePeriodSeconds=0")
        rest.request(api, "DELETE", f"/api/v1/namespaces/{name}")
        # The namespace controller (in the controller manager we do not run) would do this.
        rest.request(api, "PUT", f"/api/v1/namespaces/{name}/finalize",
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                      "spec": {"finalizers": []}})


def items(api: rest.Endpoint, path: str) -> list[dict[str, Any]]:
    return list(rest.get(api, path).get("items", []))
