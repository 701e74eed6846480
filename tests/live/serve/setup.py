"""What the webhook's live tests set up on the sandbox: the shipped manifests applied, the
webhook's ServiceAccount token (TokenRequest: no controller manager mints one), client
certificates from the sandbox CA, and `dagpilot serve webhook` as a process of its own (the
live tests and bench/end_to_end_jct.py share them)."""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import queue
import re
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from dagpilot.sandbox import rest
from tests.deploy.manifests import DEPLOY, Object, collection, in_namespace, named, render
from tests.live.kube import WORKFLOWS, wait_for

READY = re.compile(r"webhook on https://[^:]+:(\d+) ")
WEBHOOK_ACCOUNT = "dagpilot-webhook"


class SandboxCa:
    """The sandbox's own CA (DIR/pki/ca.*), signing client certificates made in the test."""

    def __init__(self, pki: Path) -> None:
        self.cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
        key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        self.key = key
        self.path = pki / "ca.crt"

    def issue(self, directory: Path, common_name: str) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
                .issuer_name(self.cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(hours=2))
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]),
                               critical=False)
                .sign(self.key, hashes.SHA256()))
        cert_path, key_path = directory / f"{common_name}.crt", directory / f"{common_name}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return cert_path, key_path


def apply(api: rest.Endpoint, objects: list[Object], dry_run: bool = False) -> list[Any]:
    """POSTs each object (the server's answers); AssertionError naming the first refusal."""
    answers = []
    for item in objects:
        path = collection(item) + ("?dryRun=All" if dry_run else "")
        reply = rest.request(api, "POST", path, item)
        assert reply.status < 300, (f"{item['kind']} {item['metadata']['name']}: HTTP "
                                    f"{reply.status}: {reply.body[:400]!r}")
        answers.append(reply.json())
    return answers


def delete(api: rest.Endpoint, objects: list[Object]) -> None:
    for item in objects:
        rest.request(api, "DELETE", f"{collection(item)}/{item['metadata']['name']}")


def service_account_kubeconfig(api: rest.Endpoint, namespace: str, account: str,
                               path: Path) -> Path:
    """A kubeconfig holding a fresh token of the ServiceAccount (the TokenRequest API)."""
    reply = rest.request(api, "POST",
                         f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 3600}})
    assert reply.status == 201, reply.body[:300]
    token = reply.json()["status"]["token"]
    assert api.ca is not None
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "sandbox", "cluster": {
            "server": f"https://127.0.0.1:{api.port}", "certificate-authority": str(api.ca)}}],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "sandbox", "user": account}}],
        "current-context": "sa"}))
    return path


def as_token(api: rest.Endpoint, token: str, method: str, path: str,
             body: object = None) -> tuple[int, Any]:
    """One request to the API server with a bearer token (the sandbox's client sends
    certificates only)."""
    assert api.ca is not None
    context = ssl.create_default_context(cafile=str(api.ca))
    connection = http.client.HTTPSConnection("127.0.0.1", api.port, timeout=30,
                                             context=context)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Authorization": f"Bearer {token}",
                                    "Content-Type": "application/json"})
        reply = connection.getresponse()
        data = reply.read()
        return reply.status, json.loads(data) if data else None
    finally:
        connection.close()


def with_updaters(policy: Object, *identities: str) -> Object:
    """The shipped policy trusting `identities` too to rewrite a spec (the sandbox's workflow
    controller runs as its admin, not as Argo's ServiceAccount)."""
    for variable in policy["spec"]["variables"]:
        if variable["name"] == "updaters":
            names = json.loads(variable["expression"].replace("'", '"'))
            variable["expression"] = json.dumps([*names, *identities]).replace('"', "'")
            return policy
    raise AssertionError("the shipped policy has no `updaters` variable")


def extender_entry(port: int, pki: Path, *, filter_verb: bool = True) -> Object:
    """The shipped extenders entry (deploy/scheduler-extender) pointed at an extender on
    loopback and the sandbox's certificates; without `filter_verb`, the prioritize-only entry
    of docs/SERVING.md (the shipped one without its filterVerb)."""
    config = yaml.safe_load(named(render(), "ConfigMap", "dagpilot-scheduler-extender-config")
                            ["data"]["scheduler-config.yaml"])
    [entry] = config["extenders"]
    if not filter_verb:
        del entry["filterVerb"]
    entry["urlPrefix"] = f"https://127.0.0.1:{port}"
    entry["tlsConfig"] = {"certFile": str(pki / "scheduler-to-extender.crt"),
                          "keyFile": str(pki / "scheduler-to-extender.key"),
                          "caFile": str(pki / "ca.crt")}
    return dict(entry)


