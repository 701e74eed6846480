"""What each target runs on one input, in the worker: the `dagpilot` commands a user would run
on that file (in process, through the CLI's own typer app), and for the model registry the
serving calls too. A parser factory takes a private state folder and returns the parser.

A parser returns True when the input was accepted, False when the command refused it on
purpose without an exception (the validator's exit 1); a DagpilotError is a clean error; any
other exception, including ContractBroken, is a failure.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from fuzz.sources import FIXTURES, MODELS

Parser = Callable[[Path], bool]
METRICS_FIXTURE = FIXTURES / "validate" / "metrics" / "node_cpu_gap.csv"


class ContractBroken(Exception):
    """A command broke its contract without raising: an exit code it does not document, a
    reload that raised, `models verify` passing a version that serving refuses."""


def cli(*args: str | Path) -> int:
    """`dagpilot ARGS...` in this process; the exit code (a DagpilotError propagates, as it
    does to the `error:` line of `dagpilot.cli.main`)."""
    code = _command().main([str(arg) for arg in args], standalone_mode=False,
                           prog_name="dagpilot")
    return 0 if code is None else int(code)


@functools.cache
def _command() -> Any:
    """The CLI's click command, built once (typer rebuilds it on every call: 60 ms)."""
    import typer  # noqa: PLC0415

    from dagpilot.cli import app  # noqa: PLC0415

    return typer.main.get_command(app)


def expect(code: int, allowed: Collection[int], command: str) -> int:
    if code not in allowed:
        raise ContractBroken(f"`dagpilot {command}` exited {code}")
    return code


def _workload(kind: str) -> Parser:
    _command()  # import everything now: the first case must not pay for it in its time limit
    def parse(path: Path) -> bool:
        spec = f"{kind}:{path}"
        expect(cli("workloads", "show", spec, "--json"), (0,), "workloads show --json")
        expect(cli("workloads", "show", spec), (0,), "workloads show")
        return True
    return parse


def _cluster(kind: str, *suffixes: str) -> Parser:
    _command()
    def parse(path: Path) -> bool:
        expect(cli("clusters", "show", f"{kind}:{path}", "--json"), (0,), "clusters show --json")
        expect(cli("clusters", "show", f"{kind}:{path}"), (0,), "clusters show")
        for suffix in suffixes:
            expect(cli("clusters", "show", f"{kind}:{path}{suffix}"), (0,), "clusters show")
        return True
    return parse


def wfformat(state: Path) -> Parser:
    return _workload("wfformat")


def argo(state: Path) -> Parser:
    return _workload("argo")


def alibaba(state: Path) -> Parser:
    return _workload("alibaba")


def tpch(state: Path) -> Parser:
    return _workload("tpch")


def pool(state: Path) -> Parser:
    return _workload("pool")


def cws_trace(state: Path) -> Parser:
    return _workload("cws")


def cws_dag(state: Path) -> Parser:
    """The mutated process DAG sits in DIR/process_dags/: load the folder form `cws:DIR`."""
    show = _workload("cws")
    return lambda path: show(path.parent.parent)


def validate(state: Path) -> Parser:
    _command()
    def parse(path: Path) -> bool:
        # 0 valid, 1 invalid, 2 could not check (e.g. a CWS process DAG without its trace)
        code = expect(cli("validate", path, "--json"), (0, 1, 2), "validate --json")
        expect(cli("validate", path), (code,), "validate (again, as text)")
        return code == 0
    return parse


def cluster_yaml(state: Path) -> Parser:
    return _cluster("yaml")


def alibaba_gpu(state: Path) -> Parser:
    return _cluster("alibaba-gpu", ":2")


def cws_cluster(state: Path) -> Parser:
    return _cluster("cws")


def settings(state: Path) -> Parser:
    """The settings file through a workload, the validator, and a tiny benchmark (both the
    native kube-default and a Python scheduler), which is where most settings are used."""
    from dagpilot.bench.harness import BenchConfig, run_benchmark  # noqa: PLC0415
    from dagpilot.core.config import load_settings  # noqa: PLC0415

    _command()
    def parse(path: Path) -> bool:
        expect(cli("workloads", "show", "builtin:mix:2", "--settings", path), (0,),
               "workloads show --settings")
        expect(cli("validate", METRICS_FIXTURE, "--settings", path), (0, 1), "validate --settings")
        config = BenchConfig(workloads=("builtin:mix:2",), cluster="builtin:small",
                             schedulers=("kube-default", "fifo"), seeds=(0,),
                             out_dir=state / "bench", plots=False)
        run_benchmark(config, load_settings(path))
        return True
    return parse


