"""Mutated real files: every loader either loads them or raises InvalidInput, nothing else."""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagpilot.core.errors import InvalidInput
from dagpilot.workloads import load
from tests.conftest import FIXTURES, TRACES

Mutation = Callable[[bytes], bytes]


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    """Truncate, overwrite a slice with junk, drop or repeat a line, or swap two bytes."""
    kind = draw(st.sampled_from(["truncate", "junk", "drop-line", "repeat-line", "swap"]))
    where = draw(st.floats(0.0, 1.0))
    junk = draw(st.binary(min_size=1, max_size=12))

    def apply(data: bytes) -> bytes:
        at = int(where * max(len(data) - 1, 0))
        if kind == "truncate":
            return data[:at]
        if kind == "junk":
            return data[:at] + junk + data[at + len(junk):]
        lines = data.split(b"\n")
        line = int(where * max(len(lines) - 1, 0))
        if kind == "drop-line":
            return b"\n".join(lines[:line] + lines[line + 1:])
        if kind == "repeat-line":
            return b"\n".join([*lines[: line + 1], lines[line], *lines[line + 1:]])
        other = (at * 7919) % max(len(data), 1)
        swapped = bytearray(data)
        if swapped:
            swapped[at], swapped[other] = swapped[other], swapped[at]
        return bytes(swapped)

    return apply


def _text(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def _write(path: Path, data: bytes, gzipped: bool, cut_gzip: bool) -> None:
    if gzipped:
        packed = gzip.compress(data)
        path.write_bytes(packed[: len(packed) // 2] if cut_gzip else packed)
    else:
        path.write_bytes(data)


def _cws_sample() -> tuple[bytes, bytes]:
    """The first 150 rows of a real CWS trace and its process DAG."""
    lines = _text(TRACES / "cws-k8s-nextflow/traces/rnaseq.csv.gz").split(b"\n")
    return b"\n".join(lines[:150]) + b"\n", (
        TRACES / "cws-k8s-nextflow/process_dags/rnaseq.json").read_bytes()


def _tpch_sample() -> bytes:
    """Two queries of one input size from the real TPC-H file."""
    data = json.loads(_text(TRACES / "decima-tpch/tpch_decima.json.gz"))
    size = sorted(data)[0]
    queries = dict(sorted(data[size].items())[:2])
    return json.dumps({size: queries}).encode()


def _check(spec: str) -> None:
    try:
        load(spec)
    except InvalidInput as error:
        assert error.file, "InvalidInput must name the file"
        assert str(error)


FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(
    ("fmt", "source"),
    [("wfformat", "wfinstances/helloworld"),
     ("alibaba", "alibaba-v2018-dags/random_50_dags.csv.gz"),
     ("argo", "argo-examples-dags/argo_example_dags.json")],
)
@FUZZ
@given(mutation=mutations(), cut_gzip=st.booleans())
def test_real_files_mutated(fmt: str, source: str, mutation: Mutation, cut_gzip: bool) -> None:
    path = TRACES / source
    if path.is_dir():
        path = sorted(path.glob("*.json.gz"))[0]
    gzipped = path.suffix == ".gz"
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / path.name
        _write(target, mutation(_text(path)), gzipped, cut_gzip)
        _check(f"{fmt}:{target}")


@FUZZ
@given(mutation=mutations(), mutate_dag=st.booleans(), cut_gzip=st.booleans())
def test_cws_mutated(mutation: Mutation, mutate_dag: bool, cut_gzip: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "traces").mkdir()
        (root / "process_dags").mkdir()
        trace, dag = _cws_sample()
        _write(root / "traces/rnaseq.csv.gz", trace if mutate_dag else mutation(trace), True,
               cut_gzip and not mutate_dag)
        (root / "process_dags/rnaseq.json").write_bytes(mutation(dag) if mutate_dag else dag)
        _check(f"cws:{root}")


@FUZZ
@given(mutation=mutations(), cut_gzip=st.booleans())
def test_tpch_mutated(mutation: Mutation, cut_gzip: bool) -> None:
    sample = _tpch_sample()
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "tpch.json.gz"
        _write(target, mutation(sample), True, cut_gzip)
        _check(f"tpch:{target}")


@FUZZ
@given(mutation=mutations())
def test_argo_yaml_mutated(mutation: Mutation) -> None:
    fixtures = sorted((FIXTURES / "argo" / "valid").glob("*.yaml"))
    assert fixtures, "hand-written Argo fixtures are missing"
    with tempfile.TemporaryDirectory() as scratch:
        for fixture in fixtures[:4]:
            target = Path(scratch) / fixture.name
            target.write_bytes(mutation(fixture.read_bytes()))
            _check(f"argo:{target}")

