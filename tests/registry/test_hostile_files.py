"""Files whose bytes match SHA256SUMS but that no parser may be handed as they are (issue 14,
defect 6). Every path refuses them with an `IntegrityError` naming the file: loading, a reload
(which keeps the model it has), rollback, publish of a source holding one, and `verify`, which
reports exactly what serving refuses."""

from __future__ import annotations

import io
import json
import logging
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.core.errors import IntegrityError
from dagpilot.registry import (
    ModelHandle,
    list_versions,
    load_current,
    load_version,
    publish,
    rollback,
    verify,
)
from dagpilot.registry.limits import MAX_JSON_BYTES, MAX_JSON_DEPTH
from tests.registry.builders import (
    SCHEMA,
    deflated_weights,
    install,
    model_folder,
    nested_json,
    npz_bytes,
    npz_with_bad_crc,
    npz_with_corrupt_deflate,
    npz_with_method,
    point_current,
)


def npz_of(members: dict[str, bytes]) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return stream.getvalue()


def npy_claiming(shape: tuple[int, ...], body: bytes) -> bytes:
    """An .npy member whose header claims SHAPE of float64 over BODY."""
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": "<f8", "fortran_order": False,
                                                  "shape": shape})
    return stream.getvalue() + body


def object_npz() -> bytes:
    stream = io.BytesIO()
    np.save(stream, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return npz_of({"mean.npy": stream.getvalue()})


DEEP_CONFIG = ('{"feature_schema_version": 3, "layers": ' + "[" * 599 + "]" * 599 + "}").encode()

# case: (file name, its bytes, what the refusal says)
HOSTILE = {
    "600-deep normaliser.json": ("normaliser.json", nested_json(600).encode(),
                                 r"nested deeper than 32 levels"),
    "600-deep config.json": ("config.json", DEEP_CONFIG, r"nested deeper than 32 levels"),
    "100,000-deep metadata.json": ("metadata.json", b"[" * 100_000 + b"]" * 100_000,
                                   r"nested deeper than 32 levels"),
    "a 5,000-digit integer": ("metadata.json", b'{"seed": ' + b"7" * 5000 + b"}",
                              r"a number too long to read \(integers are limited to 4300 "
                              r"digits\)"),
    "NaN": ("normaliser.json", b'{"mean": [NaN], "std": [1.0]}',
            r"not standard JSON: NaN is not a JSON number"),
    "1e400": ("normaliser.json", b'{"mean": [1e400], "std": [1.0]}', r"1e400 is beyond the "
              r"range of a double"),
    "a schema version of 10**30": ("config.json", b'{"feature_schema_version": 1' + b"0" * 30
                                   + b"}", r"feature_schema_version must be from 0 to "
                                   r"2147483647, found a larger number"),
    "a schema version that is a long array": ("config.json", b'{"feature_schema_version": ['
                                              + b"1, " * 10_000 + b"1]}",
                                              r"must be an integer, found an array of 10001$"),
    "not UTF-8": ("config.json", b'{"feature_schema_version": 3, "x": "\xff"}',
                  r"not UTF-8 text: 'utf-8' codec can't decode"),
    "a JSON file over the size limit": ("normaliser.json",
                                        b'{"x": "' + b"a" * MAX_JSON_BYTES + b'"}',
                                        rf"too large: {MAX_JSON_BYTES + 9} bytes, a JSON "
                                        rf"file here holds at most {MAX_JSON_BYTES}"),
    "npz compression method 99": ("normaliser.npz", npz_with_method(99),
                                  r"member 'mean\.npy': compression method 99; numpy writes "
                                  r"only stored or deflated"),
    "npz corrupt deflate stream": ("normaliser.npz", npz_with_corrupt_deflate(),
                                   r"not a readable npz archive: Error -3 while decompressing "
                                   r"data: invalid block type"),
    "npz bad CRC": ("normaliser.npz", npz_with_bad_crc(),
                    r"not a readable npz archive: Bad CRC-32 for file 'mean\.npy'"),
    "npz object array": ("normaliser.npz", object_npz(),
                         r"array 'mean': dtype object: objects would need pickle"),
    "npz header claiming 8 TB": ("normaliser.npz",
                                 npz_of({"mean.npy": npy_claiming((10**12,), b"\x00" * 16)}),
                                 r"array 'mean': the header says \(1000000000000,\) of float64, "
                                 r"but 16 bytes follow"),
    "npz of 300 members": ("normaliser.npz",
                           npz_of({f"m{index}.npy": npy_claiming((1,), b"\x00" * 8)
                                   for index in range(300)}),
                           r"more than 256 members"),
    "weights with deflated members": ("weights.pt", deflated_weights(),
                                      r"member '.*' is compressed, but torch\.save stores "
                                      r"every member as it is"),
    "npz member not an array": ("normaliser.npz", npz_of({"notes.txt": b"x" * 100}),
                                r"member 'notes\.txt': an npz holds distinct NAME\.npy arrays"),
}
CASES = pytest.mark.parametrize("case", sorted(HOSTILE))


def damage(root: Path, case: str) -> Path:
    name, data, _ = HOSTILE[case]
    return install(root, "v2", name, data)


@CASES
def test_every_reader_refuses_it_alike(root: Path, case: str) -> None:
    rollback(root)  # v1 serves; v2 gets the file
    file = damage(root, case)
    with pytest.raises(IntegrityError, match=HOSTILE[case][2]) as caught:
        load_version(root, "v2", SCHEMA)  # what a server starting on v2 would do
    assert caught.value.file == str(file)
    refusal = (caught.value.file, caught.value.message)
    assert [(problem.file, problem.message) for problem in verify(root)] == [refusal]
    with pytest.raises(IntegrityError) as caught:
        rollback(root, "v2")
    assert (caught.value.file, caught.value.message) == refusal
    assert load_current(root, SCHEMA).version == "v1"  # current stayed
    result = CliRunner().invoke(app, ["models", "verify", "--root", str(root)],
                                catch_exceptions=False)
    assert result.exit_code == 1
    assert "FAILED" in result.output and "1 problem(s)" in result.output
    result = CliRunner().invoke(app, ["models", "list", "--root", str(root), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0  # listing informs: an unreadable file lists as no metadata
    assert sorted(row["version"] for row in json.loads(result.output)) == ["v1", "v2"]


@CASES
def test_a_reload_keeps_the_previous_model_and_counts_the_failure(
        root: Path, case: str, caplog: pytest.LogCaptureFixture) -> None:
    rollback(root)  # serving v1
    handle = ModelHandle.open(root, SCHEMA)
    serving = handle.model
    file = damage(root, case)
    point_current(root, "v2")
    with caplog.at_level(logging.WARNING, logger="dagpilot.registry.handle"):
        outcome = handle.reload()
    assert outcome.serving == "v1" and not outcome.changed
    assert outcome.error is not None and outcome.error.startswith(f"{file}: ")
    assert handle.model is serving
    assert handle.failed_reloads == 1
    assert "kept model v1 in service (failed reload 1)" in caplog.text


@CASES
def test_a_source_holding_it_is_refused_before_anything_is_written(tmp_path: Path,
                                                                   case: str) -> None:
    name, data, message = HOSTILE[case]
    source = model_folder(tmp_path / "src", 1)
    for old in source.glob("normaliser.*") if name.startswith("normaliser.") else []:
        old.unlink()
    (source / name).write_bytes(data)
    with pytest.raises(IntegrityError, match=message) as caught:
        publish(tmp_path / "models", "v1", source)
    assert caught.value.file == str(source / name)
    assert not (tmp_path / "models").exists()


def test_nesting_up_to_the_limit_is_served(root: Path) -> None:
    install(root, "v2", "normaliser.json", nested_json(MAX_JSON_DEPTH).encode())
    assert verify(root) == []
    assert load_current(root, SCHEMA).version == "v2"
    install(root, "v2", "normaliser.json", nested_json(MAX_JSON_DEPTH + 1).encode())
    with pytest.raises(IntegrityError, match=r"nested deeper than 32"):
        load_current(root, SCHEMA)


def test_a_compressed_npz_and_odd_array_layouts_are_served(root: Path) -> None:
    stream = io.BytesIO()
    np.savez_compressed(stream, mean=np.asfortranarray(np.arange(6.0).reshape(2, 3)),
                        std=np.array(2.5), empty=np.zeros(0), pairs=np.zeros(2, dtype="<f4,<i8"))
    install(root, "v2", "normaliser.npz", stream.getvalue())
    assert verify(root) == []
    normaliser = load_current(root, SCHEMA).normaliser
    assert normaliser["mean"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert normaliser["std"].shape == () and float(normaliser["std"]) == 2.5
    assert normaliser["empty"].shape == (0,) and normaliser["pairs"].shape == (2,)
    assert not any(array.flags.writeable for array in normaliser.values())


def test_npz_beyond_the_decompressed_limit_is_refused(root: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked on the sizes the archive declares, before inflating (zipfile never inflates a
    member past its declared size)."""
    install(root, "v2", "normaliser.npz", npz_bytes(compressed=True))
    monkeypatch.setattr("dagpilot.registry.npz.MAX_NPZ_ARRAY_BYTES", 500)
    with pytest.raises(IntegrityError, match=r"\d+ bytes of arrays once decompressed, the "
                                             r"limit is 500"):
        load_current(root, SCHEMA)


@pytest.mark.parametrize("unforeseen", [RecursionError("deep"), MemoryError(),
                                        ZeroDivisionError("a defect")])
def test_a_reload_survives_what_no_check_foresaw(root: Path, unforeseen: Exception,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    handle = ModelHandle.open(root, SCHEMA)
    point_current(root, "v1")

    def raises(root: Path, schema: int) -> None:
        raise unforeseen

    monkeypatch.setattr("dagpilot.registry.handle.load_current", raises)
    outcome = handle.reload()
    assert outcome.serving == "v2" and not outcome.changed
    assert outcome.error is not None
    assert outcome.error.startswith(f"unexpected {type(unforeseen).__name__}")
    assert handle.failed_reloads == 1
    assert caplog.records[-1].exc_info is not None  # a defect: its traceback is logged
    assert list_versions(root)  # nothing else disturbed
