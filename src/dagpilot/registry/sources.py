"""What a publish starts from: named files (a folder or a mapping) and metadata, checked
before anything is written into the registry."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagpilot.registry.errors import RegistryError
from dagpilot.registry.formats import (
    check_size,
    check_torch_archive,
    check_zip,
    json_object,
    schema_version,
)
from dagpilot.registry.layout import (
    CONFIG,
    METADATA,
    NORMALISERS,
    WEIGHTS,
    extra_normalisers,
    is_valid_name,
    missing_required,
)


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
    base = json_object(str(paths[METADATA]), _read(paths[METADATA])) if METADATA in paths else {}
    files = {name: _read(path) for name, path in paths.items() if name != METADATA}
    missing = missing_required({*files, METADATA})
    if missing:
        raise RegistryError(f"{_label(source)}: missing {', '.join(missing)}")
    if extra_normalisers(set(files)):
        raise RegistryError(f"{_label(source)}: holds both {' and '.join(NORMALISERS)}; keep one")
    schema = _check_files(paths, files)
    merged = {**base, **(metadata or {})}
    _check_json(merged)
    return Staged(files=files, metadata=merged, feature_schema_version=schema)


def _source_paths(source: Path | Mapping[str, Path]) -> dict[str, Path]:
    if isinstance(source, Path):
        if not source.is_dir():
            raise RegistryError(f"{source}: not a folder of model files")
        entries = {entry.name: entry for entry in source.iterdir()}
    else:
        entries = {name: Path(path) for name, path in source.items()}
    for name, path in sorted(entries.items()):
        if not is_valid_name(name):
            raise RegistryError(f"{path}: {name!r} is not a plain file name (letters, digits, "
                                ". _ + -; no leading dot)")
        if not path.is_file():
            raise RegistryError(f"{path}: not a file; a version holds plain files only")
    return entries


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise RegistryError(f"{path}: cannot be read: {error}") from None


def _check_files(paths: Mapping[str, Path], files: Mapping[str, bytes]) -> int:
    """The checks that loading will make, made before publishing; returns the schema version."""
    for name, data in files.items():
        check_size(str(paths[name]), name, len(data))
    check_torch_archive(str(paths[WEIGHTS]), io.BytesIO(files[WEIGHTS]))
    if "normaliser.npz" in files:
        check_zip(str(paths["normaliser.npz"]), io.BytesIO(files["normaliser.npz"]),
                  "an npz archive")
    for name in files:
        if name.endswith(".json"):
            json_object(str(paths[name]), files[name])
    return schema_version(str(paths[CONFIG]), json_object(str(paths[CONFIG]), files[CONFIG]))


def _check_json(metadata: Mapping[str, Any]) -> None:
    try:
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise RegistryError(f"metadata cannot be written as JSON: {error}") from None


def _label(source: Path | Mapping[str, Path]) -> str:
    return str(source) if isinstance(source, Path) else "the files given"
