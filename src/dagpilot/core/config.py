"""Grouped, frozen settings: loaded once (defaults, or a TOML file) and passed down as arguments."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput

GIB = 2**30


@dataclass(frozen=True)
class LoaderSettings:
    """Defaults for what a trace does not record."""

    default_cpu: float = 1.0
    default_memory: int = 1 * GIB
    default_runtime_s: float = 60.0
    # Alibaba 2018 normalises plan_mem to 0..100 of a machine's memory; its machines had 96 cores.
    alibaba_machine_memory: int = 512 * GIB
    seed: int = 0  # seeds built-in workloads and cluster sampling, so a spec names one result


@dataclass(frozen=True)
class ValidatorSettings:
    max_gap_s: float = 30.0  # a longer gap between metric samples breaks time continuity


@dataclass(frozen=True)
class Settings:
    loaders: LoaderSettings = field(default_factory=LoaderSettings)
    validator: ValidatorSettings = field(default_factory=ValidatorSettings)


def load_settings(path: Path | None = None) -> Settings:
    """Defaults, overridden group by group by a TOML file such as `[loaders] default_cpu = 2`."""
    if path is None:
        return Settings()
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(str(path), "", "", f"cannot read settings: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise InvalidInput(str(path), "", "", f"not valid TOML: {error}") from error
    merged: Settings = _merge(Settings(), raw, str(path), "")
    return merged


def _merge(current: Any, raw: dict[str, Any], file: str, prefix: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(current)}
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if key not in fields:
            raise InvalidInput(file, f"[{prefix.rstrip('.')}]" if prefix else "top level", name,
                               f"unknown setting; known: {', '.join(sorted(fields))}")
        old = getattr(current, key)
        if dataclasses.is_dataclass(old):
            if not isinstance(value, dict):
                raise InvalidInput(file, "top level", name, "expected a table")
            changes[key] = _merge(old, value, file, f"{name}.")
        elif isinstance(old, bool) != isinstance(value, bool) or not isinstance(
                value, type(old) if not isinstance(old, float) else (int, float)):
            raise InvalidInput(file, f"[{prefix.rstrip('.')}]", name,
                               f"expected {type(old).__name__}, got {value!r}")
        else:
            changes[key] = type(old)(value)
    return dataclasses.replace(current, **changes)
