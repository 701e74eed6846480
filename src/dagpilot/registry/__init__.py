"""The model registry: versioned model folders, SHA256SUMS, an atomically swapped `current`.

    publish(root, version, source, metadata)   write, checksum, verify, then make current
    rollback(root, to=None)                    current -> the version published before it
    verify(root) -> [Problem]                  every line, every file, every version
    list_versions(root) -> [VersionInfo]       publish order, with metadata
    load_current(root, schema) -> LoadedModel  checked file by file; IntegrityError otherwise
    ModelHandle.open(root, schema).reload()    keeps the previous model when a reload fails

See docs/MODELS.md for the layout and the rules.
"""

from dagpilot.core.errors import IntegrityError
from dagpilot.registry.errors import RegistryError, SchemaMismatch
from dagpilot.registry.handle import ModelHandle, ReloadOutcome
from dagpilot.registry.publish import publish
from dagpilot.registry.rollback import Switch, rollback
from dagpilot.registry.safe_load import LoadedModel, load_current, load_version
from dagpilot.registry.store import VersionInfo, list_versions, read_current
from dagpilot.registry.verify import Problem, verify

__all__ = [
    "IntegrityError",
    "LoadedModel",
    "ModelHandle",
    "Problem",
    "RegistryError",
    "ReloadOutcome",
    "SchemaMismatch",
    "Switch",
    "VersionInfo",
    "list_versions",
    "load_current",
    "load_version",
    "publish",
    "read_current",
    "rollback",
    "verify",
]
