"""SHA256SUMS in the format of `sha256sum`: one "<64 hex>  <relative path>" line per file.

`cd ROOT && sha256sum -c SHA256SUMS` checks a registry without dagpilot. Lines are sorted by
path; a "*" before the path (sha256sum's binary mode) is read as well. A missing or malformed
file is an `IntegrityError`: there is no lenient mode.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.atomic import replace_file
from dagpilot.registry.limits import MAX_SUMS_BYTES
from dagpilot.registry.reading import Missing, read_plain

CHUNK_BYTES = 1 << 20
_LINE = re.compile(r"(?P<digest>[0-9a-fA-F]{64}) [ *](?P<path>\S(?:.*\S)?)")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hash a file in chunks, so a large archive never has to fit in memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def parse_sums(text: str, source: Path) -> dict[str, str]:
    """Map each listed path to its lower-case digest; any line that is not one is refused."""
    entries: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise IntegrityError(str(source), f"line {number} is not '<sha256 hex>  <path>': "
                                              f"{line[:80]!r}")
        path = match["path"]
        if path in entries:
            raise IntegrityError(str(source), f"line {number} lists {path} a second time")
        entries[path] = match["digest"].lower()
    return entries


def read_sums(path: Path) -> dict[str, str]:
    """The lines of SHA256SUMS at PATH, a plain file of the registry (never a symlink)."""
    try:
        data = read_plain(str(path), dir_fd=None, label=str(path), limit=MAX_SUMS_BYTES)
    except Missing:
        raise IntegrityError(str(path), "missing: every model file must be covered by "
                                        "SHA256SUMS (there is no lenient mode)") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise IntegrityError(str(path), f"not UTF-8 text: {error}") from None
    return parse_sums(text, path)


def format_sums(entries: Mapping[str, str]) -> str:
    return "".join(f"{entries[path]}  {path}\n" for path in sorted(entries))


def write_sums(path: Path, entries: Mapping[str, str]) -> None:
    """Replace SHA256SUMS atomically: a reader gets the old list or the new one."""
    replace_file(path, format_sums(entries).encode("utf-8"))
