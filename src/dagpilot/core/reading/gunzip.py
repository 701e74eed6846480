"""Gzip content, recognised by its magic number, decompressed in chunks up to a cap.

A 4 MB file can expand to 4 GiB: decompression stops one chunk past the cap instead of
allocating what the file claims.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file
from dagpilot.core.reading.limits import size_text

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def is_gzip(data: bytes) -> bool:
    return data[:2] == GZIP_MAGIC


def gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """The decompressed `data` of the file `name`; a truncated or corrupt stream, or content
    over `max_bytes`, is an InvalidInput naming the file."""
    chunks: list[bytes] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            while chunk := stream.read(min(_CHUNK, max_bytes + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > max_bytes:
                    raise InvalidInput(name, "", "", "decompresses to more than the limit of "
                                       f"{size_text(max_bytes)} for this kind of file")
    except (OSError, EOFError, zlib.error) as error:
        raise InvalidInput(name, "", "",
                           f"cannot read (truncated or corrupt gzip?): {error}") from error
    return b"".join(chunks)


def read_decompressed(path: Path | str, max_bytes: int) -> bytes:
    """The content of a file, decompressed when it is gzip whatever its name says; the cap
    holds for the file and for what it decompresses to."""
    name = os.fspath(path)
    data = read_file(name, max_bytes)
    return gunzip(data, name, max_bytes) if is_gzip(data) else data
