"""Point `current` at an earlier version (or any named one), verified first, swapped atomically."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from dagpilot.registry.atomic import swap_symlink
from dagpilot.registry.errors import RegistryError, os_refusal
from dagpilot.registry.formats import json_object, schema_version
from dagpilot.registry.layout import CONFIG, CURRENT, check_version_name, is_version_folder
from dagpilot.registry.lock import locked
from dagpilot.registry.safe_load import load_version
from dagpilot.registry.store import list_versions, read_current
from dagpilot.registry.verified_files import read_verified_version

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Switch:
    previous: str | None
    current: str


def rollback(root: Path, to: str | None = None, *,
             feature_schema_version: int | None = None) -> Switch:
    """Make TO current, or without TO the version published just before the current one.

    The target must load as serving would load it; with FEATURE_SCHEMA_VERSION it must also
    match that schema (without, it is checked against its own config).
    """
    try:
        if not root.is_dir():
            raise RegistryError(f"{root}: not a folder: no registry here")
        with locked(root, exclusive=True):
            switch = _switch(root, to, feature_schema_version)
    except OSError as error:
        raise os_refusal("roll back", root, error) from None
    log.info("current: %s -> %s", switch.previous, switch.current)
    return switch


def _switch(root: Path, to: str | None, feature_schema_version: int | None) -> Switch:
    current = read_current(root)
    target = check_version_name(to) if to is not None else _previous(root, current)
    if target == current:
        raise RegistryError(f"{target} is already current")
    if not is_version_folder(root, target):  # a symlink would lead out of the registry
        raise RegistryError(f"{root / target}: no such version (a version is a folder of the "
                            "registry, never a symlink)")
    expected = feature_schema_version
    if expected is None:
        expected = _own_schema(root, target)
    load_version(root, target, expected)
    swap_symlink(root / CURRENT, target)
    return Switch(previous=current, current=target)


def _previous(root: Path, current: str | None) -> str:
    """The version published just before CURRENT (publish order, from metadata)."""
    if current is None:
        raise RegistryError(f"{root / CURRENT}: no version is current; name one to switch to")
    versions = list_versions(root)
    sequence = next((info.sequence for info in versions if info.version == current), None)
    if sequence is None:
        raise RegistryError(f"{root / CURRENT}: points at {current}, which is not stored here")
    earlier = [info.version for info in versions if info.sequence < sequence]
    if not earlier:
        raise RegistryError(f"{current} is the first version published: nothing to roll back to")
    return earlier[-1]


def _own_schema(root: Path, version: str) -> int:
    """The schema version in the target's config.json, read only once it matches its line."""
    config = read_verified_version(root, version)[CONFIG]
    file = str(root / version / CONFIG)
    return schema_version(file, json_object(file, config))
