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
import yaml

from dagpilot.sandbox import rest
from dagpilot.sandbox.state import SandboxState
from tests.deploy.manifests import DEPLOY, in_namespace, named, render
from tests.live import kube
from tests.live.certs import Authority
from tests.live.serve.setup import (
    SandboxCa,
    apply,
    as_token,
    delete,
    service_account_kubeconfig,
    webhook_configuration,
    webhook_process,
    with_updaters,
)
from tests.serve.helpers import HOUR, Client, Key, key, write_keys

MANAGED = {"dagpilot.io/managed": "true"}
ACCOUNT = "dagpilot-webhook"
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
    rbac = [o for o in render(DEPLOY / "webhook")
            if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")]
    policy = with_updaters(named(shipped, "ValidatingAdmissionPolicy", POLICY), "dagpilot-admin")
    admission = [policy, named(shipped, "ValidatingAdmissionPolicyBinding", POLICY)]
    [mutating] = [o for o in shipped if o["kind"] == "MutatingWebhookConfiguration"]
    with kube.namespace(api, "whk") as namespace:
        label = rest.request(api, "PATCH", f"/api/v1/namespaces/{namespace}",
                             {"metadata": {"labels": MANAGED}})
        assert label.status == 200, label.body
        apply(api, in_namespace(rbac, namespace))
        kubeconfig = service_account_kubeconfig(api, namespace, ACCOUNT,
                                                folder / "webhook.kubeconfig")
        arguments = [f"--kubeconfig={kubeconfig}", "--port=0", "--address=127.0.0.1",
                     f"--tls-cert={pki / 'serving.crt'}", f"--tls-key={pki / 'serving.key'}",
                     f"--client-ca={pki / 'ca.crt'}", f"--keys={keys_file}",
                     f"--namespace={namespace}", f"--history={history_file}"]
        with webhook_process(arguments, folder / "webhook.log") as port:
            installed = [*admission, webhook_configuration(mutating, port, pki / "ca.crt")]
            apply(api, installed)
            try:
                env = WebhookEnv(api, namespace, port, pki / "ca.crt", folder, keys_file,
                                 history_file, signer, certs)
                wait_until_in_force(env, kubeconfig)
                yield env
            finally:
                delete(api, installed)


PROBE = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
         "metadata": {"generateName": "probe-"},
         "spec": {"entrypoint": "work", "templates": [
             {"name": "work", "container": {"image": "busybox"}}]}}


def wait_until_in_force(env: WebhookEnv, kubeconfig: Path) -> None:
    """The API server applies new admission configuration within a second or so: dry runs
    until the policy refuses the admin and the webhook mutates the ServiceAccount's."""
    path = kube.WORKFLOWS.format(ns=env.namespace) + "?dryRun=All"
    kube.wait_for("the admission policy in force", lambda: rest.request(
        env.api, "POST", path, PROBE).status == 403, deadline_s=30)
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]

    def mutated() -> bool:
        status, answer = as_token(env.api, token, "POST", path, PROBE)
        return status == 201 and answer["spec"].get("schedulerName") == "dagpilot"
    kube.wait_for("the mutating webhook in force", mutated, deadline_s=30)
