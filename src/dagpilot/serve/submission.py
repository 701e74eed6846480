"""`POST /v1/workflows`: a signed Workflow, checked in this order, created only at the end.

  1. a body over 1 MiB                                   413
  2. no header, a malformed one, an unknown kid, a MAC
     that does not match (a forged or truncated body)     401
  3. a key outside its notBefore..notAfter, a timestamp
     more than 5 min from now, a signature seen before    403
  4. a body that is not one JSON/YAML document            400
  5. not a Workflow the Argo loader reads as a DAG        422 (names the task and field)
  6. created through the API server                       201 {"namespace", "name"}

Authenticity comes first, so only a key holder learns why a request was refused past 401.
The nonce is claimed once the signature is verified and fresh, before anything else: a request
sent twice at once is created once. A Workflow with only a generateName is named from its
signature, so a replay that reaches another replica meets the name the first one created (the
API server's 409, answered as a replay: 403). Every outcome is counted (`outcomes`, by
reason) and logged without the body or any secret.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dagpilot.core.config import LoaderSettings
from dagpilot.core.errors import InvalidInput
from dagpilot.live.errors import KubeApiError
from dagpilot.serve import signature
from dagpilot.serve.keys import KeyRing
from dagpilot.serve.replay import CacheFull, NonceCache
from dagpilot.serve.workflow_check import NotParsed, checked_workflow, parse_body

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
MAX_SKEW_S = 300
MAX_NAME_CHARS = 63
NAME_DIGEST_CHARS = 10  # of the MAC, in a generated name: 40 bits against a collision
Create = Callable[[str, dict[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int
    document: dict[str, Any]
    reason: str  # what `outcomes` counts: created, forged, replayed, ...


@dataclass
class Submissions:
    keys: Callable[[], KeyRing]
    nonces: NonceCache
    create: Create
    namespace: str
    settings: LoaderSettings = field(default_factory=LoaderSettings)
    clock: Callable[[], float] = time.time
    max_skew_s: float = MAX_SKEW_S
    max_body_bytes: int = MAX_BODY_BYTES
    outcomes: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, body: bytes, header: str | None, content_type: str | None) -> Outcome:
        outcome = self._outcome(body, header, content_type)
        with self._lock:
            self.outcomes[outcome.reason] += 1
        log.info("submission: %d %s: %s", outcome.status, outcome.reason,
                 outcome.document.get("error") or outcome.document)
        return outcome

    def too_large(self, length: int) -> Outcome:
        """The answer to a Content-Length over the limit, given before the body is read."""
        outcome = _refused(413, "oversized", f"the body is {length} bytes; at most "
                           f"{self.max_body_bytes} are accepted")
        with self._lock:
            self.outcomes[outcome.reason] += 1
        return outcome

    def _outcome(self, body: bytes, header: str | None, content_type: str | None) -> Outcome:
        if len(body) > self.max_body_bytes:
            return _refused(413, "oversized", f"the body is {len(body)} bytes; at most "
                            f"{self.max_body_bytes} are accepted")
        try:
            signed = signature.parse(header)
        except signature.BadSignature as error:
            return _refused(401, "malformed-signature", str(error))
        key = self.keys().find(signed.key_id)
        if key is None:
            return _refused(401, "unknown-key", f"unknown key id {signed.key_id}")
        if not signature.matches(key.secret, signed, body):
            return _refused(401, "forged", "the signature does not match the body")
        now = self.clock()
        if not key.valid_at(now):
            when = (f"expired at {key.not_after.isoformat()}" if now > key.not_after.timestamp()
                    else f"valid only from {key.not_before.isoformat()}")
            return _refused(403, "key-not-valid", f"key {key.key_id} is {when}")
        if abs(now - signed.timestamp) > self.max_skew_s:
            return _refused(403, "stale", f"t is {now - signed.timestamp:+.0f} s from the "
                            f"server's clock; at most {self.max_skew_s:g} s are accepted")
        try:
            if not self.nonces.claim(signed.nonce, signed.timestamp + self.max_skew_s, now):
                return _refused(403, "replayed", "this signature was used before")
        except CacheFull as error:
            return _refused(503, "replay-cache-full", f"try again later: {error}")
        return self._created(body, content_type, signed)

    def _created(self, body: bytes, content_type: str | None,
                 signed: signature.Signature) -> Outcome:
        try:
            workflow = checked_workflow(parse_body(body, content_type), self.namespace,
                                        self.settings)
        except NotParsed as error:
            return _refused(400, "unparsable", str(error))
        except InvalidInput as error:
            return _refused(422, "invalid", str(error))
        workflow, derived = named_by_signature(workflow, signed)
        try:
            created = self.create(self.namespace, workflow)
        except KubeApiError as error:
            if derived and error.status == 409:  # another replica created it already
                return _refused(403, "replayed", "this signature was used before")
            return _api_refusal(error)
        metadata = created.get("metadata") or {}
        return Outcome(201, {"namespace": str(metadata.get("namespace", self.namespace)),
                             "name": str(metadata.get("name", ""))}, "created")


def named_by_signature(workflow: dict[str, Any],
                       signed: signature.Signature) -> tuple[dict[str, Any], bool]:
    """A Workflow named by generateName gets its name from the signature instead of at
    random: a replay that reaches another replica (whose replay cache has not seen it) then
    meets the first creation's name, and the API server refuses it (409). The name keeps to
    63 characters, Argo's label limit, as the API server's own generated names do."""
    metadata = workflow["metadata"]
    prefix = metadata.get("generateName")
    if metadata.get("name") or not isinstance(prefix, str) or not prefix:
        return workflow, False
    name = f"{prefix[:MAX_NAME_CHARS - NAME_DIGEST_CHARS]}{signed.digest[:NAME_DIGEST_CHARS]}"
    return {**workflow, "metadata": {**metadata, "name": name}}, True


def _refused(status: int, reason: str, message: str) -> Outcome:
    return Outcome(status, {"error": message}, reason)


def _api_refusal(error: KubeApiError) -> Outcome:
    if error.status == 409:
        return _refused(409, "exists", error.message)
    if error.status in (400, 422):
        return _refused(422, "refused-by-api-server", error.message)
    if error.status in (401, 403):  # our own ServiceAccount, or the admission policy
        return _refused(502, "api-server-forbids", error.message)
    return _refused(503, "api-server-unavailable", error.message)
