"""`dagpilot ...`: the command line (typer + rich). The only module that prints."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dagpilot.clusters import load_cluster
from dagpilot.clusters import summary as cluster_summary
from dagpilot.core.config import Settings, load_settings
from dagpilot.core.errors import DagpilotError
from dagpilot.workloads import load
from dagpilot.workloads import summary as workload_summary
from dagpilot.workloads import validate as validator

app = typer.Typer(help="Physics-aware DRL scheduling of DAG workflows on Kubernetes.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
workloads_app = typer.Typer(help="Inspect workloads (traces and built-in generators).",
                            no_args_is_help=True)
clusters_app = typer.Typer(help="Inspect cluster inventories.", no_args_is_help=True)
app.add_typer(workloads_app, name="workloads")
app.add_typer(clusters_app, name="clusters")

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
def run(settings: SettingsOption = None) -> None:
    """The main job: the built-in workload on the built-in cluster."""
    loaded = _settings(settings)
    _show_cluster(load_cluster(BUILTIN_CLUSTER, loaded.loaders), as_json=False)
    _show_workload(BUILTIN_WORKLOAD, load(BUILTIN_WORKLOAD, loaded.loaders), as_json=False)


@app.command("validate")
def validate_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to check.")],
    settings: SettingsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check training data: DAG integrity, field sanity, resource conservation, time continuity.

    Exits 0 when every file is valid and 1 when any is not.
    """
    loaded = _settings(settings)
    report = validator.validate_paths(paths, loaded.validator, loaded.loaders)
    if as_json:
        out.print_json(json.dumps(validator.report_json(report)))
    else:
        for violation in report.violations:
            out.print(escape(str(violation)), soft_wrap=True)
        out.print(f"{report.files_checked} files checked, {len(report.skipped)} skipped, "
                  f"{len(report.violations)} violations")
    raise typer.Exit(0 if report.valid else 1)


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
        out.print_json(json.dumps(figures))
        return
    table = Table(title=f"workload {escape(spec)}")
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
        out.print_json(json.dumps({**figures, "groups": cluster_summary.node_groups(cluster)}))
        return
    table = Table(title=f"cluster {escape(cluster.name)}: {figures['nodes']} nodes, "
                        f"{figures['cpu']:.0f} CPUs, {figures['memory_bytes'] / 2**30:.0f} GiB, "
                        f"{figures['gpus']} GPUs, {figures['racks']} racks")
    for column in ("nodes", "CPU", "memory GiB", "GPUs", "GPU model", "disk"):
        table.add_column(column, justify="right")
    for group in cluster_summary.node_groups(cluster):
        table.add_row(str(group["count"]), f"{group['cpu']:g}",
                      f"{group['memory_bytes'] / 2**30:.0f}", str(group["gpus"]),
                      group["gpu_model"] or "-", group["disk"])
    out.print(table)


def main() -> None:
    """Entry point: errors dagpilot expects are one clear line on stderr, never a traceback."""
    try:
        app()
    except DagpilotError as error:
        err.print(f"[bold red]error:[/] {escape(str(error))}", soft_wrap=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
