"""Refusals of the model registry beyond `IntegrityError` (which lives in `core.errors`)."""

from __future__ import annotations

from pathlib import Path

from dagpilot.core.errors import DagpilotError, IntegrityError


class RegistryError(DagpilotError):
    """A publish or rollback that the registry refuses: a taken version, a bad name, no target."""


class SchemaMismatch(IntegrityError):
    """A model whose feature schema differs from the one the serving code builds."""


class CannotCheck(IntegrityError):
    """A file that could not be checked at all (an OS error, no torch to load weights with):
    not known to be bad, but nothing vouches for it either."""


def os_refusal(action: str, where: Path, error: OSError) -> RegistryError:
    """An OS error met while writing the registry, as one line naming the path it hit (of
    two, as in symlink(2) and rename(2), the one being made)."""
    path = next((name for name in (error.filename2, error.filename) if name is not None), where)
    return RegistryError(f"{path}: cannot {action}: {error.strerror or error}")
