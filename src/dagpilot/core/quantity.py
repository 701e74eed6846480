"""Kubernetes resource quantities, parsed exactly as apimachinery's resource.Quantity does.

Grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go): a signed decimal number, then a
binary suffix (Ki Mi Gi Ti Pi Ei), a decimal suffix (n u m "" k M G T P E) or a decimal
exponent (e3, E-2). Values are exact (Fraction), and `Value()` / `MilliValue()` round up,
as the Go code does: "1.5m" cores is 2 millicores, "0.5" bytes is 1 byte.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SYNTAX = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:([eE])([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|"
                     r"[numkMGTPE]))?", re.ASCII)
MAX_LENGTH = 64  # apimachinery refuses quantities whose digits overflow its int64 scale anyway
MAX_EXPONENT = 30  # beyond 10^30 no resource amount means anything; refuse, do not allocate
PARSED_KEPT = 4096  # distinct quantity strings remembered (a Fraction is immutable)


def parse(text: str) -> Fraction:
    """The exact value of a quantity string; ValueError with the reason when it is not one."""
    if not isinstance(text, str):
        raise ValueError(f"a quantity is a string, not {type(text).__name__}")
    return _parsed(text)


@functools.lru_cache(maxsize=PARSED_KEPT)
def _parsed(text: str) -> Fraction:
    """parse() of a string: a live view reads the same few quantities ("500m", "1Gi") in
    every pod it decodes, and exact parsing costs more than the rest of a pod's requests."""
    if not text or len(text) > MAX_LENGTH:
        raise ValueError("empty quantity" if not text else
                         f"quantity longer than {MAX_LENGTH} characters")
    match = _SYNTAX.fullmatch(text)
    if match is None:
        raise ValueError("not a Kubernetes quantity (expected e.g. 500m, 1.5Gi, 1e3)")
    sign, whole, fraction, exponent_mark, exponent, suffix = match.groups()
    if not whole and not fraction:
        raise ValueError("a quantity needs digits")
    number = Fraction(int(whole or "0")) + (
        Fraction(int(fraction), 10 ** len(fraction)) if fraction else 0)
    if exponent_mark:
        power = int(exponent)
        if abs(power) > MAX_EXPONENT:
            raise ValueError(f"exponent beyond +-{MAX_EXPONENT}")
        number *= Fraction(10) ** power
    elif suffix in _BINARY:
        number *= _BINARY[suffix]
    else:
        number *= Fraction(10) ** _DECIMAL[suffix or ""]
    return -number if sign == "-" else number


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


def value(text: str) -> int:
    """Quantity.Value(): the amount rounded up to a whole number (bytes, GPUs, pods)."""
    return _ceil(parse(text))


def milli_value(text: str) -> int:
    """Quantity.MilliValue(): thousandths, rounded up (CPU millicores)."""
    exact = parse(text)  # integer arithmetic: a Fraction product costs more than the parse
    return -((-exact.numerator * 1000) // exact.denominator)


def cores(text: str) -> float:
    """CPU cores as the scheduler counts them: whole millicores."""
    return milli_value(text) / 1000


def format_milli(millicores: int) -> str:
    """The canonical form Kubernetes prints for a CPU amount ("16", "500m")."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"
