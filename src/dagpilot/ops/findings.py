"""What a diagnosis found: one cause with its evidence and the command to run next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cause = Literal["network", "storage", "kernel", "node"]
CAUSES: tuple[Cause, ...] = ("network", "storage", "kernel", "node")


@dataclass(frozen=True, slots=True)
class Finding:
    cause: Cause
    summary: str  # what is wrong, in a line
    evidence: tuple[str, ...]  # the lines, values or conditions that show it
    next_command: str  # what an operator runs next to confirm or fix it
