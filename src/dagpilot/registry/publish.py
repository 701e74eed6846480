"""Publish a new version: written completely, checksummed, verified, and only then current.

Everything that can be checked is checked before the registry is touched: the source files
(sources.py), the name, that the version is free, that SHA256SUMS is there when versions are,
that `current` is a symlink (or absent) so it can be swapped, and the metadata as it will be
stored. Then, under the exclusive lock, so publishers queue:
1. write every file into a scratch folder `.publish-<version>` inside ROOT and fsync it;
2. rename it to `ROOT/<version>` (atomic; an existing version is never overwritten);
3. add its lines to SHA256SUMS (scratch file + `os.replace`);
4. load it exactly as serving would (`load_version`);
5. point `current` at it (scratch symlink + `os.replace`).
A failure in 1 removes the scratch folder; a failure in 3-5 (a refusal, a full disk, Ctrl-C)
puts back `current` and SHA256SUMS and removes the folder. A reader that follows `current`
therefore only ever reaches a version that is complete and listed, and a refused publish
leaves nothing behind. An OS error (no write permission, a read-only or odd file system) is
a `RegistryError` naming the path.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dagpilot.core.errors import DagpilotError, IntegrityError
from dagpilot.registry.atomic import rename_dir, swap_symlink, write_durably
from dagpilot.registry.checksums import read_sums, sha256_bytes, write_sums
from dagpilot.registry.errors import RegistryError, os_refusal
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
from dagpilot.registry.sources import Staged, check_metadata, json_bytes, stage
from dagpilot.registry.store import (
    PUBLISHED,
    VersionInfo,
    list_versions,
    next_sequence,
    read_current,
)

log = logging.getLogger(__name__)

SCRATCH_PREFIX = ".publish-"


def publish(root: Path, version: str, source: Path | Mapping[str, Path],
            metadata: Mapping[str, Any] | None = None, *, activate: bool = True) -> VersionInfo:
    """Store SOURCE (a folder of files, or name -> path) as ROOT/VERSION and, with ACTIVATE,
    make it current. METADATA extends a metadata.json among the files."""
    check_version_name(version)
    staged = stage(source, metadata)
    try:
        if root.exists() and not root.is_dir():
            raise RegistryError(f"{root}: not a folder: cannot hold a registry")
        root.mkdir(parents=True, exist_ok=True)
        with locked(root, exclusive=True):
            _publish_locked(root, version, staged, activate=activate)
            return next(info for info in list_versions(root) if info.version == version)
    except OSError as error:
        raise os_refusal("publish", root, error) from None


def _publish_locked(root: Path, version: str, staged: Staged, *, activate: bool) -> None:
    target = root / version
    if target.exists() or target.is_symlink():
        raise RegistryError(f"{target}: version {version} is already published; versions are "
                            "never overwritten, publish under a new version")
    # a `current` that is not a symlink could not be swapped: refused before anything is stored
    previous = read_current(root) if activate else None
    # a registry that has versions but no SHA256SUMS is refused here too (no lenient mode)
    before = read_sums(root / SUMS) if version_dirs(root) or (root / SUMS).exists() else None
    files = {**staged.files, METADATA: _metadata_bytes(root, version, staged.metadata)}
    _write_version(root, target, files)
    try:
        write_sums(root / SUMS, {**(before or {}), **{sums_path(version, name): sha256_bytes(data)
                                                     for name, data in files.items()}})
        load_version(root, version, staged.feature_schema_version)
        if activate:
            swap_symlink(root / CURRENT, version)
    except BaseException as error:  # a refusal, a full disk, Ctrl-C: leave the registry as it was
        _undo_or_explain(root, target, before, previous, error)
        raise
    log.info("published %s%s", version, " and made it current" if activate else "")


def _undo_or_explain(root: Path, target: Path, before: dict[str, str] | None,
                     previous: str | None, error: BaseException) -> None:
    try:
        _undo(root, target, before, previous)
    except (OSError, DagpilotError) as undo_error:
        raise RegistryError(
            f"{target}: publishing failed ({str(error)[:200]}) and could not be undone "
            f"({undo_error}): remove {target} and its SHA256SUMS lines, then check `current`"
        ) from error


def _undo(root: Path, target: Path, before: dict[str, str] | None, previous: str | None) -> None:
    """Take back a version: `current` if it was swapped already, its lines, then its folder."""
    try:
        moved = read_current(root) == target.name  # swapped, then the folder's fsync failed
    except IntegrityError:
        moved = False  # not a link naming this version: nothing of ours to take back
    if moved:
        if previous is None:
            (root / CURRENT).unlink()
        else:
            swap_symlink(root / CURRENT, previous)
    if before is None:
        (root / SUMS).unlink(missing_ok=True)
    else:
        write_sums(root / SUMS, before)
    shutil.rmtree(target)


def _write_version(root: Path, target: Path, files: Mapping[str, bytes]) -> None:
    for stale in root.glob(f"{SCRATCH_PREFIX}*"):  # left by an interrupted publish
        _remove(stale)
    scratch = root / f"{SCRATCH_PREFIX}{target.name}"
    scratch.mkdir()  # not mkdtemp: its 0700 mode would hide the version from a serving user
    try:
        for name, data in files.items():
            write_durably(scratch / name, data)
        rename_dir(scratch, target)
    except BaseException:  # the target did not exist (checked under the lock): both are ours
        shutil.rmtree(scratch, ignore_errors=True)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        raise


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _metadata_bytes(root: Path, version: str, metadata: Mapping[str, Any]) -> bytes:
    """The caller's metadata plus the registry's own `published` block (replacing any copied
    from another registry: this is a new publication), checked as serving will read it."""
    published = {"version": version, "sequence": next_sequence(list_versions(root)),
                 "at": datetime.now(UTC).isoformat(timespec="seconds")}
    data = json_bytes({**metadata, PUBLISHED: published})
    check_metadata(data)
    return data
