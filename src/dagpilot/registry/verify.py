"""Check a whole registry: every SHA256SUMS line, every file on disk, every version, `current`.

Returns the problems found (an empty list means the registry is sound); a missing or
malformed SHA256SUMS is a problem, never a reason to check less. Each listed file is read
once (never through a symlink), hashed, and those same bytes go through the decoder that
serving uses (decode.py): torch.load(weights_only=True) for weights, the npz reader for
normaliser.npz, the bounded JSON reader for JSON. What verify passes, serving can load.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.checksums import read_sums
from dagpilot.registry.decode import decode_file
from dagpilot.registry.errors import CannotCheck
from dagpilot.registry.layout import (
    CANARY,
    CURRENT,
    NORMALISERS,
    SUMS,
    extra_normalisers,
    is_valid_name,
    is_version_folder,
    missing_required,
    version_dirs,
)
from dagpilot.registry.lock import locked
from dagpilot.registry.reading import Missing, version_folder
from dagpilot.registry.store import read_current
from dagpilot.registry.verified_files import LISTED_BUT_MISSING, read_checked


@dataclass(frozen=True)
class Problem:
    file: str
    message: str
    cannot_check: bool = False  # an OS error or no torch: not known bad, but not vouched for

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def verify(root: Path) -> list[Problem]:
    try:
        if not root.is_dir():
            return [Problem(str(root), "not a folder: no registry here")]
        with locked(root, exclusive=False):  # one consistent state, never a publish midway
            return _problems(root)
    except OSError as error:  # the root itself: nothing below it can be checked
        return [Problem(str(root), f"cannot be read: {error.strerror or error}",
                        cannot_check=True)]


def _problems(root: Path) -> list[Problem]:
    try:
        sums = read_sums(root / SUMS)
    except IntegrityError as error:
        return [_problem(error)]
    try:
        return [*_listed_problems(root, sums), *_unlisted_problems(root, sums),
                *_version_problems(root, sums), *_current_problems(root, sums)]
    except CannotCheck as error:  # the root's listing
        return [_problem(error)]


def _problem(error: IntegrityError) -> Problem:
    return Problem(error.file, error.message, cannot_check=isinstance(error, CannotCheck))


def _listed_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    """Each line: a `<version>/<file>` path to a plain file of the right size, hash and form."""
    versions: dict[str, dict[str, str]] = {}
    for path, digest in sorted(sums.items()):
        parts = path.split("/")
        if len(parts) != 2 or not all(is_valid_name(part) for part in parts):
            yield Problem(str(root / SUMS), f"lists {path[:100]!r}: not a <version>/<file> path")
            continue
        versions.setdefault(parts[0], {})[parts[1]] = digest
    for version, files in versions.items():
        yield from _version_files_problems(root, version, files)


def _version_files_problems(root: Path, version: str,
                            files: Mapping[str, str]) -> Iterator[Problem]:
    try:
        with version_folder(root, version) as descriptor:
            for name, digest in files.items():
                yield from _file_problems(descriptor, str(root / version / name), name, digest)
    except Missing as error:
        yield Problem(error.file, LISTED_BUT_MISSING)
    except IntegrityError as error:
        yield _problem(error)


def _file_problems(folder: int, file: str, name: str, digest: str) -> Iterator[Problem]:
    """The bytes read once, hashed, and those bytes decoded as serving decodes them."""
    try:
        decode_file(file, name, read_checked(folder, file, name, digest))
    except Missing:
        yield Problem(file, LISTED_BUT_MISSING)
    except IntegrityError as error:
        yield _problem(error)


def _unlisted_problems(root: Path, sums: Mapping[str, str]) -> Iterator[Problem]:
    """Anything on disk that SHA256SUMS does not cover (scratch entries starting with a dot
    in ROOT aside); a symlink is named, never entered."""
    with os.scandir(root) as scan:
        entries = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan)
    for name, is_folder in entries:
        if name.startswith(".") or name in (SUMS, CURRENT, CANARY):
            continue
        if not is_folder:
            yield Problem(str(root / name), "unexpected in the registry root: not covered by "
                                            "SHA256SUMS")
            continue
        unreadable: list[OSError] = []
        for folder, subfolders, names in os.walk(root / name, onerror=unreadable.append):
            for subfolder in sorted(subfolders):
                yield Problem(str(Path(folder, subfolder)), "a subfolder: a version holds plain "
                                                            "files only")
            for file in sorted(names):
                path = Path(folder, file)
                if path.relative_to(root).as_posix() not in sums:
                    yield Problem(str(path), "not listed in SHA256SUMS")
        for error in unreadable:
            yield Problem(str(error.filename), f"cannot be read: {error.strerror or error}",
                          cannot_check=True)


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
        yield _problem(error)
        return
    if version is None:
        if version_dirs(root):
            yield Problem(str(link), "missing: no version is in service")
        return
    listed = any(path.startswith(f"{version}/") for path in sums)
    if not listed or not is_version_folder(root, version):
        yield Problem(str(link), f"points at {version}, which is not a published version here")
