"""Reading a trace file that may be gzipped, with a clear `InvalidInput` when it cannot be read.

A file is decompressed when it starts with the gzip magic number, whatever its name says. The
reading itself, and its limits (regular files only, size and decompressed size, JSON depth),
is `core.reading`'s, shared with the cluster readers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagpilot.core.reading import json_documents
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_DOCUMENT_BYTES, MAX_TABLE_BYTES


def read_bytes(path: Path, max_bytes: int = MAX_TABLE_BYTES) -> bytes:
    """The content of `path` (a table), decompressed if gzipped; an unreadable file, a truncated
    or corrupt gzip, or content over `max_bytes` is an `InvalidInput` naming the file."""
    return read_decompressed(path, max_bytes)


def read_json(path: Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """The JSON document in `path` (plain or gzipped); bad JSON is located by line and column."""
    return json_documents.read_json(path, max_bytes)
