"""The submission keys: `keys: [{id, secret: <base64>, notBefore: <RFC 3339>, notAfter: ...}]`.

A key signs for at most 24 hours (notAfter - notBefore <= 24 h); a rotation publishes the next
key before the current one ends, so two keys overlap and clients move over at their own pace.
The file is either that document or a Kubernetes Secret holding it under `keys.yaml`
(`stringData` or base64 `data`), so the manifest an operator applies is also what the
endpoint reads; a Secret mounted as a volume is the plain document. Secrets are at least 32
bytes (the HMAC-SHA256 block of security) and never appear in a message or a repr.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.yaml_documents import parse_yaml_documents
from dagpilot.serve.signature import KEY_ID

MAX_KEY_FILE_BYTES = 1 << 20
MAX_SPAN = datetime.timedelta(hours=24)
MIN_SECRET_BYTES = 32
SECRET_ENTRY = "keys.yaml"
_FIELDS = ("id", "secret", "notBefore", "notAfter")


@dataclass(frozen=True, slots=True)
class SigningKey:
    key_id: str
    secret: bytes = field(repr=False)
    not_before: datetime.datetime
    not_after: datetime.datetime

    def valid_at(self, now_s: float) -> bool:
        return self.not_before.timestamp() <= now_s <= self.not_after.timestamp()


@dataclass(frozen=True, slots=True)
class KeyRing:
    keys: tuple[SigningKey, ...]

    def find(self, key_id: str) -> SigningKey | None:
        return next((key for key in self.keys if key.key_id == key_id), None)

    def newest_valid(self, now_s: float) -> SigningKey | None:
        """The key a client signs with: of those valid now, the one that began last."""
        valid = [key for key in self.keys if key.valid_at(now_s)]
        return max(valid, key=lambda key: (key.not_before, key.not_after), default=None)


def parse_keys(data: bytes, file: str) -> KeyRing:
    documents = [d for d in parse_yaml_documents(data, file) if d is not None]
    if len(documents) != 1:
        raise InvalidInput(file, "", "", f"expected one YAML document, found {len(documents)}")
    document = documents[0]
    if isinstance(document, Mapping) and document.get("kind") == "Secret":
        document = _from_secret(document, file)
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list):
        raise InvalidInput(file, "", "keys", "expected a mapping with a list `keys`")
    entries = document["keys"]
    if not entries:
        raise InvalidInput(file, "", "keys", "no keys: nothing could sign a submission")
    keys = tuple(_key(entry, index, file) for index, entry in enumerate(entries))
    seen: set[str] = set()
    for index, key in enumerate(keys):
        if key.key_id in seen:
            raise InvalidInput(file, f"keys[{index}]", "id",
                               f"key id {shown(key.key_id)} is used twice")
        seen.add(key.key_id)
    return KeyRing(keys)


def _from_secret(secret: Mapping[str, Any], file: str) -> Any:
    string_data, data = secret.get("stringData"), secret.get("data")
    if isinstance(string_data, Mapping) and isinstance(string_data.get(SECRET_ENTRY), str):
        text: bytes = string_data[SECRET_ENTRY].encode()
    elif isinstance(data, Mapping) and isinstance(data.get(SECRET_ENTRY), str):
        try:
            text = base64.b64decode(data[SECRET_ENTRY], validate=True)
        except binascii.Error as error:
            raise InvalidInput(file, "Secret", f"data.{SECRET_ENTRY}",
                               f"not base64: {error}") from None
    else:
        raise InvalidInput(file, "Secret", f"stringData.{SECRET_ENTRY}",
                           f"the Secret holds no `{SECRET_ENTRY}` entry")
    documents = [d for d in parse_yaml_documents(text, f"{file} ({SECRET_ENTRY})")
                 if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], Mapping) \
            or documents[0].get("kind") == "Secret":
        raise InvalidInput(file, "Secret", SECRET_ENTRY, "expected one mapping with `keys`")
    return documents[0]


def _key(entry: object, index: int, file: str) -> SigningKey:
    record = f"keys[{index}]"
    if not isinstance(entry, Mapping):
        raise InvalidInput(file, record, "", f"expected a mapping, got {shown(entry)}")
    unknown = sorted(str(name) for name in entry if name not in _FIELDS)
    if unknown:
        raise InvalidInput(file, record, unknown[0],
                           f"unknown field (a key has {', '.join(_FIELDS)})")
    for name in _FIELDS:
        if name not in entry:
            raise InvalidInput(file, record, name, "missing")
    key_id = entry["id"]
    if not isinstance(key_id, str) or not KEY_ID.fullmatch(key_id):
        raise InvalidInput(file, record, "id", f"expected letters, digits, '.', '_' or '-' "
                           f"(1-64), got {shown(key_id)}")
    record = f"{record} ({key_id})"
    secret = _secret(entry["secret"], file, record)
    not_before = _time(entry["notBefore"], file, record, "notBefore")
    not_after = _time(entry["notAfter"], file, record, "notAfter")
    if not_after <= not_before:
        raise InvalidInput(file, record, "notAfter", "must be later than notBefore")
    if not_after - not_before > MAX_SPAN:
        raise InvalidInput(file, record, "notAfter", f"a key is valid at most 24 h; this one "
                           f"{(not_after - not_before).total_seconds() / 3600:g} h")
    return SigningKey(key_id, secret, not_before, not_after)


def _secret(value: object, file: str, record: str) -> bytes:
    if not isinstance(value, str):
        raise InvalidInput(file, record, "secret", "expected base64 text")
    try:
        secret = base64.b64decode(value.strip(), validate=True)
    except binascii.Error:
        raise InvalidInput(file, record, "secret", "not base64") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise InvalidInput(file, record, "secret", f"{len(secret)} bytes; a secret has at "
                           f"least {MIN_SECRET_BYTES} (e.g. `head -c 32 /dev/urandom | base64`)")
    return secret


def _time(value: object, file: str, record: str, name: str) -> datetime.datetime:
    """RFC 3339 with a zone; YAML reads an unquoted timestamp as a datetime already."""
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(file, record, name, f"not an RFC 3339 time: {shown(value)}") \
                from None
    if not isinstance(value, datetime.datetime):
        raise InvalidInput(file, record, name, f"expected an RFC 3339 time, got {shown(value)}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(file, record, name, "needs a time zone (e.g. 2026-01-01T00:00:00Z)")
    return value
