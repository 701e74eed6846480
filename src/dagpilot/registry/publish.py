"""Publish a new version: written completely, checksummed, verified, and only then current.

Order (under the exclusive lock, so publishers queue):
1. write every file into a scratch folder `.publish-<version>` inside ROOT and fsync it;
2. rename it to `ROOT/<version>` (atomic; an existing version is never overwritten);
3. add its lines to SHA256SUMS (scratch file + `os.replace`);
4. load it exactly as serving would (`load_version`); on failure undo 3 and 2;
5. point `current` at it (scratch symlink + `os.replace`).
A reader that follows `current` therefore only ever reaches a version that is complete and
listed; one interrupted midway leaves `current` untouched.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dagpilot.registry.atomic import rename_dir, swap_symlink, write_durably
from dagpilot.registry.checksums import read_sums, sha256_bytes, write_sums
from dagpilot.registry.errors import RegistryError
from dagpilot.registry.layout import (
    CURRENT,
    METADATA,
    SUMS,
    check_version_name,
    sums_path,
    version_dirs,
)
from dagpilot.registry.lock import locked
from dagpilot.registry.safe_load import load_version
from dagpilot.registry.sources import Staged, stage
from dagpilot.registry.store import PUBLISHED, VersionInfo, list_versions, next_sequence

log = logging.getLogger(__name__)

SCRATCH_PREFIX = ".publish-"


def publish(root: Path, version: str, source: Path | Mapping[str, Path],
            metadata: Mapping[str, Any] | None = None, *, activate: bool = True) -> VersionInfo:
    """Store SOURCE (a folder of files, or name -> path) as ROOT/VERSION and, with ACTIVATE,
    make it current. METADATA extends a metadata.json among the files."""
    check_version_name(version)
    staged = stage(source, metadata)
    if root.exists() and not root.is_dir():
        raise RegistryError(f"{root}: not a folder: cannot hold a registry")
    root.mkdir(parents=True, exist_ok=True)
    with locked(root, exclusive=True):
        _publish_locked(root, version, staged)
        if activate:
            swap_symlink(root / CURRENT, version)
            log.info("published %s and made it current", version)
        return next(info for info in list_versions(root) if info.version == version)


def _publish_locked(root: Path, version: str, staged: Staged) -> None:
    target = root / version
    if target.exists() or target.is_symlink():
        raise RegistryError(f"{target}: version {version} is already published; versions are "
                            "never overwritten, publish under a new version")
    # a registry that has versions but no SHA256SUMS is refused here too (no lenient mode)
    before = read_sums(root / SUMS) if version_dirs(root) or (root / SUMS).exists() else None
    files = {**staged.files, METADATA: _metadata_bytes(root, version, staged.metadata)}
    _write_version(root, target, files)
    try:
        write_sums(root / SUMS, {**(before or {}), **{sums_path(version, name): sha256_bytes(data)
                                                     for name, data in files.items()}})
        load_version(root, version, staged.feature_schema_version)
    except BaseException:  # a refusal, a full disk, Ctrl-C: leave the registry as it was
        _undo(root, target, before)
        raise


def _undo(root: Path, target: Path, before: dict[str, str] | None) -> None:
    """Take back a version that `current` never pointed at: its lines first, then its folder."""
    if before is None:
        (root / SUMS).unlink(missing_ok=True)
    else:
        write_sums(root / SUMS, before)
    shutil.rmtree(target)


def _write_version(root: Path, target: Path, files: Mapping[str, bytes]) -> None:
    for stale in root.glob(f"{SCRATCH_PREFIX}*"):  # left by an interrupted publish
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale)
        else:
            stale.unlink()
    scratch = root / f"{SCRATCH_PREFIX}{target.name}"
    scratch.mkdir()  # not mkdtemp: its 0700 mode would hide the version from a serving user
    for name, data in files.items():
        write_durably(scratch / name, data)
    rename_dir(scratch, target)


def _metadata_bytes(root: Path, version: str, metadata: Mapping[str, Any]) -> bytes:
    """The caller's metadata plus the registry's own `published` block (replacing any copied
    from another registry: this is a new publication)."""
    published = {"version": version, "sequence": next_sequence(list_versions(root)),
                 "at": datetime.now(UTC).isoformat(timespec="seconds")}
    document = {**metadata, PUBLISHED: published}
    return (json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()
