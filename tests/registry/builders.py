"""Tiny real model folders for the registry tests, and ways to damage a stored version."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import torch

from dagpilot.registry.atomic import swap_symlink
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


def nested_json(depth: int) -> str:
    """A JSON object whose one value nests arrays until DEPTH levels in all."""
    return '{"mean": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def npz_bytes(*, compressed: bool = False) -> bytes:
    stream = io.BytesIO()
    save = np.savez_compressed if compressed else np.savez
    save(stream, mean=np.arange(40.0), std=np.ones(40))
    return stream.getvalue()


def npz_with_method(method: int) -> bytes:
    """An npz whose members claim compression METHOD, in local and central headers alike."""
    data = bytearray(npz_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        offsets = [info.header_offset for info in archive.infolist()]
    for offset in offsets:
        struct.pack_into("<H", data, offset + 8, method)  # local header: method at +8
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) >= 0:  # central entries: method at +10
        struct.pack_into("<H", data, start + 10, method)
        start += 4
    return bytes(data)


def npz_with_corrupt_deflate() -> bytes:
    """A deflated npz whose first member's stream opens with an invalid block type."""
    data = bytearray(npz_bytes(compressed=True))
    name_length, extra_length = struct.unpack_from("<HH", data, 26)
    data[30 + name_length + extra_length] = 0xFF  # BFINAL=1, BTYPE=11: reserved, invalid
    return bytes(data)


def install(root: Path, version: str, name: str, data: bytes) -> Path:
    """Put DATA in as VERSION's file NAME (a normaliser replaces the other form) with a
    matching SHA256SUMS line: what an attacker who can write the registry would do."""
    folder = root / version
    if name.startswith("normaliser."):
        for old in folder.glob("normaliser.*"):
            old.unlink()
    (folder / name).write_bytes(data)
    restamp(root)
    return folder / name


def point_current(root: Path, version: str) -> None:
    """Move `current` without rollback's checks: a hand edit, or another tool."""
    swap_symlink(root / "current", version)


def npz_with_bad_crc() -> bytes:
    """A stored npz with one byte of the first array changed: its CRC-32 no longer matches."""
    data = bytearray(npz_bytes())
    name_length, extra_length = struct.unpack_from("<HH", data, 26)
    data[30 + name_length + extra_length + 130] ^= 0xFF  # past the 128-byte npy header
    return bytes(data)


def deflated_weights() -> bytes:
    """A torch.save archive rewritten with deflated members (torch.save stores them as they
    are): a member could then inflate far beyond the file's size."""
    saved = io.BytesIO()
    torch.save({"layer.weight": torch.zeros(64, 8)}, saved)
    packed = io.BytesIO()
    with zipfile.ZipFile(saved) as source, zipfile.ZipFile(packed, "w",
                                                           zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))
    return packed.getvalue()
