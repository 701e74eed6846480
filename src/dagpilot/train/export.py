"""Model folders: what a checkpoint holds and what the registry publishes.

    weights.pt        torch.save(state_dict): a zip archive, loadable with weights_only=True
    normaliser.json   the feature statistics (state.Normaliser.to_json)
    config.json       {"feature_schema_version", "format", "policy": network sizes}
    metadata.json     training command, seed, data, git commit, teacher, figures, and what
                      built it (torch, Python, platform, CPU model)

A folder is written beside its final name and renamed into place, so a checkpoint is never
seen half-written.
"""

from __future__ import annotations

import json
import logging
import platform
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from dagpilot.policy import PolicyNet
from dagpilot.registry import RegistryError, publish
from dagpilot.registry.layout import check_version_name
from dagpilot.registry.store import VersionInfo
from dagpilot.state import FEATURE_SCHEMA_VERSION, Normaliser

log = logging.getLogger(__name__)

MODEL_FORMAT = "dagpilot-policy"
WEIGHTS, NORMALISER, CONFIG, METADATA = ("weights.pt", "normaliser.json", "config.json",
                                         "metadata.json")


def model_config(model: PolicyNet) -> dict[str, Any]:
    return {"feature_schema_version": FEATURE_SCHEMA_VERSION, "format": MODEL_FORMAT,
            "policy": model.config.to_dict()}


def export_model(folder: Path, model: PolicyNet, normaliser: Normaliser,
                 metadata: Mapping[str, Any]) -> Path:
    """Write the model's four files into `folder` (replacing it)."""
    scratch = folder.with_name(f".{folder.name}.partial")
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    torch.save({name: t.detach().cpu() for name, t in model.state_dict().items()},
               scratch / WEIGHTS)
    (scratch / NORMALISER).write_text(normaliser.to_json())
    (scratch / CONFIG).write_text(json.dumps(model_config(model), indent=1))
    document = {**metadata, "built_with": built_with()}
    (scratch / METADATA).write_text(json.dumps(document, indent=1, allow_nan=False))
    if folder.exists():
        shutil.rmtree(folder)
    scratch.rename(folder)
    return folder


def built_with() -> dict[str, str]:
    """What made the weights: a rerun of the same command on another CPU model or torch
    build gives similar, not identical, weights (float sums in other orders, other kernels;
    docs/TRAINING.md), so a model says where it was trained."""
    return {"torch": torch.__version__, "python": platform.python_version(),
            "platform": platform.platform(), "machine": platform.machine(),
            "cpu": _cpu_model()}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def check_publishable(root: Path, version: str) -> None:
    """Refuse, before hours of training, a version name the registry would refuse."""
    check_version_name(version)
    if (root / version).exists():
        raise RegistryError(f"{root / version}: the version exists already; versions are "
                            "never overwritten")


def publish_model(folder: Path, root: Path, version: str,
                  metadata: Mapping[str, Any] | None = None) -> VersionInfo:
    """Publish an exported folder as `version` of the registry at `root` and make it current
    (the registry checks and checksums everything, then swaps `current` atomically)."""
    root.mkdir(parents=True, exist_ok=True)
    return publish(root, version, folder, dict(metadata or {}))


def git_commit(where: Path | None = None) -> str:
    """The commit of the checkout holding this code (or `where`), with `-dirty` when it has
    local changes; `unknown` outside a git checkout (an installed wheel)."""
    where = where or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=where, capture_output=True, text=True, check=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        log.info("no git commit recorded: %s", error)
        return "unknown"
    return f"{commit}-dirty" if status else commit