def registry_config(state: Path) -> Parser:
    return _registry(state, "config.json")


def registry_normaliser(state: Path) -> Parser:
    return _registry(state, "normaliser.json")


def registry_metadata(state: Path) -> Parser:
    return _registry(state, "metadata.json")


def registry_npz(state: Path) -> Parser:
    return _registry(state, "normaliser.npz")


FUZZED = "fuzzed"


def _registry(state: Path, name: str) -> Parser:
    """A registry made here from a copy of the shipped current version plus a version
    `fuzzed` whose file `name` is the input, listed in SHA256SUMS with its true checksum (so
    the checks behind the checksum are what is fuzzed). Each input: verify, list, a reload
    from the good version (which must never raise), load_current, publish, rollback."""
    from dagpilot import registry  # noqa: PLC0415
    from dagpilot.core.errors import DagpilotError  # noqa: PLC0415
    from dagpilot.state import FEATURE_SCHEMA_VERSION as SCHEMA  # noqa: PLC0415

    good = os.readlink(MODELS / "current")
    root = state / "registry"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(MODELS / good, root / good)
    shutil.copytree(MODELS / good, root / FUZZED)
    if name == "normaliser.npz":
        (root / FUZZED / "normaliser.json").unlink()
    _write_sums(root)
    _point_current(root, good)
    serving = registry.load_current(root, SCHEMA)  # imports torch once, here
    _command()

    def parse(path: Path) -> bool:
        (root / FUZZED / name).write_bytes(path.read_bytes())
        _write_sums(root)
        _point_current(root, FUZZED)
        verified = expect(cli("models", "verify", "--root", root), (0, 1), "models verify")
        expect(cli("models", "list", "--root", root, "--json"), (0,), "models list")
        try:
            registry.ModelHandle(root, SCHEMA, serving).reload()
        except BaseException as error:
            raise ContractBroken(f"reload raised {type(error).__name__}") from error
        try:
            registry.load_current(root, SCHEMA)
        except registry.SchemaMismatch:
            raise  # verify checks integrity, not which features this code builds
        except DagpilotError as error:
            if verified == 0:
                raise ContractBroken("models verify passed a version load_current refuses: "
                                     f"{error}") from error
            raise
        shutil.rmtree(state / "published", ignore_errors=True)
        expect(cli("models", "publish", root / FUZZED, "--root", state / "published",
                   "--version", "copy"), (0,), "models publish")
        expect(cli("models", "rollback", "--root", root, "--to", good), (0,), "models rollback")
        return True
    return parse


def _write_sums(root: Path) -> None:
    import hashlib  # noqa: PLC0415

    lines = sorted(f"{hashlib.sha256(file.read_bytes()).hexdigest()}  {version.name}/{file.name}"
                   for version in root.iterdir() if version.is_dir() and not version.is_symlink()
                   for file in version.iterdir())
    (root / "SHA256SUMS").write_text("\n".join(lines) + "\n")


def _point_current(root: Path, version: str) -> None:
    link = root / "current.new"
    link.unlink(missing_ok=True)
    link.symlink_to(version)
    link.replace(root / "current")


def argo_history(state: Path) -> Parser:
    """The mutated `<stem>.history.json` beside its manifest `<stem>.yaml`."""
    show = _workload("argo")
    return lambda path: show(path.with_name(path.name.removesuffix(".history.json") + ".yaml"))


def extender_args(state: Path) -> Parser:
    """A kube-scheduler extender's filter and prioritize calls on the mutated ExtenderArgs,
    over builtin:small with the shipped model (bad input is an InvalidInput, never a crash)."""
    del state
    from dagpilot.agent import load_scheduler  # noqa: PLC0415 (torch, in the worker only)
    from dagpilot.clusters import load_cluster  # noqa: PLC0415
    from dagpilot.core.snapshot import ClusterSnapshot  # noqa: PLC0415
    from dagpilot.serve.extender import Extender  # noqa: PLC0415

    extender = Extender(ClusterSnapshot.of(load_cluster("builtin:small"), ()),
                        load_scheduler(MODELS, explain=False).agent.rank)

    def parse(path: Path) -> bool:
        body = path.read_bytes()
        extender.filter(body)
        extender.prioritize(body)
        return True
    return parse
