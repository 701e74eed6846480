"""Numbers as the validator's messages show them."""

from __future__ import annotations


def seconds(value: float) -> str:
    """A time or duration in seconds, to the millisecond, without exponent (epoch times too)."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
