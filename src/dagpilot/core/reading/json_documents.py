"""JSON documents, with every way `json` can fail an `InvalidInput` that names the place.

Besides syntax: nesting deeper than MAX_NESTING_DEPTH (json raises RecursionError near 1,000
levels, and code that walks a document recursively fails long before), and integers longer than
Python converts (4,300 digits: a ValueError). Depth is measured on the parsed document without
recursion.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.core.reading.gunzip import read_decompressed
from dagpilot.core.reading.limits import MAX_DOCUMENT_BYTES, MAX_NESTING_DEPTH


class NotJson(InvalidInput):
    """Text that is not JSON at all (bad syntax or encoding), as opposed to JSON over a limit:
    a caller that also accepts other text (an Argo expression) tells them apart."""


def read_json(path: Path | str, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """The JSON document in the file `path` (plain or gzipped)."""
    name = os.fspath(path)
    return parse_json(read_decompressed(name, max_bytes), name)


def parse_json(data: bytes | str, file: str, record: str = "", field: str = "") -> Any:
    """The JSON value in `data`, read from `file` (at `record`, `field` when it is embedded)."""
    try:
        document = json.loads(data)
    except json.JSONDecodeError as error:
        at = f"line {error.lineno} column {error.colno}"
        raise NotJson(file, f"{record}, {at}" if record else at, field,
                      f"not valid JSON: {error.msg}") from error
    except UnicodeDecodeError as error:
        raise NotJson(file, record, field, f"not UTF-8 text: {error}") from error
    except RecursionError as error:
        raise too_deep(file, record, field) from error
    except ValueError as error:  # int(): more digits than sys.get_int_max_str_digits()
        raise InvalidInput(file, record, field, "a number too long to read (integers are "
                           f"limited to {sys.get_int_max_str_digits()} digits)") from error
    if nesting_depth(document) > MAX_NESTING_DEPTH:
        raise too_deep(file, record, field)
    return document


def nesting_depth(document: Any) -> int:
    """How many objects and lists are nested inside each other (0 for a plain value), for
    what `json` makes: exact dicts and lists (exact type tests: twice as fast as isinstance on
    documents of millions of numbers)."""
    if type(document) is not dict and type(document) is not list:
        return 0
    deepest = 1
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, level = stack.pop()
        children = value.values() if type(value) is dict else value
        inner = [child for child in children if type(child) is list or type(child) is dict]
        if inner:
            if level >= MAX_NESTING_DEPTH:
                return level + 1  # deep enough to refuse: no need to measure further
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in inner)
    return deepest


def too_deep(file: str, record: str, field: str) -> InvalidInput:
    return InvalidInput(file, record, field,
                        f"nested deeper than the limit of {MAX_NESTING_DEPTH} levels")
