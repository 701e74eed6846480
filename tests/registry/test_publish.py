"""Publishing: layout, SHA256SUMS, metadata, the current link, and every refusal."""

from __future__ import annotations

import errno
import importlib
import json
import os
import zipfile
from pathlib import Path

import pytest

from dagpilot.core.errors import IntegrityError
from dagpilot.registry import (
    RegistryError,
    list_versions,
    load_current,
    publish,
    read_current,
    verify,
)
from dagpilot.registry.checksums import read_sums, sha256_file
from tests.registry.builders import SCHEMA, model_folder

# the module, not the function the package exports under the same name
publish_module = importlib.import_module("dagpilot.registry.publish")


def test_publish_writes_the_layout_and_makes_the_version_current(tmp_path: Path) -> None:
    root = tmp_path / "models"
    info = publish(root, "v1", model_folder(tmp_path / "src", 1), {"commit": "abc123"})
    assert info.version == "v1" and info.sequence == 1 and info.current
    assert sorted(path.name for path in (root / "v1").iterdir()) == [
        "config.json", "metadata.json", "normaliser.json", "weights.pt"]
    assert os.readlink(root / "current") == "v1"  # relative: the folder can move
    assert sorted(path.name for path in root.iterdir()) == ["SHA256SUMS", "current", "v1"]
    assert verify(root) == []


def test_sha256sums_covers_every_file_of_every_version(root: Path) -> None:
    sums = read_sums(root / "SHA256SUMS")
    on_disk = {path.relative_to(root).as_posix(): sha256_file(path)
               for version in ("v1", "v2") for path in (root / version).iterdir()}
    assert sums == on_disk
    assert len(sums) == 8


def test_metadata_keeps_the_callers_keys_and_records_the_publication(tmp_path: Path) -> None:
    root = tmp_path / "models"
    source = model_folder(tmp_path / "src", 1)
    publish(root, "v1", source, {"seed": 11, "data": ["builtin:mix"]})
    metadata = json.loads((root / "v1" / "metadata.json").read_text())
    assert metadata["seed"] == 11  # the argument wins over the folder's metadata.json
    assert metadata["command"] == "dagpilot train --seed 7"
    assert metadata["data"] == ["builtin:mix"]
    assert metadata["published"]["version"] == "v1"
    assert metadata["published"]["sequence"] == 1
    assert metadata["published"]["at"].endswith("+00:00")


def test_sequence_follows_publish_order_not_names(tmp_path: Path) -> None:
    root = tmp_path / "models"
    for index, version in enumerate(["b", "a", "c"]):
        publish(root, version, model_folder(tmp_path / version, index))
    assert [(info.version, info.sequence) for info in list_versions(root)] == [
        ("b", 1), ("a", 2), ("c", 3)]
    assert [info.current for info in list_versions(root)] == [False, False, True]


def test_files_can_be_given_by_name(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 4)
    files = {path.name: path for path in source.iterdir() if path.name != "metadata.json"}
    info = publish(tmp_path / "models", "v4", files, {"seed": 1})
    assert info.metadata["seed"] == 1
    assert load_current(tmp_path / "models", SCHEMA).config["index"] == 4


def test_no_activate_stores_without_switching(root: Path, tmp_path: Path) -> None:
    info = publish(root, "v3", model_folder(tmp_path / "src3", 3), activate=False)
    assert not info.current
    assert read_current(root) == "v2"
    assert verify(root) == []


def test_an_existing_version_is_never_overwritten(root: Path, tmp_path: Path) -> None:
    before = sha256_file(root / "v1" / "weights.pt")
    with pytest.raises(RegistryError, match=r"v1 is already published"):
        publish(root, "v1", model_folder(tmp_path / "again", 9))
    assert sha256_file(root / "v1" / "weights.pt") == before
    assert read_current(root) == "v2"


@pytest.mark.parametrize("version", ["", ".hidden", "a/b", "current", "SHA256SUMS", "x y",
                                     "v" * 101])
def test_bad_version_names_are_refused(tmp_path: Path, version: str) -> None:
    with pytest.raises(RegistryError, match=r"bad version name"):
        publish(tmp_path / "models", version, model_folder(tmp_path / "src", 1))
    assert not (tmp_path / "models").exists()


def test_a_long_bad_name_is_not_echoed_whole(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match=r"bad version name") as caught:
        publish(tmp_path / "models", "x/" * 100_000, model_folder(tmp_path / "src", 1))
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(("remove", "missing"), [
    ("weights.pt", "weights.pt"), ("config.json", "config.json"),
    ("normaliser.json", "normaliser.json or normaliser.npz")])
def test_a_source_missing_a_required_file_is_refused(tmp_path: Path, remove: str,
                                                     missing: str) -> None:
    source = model_folder(tmp_path / "src", 1)
    (source / remove).unlink()
    with pytest.raises(RegistryError, match=f"missing {missing}"):
        publish(tmp_path / "models", "v1", source)


