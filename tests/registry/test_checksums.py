"""SHA256SUMS: the sha256sum format, streaming hashes, refusals of a missing or bad file."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import checksums
from dagpilot.registry.checksums import (
    format_sums,
    parse_sums,
    read_sums,
    sha256_file,
    write_sums,
)

DIGEST_A = "a" * 64
DIGEST_B = "0123456789abcdef" * 4


def test_format_is_sha256sum_text_sorted_by_path() -> None:
    text = format_sums({"v2/weights.pt": DIGEST_B, "v1/config.json": DIGEST_A})
    assert text == f"{DIGEST_A}  v1/config.json\n{DIGEST_B}  v2/weights.pt\n"


def test_parse_round_trips_and_reads_binary_mode_and_upper_case(tmp_path: Path) -> None:
    entries = {"v1/config.json": DIGEST_A, "v2/weights.pt": DIGEST_B}
    assert parse_sums(format_sums(entries), tmp_path) == entries
    assert parse_sums(f"{DIGEST_B.upper()} *v2/weights.pt\n\n", tmp_path) == {
        "v2/weights.pt": DIGEST_B}


@pytest.mark.parametrize(("line", "reason"), [
    (f"{DIGEST_A} v1/config.json", "line 1 is not"),  # one space: neither text nor binary mode
    (f"{DIGEST_A[:-1]}  v1/config.json", "line 1 is not"),
    (f"{'g' * 64}  v1/config.json", "line 1 is not"),
    (f"{DIGEST_A}  ", "line 1 is not"),
    ("weights.pt", "line 1 is not"),
])
def test_malformed_lines_are_refused_with_their_number(tmp_path: Path, line: str,
                                                       reason: str) -> None:
    with pytest.raises(IntegrityError, match=reason) as caught:
        parse_sums(line + "\n", tmp_path / "SHA256SUMS")
    assert caught.value.file == str(tmp_path / "SHA256SUMS")


def test_a_path_listed_twice_is_refused(tmp_path: Path) -> None:
    text = f"{DIGEST_A}  v1/config.json\n{DIGEST_B}  v1/config.json\n"
    with pytest.raises(IntegrityError, match=r"line 2 lists v1/config\.json a second time"):
        parse_sums(text, tmp_path)


def test_a_missing_file_is_refused_without_a_lenient_mode(tmp_path: Path) -> None:
    with pytest.raises(IntegrityError, match=r"missing.*no lenient mode") as caught:
        read_sums(tmp_path / "SHA256SUMS")
    assert caught.value.file == str(tmp_path / "SHA256SUMS")


def test_streaming_hash_equals_the_whole_file_hash(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checksums, "CHUNK_BYTES", 7)  # many chunks, one of them partial
    path = tmp_path / "blob"
    data = bytes(range(256)) * 3
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_write_replaces_the_file_and_leaves_no_scratch(tmp_path: Path) -> None:
    target = tmp_path / "SHA256SUMS"
    write_sums(target, {"v1/a.json": DIGEST_A})
    write_sums(target, {"v1/a.json": DIGEST_A, "v2/a.json": DIGEST_B})
    assert read_sums(target) == {"v1/a.json": DIGEST_A, "v2/a.json": DIGEST_B}
    assert [path.name for path in tmp_path.iterdir()] == ["SHA256SUMS"]


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils sha256sum not found")
def test_the_coreutils_tool_checks_what_we_write(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "config.json").write_text('{"feature_schema_version": 3}')
    write_sums(tmp_path / "SHA256SUMS",
               {"v1/config.json": sha256_file(tmp_path / "v1" / "config.json")})
    ok = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, check=False,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "v1" / "config.json").write_text('{"feature_schema_version": 4}')
    bad = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, check=False,
                         capture_output=True, text=True)
    assert bad.returncode != 0
