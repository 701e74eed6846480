"""`dagpilot submit WORKFLOW.yaml --url U --keys KEYFILE --cert C --key K --ca CA`.

Signs the file's bytes, exactly as they are on disk, with the newest key valid now (the one
that began last: during a rotation the new key), and POSTs them over mTLS. A URL without a
path posts to /v1/workflows. The endpoint's refusal is a ServeError with its status and
reason; success is the created Workflow's (namespace, name).
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from pathlib import Path

from dagpilot.core.reading.files import read_file
from dagpilot.serve import signature
from dagpilot.serve.errors import ServeError
from dagpilot.serve.keys import MAX_KEY_FILE_BYTES, parse_keys
from dagpilot.serve.submission import MAX_BODY_BYTES
from dagpilot.serve.tls import client_context
from dagpilot.serve.webhook_app import SUBMIT_PATH

TIMEOUT_S = 30.0


def submit(workflow: Path, url: str, keys: Path, *, cert: Path, key: Path, ca: Path,
           now_s: float | None = None) -> tuple[str, str]:
    body = read_file(workflow, MAX_BODY_BYTES)  # the endpoint's limit: refused here already
    now = time.time() if now_s is None else now_s
    ring = parse_keys(read_file(keys, MAX_KEY_FILE_BYTES), str(keys))
    signing = ring.newest_valid(now)
    if signing is None:
        raise ServeError(str(keys), "no key is valid now (check notBefore/notAfter and the "
                         "clock)")
    host, port, path = _target(url)
    headers = {signature.HEADER: signature.header(signing.secret, signing.key_id, body,
                                                  int(now)),
               "Content-Type": ("application/json" if workflow.suffix == ".json"
                                else "application/yaml")}
    connection = http.client.HTTPSConnection(host, port, timeout=TIMEOUT_S,
                                             context=client_context(ca, cert, key))
    try:
        connection.request("POST", path, body=body, headers=headers)
        reply = connection.getresponse()
        status, data = reply.status, reply.read()
    except (OSError, http.client.HTTPException) as error:
        raise ServeError(url, f"no answer: {error}") from None
    finally:
        connection.close()
    document = _json(data)
    if status != 201:
        raise ServeError(url, f"HTTP {status}: {document.get('error', data[:300])}")
    return str(document.get("namespace", "")), str(document.get("name", ""))


def _target(url: str) -> tuple[str, int, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ServeError(url, "expected an https:// URL of the submission endpoint")
    try:
        port = parts.port or 443
    except ValueError:
        raise ServeError(url, "not a port number") from None
    return parts.hostname, port, parts.path if parts.path not in ("", "/") else SUBMIT_PATH


def _json(data: bytes) -> dict[str, object]:
    try:
        document = json.loads(data)
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}
