"""What each stored file must look like before anything parses it for serving."""

from __future__ import annotations

import io
import json
import math
import sys
import zipfile
from typing import IO, Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import SchemaMismatch
from dagpilot.registry.layout import MIN_BYTES, SCHEMA_KEY
from dagpilot.registry.limits import (
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_SCHEMA_VERSION,
    MAX_WEIGHTS_MEMBERS,
)

ZIP_MAGIC = b"PK\x03\x04"
CENTRAL_ENTRY = b"PK\x01\x02"  # one per member in a zip archive's central directory


def check_size(file: str, name: str, size: int) -> None:
    minimum = MIN_BYTES.get(name, 0)
    if size < minimum:
        raise IntegrityError(file, f"too small: {size} bytes, a {name} has at least {minimum} "
                                   "(truncated?)")


def check_torch_archive(file: str, data: bytes) -> None:
    """torch.save writes a zip archive of stored (uncompressed) members; anything else (a legacy
    pickle above all, or a compressed member that could inflate without bound) is refused
    before torch reads a byte of it."""
    if data[:len(ZIP_MAGIC)] != ZIP_MAGIC:
        raise IntegrityError(file, "not a torch zip archive (torch.save format): refusing to "
                                   "load it")
    kind = "a torch zip archive (torch.save format)"
    check_zip(file, io.BytesIO(data), kind)
    if data.count(CENTRAL_ENTRY) > MAX_WEIGHTS_MEMBERS:  # bounds what ZipFile would index
        raise IntegrityError(file, f"more than {MAX_WEIGHTS_MEMBERS} members: refusing to load it")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as error:
        raise IntegrityError(file, f"not {kind}: {error}") from None
    packed = [info.filename for info in members if info.compress_type != zipfile.ZIP_STORED]
    if packed:
        raise IntegrityError(file, f"member {packed[0][:60]!r} is compressed, but torch.save "
                                   "stores every member as it is: refusing to load it")
    if sum(info.file_size for info in members) > len(data):
        raise IntegrityError(file, "its members claim more bytes than the archive holds")


def check_zip(file: str, stream: IO[bytes], kind: str) -> None:
    """A complete zip archive: its central directory at the end is there (truncation cuts it)."""
    complete = zipfile.is_zipfile(stream)
    stream.seek(0)
    if not complete:
        raise IntegrityError(file, f"not {kind}: no complete zip archive (truncated?); "
                                   "refusing to load it")


def json_object(file: str, data: bytes) -> dict[str, Any]:
    value = json_value(file, data)
    if not isinstance(value, dict):
        raise IntegrityError(file, f"must hold a JSON object, not {type(value).__name__}")
    return value


def json_value(file: str, data: bytes) -> Any:
    """Standard JSON (no NaN or Infinity) within the size and nesting limits, or a refusal."""
    if len(data) > MAX_JSON_BYTES:
        raise IntegrityError(file, f"too large: {len(data)} bytes, a JSON file here holds at "
                                   f"most {MAX_JSON_BYTES}")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant,
                           parse_float=_finite_float)
    except RecursionError:  # the parser recursed once per level until the interpreter's limit
        raise IntegrityError(file, _TOO_DEEP) from None
    except UnicodeDecodeError as error:
        raise IntegrityError(file, f"not UTF-8 text: {error}") from None
    except json.JSONDecodeError as error:
        raise IntegrityError(file, f"not valid JSON: {error}") from None
    except NotFinite as error:
        raise IntegrityError(file, f"not standard JSON: {error}") from None
    except ValueError:  # int(): more digits than sys.get_int_max_str_digits()
        raise IntegrityError(file, "a number too long to read (integers are limited to "
                                   f"{sys.get_int_max_str_digits()} digits)") from None
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise IntegrityError(file, _TOO_DEEP)
    return value


_TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels of arrays and objects (the limit)"


class NotFinite(ValueError):
    """NaN, Infinity or a number beyond a double: Python's json takes them, JSON does not."""


def _no_constant(name: str) -> float:
    raise NotFinite(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(f"{text[:30]} is beyond the range of a double")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether VALUE nests arrays and objects more than LIMIT deep (iteratively: no recursion)."""
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children
                       if isinstance(child, (dict, list)))
    return False


def schema_version(file: str, config: dict[str, Any]) -> int:
    """The feature-schema version the model was trained on; an integer, always present."""
    value = config.get(SCHEMA_KEY)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntegrityError(file, f"{SCHEMA_KEY} must be an integer, found {_shown(value)}")
    if not 0 <= value <= MAX_SCHEMA_VERSION:
        raise IntegrityError(file, f"{SCHEMA_KEY} must be from 0 to {MAX_SCHEMA_VERSION}, found "
                                   f"{value if abs(value) < 10**20 else 'a larger number'}")
    return value


def _shown(value: Any) -> str:
    """A JSON value named in a message, without writing out a large one."""
    if isinstance(value, (dict, list)):
        return f"an {'object' if isinstance(value, dict) else 'array'} of {len(value)}"
    return repr(value[:60] if isinstance(value, str) else value)


def check_schema(file: str, config: dict[str, Any], expected: int) -> None:
    found = schema_version(file, config)
    if found != expected:
        raise SchemaMismatch(file, f"feature schema version {found}, but this code builds "
                                   f"features of version {expected}: refusing to serve it")
