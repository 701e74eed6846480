"""Plain JSON objects of the API read defensively: a part that is not what it should be is
empty, and the parsers that need it say so by name."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def part(parent: Any, key: str) -> dict[str, Any]:
    """`parent[key]` when both are objects, else {}."""
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def api_time_s(text: Any) -> float:
    """Unix seconds of an API time (RFC 3339, whole seconds: "2026-12-01T16:02:28Z"); 0.0 when
    it is absent or malformed (no time known)."""
    if not isinstance(text, str):
        return 0.0
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0
