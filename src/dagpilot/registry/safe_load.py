"""Load a stored version for serving, or refuse it with an `IntegrityError` naming the file.

Refused: a missing SHA256SUMS, a file that fails its line (checksum mismatch, missing, too
small), a file on disk that no line covers, weights that are not a torch zip archive or that
`torch.load(weights_only=True)` rejects, and a feature-schema version other than the caller's.
Weights never go through a full unpickler: `weights_only=True` always.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.formats import check_schema, check_torch_archive, check_zip, json_object
from dagpilot.registry.layout import CONFIG, CURRENT, METADATA, WEIGHTS
from dagpilot.registry.store import read_current
from dagpilot.registry.verified_files import read_verified_version


@dataclass(frozen=True)
class LoadedModel:
    """One verified version, read-only: JSON parts are frozen, normaliser arrays unwritable."""

    version: str
    state_dict: Mapping[str, Any]
    normaliser: Mapping[str, Any]
    config: Mapping[str, Any]
    metadata: Mapping[str, Any]


def load_current(root: Path, feature_schema_version: int) -> LoadedModel:
    """The version `current` points at; the link is read once, so every file comes from it."""
    version = read_current(root)
    if version is None:
        raise IntegrityError(str(root / CURRENT), "missing: no version is in service")
    return load_version(root, version, feature_schema_version)


def load_version(root: Path, version: str, feature_schema_version: int) -> LoadedModel:
    folder = root / version
    files = read_verified_version(root, version)
    config = json_object(str(folder / CONFIG), files[CONFIG])
    check_schema(str(folder / CONFIG), config, feature_schema_version)
    metadata = json_object(str(folder / METADATA), files[METADATA])
    normaliser = _normaliser(folder, files)
    return LoadedModel(
        version=version,
        state_dict=_state_dict(str(folder / WEIGHTS), files[WEIGHTS]),
        normaliser=normaliser,
        config=_frozen_object(config),
        metadata=_frozen_object(metadata))


def _state_dict(file: str, data: bytes) -> Mapping[str, Any]:
    # torch is the optional extra `torch` and slow to import: verify and list work without it
    import torch  # noqa: PLC0415

    stream = io.BytesIO(data)
    check_torch_archive(file, stream)
    try:
        state = torch.load(stream, map_location="cpu", weights_only=True)
    # torch reports a bad archive through many exception types; every one is a refusal here
    except Exception as error:
        raise IntegrityError(file, f"torch.load(weights_only=True) refused it: {error}") from None
    if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
        raise IntegrityError(file, "must hold a state dict: a dict keyed by parameter name")
    return MappingProxyType(state)


def _normaliser(folder: Path, files: Mapping[str, bytes]) -> Mapping[str, Any]:
    if "normaliser.json" in files:
        return _frozen_object(json_object(str(folder / "normaliser.json"),
                                          files["normaliser.json"]))
    file = str(folder / "normaliser.npz")
    stream = io.BytesIO(files["normaliser.npz"])
    check_zip(file, stream, "an npz archive")
    try:
        with np.load(stream, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise IntegrityError(file, f"not a readable npz archive: {error}") from None
    for array in arrays.values():
        array.flags.writeable = False
    return MappingProxyType(arrays)


def _frozen_object(value: dict[str, Any]) -> Mapping[str, Any]:
    """A JSON object made read-only: objects become mapping proxies, arrays tuples."""
    return MappingProxyType({key: _frozen_json(item) for key, item in value.items()})


def _frozen_json(value: Any) -> Any:
    if isinstance(value, dict):
        return _frozen_object(value)
    if isinstance(value, list):
        return tuple(_frozen_json(item) for item in value)
    return value
