"""The scheduling loop's binder for tests: binds nothing, records what it was asked."""

from __future__ import annotations

from typing import Any

from dagpilot.serve.binder import BindRequest


class RecordingBinder:
    """What the loop asked to bind, in order, and the pods it marked unschedulable."""

    in_flight = 0

    def __init__(self) -> None:
        self.asked: list[BindRequest] = []
        self.unschedulable: list[tuple[str, str, str]] = []

    def bind(self, request: BindRequest) -> None:
        self.asked.append(request)

    def done(self) -> list[Any]:
        return []

    def mark_unschedulable(self, namespace: str, name: str, message: str) -> None:
        self.unschedulable.append((namespace, name, message))
