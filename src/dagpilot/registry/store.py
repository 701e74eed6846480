"""Reading a registry's state: which version is current, and what each version says it is.

Listing reads metadata without checking checksums (it informs, it does not serve); `verify`
and `safe_load` are the checks.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import CannotCheck
from dagpilot.registry.formats import json_object
from dagpilot.registry.layout import (
    CONFIG,
    CURRENT,
    METADATA,
    SCHEMA_KEY,
    is_valid_name,
    version_dirs,
)
from dagpilot.registry.limits import MAX_JSON_BYTES
from dagpilot.registry.reading import read_plain, version_folder

# The block of metadata.json that the registry writes at publish time (the rest is the caller's).
PUBLISHED = "published"


@dataclass(frozen=True)
class VersionInfo:
    """One stored version as its files describe it."""

    version: str
    sequence: int  # publish order: 1 for the first version published into this registry
    published_at: str  # ISO 8601, UTC
    current: bool
    feature_schema_version: int | None
    metadata: Mapping[str, Any]


def read_current(root: Path) -> str | None:
    """The version `current` points at (read once), or None when nothing is in service yet."""
    link = root / CURRENT
    try:
        target = os.readlink(link)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.EINVAL:  # there, but not a symlink
            raise IntegrityError(str(link), "not a symlink: it must point at a version "
                                            "folder") from None
        raise CannotCheck(str(link), f"cannot be read: {error.strerror or error}") from None
    if not is_valid_name(target):
        raise IntegrityError(str(link), f"points at {target[:100]!r}, not at a version folder of "
                                        "this registry")
    return target


def list_versions(root: Path) -> list[VersionInfo]:
    """Every version folder under ROOT, oldest publication first."""
    try:
        current = read_current(root)
    except IntegrityError:
        current = None
    infos = [_describe(root, version, version == current) for version in version_dirs(root)]
    return sorted(infos, key=lambda info: (info.sequence, info.version))


def _describe(root: Path, version: str, current: bool) -> VersionInfo:
    metadata = _json_or_empty(root, version, METADATA)
    published = metadata.get(PUBLISHED)
    published = published if isinstance(published, dict) else {}
    schema = _integer(_json_or_empty(root, version, CONFIG).get(SCHEMA_KEY))
    return VersionInfo(
        version=version,
        sequence=_integer(published.get("sequence")) or 0,
        published_at=str(published.get("at", "")),
        current=current,
        feature_schema_version=schema,
        metadata=MappingProxyType(metadata))


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _json_or_empty(root: Path, version: str, name: str) -> dict[str, Any]:
    """A version's JSON file as the decoder reads it (within the limits, never through a
    symlink), or {} when it cannot: listing informs, it does not refuse."""
    file = str(root / version / name)
    try:
        with version_folder(root, version) as folder:
            return json_object(file, read_plain(name, dir_fd=folder, label=file,
                                                limit=MAX_JSON_BYTES))
    except IntegrityError:
        return {}


def next_sequence(versions: list[VersionInfo]) -> int:
    return max((info.sequence for info in versions), default=0) + 1