def webhook_configuration(config: Object, port: int, ca: Path) -> Object:
    """The shipped MutatingWebhookConfiguration pointed at the process on loopback."""
    for webhook in config["webhooks"]:
        webhook["clientConfig"] = {"url": f"https://127.0.0.1:{port}/mutate",
                                   "caBundle": base64.b64encode(ca.read_bytes()).decode()}
    return config


@contextmanager
def serve_process(arguments: list[str], log: Path, deadline_s: float = 60.0
                  ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`dagpilot serve ARGUMENTS` until the block ends; yields it and the first line it
    prints (once serving); it must still run when the block ends."""
    with log.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "dagpilot.cli", "serve", *arguments],
            stdout=subprocess.PIPE, stderr=errors, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        try:
            line = lines.get(timeout=deadline_s)
        except queue.Empty:
            raise AssertionError(f"`serve {arguments[0]}` did not start: "
                                 f"{log.read_text()[-2000:]}") from None
        yield process, line
        assert process.poll() is None, f"it exited: {log.read_text()[-2000:]}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=10)
        process.stdout.close()


@contextmanager
def webhook_process(arguments: list[str], log: Path,
                    deadline_s: float = 60.0) -> Iterator[int]:
    """`dagpilot serve webhook ARGUMENTS` until the block ends; yields its port."""
    with serve_process(["webhook", *arguments], log, deadline_s) as (_, line):
        ready = READY.search(line)
        assert ready, f"{line!r}; {log.read_text()[-2000:]}"
        yield int(ready.group(1))


PROBE = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
         "metadata": {"generateName": "probe-"},
         "spec": {"entrypoint": "work", "templates": [
             {"name": "work", "container": {"image": "busybox"}}]}}


def shipped_webhook() -> tuple[list[Object], Object]:
    """deploy/'s webhook RBAC (ServiceAccount, Role, RoleBinding) and its
    MutatingWebhookConfiguration."""
    rbac = [o for o in render(DEPLOY / "webhook")
            if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")]
    [mutating] = [o for o in render() if o["kind"] == "MutatingWebhookConfiguration"]
    return rbac, mutating


@contextmanager
def webhook_serving(api: rest.Endpoint, namespace: str, folder: Path, pki: Path,
                    keys_file: Path, *, history_file: Path | None = None
                    ) -> Iterator[tuple[int, Path]]:
    """`dagpilot serve webhook` creating signed Workflows in `namespace` as its own
    ServiceAccount (the shipped RBAC applied there), and the shipped
    MutatingWebhookConfiguration pointed at it, removed on exit; yields the port and the
    ServiceAccount's kubeconfig."""
    rbac, mutating = shipped_webhook()
    apply(api, in_namespace(rbac, namespace))
    kubeconfig = service_account_kubeconfig(api, namespace, WEBHOOK_ACCOUNT,
                                            folder / f"webhook-{namespace}.kubeconfig")
    arguments = [f"--kubeconfig={kubeconfig}", "--port=0", "--address=127.0.0.1",
                 f"--tls-cert={pki / 'serving.crt'}", f"--tls-key={pki / 'serving.key'}",
                 f"--client-ca={pki / 'ca.crt'}", f"--keys={keys_file}",
                 f"--namespace={namespace}",
                 *([f"--history={history_file}"] if history_file is not None else [])]
    with webhook_process(arguments, folder / f"webhook-{namespace}.log") as port:
        installed = [webhook_configuration(mutating, port, pki / "ca.crt")]
        apply(api, installed)
        try:
            yield port, kubeconfig
        finally:
            delete(api, installed)


def wait_mutating(api: rest.Endpoint, namespace: str, kubeconfig: Path,
                  deadline_s: float = 30.0) -> None:
    """The API server applies a new MutatingWebhookConfiguration within a second or so:
    dry runs as the kubeconfig's ServiceAccount until the webhook sets the scheduler name."""
    path = WORKFLOWS.format(ns=namespace) + "?dryRun=All"
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]

    def mutated() -> bool:
        status, answer = as_token(api, token, "POST", path, PROBE)
        return status == 201 and answer["spec"].get("schedulerName") == "dagpilot"
    wait_for("the mutating webhook in force", mutated, deadline_s)
