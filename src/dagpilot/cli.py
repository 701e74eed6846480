"""`dagpilot ...`: the command line (typer + rich). The only module that prints."""

from __future__ import annotations

import functools
import json
import logging
import shlex
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from dagpilot import registry
from dagpilot.bench import fidelity as fidelity_check
from dagpilot.bench import harness, main_job
from dagpilot.bench.cws_replay import LATE_S
from dagpilot.bench.feasibility import check_fits
from dagpilot.bench.offered_load import cpu_equivalent_cores
from dagpilot.cli_canary import canary_app
from dagpilot.cli_json import print_json
from dagpilot.clusters import load_cluster
from dagpilot.clusters import summary as cluster_summary
from dagpilot.core.config import Settings, load_settings
from dagpilot.core.cpu_list import parse_cpus
from dagpilot.core.echo import printable
from dagpilot.core.errors import DagpilotError, SpecError
from dagpilot.core.units import duration_s
from dagpilot.online.command import online_app
from dagpilot.state import FEATURE_SCHEMA_VERSION
from dagpilot.workloads import load
from dagpilot.workloads import summary as workload_summary
from dagpilot.workloads import validate as validator
from dagpilot.workloads.arrivals import ArrivalSpec

app = typer.Typer(help="Physics-aware DRL scheduling of DAG workflows on Kubernetes.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
workloads_app = typer.Typer(help="Inspect workloads (traces and built-in generators).",
                            no_args_is_help=True)
clusters_app = typer.Typer(help="Inspect cluster inventories.", no_args_is_help=True)
app.add_typer(workloads_app, name="workloads")
app.add_typer(clusters_app, name="clusters")
models_app = typer.Typer(help="The model registry: publish, verify, list, roll back.",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")
sandbox_app = typer.Typer(help="A real Kubernetes control plane on loopback (kube-apiserver, "
                          "kube-scheduler, etcd, kwok, Argo, Prometheus).", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")
live_app = typer.Typer(help="A live cluster as dagpilot sees it (API server and Prometheus).",
                       no_args_is_help=True)
app.add_typer(live_app, name="live")
serve_app = typer.Typer(help="Serve dagpilot to a live cluster (docs/SERVING.md).",
                        no_args_is_help=True)
app.add_typer(serve_app, name="serve")
shadow_app = typer.Typer(help="Shadow mode's journal: how dagpilot compares with the scheduler "
                         "it shadowed (docs/SERVING.md).", no_args_is_help=True)
app.add_typer(shadow_app, name="shadow")
ops_app = typer.Typer(help="The operator's tools: Prometheus configuration, node diagnosis, "
                      "release checks, canary rollout.", no_args_is_help=True)
app.add_typer(ops_app, name="ops")
ops_app.add_typer(canary_app, name="canary")
app.add_typer(online_app, name="online")
docs_app = typer.Typer(help="Documentation generated from the code.", no_args_is_help=True)
app.add_typer(docs_app, name="docs")

out = Console()
err = Console(stderr=True)

BUILTIN_WORKLOAD = "builtin:mix"
BUILTIN_CLUSTER = "builtin:default"

SettingsOption = Annotated[
    Path | None, typer.Option("--settings", help="TOML file overriding default settings.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _settings(path: Path | None) -> Settings:
    return load_settings(path)


@app.callback()
def _root(verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@app.command()
def run(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for summary.json and plots.")] = (
        main_job.OUT_DIR),
    settings: SettingsOption = None,
) -> None:
    """The main job: the built-in workload mix (Poisson arrivals at load 0.8 with a 17x burst in
    the middle) on the built-in cluster, every baseline and the shipped model (`dagpilot`), a
    few seeds; table and plots in --out."""
    _run_benchmark(main_job.main_job(out_dir), _settings(settings))


@app.command()
def bench(
    *,
    workloads: Annotated[list[str], typer.Option(
        "--workload", help="Workload spec, FORMAT:PATH or builtin:NAME (repeatable).")],
    cluster: Annotated[str, typer.Option(help="Cluster spec, e.g. builtin:default.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for summary.json and plots.")],
    schedulers: Annotated[str, typer.Option(help="Comma-separated scheduler names.")] = ",".join(
        main_job.BASELINES),
    seeds: Annotated[int, typer.Option(min=1, help="Number of seeds: 0 .. N-1.")] = 3,
    arrival: Annotated[str, typer.Option(help="trace (recorded times) or poisson.")] = "trace",
    load_factor: Annotated[float, typer.Option(
        "--load", help="Poisson arrivals: share of the busiest resource asked for.")] = 0.8,
    bursts: Annotated[list[str] | None, typer.Option(
        "--burst", help="FACTORx@START+LENGTH, e.g. 17x@3600s+1800s (repeatable).")] = None,
    physics: Annotated[str, typer.Option(help="on or off: the physical effects.")] = "on",
    horizon: Annotated[str | None, typer.Option(
        help="Jobs arrive until this time (seconds or 2h); the runs then drain.")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Processes running runs side by side.")] = 1,
    settings: SettingsOption = None,
) -> None:
    """Run schedulers on the simulator, paired over seeds; write DIR/summary.json and plots."""
    config = harness.BenchConfig(
        workloads=tuple(workloads), cluster=cluster,
        schedulers=tuple(name.strip() for name in schedulers.split(",") if name.strip()),
        seeds=tuple(range(seeds)), out_dir=out_dir,
        arrival=ArrivalSpec.from_options(arrival, load_factor, bursts or ()),
        physics=_on_off(physics), horizon_s=_horizon(horizon), workers=workers)
    _run_benchmark(config, _settings(settings))


def _on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise SpecError(text, "--physics must be on or off")
    return text == "on"


def _horizon(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return duration_s(text)
    except ValueError as error:
        raise SpecError(text, f"bad --horizon: {error}") from error


def _run_benchmark(config: harness.BenchConfig, settings: Settings) -> None:
    """Run with a progress bar, then print the table; Ctrl-C prints what finished."""
    columns = (SpinnerColumn(), TextColumn("{task.description:<28}"), BarColumn(),
               TaskProgressColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    try:
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("preparing", total=1.0)
            summary = harness.run_benchmark(
                config, settings,
                lambda done, label: bar.update(task, completed=done, description=label))
    except harness.Interrupted as stop:
        out.print(_bench_table(stop.summary.document))
        err.print(f"[yellow]interrupted:[/] {escape(str(stop))}")
        raise typer.Exit(130) from None
    out.print(_bench_table(summary.document))
    out.print(f"summary: {escape(str(summary.path))}")
    for plot in summary.plots:
        out.print(f"plot:    {escape(str(plot))}")


def _bench_table(document: dict[str, Any]) -> Table:
    """Means over seeds per scheduler; ratios are paired per seed (mean ± 95 % half-width).

    A narrow terminal drops the columns marked optional rather than squeeze every column.
    """
    figures = document["schedulers"]
    ratios = document["ratios"]
    reference = "kube-default" if "kube-default" in figures else next(iter(figures), "")

    def versus(name: str, row: dict[str, Any]) -> str:
        entry = ratios.get(f"{name}/{reference}", {}).get("avg_jct")
        return _interval(entry) if entry else "-"

    columns: list[tuple[str, Callable[[str, dict[str, Any]], str], bool]] = [
        ("avg\nJCT", lambda _, row: _duration(row["avg_jct_s"]), False),
        ("p95\nJCT", lambda _, row: _duration(row["p95_jct_s"]), True),
        ("make-\nspan", lambda _, row: _duration(row["makespan_s"]), False),
        ("slow-\ndown", lambda _, row: f"{row['avg_slowdown']:.2f}", False),
        ("JCT ÷\nref", versus, False),
        ("JCT ÷\nbound", lambda _, row: f"{row['avg_jct_to_bound']:.2f}", False),
        ("span ÷\nbound", lambda _, row: f"{row['makespan_to_bound']:.2f}", True),
        ("failed\njobs", lambda _, row: _count(row["unfinished_jobs"]), False),
        ("OOM\nkills", lambda _, row: _count(row["oom_kills"]), True),
        ("peak\nbacklog", lambda _, row: _count(row["peak_backlog"]), False),
        ("drain", lambda _, row: _duration(row["drain_s"]), False),
    ]
    shown = [column for column in columns if out.width >= 100 or not column[2]]
    table = Table(title=f"{', '.join(document['workloads'])} on {document['cluster']}: "
                        f"{len(document['seeds'])} seeds, physics {document['physics']}"
                        + (" (interrupted)" if document.get("interrupted") else ""),
                  caption=f"means over seeds; ref: {reference}, ratios paired per seed ± 95 % "
                          "CI; bound: the lower bound; failed: failed or unfinished jobs",
                  box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), show_edge=False)
    table.add_column("scheduler", no_wrap=True)
    for header, _, _ in shown:
        table.add_column(escape(header), justify="right", no_wrap=True)
    for name, row in figures.items():
        table.add_row(escape(name), *(cell(name, row) for _, cell, _ in shown))
    bound = document["lower_bound"]
    cells = {"avg\nJCT": _duration(bound["avg_jct_s"]),
             "make-\nspan": _duration(bound["makespan_s"])}
    table.add_row("[dim]lower bound[/]", *(cells.get(header, "") for header, _, _ in shown))
    return table


def _count(mean: float) -> str:
    """A mean of counts over seeds: whole when it is whole."""
    return f"{mean:.0f}" if float(mean).is_integer() else f"{mean:.1f}"


def _interval(entry: dict[str, Any]) -> str:
    low, high = entry["ci95"]
    half = (high - low) / 2
    return f"{entry['mean']:.2f}±{half:.2f}" if half > 0 else f"{entry['mean']:.2f}"


def _duration(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 120:
        return f"{seconds / 60:.0f}m"
    return f"{seconds:.0f}s"


@app.command()
def fidelity(
    *,
    cws_dir: Annotated[Path, typer.Option(
        "--cws", help="CWS folder: traces/, process_dags/, runs.csv, cluster.json.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for fidelity.json.")],
    workflows: Annotated[str | None, typer.Option(
        help="Comma-separated pipelines (default: every trace in the folder).")] = None,
    strategies: Annotated[str | None, typer.Option(
        help="Comma-separated strategies as the traces name them, e.g. original.")] = None,
    reps: Annotated[str | None, typer.Option(help="Comma-separated repetitions, e.g. 1,2.")] = (
        None),
    cluster: Annotated[str | None, typer.Option(
        help="Cluster spec (default: cws:DIR, the folder's cluster.json).")] = None,
    repair: Annotated[bool, typer.Option(
        "--repair/--no-repair", help="Give late tasks their releasing parents (DAG repair).")] = (
            True),
    seed: Annotated[int, typer.Option(help="Simulator seed of every replay.")] = 0,
    workers: Annotated[int | None, typer.Option(
        min=1, help="Processes replaying runs side by side (default: every usable core).")] = (
            None),
    settings: SettingsOption = None,
) -> None:
    """Replay every recorded CWS Nextflow run with its strategy and compare makespans; write
    DIR/fidelity.json (relative errors, Spearman per pipeline) and print a table."""
    loaded = _settings(settings)
    config = fidelity_check.FidelityConfig(
        cws_dir=cws_dir, out_dir=out_dir, cluster=cluster, workflows=_names(workflows),
        strategies=_names(strategies), reps=_numbers(reps),
        seed=seed, late_s=LATE_S if repair else None,
        workers=workers or main_job.available_cores())
    columns = (SpinnerColumn(), TextColumn("{task.description:<28}"), BarColumn(),
               TaskProgressColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    try:
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("preparing", total=1.0)
            report = fidelity_check.run_fidelity(
                config, loaded.sim, loaded.loaders,
                lambda done, label: bar.update(task, completed=done, description=label))
    except fidelity_check.FidelityInterrupted as stop:
        out.print(_fidelity_table(stop.report.document))
        err.print(f"[yellow]interrupted:[/] {escape(str(stop))}")
        raise typer.Exit(130) from None
    out.print(_fidelity_table(report.document))
    out.print(f"fidelity: {escape(str(report.path))}")


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def _numbers(text: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(name) for name in _names(text))
    except ValueError:
        raise SpecError(text or "", "expected comma-separated whole numbers") from None


def _fidelity_table(document: dict[str, Any]) -> Table:
    """Per pipeline: median |relative error| of the original and of all runs, the mean error
    (its sign says which way the simulator leans) and the Spearman rank correlation."""
    summary = document["summary"]
    medians = summary["median_abs_rel_error"]
    held_out = set(summary["held_out"]["workflows"])
    table = Table(title=f"fidelity: {summary['runs']} recorded runs replayed"
                        + (" (interrupted)" if document.get("interrupted") else ""),
                  caption="|error| = |simulated - recorded| / recorded makespan; Spearman: "
                          "strategies ordered by mean recorded vs simulated makespan",
                  box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), show_edge=False)
    for header in ("pipeline", "set", "runs", "median |error|\noriginal", "median |error|\nall",
                   "Spearman"):
        table.add_column(header, justify="left" if header in ("pipeline", "set") else "right")
    for workflow, figures in medians["by_workflow"].items():
        runs = sum(1 for run in document["runs"] if run["workflow"] == workflow)
        table.add_row(escape(workflow), "held out" if workflow in held_out else "calibration",
                      str(runs), _share(figures["original"]), _share(figures["all"]),
                      _rho(summary["spearman"].get(workflow)))
    for name, part in (("calibration", summary["calibration"]),
                       ("held out", summary["held_out"])):
        if part["workflows"]:
            figures = part["median_abs_rel_error"]
            table.add_row(f"[dim]{name}[/]", "", "", _share(figures["original"]),
                          _share(figures["all"]), "")
    table.add_row("[bold]all[/]", "", str(summary["runs"]), _share(medians["original"]),
                  _share(medians["all"]), "")
    return table


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _rho(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


@app.command("validate")
def validate_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to check.")],
    settings: SettingsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check training data: DAG integrity, field sanity, resource conservation, time continuity.

    Exits 0 when every file is valid, 1 when any is not, and 2 when something could not be read
    (a folder that cannot be listed, a FIFO, a broken link, nothing to check).
    """
    loaded = _settings(settings)
    report = validator.validate_paths(paths, loaded.validator, loaded.loaders)
    if as_json:
        print_json(validator.report_json(report))
    else:
        # plain lines, one write: rich lays each out (12 s of CPU for 44,000 findings)
        problems = (*report.unread, *report.violations)  # names come from folders
        sys.stdout.write("".join(f"{printable(str(problem))}\n" for problem in problems))
        unread = f", {len(report.unread)} could not be read" if report.unread else ""
        out.print(f"{report.files_checked} files checked, {len(report.skipped)} skipped, "
                  f"{len(report.violations)} violations{unread}")
    raise typer.Exit(report.exit_code)


@workloads_app.command("show")
def workloads_show(spec: str, settings: SettingsOption = None, as_json: JsonOption = False) -> None:
    """Jobs, tasks, critical path and total work of a workload spec."""
    _show_workload(spec, load(spec, _settings(settings).loaders), as_json)


@clusters_app.command("show")
def clusters_show(spec: str, settings: SettingsOption = None, as_json: JsonOption = False) -> None:
    """Nodes, capacity, topology and GPUs of a cluster spec."""
    _show_cluster(load_cluster(spec, _settings(settings).loaders), as_json)


def _show_workload(spec: str, jobs: list[Any], as_json: bool) -> None:
    figures = workload_summary.summarize(jobs)
    if as_json:
        print_json(figures)
        return
    table = Table(title=f"workload {escape(printable(spec))}")
    for column in ("jobs", "tasks", "pods", "critical path p50 s", "critical path max s",
                   "total work core-h"):
        table.add_column(column, justify="right")
    path = figures["critical_path_s"]
    table.add_row(str(figures["jobs"]), str(figures["tasks"]), str(figures["pods"]),
                  f"{path['p50']:.1f}", f"{path['max']:.1f}",
                  f"{figures['total_work_core_s'] / 3600:.1f}")
    out.print(table)


def _show_cluster(cluster: Any, as_json: bool) -> None:
    figures = cluster_summary.summarize(cluster)
    if as_json:
        print_json({**figures, "groups": cluster_summary.node_groups(cluster)})
        return
    table = Table(title=f"cluster {escape(printable(cluster.name))}: {figures['nodes']} nodes, "
                        f"{figures['cpu']:.0f} CPUs, {figures['memory_bytes'] / 2**30:.0f} GiB, "
                        f"{figures['gpus']} GPUs, {figures['racks']} racks")
    for column in ("nodes", "CPU", "memory GiB", "GPUs", "GPU model", "disk"):
        table.add_column(column, justify="right")
    for group in cluster_summary.node_groups(cluster):
        table.add_row(str(group["count"]), f"{group['cpu']:g}",
                      f"{group['memory_bytes'] / 2**30:.0f}", str(group["gpus"]),
                      escape(printable(group["gpu_model"])) or "-", group["disk"])
    out.print(table)


RootOption = Annotated[Path, typer.Option(
    "--root", help="Registry folder: version folders, SHA256SUMS, the current link.")]


@models_app.command("publish")
def models_publish(
    source: Annotated[Path, typer.Argument(
        help="Folder with weights.pt, normaliser.json or .npz, config.json [, metadata.json].")],
    root: RootOption,
    version: Annotated[str, typer.Option("--version", help="Name of the new version.")],
    sets: Annotated[list[str] | None, typer.Option(
        "--set", help="Metadata KEY=VALUE (VALUE parsed as JSON if it is); repeatable.")] = None,
    activate: Annotated[bool, typer.Option(
        "--activate/--no-activate", help="Make the new version current.")] = True,
) -> None:
    """Store a new version: written completely, checksummed, verified, then made current."""
    info = registry.publish(root, version, source, _metadata_pairs(sets or []),
                            activate=activate)
    state = "now current" if info.current else "not current (--no-activate)"
    out.print(f"published {escape(info.version)} (#{info.sequence}) in {escape(str(root))}, "
              f"{state}", soft_wrap=True)


def _metadata_pairs(items: list[str]) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise SpecError(item, "--set takes KEY=VALUE")
        try:
            pairs[key] = json.loads(text)
        except json.JSONDecodeError:
            pairs[key] = text
        except (RecursionError, ValueError):  # nested ~1,000 deep, or 4,300-digit numbers
            raise SpecError(f"--set {key[:40]}=...", "VALUE nests too deep or holds a number "
                            "too long to be metadata") from None
    return pairs


@models_app.command("verify")
def models_verify(root: RootOption) -> None:
    """Check every file against SHA256SUMS. Exits 0 when all pass, 1 on any problem."""
    problems = registry.verify(root)
    for problem in problems:
        out.print(f"[red]FAILED[/] {escape(printable(str(problem)))}", soft_wrap=True)
    if problems:
        out.print(f"{len(problems)} problem(s) in {escape(str(root))}: do not serve from it",
                  soft_wrap=True)
        unchecked = sum(problem.cannot_check for problem in problems)
        if unchecked:  # what could not be read is not a finding: exit 2, as for other OS errors
            raise registry.RegistryError(f"{root}: {unchecked} path(s) could not be checked "
                                         "(see FAILED above)")
        raise typer.Exit(1)
    versions = registry.list_versions(root)
    current = next((info.version for info in versions if info.current), "-")
    out.print(f"OK: {escape(str(root))}: {len(versions)} version(s), every file matches "
              f"SHA256SUMS; current: {escape(current)}", soft_wrap=True)


@models_app.command("list")
def models_list(root: RootOption, as_json: JsonOption = False) -> None:
    """Versions in publish order, the current one marked, with their key metadata."""
    versions = registry.list_versions(root)
    if as_json:  # plain text: rich's highlighter takes seconds over a megabyte of metadata
        typer.echo(json.dumps([
            {"version": info.version, "sequence": info.sequence, "current": info.current,
             "published_at": info.published_at,
             "feature_schema_version": info.feature_schema_version,
             "metadata": dict(info.metadata)} for info in versions], indent=2))
        return
    table = Table(title=f"models in {escape(str(root))}", caption="* current; --json for all "
                  "metadata", box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), show_edge=False)
    for column in ("", "version", "#", "published (UTC)", "schema", "seed", "commit"):
        table.add_column(column, no_wrap=True)
    for info in versions:
        meta = info.metadata
        schema = info.feature_schema_version
        table.add_row("*" if info.current else "", escape(info.version), str(info.sequence),
                      _cell(info.published_at[:16].replace("T", " "), 16),
                      "-" if schema is None else str(schema), _cell(meta.get("seed", "-"), 20),
                      _cell(meta.get("commit", "-"), 12))
    out.print(table)
    if not versions:
        out.print(f"no versions in {escape(str(root))}", soft_wrap=True)


def _cell(value: Any, width: int) -> str:
    """A metadata value in a table cell: cut to WIDTH, control characters escaped."""
    return escape(printable(str(value)[:width]))


@models_app.command("rollback")
def models_rollback(
    root: RootOption,
    to: Annotated[str | None, typer.Option(
        "--to", help="Version to make current; default: the one published before it.")] = None,
) -> None:
    """Point current at an earlier version (verified first, swapped atomically); refused when
    it was saved under another feature schema than this dagpilot encodes (it could not serve)."""
    switch = registry.rollback(root, to, feature_schema_version=FEATURE_SCHEMA_VERSION)
    out.print(f"current: {escape(switch.previous or '-')} -> {escape(switch.current)}")


@app.command("train")
def train_command(
    *,
    workloads: Annotated[list[str] | None, typer.Option(
        "--workload", help="Workload spec, FORMAT:PATH or builtin:NAME (repeatable); the job "
        "pool the curriculum draws from.")] = None,
    cluster: Annotated[str, typer.Option(help="Cluster spec, e.g. builtin:default.")] = (
        BUILTIN_CLUSTER),
    iterations: Annotated[int, typer.Option(min=0, help="PPO iterations.")] = 50,
    episodes_per_iteration: Annotated[int, typer.Option(
        min=1, help="Episodes per iteration (a multiple of --replays).")] = 8,
    replays: Annotated[int, typer.Option(
        min=1, help="Replays of each arrival sequence (input-driven baseline).")] = 4,
    seed: Annotated[int, typer.Option(help="Seed of every random choice of the run.")] = 0,
    bc_iterations: Annotated[int, typer.Option(
        min=0, help="Behaviour-cloning rounds before PPO.")] = 2,
    teacher: Annotated[str, typer.Option(
        help="Scheduler to imitate, or auto (the best baseline on 3 trial episodes).")] = "auto",
    min_jobs: Annotated[int, typer.Option(min=1, help="Jobs per episode, first stage.")] = 2,
    max_jobs: Annotated[int, typer.Option(min=1, help="Jobs per episode, last stage.")] = 8,
    load_factor: Annotated[float, typer.Option(
        "--load", help="Poisson arrivals: share of the busiest resource asked for.")] = 0.8,
    physics: Annotated[str, typer.Option(help="on or off: the physical effects.")] = "on",
    checkpoint_every: Annotated[int, typer.Option(
        min=1, help="PPO iterations between checkpoints (each one evaluated).")] = 10,
    eval_episodes: Annotated[int, typer.Option(
        min=0, help="Fixed episodes of the learning curve's evaluation; 0: none.")] = 4,
    eval_horizon_h: Annotated[float, typer.Option(
        help="Hours of Poisson arrivals of the whole pool (at --load) in each evaluation "
        "episode; 0: episodes of the curriculum's last stage (--max-jobs jobs).")] = 1.0,
    ppo_horizon_h: Annotated[float, typer.Option(
        help="Hours of Poisson arrivals of the whole pool (at --load) in each PPO episode, "
        "instead of the curriculum's few jobs; 0: the curriculum.")] = 0.0,
    rollout_lanes: Annotated[int, typer.Option(
        min=1, help="PPO episodes run in lock-step, their decisions batched into one network "
        "call (1: one by one, as before lock-step rollouts).")] = 8,
    backend: Annotated[str, typer.Option(help="local, or ray (rollouts as Ray actors).")] = (
        "local"),
    workers: Annotated[int, typer.Option(min=1, help="Ray rollout actors.")] = 2,
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster to join (auto, ray://HOST:10001); default: start Ray here.")] = None,
    out_dir: Annotated[Path, typer.Option(
        "--out", help="Folder for metrics.csv, checkpoints/, final/ and best/.")] = Path(
            "dagpilot-train"),
    publish_to: Annotated[Path | None, typer.Option(
        "--publish-to", help="Registry to publish the model into (e.g. models/): best/, the "
        "best checkpoint by evaluation, or final/ without evaluation.")] = None,
    version: Annotated[str | None, typer.Option(
        "--version", help="Version name of the published model.")] = None,
    settings: SettingsOption = None,
) -> None:
    """Train the DRL policy: behaviour cloning from the best heuristic, then PPO over a
    curriculum of small to large workloads; checkpoints and metrics.csv in --out."""
    # torch is an optional extra and slow to import: only this command loads it
    from dagpilot import train as training  # noqa: PLC0415

    if (publish_to is None) != (version is None):
        raise SpecError(str(publish_to or version), "--publish-to and --version go together")
    if publish_to is not None and version is not None:
        training.check_publishable(publish_to, version)
    if backend not in ("local", "ray"):
        raise SpecError(backend, "--backend must be local or ray")
    loaded = _settings(settings)
    specs = tuple(workloads or [BUILTIN_WORKLOAD])
    data = training.TrainData(tuple(harness.load_workloads(specs, loaded)),
                              load_cluster(cluster, loaded.loaders), specs, cluster)
    check_fits(data.jobs, data.cluster)
    config = training.TrainConfig(
        iterations=iterations, episodes_per_iteration=episodes_per_iteration, replays=replays,
        seed=seed, bc_iterations=bc_iterations, load=load_factor, physics=_on_off(physics),
        checkpoint_every=checkpoint_every, eval_episodes=eval_episodes,
        eval_horizon_h=eval_horizon_h, ppo_horizon_h=ppo_horizon_h, rollout_lanes=rollout_lanes,
        bc=training.BCSettings(teacher=teacher),
        curriculum=training.CurriculumSettings(min_jobs=min(min_jobs, max_jobs),
                                               max_jobs=max_jobs))
    rollouts = training.ray_backend(workers, ray_address) if backend == "ray" else (
        training.LocalRollouts)
    columns = (SpinnerColumn(), TextColumn("{task.description:<36}"), BarColumn(),
               TaskProgressColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("preparing", total=1.0)
        result = training.train(
            config, data, out_dir, sim=loaded.sim, backend=rollouts,
            capacity=functools.partial(cpu_equivalent_cores,
                                       startup_s=loaded.sim.startup_median_s),
            command=shlex.join(["dagpilot", *sys.argv[1:]]),
            progress=lambda done, label: bar.update(task, completed=done, description=label))
    out.print(f"teacher: {escape(result.teacher)}; {result.env_steps} PPO environment steps, "
              f"{result.env_steps_per_s:.0f} steps/s with updates", soft_wrap=True)
    out.print(f"metrics: {escape(str(result.metrics))}")
    out.print(f"model:   {escape(str(result.final))} (the last iteration)")
    if result.best is not None and result.selected is not None:
        out.print(f"best:    {escape(str(result.best))} (iteration {result.selected.iteration}, "
                  f"evaluation ratio {result.selected.ratio:.3f})", soft_wrap=True)
    if publish_to is not None and version is not None:
        chosen, why = (result.best, "the lowest evaluation ratio") if result.best else (
            result.final, "the last iteration: no evaluation, no best checkpoint")
        info = training.publish_model(chosen, publish_to, version)
        out.print(f"published {escape(info.version)} (#{info.sequence}) in "
                  f"{escape(str(publish_to))}, now current: {escape(str(chosen))} ({why})",
                  soft_wrap=True)


SANDBOX_DIR = Path("dagpilot-sandbox")


@sandbox_app.command("build")
def sandbox_build() -> None:
    """Build the missing control-plane binaries into the cache (outside the clone)."""
    import time  # noqa: PLC0415

    from dagpilot.sandbox import build  # noqa: PLC0415

    directory = build.bin_dir()
    todo = build.missing(directory)
    started = time.monotonic()
    with err.status("sandbox build") as spinner:
        build.build(directory, directory.parent / "logs",
                    lambda name: spinner.update(f"building {escape(name)}"))
    built = ", ".join(b.name for b in todo) or "nothing (all cached)"
    out.print(f"built {built} in {time.monotonic() - started:.0f} s; binaries in "
              f"{escape(str(directory))}", soft_wrap=True)


@sandbox_app.command("up")
def sandbox_up(
    cluster: Annotated[str, typer.Option(help="Cluster spec whose nodes become kwok Nodes.")]
    = "builtin:default",
    directory: Annotated[Path, typer.Option("--dir", help="Folder for the PKI, logs, "
                                            "kubeconfig and sandbox.json.")] = SANDBOX_DIR,
    twin: Annotated[str, typer.Option(help="on: the hardware twin ends pods after their "
                                      "simulated work; off: after dagpilot.io/runtime.")]
    = "on",
    time_scale: Annotated[float, typer.Option(help="The twin's simulated seconds per wall "
                                              "second (60: a minute of work per second).")]
    = 1.0,
) -> None:
    """Build what is missing, start the control plane, return when every node is Ready."""
    from dagpilot.sandbox import launcher  # noqa: PLC0415 (imports the kube side only here)

    if twin not in ("on", "off"):
        raise SpecError(twin, "--twin takes on or off")
    if not 0 < time_scale <= 10_000:
        raise SpecError(str(time_scale), "--time-scale takes a number above 0, at most 10000")
    with err.status("sandbox") as spinner:
        state = launcher.up(cluster, directory, twin == "on",
                            lambda step: spinner.update(escape(step)), time_scale)
    out.print(f"sandbox up: {len(state.components)} components; "
              f"kubeconfig {escape(state.kubeconfig)}", soft_wrap=True)


@sandbox_app.command("status")
def sandbox_status(
    directory: Annotated[Path, typer.Option("--dir")] = SANDBOX_DIR,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Each component's pid, port, health and log; exit 1 when any is down."""
    from dagpilot.sandbox import launcher  # noqa: PLC0415

    health = launcher.status(directory)
    if as_json:
        print_json([{"component": h.component, "pid": h.pid, "port": h.port,
                                    "running": h.running, "log": str(h.log)} for h in health])
    else:
        table = Table(box=box.SIMPLE)
        for column in ("component", "pid", "port", "state", "log"):
            table.add_column(column)
        for h in health:
            table.add_row(h.component, str(h.pid), str(h.port),
                          "running" if h.running else "[red]down[/]", escape(str(h.log)))
        out.print(table)
    if not all(h.running for h in health):
        raise typer.Exit(1)


@sandbox_app.command("down")
def sandbox_down(directory: Annotated[Path, typer.Option("--dir")] = SANDBOX_DIR) -> None:
    """Stop exactly the processes `up` started, by pid."""
    from dagpilot.sandbox import launcher  # noqa: PLC0415

    stopped = launcher.down(directory)
    out.print(f"stopped {', '.join(stopped)}" if stopped else "no sandbox was running")


@live_app.command("show")
def live_show(
    kubeconfig: Annotated[Path, typer.Option("--kubeconfig", help="kubeconfig of the cluster "
                                             "(server, CA, client certificate or token).")],
    prometheus: Annotated[str | None, typer.Option(
        help="Prometheus base URL, e.g. http://127.0.0.1:9090; without it, no signals.")]
    = None,
    context: Annotated[str | None, typer.Option(help="kubeconfig context (default: current).")]
    = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the first lists.")]
    = 30.0,
    as_json: JsonOption = False,
) -> None:
    """The live view as the policy sees it: nodes with allocatable, allocated, free GPUs per
    root complex and signals with their age; pending pods oldest first; each job's nodes."""
    from dagpilot.live import show  # noqa: PLC0415 (imports the Kubernetes client only here)
    from dagpilot.live.view import LiveView  # noqa: PLC0415

    with LiveView.connect(kubeconfig, _topology_rtt_ms(), prometheus_url=prometheus,
                          context=context) as view:
        view.start(timeout)
        document, health = show.document(view), view.health()
    if as_json:
        print_json(document)
        return
    out.print(_live_nodes_table(document["nodes"]))
    pending = document["pending"]
    out.print(f"{len(pending)} pending (oldest first): " + ", ".join(
        escape(f"{p['namespace']}/{p['name']}") for p in pending[:20])
        + (" ..." if len(pending) > 20 else ""), soft_wrap=True)
    out.print(f"{len(document['jobs'])} jobs; skipped: {escape(str(health['skipped']) or '-')}",
              soft_wrap=True)


def _topology_rtt_ms() -> Callable[[Any, Any], float]:
    """The simulator's network model, for node pairs the ping mesh has not measured."""
    from dagpilot.core.config import PhysicsParameters  # noqa: PLC0415
    from dagpilot.sim import physics  # noqa: PLC0415

    params = PhysicsParameters()
    return lambda a, b: physics.rtt_ms(physics.distance(a, b), params)


def _live_nodes_table(nodes: list[dict[str, Any]]) -> Table:
    table = Table(box=box.SIMPLE)
    for column in ("node", "ready", "CPU used/alloc", "memory GiB", "GPUs free", "signals age"):
        table.add_column(column, justify="left" if column == "node" else "right")
    for node in nodes:
        free = node["free_gpus"].values()
        age = node["signals"]["age_s"]
        table.add_row(
            escape(node["name"]), "yes" if node["ready"] else "[red]no[/]",
            f"{node['allocated']['cpu']:g}/{node['allocatable']['cpu']:g}",
            f"{node['allocated']['memory'] / 2**30:.1f}/"
            f"{node['allocatable']['memory'] / 2**30:.1f}",
            ("?" if None in free else str(sum(free))) + f"/{node['allocatable']['gpus']}",
            "never" if age is None else f"{age:.1f} s")
    return table


def _stop_on_signals() -> threading.Event:
    """An event SIGTERM or Ctrl-C sets: a long-running command's cue to stop cleanly."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    return stop


@app.command("node-agent")
def node_agent(
    *,
    node_name: Annotated[str, typer.Option("--node-name", envvar="NODE_NAME",
                                           help="This node's Kubernetes name (every label).")],
    port: Annotated[int, typer.Option(help="Port of /metrics, and the peers' ping target.")]
    = 9810,
    address: Annotated[str, typer.Option(help="Address to serve on.")] = "0.0.0.0",
    peers: Annotated[str, typer.Option(help="Ping mesh: NAME=HOST:PORT,... of peer agents.")]
    = "",
    period: Annotated[float, typer.Option(help="Seconds between measurements.")] = 5.0,
    cgroup_root: Annotated[Path, typer.Option(help="The host's cgroup tree.")]
    = Path("/sys/fs/cgroup"),
    kubepods: Annotated[str, typer.Option(help="The pods' parent cgroup, relative to each "
                                          "hierarchy; auto: kubepods.slice or kubepods.")]
    = "auto",
    proc_root: Annotated[Path, typer.Option(help="The host's /proc.")] = Path("/proc"),
    sys_root: Annotated[Path, typer.Option(help="The host's /sys.")] = Path("/sys"),
    pod_resources_socket: Annotated[Path, typer.Option(help="The kubelet's PodResources "
                                                       "socket.")]
    = Path("/var/lib/kubelet/pod-resources/kubelet.sock"),
    gpu_resource: Annotated[str, typer.Option(help="Extended resource naming GPUs.")]
    = "nvidia.com/gpu",
    peak_memory_bandwidth: Annotated[float | None, typer.Option(
        help="The node's peak DRAM bandwidth in GB/s; without it no utilisation.")] = None,
    disk_devices: Annotated[str | None, typer.Option(
        help="Regular expression of the block devices to report (default: whole disks "
             "but loop, ram, zram).")] = None,
    ebpf_dir: Annotated[Path | None, typer.Option(
        help="Built eBPF objects and loader (make -C ebpf; default ebpf/build or "
             "$DAGPILOT_EBPF_DIR).")] = None,
    btf: Annotated[Path, typer.Option(help="Kernel BTF the eBPF objects are relocated "
                                      "against.")] = Path("/sys/kernel/btf/vmlinux"),
    predictions: Annotated[Path | None, typer.Option(
        help="JSON lines of each pod's predicted use, for the waste ratio.")] = None,
    journal: Annotated[Path | None, typer.Option(
        help="Decision journal that gets each finished pod's feedback record.")] = None,
) -> None:
    """Export the node signals node_exporter lacks (page cache, await, memory bandwidth, ping
    mesh, free GPUs per root complex) and finished pods' feedback (cgroups and eBPF) for
    Prometheus, until SIGTERM or Ctrl-C."""
    import re  # noqa: PLC0415

    from dagpilot.live.node_agent.errors import NodeAgentError  # noqa: PLC0415
    try:  # prometheus_client comes with the live extra
        from dagpilot.live.node_agent import config as agent_config  # noqa: PLC0415
        from dagpilot.live.node_agent import ping_mesh, runner  # noqa: PLC0415
    except ImportError as error:
        raise NodeAgentError("import", f"{error}: pip install 'dagpilot[live]'") from None
    if not period > 0:
        raise SpecError(str(period), "--period takes a positive number of seconds")
    if not 0 <= port < 65536:
        raise SpecError(str(port), "--port takes 0-65535")
    try:
        devices = re.compile(disk_devices) if disk_devices is not None else None
    except re.error as error:
        raise SpecError(disk_devices or "", f"--disk-devices: {error}") from None
    settings = agent_config.AgentConfig(
        node_name=node_name, port=port, address=address, period_s=period,
        peers=ping_mesh.parse_peers(peers), cgroup_root=cgroup_root, proc_root=proc_root,
        sys_root=sys_root, kubepods=kubepods, pod_resources_socket=pod_resources_socket,
        gpu_resource=gpu_resource, disk_devices=devices,
        peak_memory_bandwidth=peak_memory_bandwidth * 1e9 if peak_memory_bandwidth else None,
        ebpf_dir=ebpf_dir, btf=btf, predictions=predictions,
        feedback_sink=_feedback_journal(journal))
    stop = _stop_on_signals()
    runner.serve(settings, stop, lambda bound: out.print(
        f"node-agent {escape(node_name)}: metrics on http://{escape(address)}:{bound}/metrics, "
        f"every {period:g} s", soft_wrap=True))


def _feedback_journal(path: Path | None) -> Callable[[Any], None] | None:
    """The node agent's feedback records into the decision journal at `path`."""
    if path is None:
        return None
    from dagpilot import journal as decision_journal  # noqa: PLC0415

    target = decision_journal.Journal(path)
    return lambda record: decision_journal.write_feedback(target, record)


@ops_app.command("check-kernel")
def ops_check_kernel(
    *,
    btf: Annotated[Path, typer.Option(help="Kernel BTF to check and load against.")]
    = Path("/sys/kernel/btf/vmlinux"),
    ebpf_dir: Annotated[Path | None, typer.Option(
        help="Built eBPF objects and loader (default ebpf/build or $DAGPILOT_EBPF_DIR).")]
    = None,
    proc_root: Annotated[Path, typer.Option(help="The host's /proc.")] = Path("/proc"),
    sys_root: Annotated[Path, typer.Option(help="The host's /sys.")] = Path("/sys"),
    boot: Annotated[Path, typer.Option(help="Where /boot/config-RELEASE is.")] = Path("/boot"),
    cgroup_root: Annotated[Path, typer.Option(help="The host's cgroup tree.")]
    = Path("/sys/fs/cgroup"),
) -> None:
    """Can this node run the node agent's eBPF feedback? One PASS/FAIL line per item with the
    fix; exit 1 when something the agent needs is missing."""
    from dagpilot.live.node_agent.ebpf_loader import default_build_dir  # noqa: PLC0415
    from dagpilot.ops import check_kernel as kernel  # noqa: PLC0415

    roots = kernel.Roots(proc=proc_root, sys=sys_root, boot=boot, cgroup=cgroup_root)
    checks = kernel.check_kernel(roots, btf, ebpf_dir or default_build_dir())
    for check in checks:
        out.print(escape(check.line()), soft_wrap=True, highlight=False)
    missing = kernel.failed_needs(checks)
    if missing:
        out.print(f"{len(missing)} needed item(s) missing: the agent will use cgroup figures "
                  "only", highlight=False)
        raise typer.Exit(1)


@serve_app.command("webhook")
def serve_webhook(
    *,
    kubeconfig: Annotated[Path, typer.Option(help="The webhook's own ServiceAccount: creates "
                                             "the signed Workflows.")],
    port: Annotated[int, typer.Option(help="HTTPS port (0: any free one, printed).")],
    tls_cert: Annotated[Path, typer.Option(help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option(help="Its private key (PEM).")],
    client_ca: Annotated[Path, typer.Option(help="CA that signs every client certificate.")],
    keys: Annotated[Path, typer.Option(help="Submission keys (YAML `keys: [...]`, or a "
                                       "Secret holding keys.yaml); read again on change.")],
    namespace: Annotated[str, typer.Option(help="Where submitted Workflows are created.")]
    = "dagpilot",
    history: Annotated[Path | None, typer.Option(
        help="Run history JSON: expected template durations; read again on change.")] = None,
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "0.0.0.0",
    admission_client: Annotated[list[str] | None, typer.Option(
        help="Client subject allowed to call /mutate (the API server), repeatable.")] = None,
    submit_client: Annotated[list[str] | None, typer.Option(
        help="Client subject allowed to POST /v1/workflows, repeatable.")] = None,
) -> None:
    """The Argo admission webhook (POST /mutate) and the signed submission endpoint (POST
    /v1/workflows), both over mTLS, until SIGTERM or Ctrl-C."""
    from dagpilot.serve import webhook_process  # noqa: PLC0415

    if not 0 <= port < 65536:
        raise SpecError(str(port), "--port takes 0-65535")
    config = webhook_process.WebhookConfig(
        kubeconfig=kubeconfig, port=port, tls_cert=tls_cert, tls_key=tls_key,
        client_ca=client_ca, keys=keys, namespace=namespace, history=history, host=address,
        admission_clients=tuple(admission_client or (webhook_process.API_SERVER_CLIENT,)),
        submit_clients=tuple(submit_client or (webhook_process.SUBMIT_CLIENT,)))
    process = webhook_process.WebhookProcess(config)
    stop = _stop_on_signals()
    out.print(f"webhook on https://{escape(address)}:{process.port} (/mutate, /v1/workflows); "
              f"Workflows into namespace {escape(namespace)}", soft_wrap=True)
    process.serve(stop)


@serve_app.command("extender")
def serve_extender(
    *,
    kubeconfig: Annotated[Path, typer.Option(help="Read access to nodes, pods and Workflows "
                                             "(the live view).")],
    port: Annotated[int, typer.Option(help="HTTPS port (0: any free one, printed).")],
    tls_cert: Annotated[Path, typer.Option(help="Serving certificate (PEM).")],
    tls_key: Annotated[Path, typer.Option(help="Its private key (PEM).")],
    client_ca: Annotated[Path, typer.Option(help="CA that signs kube-scheduler's client "
                                            "certificate.")],
    models: Annotated[Path, typer.Option(help="Model registry: its `current` model ranks.")]
    = Path("models"),
    address: Annotated[str, typer.Option(help="Address to listen on.")] = "0.0.0.0",
    allowed_subject: Annotated[list[str] | None, typer.Option(
        help="Client subject allowed to call /filter and /prioritize, repeatable.")] = None,
    cpus: Annotated[str | None, typer.Option(help="Pin the process to these CPUs, e.g. "
                                             "2 or 0-3 (one CPU serves fastest).")] = None,
) -> None:
    """A kube-scheduler extender (POST /filter, /prioritize) over mTLS, until SIGTERM or
    Ctrl-C: dagpilot's feasible nodes and scores inside a stock kube-scheduler."""
    from dagpilot.serve import extender_process  # noqa: PLC0415

    if not 0 <= port < 65536:
        raise SpecError(str(port), "--port takes 0-65535")
    config = extender_process.ExtenderConfig(
        kubeconfig=kubeconfig, port=port, tls_cert=tls_cert, tls_key=tls_key,
        client_ca=client_ca, models=models, host=address,
        allowed_subjects=tuple(allowed_subject or (extender_process.SCHEDULER_CLIENT,)),
        cpus=parse_cpus(cpus) if cpus else None)
    process = extender_process.ExtenderProcess(config)
    stop = _stop_on_signals()
    out.print(f"extender on https://{escape(address)}:{process.port} (/filter, /prioritize); "
              f"{len(process.view.cluster.nodes)} nodes in view"
              + (f"; CPUs {sorted(process.cpus)}" if process.cpus else ""), soft_wrap=True)
    process.serve(stop)


@serve_app.command("scheduler")
def serve_scheduler(
    *,
    kubeconfig: Annotated[Path, typer.Option(help="The scheduler's kubeconfig (its own "
                                             "ServiceAccount: deploy/scheduler/rbac.yaml).")],
    prometheus: Annotated[str | None, typer.Option(
        help="Prometheus base URL for the node signals; without it, none.")] = None,
    models: Annotated[Path, typer.Option(help="Model registry; its `current` is served and "
                                         "reloaded when it changes.")] = Path("models"),
    scheduler_name: Annotated[str, typer.Option(
        help="The spec.schedulerName this scheduler serves.")] = "dagpilot",
    shadow: Annotated[bool, typer.Option(
        help="Bind nothing: journal what dagpilot would choose for the default scheduler's "
             "pods (`dagpilot shadow report`).")] = False,
    cpus: Annotated[str | None, typer.Option(help="Pin the process to these CPUs, e.g. "
                                             "2 or 0-3 (one CPU serves fastest).")] = None,
    deadline_ms: Annotated[float, typer.Option(
        help="A decision not made by then goes to the kube-default fallback.")] = 100.0,
    metrics_port: Annotated[int, typer.Option(help="Port of /metrics (0: any free one).")]
    = 10259,
    metrics_address: Annotated[str, typer.Option(help="Address of /metrics.")] = "0.0.0.0",
    journal: Annotated[Path | None, typer.Option(help="Decision journal (JSON lines, "
                                                 "rotated).")] = None,
    journal_max_mb: Annotated[float, typer.Option(help="Journal size before rotation.")]
    = 16.0,
    leader_elect: Annotated[bool, typer.Option(help="Take part in leader election on a "
                                               "Lease (only the leader binds).")] = True,
    lease_namespace: Annotated[str, typer.Option(help="Namespace of the Lease.")]
    = "dagpilot",
) -> None:
    """The custom scheduler: binds the pods with spec.schedulerName --scheduler-name from
    the live view and the served model, until SIGTERM or Ctrl-C (docs/SERVING.md)."""
    from dagpilot.serve import scheduler_process  # noqa: PLC0415

    if not 0 <= metrics_port < 65536:
        raise SpecError(str(metrics_port), "--metrics-port takes 0-65535")
    if not 0 < deadline_ms <= 60_000:
        raise SpecError(str(deadline_ms), "--deadline-ms takes (0, 60000] milliseconds")
    if not 0.01 <= journal_max_mb <= 4096:
        raise SpecError(str(journal_max_mb), "--journal-max-mb takes 0.01-4096")
    config = scheduler_process.SchedulerConfig(
        kubeconfig=kubeconfig, prometheus=prometheus, models=models,
        scheduler_name=scheduler_name, shadow=shadow,
        cpus=parse_cpus(cpus) if cpus else None, deadline_s=deadline_ms / 1000,
        metrics_port=metrics_port, metrics_address=metrics_address, journal=journal,
        journal_max_bytes=int(journal_max_mb * 2**20), leader_elect=leader_elect,
        lease_namespace=lease_namespace)
    stop = _stop_on_signals()
    process = scheduler_process.SchedulerProcess(config)
    try:
        process.start()
        serving = process.models.current() if process.models is not None else None
        model = serving.version if serving is not None else (
            f"none ({process.models.load_error})" if process.models is not None else "?")
        out.print(escape(
            f"scheduler {scheduler_name}{' (shadow)' if shadow else ''}: model {model}; "
            f"metrics on http://{metrics_address}:{process.metrics_port}/metrics"
            + (f"; CPUs {sorted(process.cpus)}" if process.cpus else "")), soft_wrap=True)
        process.run(stop)
    finally:
        process.close()


@serve_app.command("record")
def serve_record(
    workflows: Annotated[Path, typer.Argument(help="`kubectl get workflows -o json`: a List "
                                              "or one Workflow.")],
    *,
    history: Annotated[Path, typer.Option(help="The run history JSON the webhook reads "
                                          "(created if missing).")],
) -> None:
    """Add the Succeeded Workflows' pod durations to the run history (each Workflow once)."""
    from dagpilot.serve import run_history  # noqa: PLC0415

    updated, new = run_history.record_file(history, workflows)
    out.print(f"{new} Workflow(s) recorded; {len(updated.templates)} templates in "
              f"{escape(str(history))}", soft_wrap=True)


@shadow_app.command("report")
def shadow_report(
    journal: Annotated[Path, typer.Option(help="The journal `serve scheduler --shadow` wrote.")],
    models: Annotated[Path, typer.Option(help="Model registry for the simulated replay.")]
    = Path("models"),
    cluster: Annotated[str | None, typer.Option(
        help="Cluster spec for the replay (default: the cluster the journal recorded).")]
    = None,
    seed: Annotated[int, typer.Option(help="Simulator seed.")] = 0,
    as_json: JsonOption = False,
) -> None:
    """Agreement with the shadowed scheduler, and the simulator's estimate of the mean JCT
    difference on the recorded stream of jobs."""
    from dagpilot.clusters import load_cluster  # noqa: PLC0415
    from dagpilot.serve import shadow_report as shadow  # noqa: PLC0415

    document = shadow.report(journal, models, load_cluster(cluster) if cluster else None, seed)
    if as_json:
        out.print(json.dumps(document), soft_wrap=True, markup=False, highlight=False)
        return
    share = document["agreement"]
    out.print(escape(f"{document['shadowed']} pods shadowed, {document['with_outcome']} with "
                     f"an outcome: {document['agreed']} on the same node ("
                     + ("-" if share is None else f"{share:.1%}") + ")"), soft_wrap=True)
    estimate = document["estimate"]
    if estimate is None:
        out.print("no jobs recorded: no JCT estimate")
        return
    relative = estimate["relative"]
    out.print(escape(
        f"simulated on {estimate['cluster']} ({estimate['nodes']} nodes), {document['jobs']} "
        f"jobs: mean JCT kube-default {estimate['kube_default_mean_jct_s']:.1f} s, dagpilot "
        f"{estimate['dagpilot_mean_jct_s']:.1f} s ({estimate['difference_s']:+.1f} s"
        + ("" if relative is None else f", {relative:+.1%}") + ")"), soft_wrap=True)


@app.command("place")
def place_workflow(
    workflow: Annotated[Path, typer.Argument(help="An Argo Workflow (YAML).")],
    *,
    cluster: Annotated[str, typer.Option(help="Cluster spec to plan on (builtin:NAME, "
                                         "yaml:PATH, ...).")] = BUILTIN_CLUSTER,
    state: Annotated[str, typer.Option(help="empty: the cluster as specified; live: the "
                                       "live cluster's nodes and what is free on them.")]
    = "empty",
    kubeconfig: Annotated[Path | None, typer.Option(help="kubeconfig for --state live.")]
    = None,
    models: Annotated[Path, typer.Option(help="Model registry.")] = Path("models"),
) -> None:
    """Print the Workflow with each task's planned node as a nodeAffinity and the decision
    annotation (YAML for kubectl apply or argo submit)."""
    from dagpilot.clusters import load_cluster  # noqa: PLC0415
    from dagpilot.serve import place  # noqa: PLC0415

    if state not in ("empty", "live"):
        raise SpecError(state, "--state takes empty or live")
    if state == "live":
        if kubeconfig is None:
            raise SpecError(state, "--state live needs --kubeconfig")
        where = place.live_cluster(kubeconfig)
    else:
        where = load_cluster(cluster)
    out.print(place.place(workflow, where, models), end="", soft_wrap=True, markup=False,
              highlight=False)


@app.command("submit")
def submit_workflow(
    workflow: Annotated[Path, typer.Argument(help="The Workflow (YAML or .json), sent as is.")],
    *,
    url: Annotated[str, typer.Option(help="The endpoint, e.g. https://HOST:8443/v1/workflows.")],
    keys: Annotated[Path, typer.Option(help="Submission keys: the newest valid one signs.")],
    cert: Annotated[Path, typer.Option(help="Client certificate (PEM).")],
    key: Annotated[Path, typer.Option(help="Its private key (PEM).")],
    ca: Annotated[Path, typer.Option(help="CA of the endpoint's serving certificate.")],
) -> None:
    """Sign a Workflow and submit it; prints the created Workflow's namespace/name."""
    from dagpilot.serve import submit_client  # noqa: PLC0415

    namespace, name = submit_client.submit(workflow, url, keys, cert=cert, key=key, ca=ca)
    out.print(escape(f"{namespace}/{name}"), soft_wrap=True)


@ops_app.command("prom-config")
def ops_prom_config(
    out_file: Annotated[Path | None, typer.Option(
        "--out", help="Write the config here and dagpilot-rules.yaml beside it "
                      "(default: the config on stdout).")] = None,
    rules: Annotated[bool, typer.Option(help="Print the recording rules instead.")] = False,
    targets_dir: Annotated[Path | None, typer.Option(
        help="file_sd target files under DIR/node-exporter and DIR/node-agent instead of "
             "Kubernetes discovery (for a Prometheus built without it, such as Debian's).")]
    = None,
) -> None:
    """The Prometheus configuration the live view needs: 5 s node-exporter job keeping only the
    metrics the view reads, the node-agent job, recording rules for await and MBPI."""
    from dagpilot.ops import prom_config, prom_rules  # noqa: PLC0415

    config = prom_config.cluster_config(targets_dir=targets_dir)
    if out_file is None:
        document = prom_rules.recording_rules() if rules else config
        sys.stdout.write(prom_config.render(document))
        return
    for path in prom_config.write(out_file, config):
        out.print(escape(str(path)), soft_wrap=True)


@ops_app.command("diagnose-node")
def ops_diagnose_node(
    node: Annotated[str, typer.Argument(help="The node's Kubernetes name.")],
    *,
    kubeconfig: Annotated[Path, typer.Option(help="Kubeconfig of the cluster.")],
    prometheus: Annotated[str | None, typer.Option(
        help="Prometheus URL, for the ping mesh's loss.")] = None,
    kernel_log: Annotated[Path | None, typer.Option(
        help="The node's kernel log (journalctl -k -b > FILE, or dmesg).")] = None,
    diskstats: Annotated[list[Path] | None, typer.Option(
        help="The node's /proc/diskstats, twice (repeat the option, or one file with both).")]
    = None,
    diskstats_interval: Annotated[float, typer.Option(
        help="Seconds between the diskstats snapshots.")] = 5.0,
) -> None:
    """Why a node is NotReady: network, storage or kernel; the evidence and the next command."""
    from dagpilot.live.kube_api import KubeApi  # noqa: PLC0415
    from dagpilot.live.prometheus import Prometheus  # noqa: PLC0415
    from dagpilot.ops import diagnose_node  # noqa: PLC0415

    if not diskstats_interval > 0:
        raise SpecError(str(diskstats_interval), "--diskstats-interval takes seconds > 0")
    sources = diagnose_node.Sources(Prometheus(prometheus) if prometheus else None, kernel_log,
                                    tuple(diskstats or ()), diskstats_interval)
    api = KubeApi(kubeconfig)
    try:
        diagnosis = diagnose_node.diagnose(api, node, sources)
    finally:
        api.close()
    state = "NotReady" if diagnosis.not_ready else "Ready"
    out.print(escape(f"node {diagnosis.node}: {state} ({diagnosis.ready})"), soft_wrap=True)
    for finding in diagnosis.by_cause():
        out.print(escape(f"[{finding.cause}] {finding.summary}"), soft_wrap=True)
        for line in finding.evidence:
            out.print(escape(f"    {line}"), soft_wrap=True)
        out.print(escape(f"    next: {finding.next_command}"), soft_wrap=True)
    if not diagnosis.findings:
        out.print(escape(f"no cause found; {diagnose_node.NOTHING_FOUND_COMMAND}"),
                  soft_wrap=True)
    for line in diagnosis.checked:
        out.print(escape(f"checked: {line}"), soft_wrap=True)


@ops_app.command("verify-release")
def ops_verify_release(
    root: Annotated[Path, typer.Option(help="The repository to check.")] = Path("."),
) -> None:
    """Code, eBPF objects, Prometheus rules, webhook configuration and models/SHA256SUMS agree
    with one commit and each other; exit 1 on any FAIL."""
    from dagpilot.ops import verify_release  # noqa: PLC0415

    checks = verify_release.verify(root)
    for check in checks:
        verdict = "[green]PASS[/]" if check.passed else "[bold red]FAIL[/]"
        out.print(f"{verdict} {check.entity}: {escape(check.detail)}", soft_wrap=True)
    if not all(check.passed for check in checks):
        raise typer.Exit(1)


@docs_app.command("api-reference")
def docs_api_reference(
    root: Annotated[Path, typer.Option(help="The repository to write into.")] = Path("."),
    check: Annotated[bool, typer.Option(
        help="Write nothing; exit 1 naming the files that are not current.")] = False,
) -> None:
    """docs/API_REFERENCE.md and docs/openapi/*.json from the code: HTTP route tables, this
    CLI, the configuration keys."""
    from dagpilot import docs_gen  # noqa: PLC0415

    cli = typer.main.get_command(app)
    if check:
        stale = docs_gen.stale(cli, root)
        for path in stale:
            out.print(escape(f"not current: {path} (run dagpilot docs api-reference)"),
                      soft_wrap=True)
        if stale:
            raise typer.Exit(1)
        return
    for path, text in docs_gen.generated(cli).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        out.print(escape(str(path)), soft_wrap=True)


def main() -> None:
    """Entry point: errors dagpilot expects are one clear line on stderr, never a traceback."""
    try:
        app()
    except DagpilotError as error:
        err.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
        raise SystemExit(2) from None
    except OSError as error:  # the last net: readers name their paths, anything else still must
        where = f"{error.filename}: " if error.filename is not None else ""
        err.print(f"[bold red]error:[/] {escape(where + (error.strerror or str(error)))}",
                  soft_wrap=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
