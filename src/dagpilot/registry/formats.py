"""What each stored file must look like before anything parses it for serving."""

from __future__ import annotations

import json
import zipfile
from typing import IO, Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import SchemaMismatch
from dagpilot.registry.layout import MIN_BYTES, SCHEMA_KEY

ZIP_MAGIC = b"PK\x03\x04"


def check_size(file: str, name: str, size: int) -> None:
    minimum = MIN_BYTES.get(name, 0)
    if size < minimum:
        raise IntegrityError(file, f"too small: {size} bytes, a {name} has at least {minimum} "
                                   "(truncated?)")


def check_torch_archive(file: str, stream: IO[bytes]) -> None:
    """torch.save writes a zip archive; anything else (a legacy pickle above all) is refused
    before torch reads a byte of it."""
    head = stream.read(len(ZIP_MAGIC))
    stream.seek(0)
    if head != ZIP_MAGIC:
        raise IntegrityError(file, "not a torch zip archive (torch.save format): refusing to "
                                   "load it")
    check_zip(file, stream, "a torch zip archive (torch.save format)")


def check_zip(file: str, stream: IO[bytes], kind: str) -> None:
    """A complete zip archive: its central directory at the end is there (truncation cuts it)."""
    complete = zipfile.is_zipfile(stream)
    stream.seek(0)
    if not complete:
        raise IntegrityError(file, f"not {kind}: no complete zip archive (truncated?); "
                                   "refusing to load it")


def json_object(file: str, data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise IntegrityError(file, f"not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise IntegrityError(file, f"must hold a JSON object, not {type(value).__name__}")
    return value


def schema_version(file: str, config: dict[str, Any]) -> int:
    """The feature-schema version the model was trained on; an integer, always present."""
    value = config.get(SCHEMA_KEY)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntegrityError(file, f"{SCHEMA_KEY} must be an integer, found {value!r}")
    return value


def check_schema(file: str, config: dict[str, Any], expected: int) -> None:
    found = schema_version(file, config)
    if found != expected:
        raise SchemaMismatch(file, f"feature schema version {found}, but this code builds "
                                   f"features of version {expected}: refusing to serve it")
