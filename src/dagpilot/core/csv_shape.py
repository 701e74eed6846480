"""The shape of a CSV table: distinct column names, and no row shorter than the header.

polars reads a duplicated column as `name_duplicated_0` and pads a short row with nulls, both
silently; a loader would then read the wrong column or take the missing fields as "not
recorded". `check_shape` refuses both with an InvalidInput naming the line and the column.

Rows are counted by a vectorised pass over the bytes (separators outside double quotes, as RFC
4180 quotes them); only a file where that pass finds a short row, or whose quotes are not all at
field boundaries, is read again with the csv module, which is exact and gives the line.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import numpy as np

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput

HEADER = "header (line 1)"
_COMMA, _NEWLINE, _RETURN, _QUOTE = b",", b"\n", b"\r", b'"'


def check_shape(data: bytes, file: str) -> None:
    """InvalidInput for a column named twice in the header or a row with fewer fields than it.

    Blank lines are left to the loaders (polars reads them as rows of nulls, which they refuse
    as empty fields); rows with more fields than the header are polars' own error."""
    header = _header(data)
    if not header:
        return  # an empty file: the loaders say what is missing
    counts = Counter(header)
    for name in header:
        if counts[name] > 1:
            raise InvalidInput(file, HEADER, name, f"column named {counts[name]} times")
    if _may_have_short_rows(data, len(header)):
        _refuse_short_rows(data, header, file)


def _header(data: bytes) -> list[str]:
    end = data.find(_NEWLINE)
    first_line = (data if end < 0 else data[:end]).rstrip(_RETURN)
    return next(csv.reader([first_line.decode("utf-8", errors="replace")]), [])


def _may_have_short_rows(data: bytes, width: int) -> bool:
    """False when every row surely has `width` fields (or more): the common case, in one pass."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(buffer == _QUOTE[0])
    if quotes.size and not _quotes_at_boundaries(buffer, quotes):
        return True  # a quote inside a field: let the csv module decide
    newlines = _unquoted(np.flatnonzero(buffer == _NEWLINE[0]), quotes)
    commas = _unquoted(np.flatnonzero(buffer == _COMMA[0]), quotes)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [buffer.size]))
    fields = np.searchsorted(commas, ends) - np.searchsorted(commas, starts) + 1
    length = ends - starts
    blank = (length == 0) | ((length == 1) & (buffer[np.minimum(starts, buffer.size - 1)]
                                              == _RETURN[0]))
    return bool(np.any((fields[1:] < width) & ~blank[1:]))


def _unquoted(positions: np.ndarray, quotes: np.ndarray) -> np.ndarray:
    """The positions preceded by an even number of quotes: outside any quoted field."""
    outside: np.ndarray = positions[np.searchsorted(quotes, positions) % 2 == 0]
    return outside


def _quotes_at_boundaries(buffer: np.ndarray, quotes: np.ndarray) -> bool:
    """Whether every quote opens a field, closes one, or is half of an escaped `""`."""
    before = np.where(quotes > 0, buffer[np.maximum(quotes - 1, 0)], _NEWLINE[0])
    after = np.where(quotes < buffer.size - 1, buffer[np.minimum(quotes + 1, buffer.size - 1)],
                     _NEWLINE[0])
    opening = np.isin(before, np.frombuffer(_COMMA + _NEWLINE + _QUOTE, dtype=np.uint8))
    closing = np.isin(after, np.frombuffer(_COMMA + _NEWLINE + _RETURN + _QUOTE, dtype=np.uint8))
    return bool(np.all(opening | closing))


def _refuse_short_rows(data: bytes, header: list[str], file: str) -> None:
    """The exact check: the first row (not blank) with fewer fields than the header."""
    rows = csv.reader(io.StringIO(data.decode("utf-8", errors="replace"), newline=""))
    try:
        for number, row in enumerate(rows, start=1):
            if 0 < len(row) < len(header) and row != [""]:
                raise InvalidInput(file, f"line {number}", header[len(row)],
                                   f"missing: the row has {len(row)} of the header's "
                                   f"{len(header)} fields (last: {shown(row[-1])})")
    except csv.Error as error:
        raise InvalidInput(file, f"line {rows.line_num}", "",
                           f"not a readable CSV: {error}") from error
