"""Refusals of the model registry beyond `IntegrityError` (which lives in `core.errors`)."""

from __future__ import annotations

from dagpilot.core.errors import DagpilotError, IntegrityError


class RegistryError(DagpilotError):
    """A publish or rollback that the registry refuses: a taken version, a bad name, no target."""


class SchemaMismatch(IntegrityError):
    """A model whose feature schema differs from the one the serving code builds."""
