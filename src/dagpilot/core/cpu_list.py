"""A CPU list as `--cpus` options take it: `3`, `0,2` or `0-3` (the kernel's cpuset syntax),
for the serving process and the online fine-tune alike."""

from __future__ import annotations

from dagpilot.core.errors import SpecError

MAX_CPU = 4095  # the kernel's default CONFIG_NR_CPUS ceiling: a larger number is a typo


def parse_cpus(text: str) -> frozenset[int]:
    """The CPUs of `text`; SpecError naming `--cpus` when it is empty or malformed."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise SpecError(text, "--cpus takes CPU numbers and ranges, e.g. 0,2-3")
        low, high = int(first), int(last or first)
        if high < low or high > MAX_CPU:
            raise SpecError(text, f"--cpus: bad range {part.strip()}")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)
