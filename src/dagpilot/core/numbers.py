"""Numbers from outside, checked before use: finite, in range, or an InvalidInput that says why.

Every loader turns the numbers it reads into floats and ints through these functions (or, for
the CSV loaders that check whole columns at once, with `problem` for the message), so that NaN,
infinities, 1e400 or a 2^63 count never reach `int()`, `round()` or the native core's int64
tables. The ceilings here are what can be represented exactly, far above what makes physical
sense; the physical-sense rules (`core.job_draft`: a runtime over a year, 256 TiB) stay with the
rules the validator reports.
"""

from __future__ import annotations

import math
from typing import Any

from dagpilot.core.echo import shown
from dagpilot.core.errors import InvalidInput

# Whole numbers up to 2^53 are exact in a float64, and a sum of 1,024 of them fits an int64.
MAX_EXACT = 2**53
MAX_BYTES = MAX_EXACT  # 8 PiB: memory, file sizes, bytes moved, bandwidths (per second)
MAX_CORES = 2.0**20  # 1,048,576 cores: 256 times job_draft's unit-mix-up limit
INT32 = (-(2**31), 2**31 - 1)  # Kubernetes and Argo priorities are int32
MAX_DIGITS = 18  # a count or index written in text: 18 digits always fit an int64
_FLOAT_BITS = 1000  # an int this long would overflow float()


def problem(value: float, low: float = -math.inf, high: float = math.inf) -> str | None:
    """Why `value` is not a finite number in [low, high] (None when it is)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"not a finite number: {value!r}"
    if isinstance(value, int) and value.bit_length() > _FLOAT_BITS:
        return f"{_text(value)} is beyond any limit"
    if value < low:
        return f"{_text(value)} is below the minimum {_text(low)}"
    if value > high:
        return f"{_text(value)} is beyond the limit {_text(high)}"
    return None


def finite(value: Any, file: str, record: str, field: str, *, low: float = -math.inf,
           high: float = math.inf) -> float:
    """`value` (an int or float, not a bool) as a float in [low, high], else an InvalidInput."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(file, record, field, f"expected a number, got {shown(value)}")
    reason = problem(value, low, high)  # ints compare exactly, however large
    if reason is not None:
        raise InvalidInput(file, record, field, reason)
    return float(value)


def whole(value: Any, file: str, record: str, field: str, *, low: int = 0,
          high: int = MAX_EXACT) -> int:
    """`value` as an int in [low, high]: an int, or a float with no fractional part."""
    number = finite(value, file, record, field, low=low, high=high)
    if not number.is_integer():
        raise InvalidInput(file, record, field, f"expected a whole number, got {number:g}")
    return value if isinstance(value, int) else int(number)


def ascii_whole(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The int that `text` spells in 1 to `max_digits` ASCII digits, else None.

    `str.isdigit` is true for "²" and "٣", which `int()` refuses or reads; `int()` also takes
    " 7", "1_000" and 4,300 digits. A count in a spec or a name is plain digits or nothing.
    """
    if 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None


def _text(value: float) -> str:
    return shown(value) if isinstance(value, int) else f"{value:.15g}"
