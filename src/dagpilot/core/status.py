"""Status values for expected outcomes, in the spirit of the kube-scheduler framework."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Code(Enum):
    SUCCESS = "Success"
    UNSCHEDULABLE = "Unschedulable"
    # No amount of preemption or waiting makes the pod fit (for example a missing GPU model).
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    ERROR = "Error"


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    @classmethod
    def success(cls) -> Status:
        return _SUCCESS

    @classmethod
    def unschedulable(cls, plugin: str, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, plugin: str, *reasons: str) -> Status:
        return cls(Code.UNRESOLVABLE, reasons, plugin)

    def __str__(self) -> str:
        if self.ok:
            return "Success"
        return f"{self.plugin}: {'; '.join(self.reasons) or self.code.value}"


_SUCCESS = Status()
