"""The model in service, reloaded on demand; a reload that fails keeps the previous model.

Whatever a load raises (a refusal, an OS error, or anything unforeseen: a bug, MemoryError)
is caught, logged and counted: a serving process never loses its model to a bad new one.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from dagpilot.core.errors import DagpilotError
from dagpilot.registry.safe_load import LoadedModel, load_current
from dagpilot.registry.store import read_current

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReloadOutcome:
    serving: str  # the version in service after the reload
    changed: bool
    error: str | None = None  # why the new current was refused (the old one kept serving)


class ModelHandle:
    """Holds one verified `LoadedModel`; `reload` swaps it only for another verified one."""

    def __init__(self, root: Path, feature_schema_version: int, model: LoadedModel) -> None:
        self._root = root
        self._schema = feature_schema_version
        self._model = model
        self._failed_reloads = 0
        self._reloading = threading.Lock()

    @classmethod
    def open(cls, root: Path, feature_schema_version: int) -> ModelHandle:
        """Load `current`; there is no previous model to fall back on, so a refusal raises."""
        return cls(root, feature_schema_version, load_current(root, feature_schema_version))

    @property
    def model(self) -> LoadedModel:
        return self._model

    @property
    def failed_reloads(self) -> int:
        """How many reloads were refused since the handle opened (each kept the old model)."""
        return self._failed_reloads

    def reload(self) -> ReloadOutcome:
        """Follow `current` if it moved. Any refusal is reported and the old model stays."""
        with self._reloading:
            serving = self._model.version
            try:
                if read_current(self._root) == serving:
                    return ReloadOutcome(serving=serving, changed=False)
                fresh = load_current(self._root, self._schema)
            except Exception as error:  # everything a load can raise: the old model serves on
                self._failed_reloads += 1
                return ReloadOutcome(serving=serving, changed=False,
                                     error=self._report(serving, error))
            self._model = fresh  # one reference assignment: readers see old or new
            log.info("model %s -> %s", serving, fresh.version)
            return ReloadOutcome(serving=fresh.version, changed=True)

    def _report(self, serving: str, error: Exception) -> str:
        if isinstance(error, DagpilotError):
            reason = str(error)
        else:  # not a refusal the registry made: a defect to fix, so keep its traceback
            reason = f"unexpected {type(error).__name__}: {str(error)[:300]}"
        log.warning("kept model %s in service (failed reload %d): %s", serving,
                    self._failed_reloads, reason,
                    exc_info=error if not isinstance(error, DagpilotError) else None)
        return reason
