"""The exception tree. Expected outcomes (a task does not fit) are Status values, not exceptions."""

from __future__ import annotations


class DagpilotError(Exception):
    """Base of every error dagpilot raises on purpose."""


class InvalidInput(DagpilotError):
    """Input that cannot be used, located by file, record and field."""

    def __init__(self, file: str, record: str, field: str, message: str) -> None:
        self.file = str(file)
        self.record = record
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        field = f"field {self.field!r}" if self.field else ""
        where = ", ".join(part for part in (self.record, field) if part)
        return f"{self.file}: {where}: {self.message}" if where else f"{self.file}: {self.message}"


class SpecError(DagpilotError):
    """A workload, cluster or option spec that does not parse or names nothing known."""

    def __init__(self, spec: str, message: str) -> None:
        self.spec = spec
        self.message = message
        super().__init__(f"{spec!r}: {message}")


class IntegrityError(DagpilotError):
    """A stored artefact that fails its checksum, size or format check."""

    def __init__(self, file: str, message: str) -> None:
        self.file = str(file)
        self.message = message
        super().__init__(f"{file}: {message}")
