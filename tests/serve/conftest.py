"""A webhook process on loopback with certificates made here, creating into a list."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dagpilot.serve.webhook_process import WebhookConfig, WebhookProcess
from tests.live.certs import Authority
from tests.serve.helpers import HOUR, Client, Key, key, write_keys


@dataclass
class Served:
    process: WebhookProcess
    created: list[dict[str, Any]]
    keys_file: Path
    ca: Path
    certs: dict[str, tuple[Path, Path]]  # client name -> (certificate, key)
    signer: Key

    def client(self, name: str | None = "dagpilot-submit") -> Client:
        cert, private = self.certs[name] if name else (None, None)
        return Client(self.process.port, self.ca, cert, private)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    authority, stranger = Authority("webhook-test-ca"), Authority("another-ca")
    ca = authority.write(tmp_path / "ca.crt")
    serving = authority.issue(tmp_path, "serving", server=True)
    certs = {name: authority.issue(tmp_path, name) for name in
             ("dagpilot-submit", "dagpilot-webhook-client", "someone-else")}
    certs["expired"] = authority.issue(tmp_path, "expired", expired=True)
    (tmp_path / "other").mkdir()
    certs["other-ca"] = stranger.issue(tmp_path / "other", "dagpilot-submit")
    now = datetime.datetime.now(datetime.UTC)
    signer = key("current", start=now - HOUR)
    keys_file = write_keys(tmp_path / "keys.yaml", signer, key("expired", now - 3 * HOUR, 1))
    created: list[dict[str, Any]] = []

    def create(namespace: str, workflow: dict[str, Any]) -> dict[str, Any]:
        created.append(workflow)
        return {"metadata": {"namespace": namespace, "name": f"wf-{len(created)}"}}
    config = WebhookConfig(kubeconfig=tmp_path / "unused", port=0, tls_cert=serving[0],
                           tls_key=serving[1], client_ca=ca, keys=keys_file, namespace="team",
                           host="127.0.0.1")
    process = WebhookProcess(config, create=create)
    stop = threading.Event()
    thread = threading.Thread(target=process.serve, args=(stop,))
    thread.start()
    try:
        yield Served(process, created, keys_file, ca, certs, signer)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive(), "the webhook did not stop"
