"""What error messages and listings echo back of their input: bounded, and safe on a terminal.

`shown(value)` is a repr of at most `limit` characters, built without building the whole repr
first: a YAML alias bomb or a 5,000-digit integer must not cost gigabytes (or a ValueError) to
name in a message. `printable(text)` writes control characters (terminal escape sequences, bells,
newlines, bidirectional overrides) as escapes, so that a hostile task id or file name cannot
rewrite the terminal it is printed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SHOWN_LIMIT = 60
_ELLIPSIS = "..."
_MAX_INT_DIGITS = 40  # longer integers are described, not written out


def shown(value: Any, limit: int = SHOWN_LIMIT) -> str:
    """A repr of `value` cut to `limit` characters (with "..." when cut)."""
    text = _bounded(value, limit + 1)
    return text if len(text) <= limit else text[: max(limit - len(_ELLIPSIS), 0)] + _ELLIPSIS


def printable(text: str) -> str:
    """`text` with every non-printable character written as its Python escape (\\x1b, \\n)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _bounded(value: Any, budget: int) -> str:
    """A repr of `value` of about `budget` characters at most (callers cut the rest)."""
    if isinstance(value, str):
        return repr(value[:budget])
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        # int's repr refuses more than 4,300 digits, and is quadratic before that
        if value.bit_length() > _MAX_INT_DIGITS * 3.33:
            return f"<an integer of {value.bit_length()} bits>"
        return repr(value)
    if isinstance(value, Mapping):
        return _joined("{", "}", budget, ((k, v) for k, v in value.items()), pairs=True)
    if isinstance(value, list | tuple):
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        return _joined(opening, closing, budget, ((item, None) for item in value), pairs=False)
    return f"<{type(value).__name__}>"


def _joined(opening: str, closing: str, budget: int, items: Any, *, pairs: bool) -> str:
    """Items written one by one until the budget is spent; each nested repr gets what is left,
    so the walk visits about `budget` values however large or self-similar the container."""
    parts = [opening]
    used = len(opening)
    for index, (first, second) in enumerate(items):
        if used >= budget:
            parts.append(_ELLIPSIS)
            break
        if index:
            parts.append(", ")
            used += 2
        piece = _bounded(first, budget - used)
        if pairs:
            piece += ": " + _bounded(second, max(budget - used - len(piece) - 2, 1))
        parts.append(piece)
        used += len(piece)
    parts.append(closing)
    return "".join(parts)
