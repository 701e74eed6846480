"""The running kernel's build configuration, from wherever this machine keeps it:
/boot/config-$(uname -r), /proc/config.gz (CONFIG_IKCONFIG_PROC), or nowhere."""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 4 << 20  # a kernel config is ~300 KB


@dataclass(frozen=True, slots=True)
class KernelConfig:
    source: str  # the file read, or "" when none was found
    options: dict[str, str]  # CONFIG_X -> y | m | a value; options "is not set" are absent

    def state(self, option: str) -> str | None:
        """y, m, or a value; "n" when the config leaves it unset; None when there is no config."""
        if not self.source:
            return None
        return self.options.get(option, "n")


def read_kernel_config(boot: Path, proc: Path, release: str | None = None) -> KernelConfig:
    release = release or os.uname().release
    plain, packed = boot / f"config-{release}", proc / "config.gz"
    try:
        if plain.is_file():
            return KernelConfig(str(plain), parse(plain.read_text(errors="replace")[:MAX_BYTES]))
        if packed.is_file():
            with gzip.open(packed, "rt", errors="replace") as handle:
                return KernelConfig(str(packed), parse(handle.read(MAX_BYTES)))
    except (OSError, EOFError, zlib.error):
        pass  # unreadable is the same as absent: the checks say where they looked
    return KernelConfig("", {})


def parse(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        if equals and name.startswith("CONFIG_"):
            options[name] = value.strip().strip('"')
    return options
