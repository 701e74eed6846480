"""Small helpers of the serving tests: key files, signed requests, an mTLS client."""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dagpilot.serve import signature

HOUR = datetime.timedelta(hours=1)
NOW = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)

WORKFLOW = b"""apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: etl-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: extract, template: work}
          - {name: load, template: work, depends: extract}
    - name: work
      container: {image: busybox}
"""


@dataclass(frozen=True)
class Key:
    key_id: str
    secret: bytes
    not_before: datetime.datetime
    not_after: datetime.datetime

    def entry(self) -> dict[str, Any]:
        return {"id": self.key_id, "secret": base64.b64encode(self.secret).decode(),
                "notBefore": self.not_before.isoformat().replace("+00:00", "Z"),
                "notAfter": self.not_after.isoformat().replace("+00:00", "Z")}

    def sign(self, body: bytes, timestamp: float) -> str:
        return signature.header(self.secret, self.key_id, body, int(timestamp))


def key(key_id: str, start: datetime.datetime = NOW - HOUR, hours: float = 12,
        fill: int = 0) -> Key:
    secret = bytes((fill + i) % 256 for i in range(32)) if fill else key_id.encode() * 32
    return Key(key_id, secret[:32], start, start + datetime.timedelta(hours=hours))


def write_keys(path: Path, *keys: Key) -> Path:
    """Written to a new file then renamed, as a Secret volume or an operator's tool does."""
    scratch = path.with_name(path.name + ".new")
    scratch.write_text(yaml.safe_dump({"keys": [k.entry() for k in keys]}))
    scratch.replace(path)
    return path


@dataclass(frozen=True)
class Client:
    """An mTLS client of the endpoint: its certificate, key and the CA it trusts."""

    port: int
    ca: Path
    cert: Path | None
    key: Path | None

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca))
        if self.cert is not None:
            context.load_cert_chain(str(self.cert), str(self.key))
        return context

    def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30,
                                                 context=self.context())
        try:
            connection.request("POST", path, body=body, headers=headers)
            reply = connection.getresponse()
            data = reply.read()
            return reply.status, json.loads(data) if data else None
        finally:
            connection.close()

    def submit(self, body: bytes, header: str | None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/yaml"}
        if header is not None:
            headers[signature.HEADER] = header
        return self.post("/v1/workflows", body, headers)
