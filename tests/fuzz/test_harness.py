"""The fuzzing harness itself: outcomes are classified right, workers come back after a crash,
runs are reproducible, the reducer reduces, the corpus round-trips."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fuzz import corpus, minimize, structured
from fuzz.inputs import Case, materialise, wrapped
from fuzz.mutators import case_rng, mutate
from fuzz.pool import Limits, Result, Worker
from fuzz.targets import TARGETS

SYNTHETIC = "tests.fuzz.synthetic:make"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Worker:
    scratch = tmp_path_factory.mktemp("worker")
    with Worker(SYNTHETIC, scratch, Limits(timeout_s=3.0, memory_cap_bytes=512 << 20)) as started:
        yield started


def _run(worker: Worker, tmp_path: Path, text: str) -> Result:
    return worker.run(materialise(Case(text.encode(), "input.txt"), tmp_path / "case"))


@pytest.mark.parametrize(("word", "kind", "error_type"), [
    ("accept", "accepted", ""),
    ("refuse", "clean", ""),
    ("clean", "clean", ""),
    ("raise", "exception", "ValueError"),
    ("logged", "exception", "KeyError"),
    ("memory", "memory", "MemoryError"),
    ("hang", "hang", "in parse"),  # a hang is named by the function it loops in
    ("segv", "signal", "SIGSEGV"),
])
def test_outcomes_are_classified(worker: Worker, tmp_path: Path, word: str, kind: str,
                                 error_type: str) -> None:
    result = _run(worker, tmp_path, word)
    assert (result.kind, result.error_type) == (kind, error_type)
    assert result.failed == (kind not in ("accepted", "clean"))
    # whatever happened, the next case runs in a sound worker
    assert _run(worker, tmp_path, "clean").kind == "clean"


@pytest.mark.parametrize(("word", "message"), [
    ("hang", "used 1 s of CPU without answering"),  # the limit is CPU time: load is no hang
    ("block", "no answer within 10 s"),  # a case waiting without CPU: the wall-clock backstop
])
def test_a_hang_is_told_by_cpu_time_or_by_the_wall_clock(tmp_path: Path, word: str,
                                                          message: str) -> None:
    with Worker(SYNTHETIC, tmp_path / "w", Limits(timeout_s=1.0)) as fresh:
        result = _run(fresh, tmp_path, word)
    assert (result.kind, result.message) == ("hang", message)


def test_an_exception_is_located_in_its_source(worker: Worker, tmp_path: Path) -> None:
    result = _run(worker, tmp_path, "raise")
    assert result.where.startswith("synthetic.py:")
    assert result.line == 'raise ValueError("a traceback")'


@pytest.mark.parametrize("word", ["hang", "segv"])
def test_a_hang_or_a_crash_is_located_by_its_stack(worker: Worker, tmp_path: Path,
                                                    word: str) -> None:
    result = _run(worker, tmp_path, word)
    assert result.where.startswith("synthetic.py:"), result
    assert result.line in ("while True:", "pass", "os.kill(os.getpid(), signal.SIGSEGV)")


def test_raw_terminal_escapes_in_output_are_flagged(worker: Worker, tmp_path: Path) -> None:
    assert _run(worker, tmp_path, "accept").flags == ("control-chars",)


def test_a_worker_that_crashes_is_restarted(tmp_path: Path) -> None:
    with Worker(SYNTHETIC, tmp_path / "w", Limits(timeout_s=3.0)) as fresh:
        assert _run(fresh, tmp_path, "segv").kind == "signal"
        assert _run(fresh, tmp_path, "accept").kind == "accepted"
        assert fresh.starts == 2


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_case_n_is_the_same_case_every_time(name: str) -> None:
    target = TARGETS[name]
    seeds = target.seeds()
    first = [mutate(seeds[0], seeds, target.gzip, case_rng(7, name, i)) for i in range(20)]
    again = [mutate(seeds[0], seeds, target.gzip, case_rng(7, name, i)) for i in range(20)]
    assert first == again
    assert len({case.payload for case, _ in first}) > 10  # and the cases differ from each other


@pytest.mark.parametrize("syntax", ["json", "yaml", "toml"])
def test_structured_mutations_leave_no_placeholder(syntax: str) -> None:
    seed = {"json": b'{"a": [1, 2.5, "x"], "b": {"c": true}}',
            "yaml": b"a: [1, 2.5, x]\nb:\n  c: true\n",
            "toml": b'[a]\nn = 1\nx = "y"\n[b]\nc = true\n'}[syntax]
    mutated = [structured.mutate(seed, syntax, case_rng(0, syntax, i)) for i in range(200)]
    done = [result for result in mutated if result is not None]  # None: not for this syntax
    assert len(done) > 100
    assert not any(structured.PLACEHOLDER.encode() in data for data, _ in done)
    names = {name.split(" ")[0] for _, name in done}
    assert {"number", "drop", "string", "wrong-type", "deep"} <= names


def test_csv_mutations_change_structure() -> None:
    seed = b"a,b,c\n1,2,3\n4,5,6\n"
    names = {structured.mutate(seed, "csv", case_rng(0, "csv", i))[1]  # type: ignore[index]
             for i in range(200)}
    assert {"csv duplicate-column", "csv drop-column", "csv short-row"} <= names


def test_ddmin_finds_the_one_byte_that_matters() -> None:
    data = b"line one\nline two has the X in it\nline three\n"
    assert minimize.minimize(data, lambda candidate: b"X" in candidate) == b"X"


def test_json_is_reduced_as_a_tree() -> None:
    document = json.dumps({"keep": {"deep": [1, 2, {"bad": float("nan")}]},
                           "other": list(range(50)), "name": "x" * 100}, indent=1).encode()
    smallest = minimize.minimize(document, lambda candidate: b'"bad": NaN' in candidate.replace(
        b'":NaN', b'": NaN') and _parses(candidate), syntax="json")
    assert _parses(smallest)
    assert b"NaN" in smallest and len(smallest) <= len(b'{"":{"":[{"bad":NaN}]}}')


def _parses(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def test_what_fails_whatever_the_payload_minimises_to_nothing() -> None:
    assert minimize.minimize(b"a bomb's payload\n" * 100, lambda candidate: True) == b""


def test_ddmin_stops_at_its_budget() -> None:
    calls: list[bytes] = []
    minimize.minimize(bytes(range(200)), lambda candidate: calls.append(candidate) is not None,
                      tests=10)  # nothing can be removed: it would go on to single bytes
    assert len(calls) == 10


def test_gzip_wraps() -> None:
    assert gzip.decompress(wrapped(b"payload", "gzip")) == b"payload"
    with pytest.raises(EOFError):
        gzip.decompress(wrapped(b"payload" * 100, "gzip-truncated"))
    bomb = wrapped(b"{}", "bomb:2")
    assert len(bomb) < 64 << 10
    assert len(gzip.decompress(bomb)) == 2 + 2 * (16 << 20)


def test_corpus_round_trip(tmp_path: Path) -> None:
    case = Case(b"[[[", "traces/x.csv", "gzip", (("process_dags/x.json", "fixtures:a.json"),))
    result = Result("exception", "RecursionError", "dagpilot/x.py:3", "json.loads(data)", "deep")
    path = corpus.save(tmp_path, "cws", case, result, {"mutation": 4})
    assert path is not None and path.name.endswith(".csv")
    [saved] = corpus.load(tmp_path)
    assert (saved.target, saved.case) == ("cws", case)
    assert saved.note["triggered"]["where"] == "dagpilot/x.py:3"
    assert json.loads(saved.path.read_text())["found"] == {"mutation": 4}
