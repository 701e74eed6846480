"""Read one version's files for serving, each checked against its SHA256SUMS line first.

The bytes are read once, hashed, and handed on: what gets parsed is exactly what was hashed,
with no window in which the file could change between the check and the load.
"""

from __future__ import annotations

from pathlib import Path

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.checksums import read_sums, sha256_bytes
from dagpilot.registry.errors import RegistryError
from dagpilot.registry.formats import check_size
from dagpilot.registry.layout import (
    NORMALISERS,
    SUMS,
    extra_normalisers,
    is_valid_name,
    missing_required,
)


def read_verified_version(root: Path, version: str) -> dict[str, bytes]:
    """Every file of ROOT/VERSION by name, each matching SHA256SUMS; else `IntegrityError`."""
    if not is_valid_name(version):
        raise RegistryError(f"bad version name {version!r}")
    folder = root / version
    listed = _listed_files(root, version)
    unlisted = sorted(_plain_files(folder) - listed.keys())
    if unlisted:
        raise IntegrityError(str(folder / unlisted[0]), "not listed in SHA256SUMS: the folder is "
                                                         "not the version that was published")
    missing = missing_required(set(listed))
    if missing:
        raise IntegrityError(str(folder / missing[0]), "required, but not listed in SHA256SUMS")
    if extra_normalisers(set(listed)):
        raise IntegrityError(str(folder), f"holds both {' and '.join(NORMALISERS)}")
    return {name: _read_checked(folder / name, name, digest)
            for name, digest in sorted(listed.items())}


def _listed_files(root: Path, version: str) -> dict[str, str]:
    """The SHA256SUMS lines of one version: file name -> digest."""
    sums = read_sums(root / SUMS)
    prefix = f"{version}/"
    listed = {path.removeprefix(prefix): digest for path, digest in sums.items()
              if path.startswith(prefix)}
    if not listed:
        raise IntegrityError(str(root / version), "not listed in SHA256SUMS: not a published "
                                                  "version")
    for name in listed:
        if not is_valid_name(name):
            raise IntegrityError(str(root / SUMS), f"lists {prefix}{name}: a version holds only "
                                                   "plain files with plain names")
    return listed


def _plain_files(folder: Path) -> set[str]:
    """Names in the version folder; a symlink or a subfolder is refused (never followed)."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        raise IntegrityError(str(folder), "missing, but listed in SHA256SUMS") from None
    except OSError as error:
        raise IntegrityError(str(folder), f"cannot be read: {error}") from None
    for entry in entries:
        if entry.is_symlink() or not entry.is_file():
            raise IntegrityError(str(entry), "not a plain file: a version holds plain files only")
    return {entry.name for entry in entries}


def _read_checked(path: Path, name: str, digest: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IntegrityError(str(path), "missing, but listed in SHA256SUMS") from None
    except OSError as error:
        raise IntegrityError(str(path), f"cannot be read: {error}") from None
    check_size(str(path), name, len(data))
    actual = sha256_bytes(data)
    if actual != digest:
        raise IntegrityError(str(path), f"checksum mismatch: SHA256SUMS says {digest}, the file "
                                        f"hashes to {actual} (modified or truncated)")
    return data
