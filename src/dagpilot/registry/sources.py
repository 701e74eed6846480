"""What a publish starts from: named files (a folder or a mapping) and metadata, checked
before anything is written into the registry.

Only regular files are taken: a symlink in the source (notes.txt -> /etc/shadow) is refused,
never stored as a copy of what it points at, and so is a FIFO, a device or a folder. Each
file is read once and decoded exactly as serving will decode it (decode.py).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.decode import decode_file
from dagpilot.registry.errors import RegistryError
from dagpilot.registry.formats import json_object, schema_version
from dagpilot.registry.layout import (
    CONFIG,
    METADATA,
    NORMALISERS,
    extra_normalisers,
    is_valid_name,
    missing_required,
)
from dagpilot.registry.limits import MAX_FILE_BYTES
from dagpilot.registry.reading import read_plain


@dataclass(frozen=True)
class Staged:
    """A version ready to be written: its files (metadata.json apart) and metadata."""

    files: Mapping[str, bytes]
    metadata: Mapping[str, Any]
    feature_schema_version: int


def stage(source: Path | Mapping[str, Path], metadata: Mapping[str, Any] | None) -> Staged:
    """Read and check the files of a new version. A metadata.json among them is the base that
    METADATA extends (its keys win)."""
    paths = _source_paths(source)
    files = {name: _read(path) for name, path in paths.items()}
    base = json_object(str(paths[METADATA]), files.pop(METADATA)) if METADATA in files else {}
    missing = missing_required({*files, METADATA})
    if missing:
        raise RegistryError(f"{_label(source)}: missing {', '.join(missing)}")
    if extra_normalisers(set(files)):
        raise RegistryError(f"{_label(source)}: holds both {' and '.join(NORMALISERS)}; keep one")
    for name, data in files.items():
        decode_file(str(paths[name]), name, data)
    schema = schema_version(str(paths[CONFIG]), json_object(str(paths[CONFIG]), files[CONFIG]))
    merged = {**base, **(metadata or {})}
    check_metadata(json_bytes(merged))
    return Staged(files=files, metadata=merged, feature_schema_version=schema)


def json_bytes(document: Mapping[str, Any]) -> bytes:
    """DOCUMENT as metadata.json stores it: standard JSON (no NaN), or a refusal."""
    try:
        text = json.dumps(document, indent=2, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise RegistryError(f"metadata cannot be written as JSON: {str(error)[:200]}") from None
    return (text + "\n").encode()


def check_metadata(data: bytes) -> None:
    """Metadata that serving could not read back (too large, too deep) is refused up front."""
    try:
        decode_file(METADATA, METADATA, data)
    except IntegrityError as error:
        raise RegistryError(f"metadata cannot be stored: {error.message}") from None


def _source_paths(source: Path | Mapping[str, Path]) -> dict[str, Path]:
    if isinstance(source, Path):
        entries = _folder_entries(source)
    else:
        entries = {name: Path(path) for name, path in source.items()}
    for name, path in sorted(entries.items()):
        if not is_valid_name(name):
            raise RegistryError(f"{path}: {name[:100]!r} is not a plain file name (letters, "
                                "digits, . _ + -; no leading dot)")
        _check_regular(path)
    return entries


def _folder_entries(source: Path) -> dict[str, Path]:
    try:
        if not source.is_dir():
            raise RegistryError(f"{source}: not a folder of model files")
        with os.scandir(source) as entries:
            return {entry.name: source / entry.name for entry in entries}
    except OSError as error:
        raise RegistryError(f"{source}: cannot be read: {error.strerror or error}") from None


def _check_regular(path: Path) -> None:
    """A regular file itself: a symlink is refused, not followed (its target is not ours)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise RegistryError(f"{path}: cannot be read: {error.strerror or error}") from None
    if stat.S_ISLNK(mode):
        raise RegistryError(f"{path}: a symlink: publish stores plain files only, never the "
                            "file a link points at")
    if not stat.S_ISREG(mode):
        raise RegistryError(f"{path}: not a file; a version holds plain files only")


def _read(path: Path) -> bytes:
    return read_plain(str(path), dir_fd=None, label=str(path), limit=MAX_FILE_BYTES)


def _label(source: Path | Mapping[str, Path]) -> str:
    return str(source) if isinstance(source, Path) else "the files given"
