"""Reading the kernel's small text files (cgroup, procfs, sysfs) with errors that name them."""

from __future__ import annotations

from pathlib import Path

from dagpilot.core.errors import InvalidInput


def read_int(path: Path) -> int:
    """A file holding one integer (memory.current, cpuacct.usage)."""
    text = path.read_text().strip()
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(str(path), "line 1", "", f"expected an integer, got {text[:40]!r}") \
            from None


def read_keyed(path: Path) -> dict[str, int]:
    """A file of `key value` lines (memory.stat, cpu.stat); non-integer values are skipped."""
    values: dict[str, int] = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            values[key] = int(value)
    return values


def require(values: dict[str, int], key: str, path: Path) -> int:
    """values[key], or an error naming the file and the missing field."""
    if key not in values:
        raise InvalidInput(str(path), "", key, "missing")
    return values[key]
