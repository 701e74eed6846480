"""verify(root): every line, every file on disk, every version, the current link."""

from __future__ import annotations

import os
from pathlib import Path

from dagpilot.registry import Problem, verify
from tests.registry.builders import flip_byte, restamp, truncate


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
