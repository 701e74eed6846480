"""verify(root): every line, every file on disk, every version, the current link."""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from pathlib import Path

import pytest

from dagpilot.registry import Problem, verify
from dagpilot.registry.checksums import read_sums
from tests.registry.builders import (
    flip_byte,
    install,
    npz_with_corrupt_deflate,
    restamp,
    truncate,
)


def problems(root: Path) -> list[tuple[str, str]]:
    return [(Path(problem.file).relative_to(root).as_posix(), problem.message)
            for problem in verify(root)]


def test_a_sound_registry_has_no_problems(root: Path) -> None:
    assert verify(root) == []


def test_a_missing_sha256sums_is_the_one_problem(root: Path) -> None:
    (root / "SHA256SUMS").unlink()
    [(file, message)] = problems(root)
    assert file == "SHA256SUMS"
    assert "missing" in message and "no lenient mode" in message


def test_each_damaged_file_is_named(root: Path) -> None:
    flip_byte(root / "v1" / "weights.pt")
    truncate(root / "v2" / "config.json", 1)
    (root / "v2" / "metadata.json").unlink()
    found = problems(root)
    assert [file for file, _ in found] == ["v1/weights.pt", "v2/config.json", "v2/metadata.json"]
    assert "checksum mismatch" in found[0][1]
    assert "too small: 1 bytes" in found[1][1]
    assert "missing" in found[2][1]


def test_forms_behind_matching_checksums_are_checked(root: Path) -> None:
    (root / "v1" / "weights.pt").write_bytes(b"\x00" * 600)
    (root / "v1" / "config.json").write_text('{"feature_schema_version": "3"}')
    (root / "v2" / "metadata.json").write_text("[1, 2]")
    restamp(root)
    found = problems(root)
    assert [file for file, _ in found] == ["v1/config.json", "v1/weights.pt", "v2/metadata.json"]
    assert "must be an integer" in found[0][1]
    assert "not a torch zip archive" in found[1][1]
    assert "must hold a JSON object" in found[2][1]


def test_files_no_line_covers_are_named(root: Path) -> None:
    (root / "v1" / "notes.txt").write_text("extra")
    (root / "README").write_text("stray")
    (root / "v2" / "sub").mkdir()
    (root / "v2" / "sub" / "x.bin").write_bytes(b"x")
    assert problems(root) == [
        ("README", "unexpected in the registry root: not covered by SHA256SUMS"),
        ("v1/notes.txt", "not listed in SHA256SUMS"),
        ("v2/sub", "a subfolder: a version holds plain files only"),
        ("v2/sub/x.bin", "not listed in SHA256SUMS"),
    ]


def test_lines_that_are_not_version_files_are_named(root: Path) -> None:
    with (root / "SHA256SUMS").open("a") as handle:
        handle.write(f"{'a' * 64}  ../etc/passwd\n")
    assert problems(root) == [("SHA256SUMS", "lists '../etc/passwd': not a <version>/<file> path")]


def test_a_version_without_required_lines_is_named(root: Path) -> None:
    sums = root / "SHA256SUMS"
    kept = [line for line in sums.read_text().splitlines() if not line.endswith("v1/config.json")]
    sums.write_text("\n".join(kept) + "\n")
    assert problems(root) == [
        ("v1/config.json", "not listed in SHA256SUMS"),
        ("v1/config.json", "required, but not listed in SHA256SUMS"),
    ]


def test_the_current_link_must_point_at_a_listed_version(root: Path) -> None:
    (root / "current").unlink()
    assert problems(root) == [("current", "missing: no version is in service")]
    os.symlink("v7", root / "current")
    assert problems(root) == [("current", "points at v7, which is not a published version here")]
    (root / "current").unlink()
    (root / "current").write_text("v1")
    assert problems(root) == [("current", "not a symlink: it must point at a version folder")]


def test_a_missing_root_is_a_problem(tmp_path: Path) -> None:
    assert verify(tmp_path / "nowhere") == [
        Problem(str(tmp_path / "nowhere"), "not a folder: no registry here")]


def test_each_file_is_read_once_and_those_bytes_are_decoded(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hashing a file and then reading it again to parse would let a swap in between pass
    (issue 14, defect 13): the decoder must get the very bytes that were hashed."""
    verify_module = importlib.import_module("dagpilot.registry.verify")
    real_read, real_decode = verify_module.read_checked, verify_module.decode_file
    read: dict[str, list[bytes]] = {}
    decoded: dict[str, bytes] = {}

    def reading(folder: int, file: str, name: str, digest: str) -> bytes:
        data = real_read(folder, file, name, digest)
        read.setdefault(file, []).append(data)
        return data

    def decoding(file: str, name: str, data: bytes) -> object:
        decoded[file] = data
        return real_decode(file, name, data)

    monkeypatch.setattr(verify_module, "read_checked", reading)
    monkeypatch.setattr(verify_module, "decode_file", decoding)
    assert verify(root) == []
    listed = {str(root / path): digest for path, digest in read_sums(root / "SHA256SUMS").items()}
    assert sorted(read) == sorted(decoded) == sorted(listed)
    for file, [data] in read.items():  # one read each
        assert decoded[file] is data and hashlib.sha256(data).hexdigest() == listed[file]


def test_verify_decodes_the_npz_that_serving_loads(root: Path) -> None:
    """It said OK for a corrupt deflate stream that serving could not load."""
    install(root, "v2", "normaliser.npz", npz_with_corrupt_deflate())
    [problem] = verify(root)
    assert problem == Problem(str(root / "v2" / "normaliser.npz"), "not a readable npz "
                              "archive: Error -3 while decompressing data: invalid block type")


def test_without_torch_weights_cannot_be_vouched_for(root: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Serving loads weights with torch; verify without torch cannot say they would load."""
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    found = verify(root)
    assert [Path(problem.file).relative_to(root).as_posix() for problem in found] == [
        "v1/weights.pt", "v2/weights.pt"]
    assert all(problem.cannot_check and "torch is not installed" in problem.message
               for problem in found)
