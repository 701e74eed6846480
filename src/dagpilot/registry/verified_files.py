"""Read one version's files for serving, each checked against its SHA256SUMS line first.

The bytes are read once, hashed, and handed on: what gets parsed is exactly what was hashed,
with no window in which the file could change between the check and the load. Nothing is read
through a symlink (reading.py): the version folder and its files are the registry's own.
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
from dagpilot.registry.limits import MAX_FILE_BYTES
from dagpilot.registry.reading import Missing, plain_names, read_plain, version_folder

LISTED_BUT_MISSING = "missing, but listed in SHA256SUMS"


def read_verified_version(root: Path, version: str) -> dict[str, bytes]:
    """Every file of ROOT/VERSION by name, each matching SHA256SUMS; else `IntegrityError`."""
    if not is_valid_name(version):
        raise RegistryError(f"bad version name {version[:101]!r}")
    folder = root / version
    listed = _listed_files(root, version)
    try:
        with version_folder(root, version) as descriptor:
            unlisted = sorted(set(plain_names(descriptor, str(folder))) - listed.keys())
            if unlisted:
                raise IntegrityError(str(folder / unlisted[0]), "not listed in SHA256SUMS: the "
                                     "folder is not the version that was published")
            missing = missing_required(set(listed))
            if missing:
                raise IntegrityError(str(folder / missing[0]),
                                     "required, but not listed in SHA256SUMS")
            if extra_normalisers(set(listed)):
                raise IntegrityError(str(folder), f"holds both {' and '.join(NORMALISERS)}")
            return {name: read_checked(descriptor, str(folder / name), name, digest)
                    for name, digest in sorted(listed.items())}
    except Missing as error:
        raise IntegrityError(error.file, LISTED_BUT_MISSING) from None


def read_checked(folder: int, file: str, name: str, digest: str) -> bytes:
    """The bytes of NAME in the open FOLDER, read once, if they match DIGEST (FILE names it)."""
    data = read_plain(name, dir_fd=folder, label=file, limit=MAX_FILE_BYTES)
    check_size(file, name, len(data))
    actual = sha256_bytes(data)
    if actual != digest:
        raise IntegrityError(file, f"checksum mismatch: SHA256SUMS says {digest}, the file "
                                   f"hashes to {actual} (modified or truncated)")
    return data


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
