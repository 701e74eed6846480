"""Reading a trace file that may be gzipped, with a clear `InvalidInput` when it cannot be read.

A file is decompressed when it starts with the gzip magic number, whatever its name says.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: Path) -> bytes:
    """The content of `path`, decompressed if gzipped; an unreadable file or a truncated or
    corrupt gzip is an `InvalidInput` naming the file."""
    try:
        data = path.read_bytes()
        if data[:2] == GZIP_MAGIC:
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise InvalidInput(str(path), "", "",
                           f"cannot read (truncated or corrupt gzip?): {error}") from error
    return data


def read_json(path: Path) -> Any:
    """The JSON document in `path` (plain or gzipped); bad JSON is located by line and column."""
    data = read_bytes(path)
    try:
        return json.loads(data)
    except UnicodeDecodeError as error:
        raise InvalidInput(str(path), "", "", f"not UTF-8 text: {error}") from error
    except json.JSONDecodeError as error:
        raise InvalidInput(str(path), f"line {error.lineno} column {error.colno}", "",
                           f"not valid JSON: {error.msg}") from error
