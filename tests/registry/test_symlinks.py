"""The registry never follows a symlink out of its root, nor from a publish's source folder
(issue 14, defects 7 and 8); its own `current` is the one link it reads, and it points
inside."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import (
    ModelHandle,
    RegistryError,
    list_versions,
    load_current,
    publish,
    read_current,
    rollback,
    verify,
)
from dagpilot.registry.checksums import read_sums, sha256_file, write_sums
from tests.registry.builders import SCHEMA, model_folder, point_current

NOT_PLAIN_FOLDER = "not a plain folder: a version is a folder of the registry, never a symlink"


def linked_version(root: Path, tmp_path: Path) -> Path:
    """ROOT/linked -> a complete, valid version folder outside ROOT, listed in SHA256SUMS:
    a checksum check alone would pass it."""
    outside = tmp_path / "outside"
    shutil.copytree(root / "v1", outside)
    (root / "linked").symlink_to(outside)
    sums = read_sums(root / "SHA256SUMS")
    sums.update({f"linked/{path.name}": sha256_file(path) for path in outside.iterdir()})
    write_sums(root / "SHA256SUMS", sums)
    return outside


def test_rollback_to_a_linked_version_is_refused(root: Path, tmp_path: Path) -> None:
    linked_version(root, tmp_path)
    with pytest.raises(RegistryError, match=r"linked: no such version \(a version is a folder "
                                            r"of the registry, never a symlink\)"):
        rollback(root, "linked")
    assert read_current(root) == "v2"


def test_a_current_pointing_at_a_linked_version_is_not_served(root: Path,
                                                              tmp_path: Path) -> None:
    linked_version(root, tmp_path)
    handle = ModelHandle.open(root, SCHEMA)
    point_current(root, "linked")  # by hand: rollback refuses it
    with pytest.raises(IntegrityError, match=NOT_PLAIN_FOLDER) as caught:
        load_current(root, SCHEMA)
    assert caught.value.file == str(root / "linked")
    outcome = handle.reload()
    assert outcome.serving == "v2" and not outcome.changed
    assert outcome.error == f"{root / 'linked'}: {NOT_PLAIN_FOLDER}"


def test_verify_names_a_linked_version(root: Path, tmp_path: Path) -> None:
    linked_version(root, tmp_path)
    point_current(root, "linked")
    assert {(problem.file, problem.message) for problem in verify(root)} == {
        (str(root / "linked"), NOT_PLAIN_FOLDER),
        (str(root / "linked"), "unexpected in the registry root: not covered by SHA256SUMS"),
        (str(root / "current"), "points at linked, which is not a published version here"),
    }
    assert [info.version for info in list_versions(root)] == ["v1", "v2"]


def test_a_symlinked_file_in_a_version_is_never_read(root: Path, tmp_path: Path) -> None:
    """metadata.json -> a file outside: loading refuses it, listing shows no metadata."""
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"secret": 1}))
    metadata = root / "v1" / "metadata.json"
    metadata.unlink()
    metadata.symlink_to(outside)
    with pytest.raises(IntegrityError, match=r"not a plain file") as caught:
        rollback(root, "v1")
    assert caught.value.file == str(metadata)
    listed = {info.version: dict(info.metadata) for info in list_versions(root)}
    assert listed["v1"] == {}


def test_a_symlinked_sha256sums_is_refused(root: Path, tmp_path: Path) -> None:
    sums = root / "SHA256SUMS"
    shutil.copy(sums, tmp_path / "SHA256SUMS.outside")
    sums.unlink()
    sums.symlink_to(tmp_path / "SHA256SUMS.outside")
    with pytest.raises(IntegrityError, match=r"not a plain file") as caught:
        load_current(root, SCHEMA)
    assert caught.value.file == str(sums)
    assert [problem.file for problem in verify(root)] == [str(sums)]


def test_a_symlink_in_the_source_folder_is_refused(tmp_path: Path) -> None:
    """notes.txt -> a secret (the issue used /etc/shadow) is not stored as a copy of it."""
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000:0:99999:7:::\n")
    source = model_folder(tmp_path / "src", 1)
    (source / "notes.txt").symlink_to(secret)
    with pytest.raises(RegistryError, match=r"notes\.txt: a symlink: publish stores plain "
                                            r"files only, never the file a link points at"):
        publish(tmp_path / "models", "v1", source)
    assert not (tmp_path / "models").exists()


def test_a_symlinked_required_file_is_refused_too(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    real = model_folder(tmp_path / "real", 2)
    (source / "weights.pt").unlink()
    (source / "weights.pt").symlink_to(real / "weights.pt")
    with pytest.raises(RegistryError, match=r"weights\.pt: a symlink"):
        publish(tmp_path / "models", "v1", source)
    files = {path.name: path for path in real.iterdir()}  # the mapping form: same rule
    files["config.json"] = source / "link.json"
    files["config.json"].symlink_to(real / "config.json")
    with pytest.raises(RegistryError, match=r"link\.json: a symlink"):
        publish(tmp_path / "models", "v1", files)


def test_a_fifo_in_the_source_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    os.mkfifo(source / "notes.txt")  # opening it to read would wait for a writer forever
    with pytest.raises(RegistryError, match=r"notes\.txt: not a file; a version holds plain "
                                            r"files only"):
        publish(tmp_path / "models", "v1", source)


def test_a_fifo_in_a_version_is_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "v2" / "notes.txt")
    with pytest.raises(IntegrityError, match=r"not a plain file") as caught:
        load_current(root, SCHEMA)
    assert caught.value.file == str(root / "v2" / "notes.txt")


def test_the_source_folder_itself_may_be_a_link(tmp_path: Path) -> None:
    """The folder named on the command line is the user's choice; its entries are checked."""
    source = model_folder(tmp_path / "src", 1)
    (tmp_path / "latest").symlink_to(source)
    assert publish(tmp_path / "models", "v1", tmp_path / "latest").current
    assert verify(tmp_path / "models") == []
