"""A model registry of two versions for the canary's tests: `stable` (current) and `canary`,
both copies of the shipped model."""

from __future__ import annotations

from pathlib import Path

from dagpilot.registry import publish

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "current"


def stable_and_canary(folder: Path) -> Path:
    models = folder / "models"
    publish(models, "stable", SHIPPED.resolve())
    publish(models, "canary", SHIPPED.resolve(), activate=False)
    return models
