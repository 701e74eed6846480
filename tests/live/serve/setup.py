"""What the webhook's live tests set up on the sandbox: the shipped manifests applied, the
webhook's ServiceAccount token (TokenRequest: no controller manager mints one), client
certificates from the sandbox CA, and `dagpilot serve webhook` as a process of its own."""

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
from tests.deploy.manifests import Object, collection

READY = re.compile(r"webhook on https://[^:]+:(\d+) ")


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


def webhook_configuration(config: Object, port: int, ca: Path) -> Object:
    """The shipped MutatingWebhookConfiguration pointed at the process on loopback."""
    for webhook in config["webhooks"]:
        webhook["clientConfig"] = {"url": f"https://127.0.0.1:{port}/mutate",
                                   "caBundle": base64.b64encode(ca.read_bytes()).decode()}
    return config


@contextmanager
def webhook_process(arguments: list[str], log: Path,
                    deadline_s: float = 60.0) -> Iterator[int]:
    """`dagpilot serve webhook ARGUMENTS` until the block ends; yields its port."""
    with log.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "dagpilot.cli", "serve", "webhook", *arguments],
            stdout=subprocess.PIPE, stderr=errors, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()],
                              daemon=True)
    reader.start()
    try:
        try:
            line = lines.get(timeout=deadline_s)
        except queue.Empty:
            raise AssertionError(f"the webhook did not start: {log.read_text()[-2000:]}") \
                from None
        ready = READY.search(line)
        assert ready, f"{line!r}; {log.read_text()[-2000:]}"
        yield int(ready.group(1))
        assert process.poll() is None, f"the webhook exited: {log.read_text()[-2000:]}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join(timeout=10)
        process.stdout.close()
