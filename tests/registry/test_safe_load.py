"""Loading for serving: a verified, frozen model, or a refusal naming the file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import SchemaMismatch, load_current, load_version
from tests.registry.builders import SCHEMA, flip_byte, restamp, truncate


@dataclass
class Payload:
    """Not on torch's weights_only allow-list: unpickling it could run arbitrary code."""

    command: str


def test_current_loads_verified_and_frozen(root: Path) -> None:
    model = load_current(root, SCHEMA)
    assert model.version == "v2"
    assert torch.equal(model.state_dict["layer.weight"], torch.full((3, 2), 2.0))
    assert model.config["feature_schema_version"] == SCHEMA
    assert model.config["layers"] == (8, 8)
    assert model.metadata["seed"] == 7
    assert model.metadata["published"]["version"] == "v2"
    assert model.normaliser["mean"].tolist() == [2.0, 2.0]
    with pytest.raises(TypeError):
        model.config["index"] = 5  # type: ignore[index]
    with pytest.raises(ValueError, match="read-only"):
        model.normaliser["mean"][0] = 9.0


def test_an_older_version_loads_by_name_with_its_json_normaliser(root: Path) -> None:
    model = load_version(root, "v1", SCHEMA)
    assert model.normaliser["mean"] == (1, 1.0)
    assert torch.equal(model.state_dict["layer.bias"], torch.tensor([1.0, 2.0, 3.0]))


def refused(root: Path, file: str, message: str, *, schema: int = SCHEMA) -> IntegrityError:
    with pytest.raises(IntegrityError, match=message) as caught:
        load_current(root, schema)
    assert caught.value.file == str(root / file)
    return caught.value


def test_missing_sha256sums_is_refused(root: Path) -> None:
    (root / "SHA256SUMS").unlink()
    refused(root, "SHA256SUMS", r"missing.*no lenient mode")


@pytest.mark.parametrize("name", ["weights.pt", "config.json", "metadata.json",
                                  "normaliser.npz"])
def test_a_flipped_byte_is_a_checksum_mismatch(root: Path, name: str) -> None:
    flip_byte(root / "v2" / name, offset=1)
    refused(root, f"v2/{name}", r"checksum mismatch: SHA256SUMS says [0-9a-f]{64}")


def test_a_truncated_file_is_a_checksum_mismatch(root: Path) -> None:
    weights = root / "v2" / "weights.pt"
    truncate(weights, weights.stat().st_size - 40)
    refused(root, "v2/weights.pt", r"checksum mismatch.*modified or truncated")


def test_a_truncated_archive_is_refused_even_with_a_matching_line(root: Path) -> None:
    weights = root / "v2" / "weights.pt"
    truncate(weights, weights.stat().st_size - 40)  # cuts the zip's central directory
    restamp(root)
    refused(root, "v2/weights.pt", r"no complete zip archive \(truncated\?\)")


def test_a_too_small_file_is_refused_before_hashing(root: Path) -> None:
    truncate(root / "v2" / "weights.pt", 100)
    refused(root, "v2/weights.pt", r"too small: 100 bytes, a weights\.pt has at least 512")


def test_an_empty_config_is_too_small(root: Path) -> None:
    truncate(root / "v2" / "config.json", 0)
    restamp(root)
    refused(root, "v2/config.json", r"too small: 0 bytes")


def test_weights_that_are_not_a_zip_archive_are_refused(root: Path) -> None:
    (root / "v2" / "weights.pt").write_bytes(b"\x80\x04" + b"\x00" * 1000)
    restamp(root)
    refused(root, "v2/weights.pt", r"not a torch zip archive")


def test_legacy_pickle_weights_are_refused_before_torch_reads_them(root: Path) -> None:
    weights = root / "v2" / "weights.pt"
    weights.unlink()
    torch.save({"layer.weight": torch.zeros(64, 8)}, weights,
               _use_new_zipfile_serialization=False)
    assert weights.stat().st_size > 512
    restamp(root)
    refused(root, "v2/weights.pt", r"not a torch zip archive")


def test_a_zip_archive_with_a_forbidden_object_is_refused_by_weights_only(root: Path) -> None:
    weights = root / "v2" / "weights.pt"
    weights.unlink()
    torch.save({"payload": Payload("rm -rf /")}, weights)
    restamp(root)
    error = refused(root, "v2/weights.pt", r"torch\.load\(weights_only=True\) refused it")
    assert error.__cause__ is None


def test_weights_that_are_not_a_state_dict_are_refused(root: Path) -> None:
    weights = root / "v2" / "weights.pt"
    weights.unlink()
    torch.save([torch.zeros(2)], weights)
    restamp(root)
    refused(root, "v2/weights.pt", r"must hold a state dict")


def test_a_missing_file_is_refused(root: Path) -> None:
    (root / "v2" / "metadata.json").unlink()
    refused(root, "v2/metadata.json", r"missing, but listed in SHA256SUMS")


def test_a_file_no_line_covers_is_refused(root: Path) -> None:
    (root / "v2" / "extra.bin").write_bytes(b"unverified")
    refused(root, "v2/extra.bin", r"not listed in SHA256SUMS")


def test_an_edited_checksum_line_is_refused(root: Path) -> None:
    sums = root / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    edited = [("0" * 64 + line[64:]) if line.endswith("v2/config.json") else line
              for line in lines]
    sums.write_text("\n".join(edited) + "\n")
    refused(root, "v2/config.json", r"checksum mismatch: SHA256SUMS says 0{64}")


def test_a_removed_checksum_line_is_refused(root: Path) -> None:
    sums = root / "SHA256SUMS"
    kept = [line for line in sums.read_text().splitlines() if not line.endswith("v2/weights.pt")]
    sums.write_text("\n".join(kept) + "\n")
    refused(root, "v2/weights.pt", r"not listed in SHA256SUMS")


def test_a_garbled_sha256sums_is_refused(root: Path) -> None:
    with (root / "SHA256SUMS").open("a") as handle:
        handle.write("not a checksum line\n")
    refused(root, "SHA256SUMS", r"line 9 is not '<sha256 hex>  <path>'")


def test_a_different_feature_schema_is_refused(root: Path) -> None:
    error = refused(root, "v2/config.json", r"feature schema version 3, but this code builds "
                                            r"features of version 4", schema=SCHEMA + 1)
    assert isinstance(error, SchemaMismatch)


def test_a_config_without_schema_version_is_refused(root: Path) -> None:
    config = root / "v2" / "config.json"
    config.write_text(json.dumps({"layers": [8]}))
    restamp(root)
    refused(root, "v2/config.json", r"feature_schema_version must be an integer, found None")


def test_a_symlink_inside_a_version_is_refused(root: Path) -> None:
    (root / "v2" / "alias.pt").symlink_to(root / "v1" / "weights.pt")
    refused(root, "v2/alias.pt", r"not a plain file")


def test_current_missing_or_pointing_outside_is_refused(root: Path) -> None:
    (root / "current").unlink()
    refused(root, "current", r"missing: no version is in service")
    os.symlink("../elsewhere", root / "current")
    refused(root, "current", r"points at '\.\./elsewhere'")


def test_a_version_missing_from_sha256sums_is_refused(root: Path) -> None:
    (root / "v3").mkdir()
    with pytest.raises(IntegrityError, match=r"not listed in SHA256SUMS: not a published"):
        load_version(root, "v3", SCHEMA)


def test_weights_are_read_with_weights_only(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    original = torch.load

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("weights_only"))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch, "load", spy)
    load_current(root, SCHEMA)
    assert seen == [True]
