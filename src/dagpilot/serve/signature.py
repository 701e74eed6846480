"""`X-Workflow-Signature: t=<unix seconds>,kid=<key id>,v1=<hex HMAC-SHA256>`.

The MAC is over the bytes of the decimal t exactly as the header carries it, a '.', then the
body exactly as sent, so a proxy that re-encodes or cuts the body breaks the signature. The
header is parsed strictly (each field once, nothing else, bounded lengths): anything else is a
BadSignature, which the endpoint answers with 401. Digests are compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

HEADER = "X-Workflow-Signature"
MAX_HEADER_CHARS = 256
KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}", re.ASCII)
_TIMESTAMP = re.compile(r"[0-9]{1,12}", re.ASCII)
_DIGEST = re.compile(r"[0-9a-fA-F]{64}", re.ASCII)
_FIELDS = ("t", "kid", "v1")


class BadSignature(Exception):
    """A header that is missing, malformed, or whose MAC does not match."""


@dataclass(frozen=True, slots=True)
class Signature:
    timestamp_text: str  # signed as sent: "0017..." and "17..." are different messages
    key_id: str
    digest: str  # lower-case hex

    @property
    def timestamp(self) -> int:
        return int(self.timestamp_text)

    @property
    def nonce(self) -> str:
        """What the replay cache remembers: one MAC is accepted once."""
        return f"{self.key_id}:{self.digest}"


def parse(header: str | None) -> Signature:
    if not header:
        raise BadSignature(f"no {HEADER} header")
    if len(header) > MAX_HEADER_CHARS:
        raise BadSignature(f"{HEADER} is longer than {MAX_HEADER_CHARS} characters")
    fields: dict[str, str] = {}
    for part in header.split(","):
        name, equals, value = part.strip().partition("=")
        if not equals or name not in _FIELDS:
            raise BadSignature(f"{HEADER} takes t=..,kid=..,v1=.. and nothing else")
        if name in fields:
            raise BadSignature(f"{HEADER} names {name} twice")
        fields[name] = value
    missing = [name for name in _FIELDS if name not in fields]
    if missing:
        raise BadSignature(f"{HEADER} lacks {', '.join(missing)}")
    if not _TIMESTAMP.fullmatch(fields["t"]):
        raise BadSignature("t is not a number of unix seconds")
    if not KEY_ID.fullmatch(fields["kid"]):
        raise BadSignature("kid is not a key id (letters, digits, '.', '_', '-'; 1-64)")
    if not _DIGEST.fullmatch(fields["v1"]):
        raise BadSignature("v1 is not a hex HMAC-SHA256 (64 hex digits)")
    return Signature(fields["t"], fields["kid"], fields["v1"].lower())


def digest(secret: bytes, timestamp_text: str, body: bytes) -> str:
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    mac.update(timestamp_text.encode("ascii") + b".")
    mac.update(body)
    return mac.hexdigest()


def matches(secret: bytes, signature: Signature, body: bytes) -> bool:
    expected = digest(secret, signature.timestamp_text, body)
    return hmac.compare_digest(expected.encode("ascii"), signature.digest.encode("ascii"))


def header(secret: bytes, key_id: str, body: bytes, timestamp: int) -> str:
    """The header value a client sends with `body`, signed at `timestamp`."""
    text = str(timestamp)
    return f"t={text},kid={key_id},v1={digest(secret, text, body)}"
