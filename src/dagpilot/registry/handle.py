"""The model in service, reloaded on demand; a reload that fails keeps the previous model."""

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
        self._reloading = threading.Lock()

    @classmethod
    def open(cls, root: Path, feature_schema_version: int) -> ModelHandle:
        """Load `current`; there is no previous model to fall back on, so a refusal raises."""
        return cls(root, feature_schema_version, load_current(root, feature_schema_version))

    @property
    def model(self) -> LoadedModel:
        return self._model

    def reload(self) -> ReloadOutcome:
        """Follow `current` if it moved. Any refusal is reported and the old model stays."""
        with self._reloading:
            serving = self._model.version
            try:
                if read_current(self._root) == serving:
                    return ReloadOutcome(serving=serving, changed=False)
                fresh = load_current(self._root, self._schema)
            except (DagpilotError, OSError) as error:
                log.warning("kept model %s in service: %s", serving, error)
                return ReloadOutcome(serving=serving, changed=False, error=str(error))
            self._model = fresh  # one reference assignment: readers see old or new
            log.info("model %s -> %s", serving, fresh.version)
            return ReloadOutcome(serving=fresh.version, changed=True)
