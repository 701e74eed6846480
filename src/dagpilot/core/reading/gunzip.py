"""Gzip content, recognised by its magic number, decompressed in chunks up to a cap.

A 4 MB file can expand to 4 GiB: decompression stops one chunk past the cap instead of
allocating what the file claims. The cap is the kind of file's, and no more than
MAX_GZIP_RATIO times the compressed size (a floor of MAX_GZIP_FLOOR_BYTES for small files), so
a small bomb cannot take the memory a legitimately large table may.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from pathlib import Path

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.files import read_file
from dagpilot.core.reading.limits import MAX_GZIP_FLOOR_BYTES, MAX_GZIP_RATIO, size_text

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def is_gzip(data: bytes) -> bool:
    return data[:2] == GZIP_MAGIC


def gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """The decompressed `data` of the file `name`; a truncated or corrupt stream, or content
    over `max_bytes` or over the ratio limit, is an InvalidInput naming the file."""
    by_ratio = max(MAX_GZIP_FLOOR_BYTES, MAX_GZIP_RATIO * len(data))
    limit = min(max_bytes, by_ratio)
    chunks: list[bytes] = []
    total = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as stream:
            while chunk := stream.read(min(_CHUNK, limit + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise InvalidInput(name, "", "", _over_limit(max_bytes, by_ratio))
    except (OSError, EOFError, zlib.error) as error:
        raise InvalidInput(name, "", "",
                           f"cannot read (truncated or corrupt gzip?): {error}") from error
    return b"".join(chunks)


def _over_limit(max_bytes: int, by_ratio: int) -> str:
    if max_bytes <= by_ratio:
        return (f"decompresses to more than the limit of {size_text(max_bytes)} for this kind "
                "of file")
    return (f"decompresses to more than {size_text(by_ratio)}, {MAX_GZIP_RATIO} times its "
            "compressed size (a gzip bomb?)")


def read_decompressed(path: Path | str, max_bytes: int) -> bytes:
    """The content of a file, decompressed when it is gzip whatever its name says; the cap
    holds for the file and for what it decompresses to."""
    name = os.fspath(path)
    data = read_file(name, max_bytes)
    return gunzip(data, name, max_bytes) if is_gzip(data) else data
