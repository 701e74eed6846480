"""Kubernetes-style quantities and durations: "500m" cores, "1Gi" bytes, "1h30m" seconds."""

from __future__ import annotations

import math
import re

from dagpilot.core.echo import shown

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9,
            "T": 1e12, "P": 1e15, "E": 1e18}
# ASCII digits only: `\d` alone also matches "٣", which Kubernetes does not read as 3
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([A-Za-z]{0,2})$", re.ASCII)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", re.ASCII)
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0}


def quantity(text: str | float) -> float:
    """A Kubernetes resource quantity as a plain number: "250m" -> 0.25, "2Gi" -> 2147483648.

    ValueError for anything else, and for what is not finite ("1e999", YAML's .inf, NaN)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return _finite(text, text)
    if not isinstance(text, str):
        raise ValueError(f"not a Kubernetes quantity: {shown(text)}")
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {shown(text)}")
    number, suffix = float(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return _finite(number * _BINARY[suffix], text)
    if suffix in _DECIMAL:
        return _finite(number * _DECIMAL[suffix], text)
    raise ValueError(f"unknown quantity suffix {suffix!r} in {shown(text)}")


def _finite(number: float, text: object) -> float:
    """`number` as a finite float; ValueError (naming `text`) for NaN, infinities, 10**400."""
    try:
        value = float(number)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {shown(text)}")
    return value


def cpu_cores(text: str | float) -> float:
    return quantity(text)


def memory_bytes(text: str | float) -> int:
    return round(quantity(text))


def duration_s(text: str | float) -> float:
    """Seconds from a plain number or a Go-style duration such as "1h30m", "90s", "250ms"."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return _finite(text, text)
    if not isinstance(text, str):
        raise ValueError(f"not a duration: {shown(text)}")
    cleaned = text.strip()
    try:
        number = float(cleaned)
    except ValueError:
        pass
    else:
        return _finite(number, text)
    parts = _DURATION.findall(cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"not a duration: {shown(text)}")
    return _finite(sum(float(number) * _SECONDS[unit] for number, unit in parts), text)
