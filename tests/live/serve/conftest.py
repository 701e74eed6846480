"""The webhook on the session's sandbox: a managed namespace with the shipped RBAC, the
webhook's ServiceAccount token, `dagpilot serve webhook` as a process, and the shipped
MutatingWebhookConfiguration and ValidatingAdmissionPolicy installed; all removed after."""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from tests.deploy.manifests import named, render
from tests.live import kube
from tests.live.certs import Authority
from tests.live.serve.setup import (
    PROBE,
    SandboxCa,
    apply,
    delete,
    wait_mutating,
    webhook_serving,
    with_updaters,
)
from tests.serve.helpers import HOUR, Client, Key, key, write_keys

MANAGED = {"dagpilot.io/managed": "true"}
POLICY = "dagpilot-signed-workflows"
HISTORY = {"version": 1, "templates": {"work": [42.0], "etl/load": [7.5]}}


@dataclass
class WebhookEnv:
    api: rest.Endpoint
    namespace: str
    port: int
    ca: Path
    folder: Path
    keys_file: Path
    history_file: Path
    signer: Key
    certs: dict[str, tuple[Path, Path]]

    def client(self, name: str | None = "dagpilot-submit") -> Client:
        cert, private = self.certs[name] if name else (None, None)
        return Client(self.port, self.ca, cert, private)

    def user(self, name: str) -> rest.Endpoint:
        """The API server as the user of a client certificate made here."""
        cert, private = self.certs[name]
        return rest.Endpoint("kube-apiserver", self.api.port, self.api.ca, cert, private)

    def workflows(self) -> list[dict[str, Any]]:
        return kube.items(self.api, kube.WORKFLOWS.format(ns=self.namespace))


@pytest.fixture(scope="module")
def webhook_env(sandbox: SandboxState, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[WebhookEnv]:
    api = kube.admin(sandbox)
    folder = tmp_path_factory.mktemp("webhook")
    pki = Path(sandbox.kubeconfig).parent / "pki"
    authority = SandboxCa(pki)
    certs = {name: authority.issue(folder, name)
             for name in ("dagpilot-submit", "intruder", "mallory")}
    (folder / "other").mkdir()
    certs["other-ca"] = Authority("not-the-sandbox").issue(folder / "other", "dagpilot-submit")
    now = datetime.datetime.now(datetime.UTC)
    signer = key(f"k-{uuid.uuid4().hex[:6]}", start=now - HOUR)
    keys_file = write_keys(folder / "keys.yaml", signer, key("expired", now - 3 * HOUR, 1))
    history_file = folder / "history.json"
    history_file.write_text(json.dumps(HISTORY))
    shipped = render()
    policy = with_updaters(named(shipped, "ValidatingAdmissionPolicy", POLICY), "dagpilot-admin")
    admission = [policy, named(shipped, "ValidatingAdmissionPolicyBinding", POLICY)]
    with kube.namespace(api, "whk") as namespace:
        label = rest.request(api, "PATCH", f"/api/v1/namespaces/{namespace}",
                             {"metadata": {"labels": MANAGED}})
        assert label.status == 200, label.body
        with webhook_serving(api, namespace, folder, pki, keys_file, history_file=history_file) as (
                port, kubeconfig):
            apply(api, admission)
            try:
                env = WebhookEnv(api, namespace, port, pki / "ca.crt", folder, keys_file,
                                 history_file, signer, certs)
                wait_until_in_force(env, kubeconfig)
                yield env
            finally:
                delete(api, admission)


def wait_until_in_force(env: WebhookEnv, kubeconfig: Path) -> None:
    """The API server applies new admission configuration within a second or so: dry runs
    until the policy refuses the admin and the webhook mutates the ServiceAccount's."""
    path = kube.WORKFLOWS.format(ns=env.namespace) + "?dryRun=All"
    kube.wait_for("the admission policy in force", lambda: rest.request(
        env.api, "POST", path, PROBE).status == 403, deadline_s=30)
    wait_mutating(env.api, env.namespace, kubeconfig)
