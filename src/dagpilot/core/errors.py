"""The exception tree. Expected outcomes (a task does not fit) are Status values, not exceptions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagpilot.core.echo import printable, shown

FIELD_LIMIT = 120  # a field is a path in the document; keys from the input are cut here
RECORD_LIMIT = 240  # a record names a place (line, task), with ids from the input


class DagpilotError(Exception):
    """Base of every error dagpilot raises on purpose."""

    def __reduce__(self) -> tuple[Callable[..., DagpilotError], tuple[Any, ...]]:
        # Exceptions pickle as cls(*args), which the subclasses' own constructors do not take:
        # an error raised in a worker process would not reach the parent (a Pool then hangs).
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(kind: type[DagpilotError], args: tuple[Any, ...],
             state: dict[str, Any]) -> DagpilotError:
    """An error as it was pickled: its message arguments and attributes, no constructor call."""
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class InvalidInput(DagpilotError):
    """Input that cannot be used, located by file, record and field."""

    def __init__(self, file: str, record: str, field: str, message: str) -> None:
        self.file = str(file)
        self.record = record
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        # The parts echo the input (file names, task ids): no raw control characters.
        field = f"field {shown(self.field, FIELD_LIMIT)}" if self.field else ""
        record = printable(self.record)
        if len(record) > RECORD_LIMIT:
            record = record[: RECORD_LIMIT - 3] + "..."
        where = ", ".join(part for part in (record, field) if part)
        file, message = printable(self.file), printable(self.message)
        return f"{file}: {where}: {message}" if where else f"{file}: {message}"


class Unreadable(InvalidInput):
    """A file or folder the operating system would not give us (permissions, a FIFO or device,
    a broken or looping symbolic link), as opposed to content that is wrong."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(file, "", "", message)


class SpecError(DagpilotError):
    """A workload, cluster or option spec that does not parse or names nothing known."""

    def __init__(self, spec: str, message: str) -> None:
        self.spec = spec
        self.message = message
        super().__init__(f"{shown(spec, FIELD_LIMIT)}: {printable(message)}")


class IntegrityError(DagpilotError):
    """A stored artefact that fails its checksum, size or format check."""

    def __init__(self, file: str, message: str) -> None:
        self.file = str(file)
        self.message = message
        super().__init__(f"{file}: {message}")
