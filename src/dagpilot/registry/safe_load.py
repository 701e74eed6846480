"""Load a stored version for serving, or refuse it with an `IntegrityError` naming the file.

Refused: a missing SHA256SUMS, a file that fails its line (checksum mismatch, missing, too
small), a file on disk that no line covers, a symlink anywhere in the version, and any file
the shared decoder (decode.py) refuses: weights that are not a torch zip archive or that
`torch.load(weights_only=True)` rejects, an npz or JSON file beyond its limits, and a
feature-schema version other than the caller's. Weights never go through a full unpickler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.decode import decode_file
from dagpilot.registry.formats import check_schema
from dagpilot.registry.layout import CONFIG, CURRENT, METADATA, NORMALISERS, WEIGHTS
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
    config = decode_file(str(folder / CONFIG), CONFIG, files[CONFIG])
    check_schema(str(folder / CONFIG), config, feature_schema_version)  # before torch reads
    decoded = {name: decode_file(str(folder / name), name, data)
               for name, data in files.items() if name != CONFIG}
    normaliser = next(decoded[name] for name in NORMALISERS if name in decoded)
    return LoadedModel(
        version=version,
        state_dict=decoded[WEIGHTS],
        normaliser=_frozen_object(normaliser),  # npz arrays are read-only already
        config=_frozen_object(config),
        metadata=_frozen_object(decoded[METADATA]))


def _frozen_object(value: dict[str, Any]) -> Mapping[str, Any]:
    """A JSON object made read-only: objects become mapping proxies, arrays tuples (the decoder
    bounds the nesting, so this recursion is bounded too)."""
    return MappingProxyType({key: _frozen_json(item) for key, item in value.items()})


def _frozen_json(value: Any) -> Any:
    if isinstance(value, dict):
        return _frozen_object(value)
    if isinstance(value, list):
        return tuple(_frozen_json(item) for item in value)
    return value
