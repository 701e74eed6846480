"""Check a whole registry: every SHA256SUMS line, every file on disk, every version, `current`.

Returns the problems found (an empty list means the registry is sound); a missing or
malformed SHA256SUMS is a problem, never a reason to check less. Hashing streams each file.
Weights are checked as torch zip archives but not unpickled: their checksums tie them to what
publish loaded successfully.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.checksums import read_sums, sha256_file
from dagpilot.registry.formats import (
    check_size,
    check_torch_archive,
    check_zip,
    json_object,
    schema_version,
)
from dagpilot.registry.layout import (
    CONFIG,
    CURRENT,
    NORMALISERS,
    SUMS,
    WEIGHTS,
    extra_normalisers,
    is_valid_name,
    missing_required,
    version_dirs,
)
from dagpilot.registry.lock import locked
from dagpilot.registry.store import read_current


@dataclass(frozen=True)
class Problem:
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def verify(root: Path) -> list[Problem]:
    if not root.is_dir():
        return [Problem(str(root), "not a folder: no registry here")]
    with locked(root, exclusive=False):  # one consistent state, never a publish midway
        try:
            sums = read_sums(root / SUMS)
        except IntegrityError as error:
            return [Problem(error.file, error.message)]
        return [*_listed_problems(root, sums), *_unlisted_problems(root, sums),
                *_version_problems(root, sums), *_current_problems(root, sums)]


def _listed_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    """Each line: a `<version>/<file>` path to a plain file of the right size, hash and form."""
    for path, digest in sorted(sums.items()):
        parts = path.split("/")
        if len(parts) != 2 or not all(is_valid_name(part) for part in parts):
            yield Problem(str(root / SUMS), f"lists {path!r}: not a <version>/<file> path")
            continue
        yield from _file_problems(root / path, parts[1], digest)


def _file_problems(file: Path, name: str, digest: str) -> Iterator[Problem]:
    if file.is_symlink() or not file.is_file():
        yield Problem(str(file), "missing (or not a plain file), but listed in SHA256SUMS")
        return
    try:
        check_size(str(file), name, file.stat().st_size)
        actual = sha256_file(file)
        if actual != digest:
            raise IntegrityError(str(file), f"checksum mismatch: SHA256SUMS says {digest}, the "
                                            f"file hashes to {actual} (modified or truncated)")
        _check_form(file, name)
    except IntegrityError as error:
        yield Problem(error.file, error.message)
    except OSError as error:
        yield Problem(str(file), f"cannot be read: {error}")


def _check_form(file: Path, name: str) -> None:
    if name == WEIGHTS:
        with file.open("rb") as stream:
            check_torch_archive(str(file), stream)
    elif name == "normaliser.npz":
        with file.open("rb") as stream:
            check_zip(str(file), stream, "an npz archive")
    elif name.endswith(".json"):
        value = json_object(str(file), file.read_bytes())
        if name == CONFIG:
            schema_version(str(file), value)


def _unlisted_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    """Anything on disk that SHA256SUMS does not cover (scratch entries starting with a dot
    in ROOT aside)."""
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in (SUMS, CURRENT):
            continue
        if entry.is_symlink() or not entry.is_dir():
            yield Problem(str(entry), "unexpected in the registry root: not covered by SHA256SUMS")
            continue
        for folder, subfolders, names in os.walk(entry):  # symlinked folders are not entered
            for name in sorted(subfolders):
                yield Problem(str(Path(folder, name)), "a subfolder: a version holds plain "
                                                       "files only")
            for name in sorted(names):
                path = Path(folder, name)
                if path.relative_to(root).as_posix() not in sums:
                    yield Problem(str(path), "not listed in SHA256SUMS")


def _version_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    """Each version folder lists the required files (their content is checked line by line)."""
    for version in version_dirs(root):
        listed = {path.split("/", 1)[1] for path in sums if path.startswith(f"{version}/")}
        for name in missing_required(listed):
            yield Problem(str(root / version / name), "required, but not listed in SHA256SUMS")
        if extra_normalisers(listed):
            yield Problem(str(root / version), f"holds both {' and '.join(NORMALISERS)}")


def _current_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    link = root / CURRENT
    try:
        version = read_current(root)
    except IntegrityError as error:
        yield Problem(error.file, error.message)
        return
    if version is None:
        if version_dirs(root):
            yield Problem(str(link), "missing: no version is in service")
        return
    if not (root / version).is_dir() or not any(path.startswith(f"{version}/") for path in sums):
        yield Problem(str(link), f"points at {version}, which is not a published version here")
