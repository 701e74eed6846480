"""Tiny real model folders for the registry tests, and ways to damage a stored version."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from dagpilot.registry.checksums import sha256_file, write_sums

SCHEMA = 3


def model_folder(folder: Path, index: int = 0, *, schema: int = SCHEMA,
                 normaliser: str = "json") -> Path:
    """A complete source folder whose every file carries INDEX, so a mix of two is visible."""
    folder.mkdir(parents=True)
    torch.save({"layer.weight": torch.full((3, 2), float(index)),
                "layer.bias": torch.arange(3, dtype=torch.float32) + index}, folder / "weights.pt")
    if normaliser == "json":
        (folder / "normaliser.json").write_text(json.dumps({"mean": [index, 1.0], "std": [2.0]}))
    else:
        np.savez(folder / "normaliser.npz", mean=np.full(2, float(index)), std=np.ones(2))
    (folder / "config.json").write_text(json.dumps({"feature_schema_version": schema,
                                                    "index": index, "layers": [8, 8]}))
    (folder / "metadata.json").write_text(json.dumps({"index": index, "seed": 7,
                                                      "command": "dagpilot train --seed 7"}))
    return folder


def restamp(root: Path) -> None:
    """Rewrite SHA256SUMS from the files as they are now: what a careless tool would do, so
    that the checks behind the checksum (size, format, schema) are reached."""
    entries = {path.relative_to(root).as_posix(): sha256_file(path)
               for path in sorted(root.glob("*/*")) if path.is_file() and not path.is_symlink()
               and not path.parent.is_symlink() and not path.parent.name.startswith(".")}
    write_sums(root / "SHA256SUMS", entries)


def flip_byte(path: Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def truncate(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])
