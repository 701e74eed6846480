"""Kubernetes-style quantities and durations: "500m" cores, "1Gi" bytes, "1h30m" seconds."""

from __future__ import annotations

import re

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9,
            "T": 1e12, "P": 1e15, "E": 1e18}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-z]{0,2})$")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0}


def quantity(text: str | float) -> float:
    """A Kubernetes resource quantity as a plain number: "250m" -> 0.25, "2Gi" -> 2147483648."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    match = _QUANTITY.match(str(text).strip())
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    number, suffix = float(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    raise ValueError(f"unknown quantity suffix {suffix!r} in {text!r}")


def cpu_cores(text: str | float) -> float:
    return quantity(text)


def memory_bytes(text: str | float) -> int:
    return round(quantity(text))


def duration_s(text: str | float) -> float:
    """Seconds from a plain number or a Go-style duration such as "1h30m", "90s", "250ms"."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    cleaned = str(text).strip()
    try:
        return float(cleaned)
    except ValueError:
        pass
    parts = _DURATION.findall(cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(number) * _SECONDS[unit] for number, unit in parts)