def test_a_source_that_would_not_load_is_refused_before_writing(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    (source / "weights.pt").write_bytes(b"\x80\x02" + b"\x00" * 2000)  # a legacy pickle header
    with pytest.raises(IntegrityError, match=r"not a torch zip archive") as caught:
        publish(tmp_path / "models", "v1", source)
    assert caught.value.file == str(source / "weights.pt")
    assert not (tmp_path / "models" / "v1").exists()


def test_a_source_config_without_schema_version_is_refused(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    (source / "config.json").write_text('{"layers": [8]}')
    with pytest.raises(IntegrityError, match=r"feature_schema_version must be an integer"):
        publish(tmp_path / "models", "v1", source)


def test_odd_source_entries_are_refused(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    (source / "nested").mkdir()
    with pytest.raises(RegistryError, match=r"nested: not a file"):
        publish(tmp_path / "models", "v1", source)
    (source / "nested").rmdir()
    (source / ".DS_Store").write_bytes(b"x")
    with pytest.raises(RegistryError, match=r"is not a plain file name"):
        publish(tmp_path / "models", "v1", source)


def test_both_normalisers_are_ambiguous(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    model_folder(tmp_path / "other", 1, normaliser="npz")
    (source / "normaliser.npz").write_bytes((tmp_path / "other" / "normaliser.npz").read_bytes())
    with pytest.raises(RegistryError, match=r"holds both"):
        publish(tmp_path / "models", "v1", source)


def test_metadata_that_is_not_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match=r"cannot be written as JSON"):
        publish(tmp_path / "models", "v1", model_folder(tmp_path / "src", 1),
                {"seed": float("nan")})


def test_publishing_into_a_registry_without_sha256sums_is_refused(root: Path,
                                                                  tmp_path: Path) -> None:
    (root / "SHA256SUMS").unlink()
    with pytest.raises(IntegrityError, match=r"missing.*no lenient mode"):
        publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert not (root / "v3").exists()


def test_weights_torch_refuses_are_refused_before_anything_is_written(root: Path,
                                                                     tmp_path: Path) -> None:
    """A zip archive that is not a torch archive passes the quick checks but not the load,
    which publish makes on the source, before it writes."""
    source = model_folder(tmp_path / "src3", 3)
    with zipfile.ZipFile(source / "weights.pt", "w") as archive:
        archive.writestr("notes.txt", "x" * 2000)
    sums_before = (root / "SHA256SUMS").read_bytes()
    with pytest.raises(IntegrityError, match=r"torch\.load\(weights_only=True\) refused it") \
            as caught:
        publish(root, "v3", source)
    assert caught.value.file == str(source / "weights.pt")
    assert not (root / "v3").exists()
    assert (root / "SHA256SUMS").read_bytes() == sums_before
    assert read_current(root) == "v2"
    assert verify(root) == []


def registry_state(root: Path) -> tuple[list[str], bytes, str | None]:
    return sorted(path.name for path in root.iterdir()), (root / "SHA256SUMS").read_bytes(), \
        read_current(root)


def test_a_version_whose_stored_copy_fails_its_load_is_undone(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load of the written copy (step 4) can still refuse it: a disk that returns other
    bytes than were written. Everything is taken back."""
    before = registry_state(root)

    def refuses(root: Path, version: str, schema: int) -> None:
        raise IntegrityError(str(root / version / "weights.pt"), "read back differently")

    monkeypatch.setattr(publish_module, "load_version", refuses)
    with pytest.raises(IntegrityError, match=r"read back differently"):
        publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert registry_state(root) == before


def test_a_failed_activation_is_undone(root: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap of `current` (step 5) fails after the link moved: the old link comes back."""
    before = registry_state(root)
    real_swap = publish_module.swap_symlink
    calls: list[str] = []

    def swap_then_fail(link: Path, target: str) -> None:
        calls.append(target)
        real_swap(link, target)
        if len(calls) == 1:
            raise OSError(errno.EIO, "Input/output error", str(link.parent))

    monkeypatch.setattr(publish_module, "swap_symlink", swap_then_fail)
    with pytest.raises(RegistryError, match=r"models: cannot publish: Input/output error"):
        publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert calls == ["v3", "v2"]
    assert registry_state(root) == before
    assert verify(root) == []


def test_scratch_left_by_an_interrupted_publish_is_cleared(root: Path, tmp_path: Path) -> None:
    (root / ".publish-v3").mkdir()
    (root / ".publish-v3" / "weights.pt").write_bytes(b"half")
    (root / ".current.tmp").symlink_to("v1")
    assert verify(root) == []  # scratch is never served nor checked
    publish(root, "v3", model_folder(tmp_path / "src3", 3))
    assert sorted(path.name for path in root.iterdir()) == [
        "SHA256SUMS", "current", "v1", "v2", "v3"]


def test_a_failed_first_publish_creates_no_registry(tmp_path: Path) -> None:
    source = model_folder(tmp_path / "src", 1)
    with zipfile.ZipFile(source / "weights.pt", "w") as archive:
        archive.writestr("notes.txt", "x" * 2000)
    with pytest.raises(IntegrityError):
        publish(tmp_path / "models", "v1", source)
    assert not (tmp_path / "models").exists()  # the source was refused before any write


def test_a_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "models").write_text("not a folder")
    with pytest.raises(RegistryError, match=r"not a folder"):
        publish(tmp_path / "models", "v1", model_folder(tmp_path / "src", 1))
