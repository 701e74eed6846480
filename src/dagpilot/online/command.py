"""`dagpilot online run --config config.yaml`: the adapter's command (docs/ONLINE.md).

Imports nothing heavy at module level: the CLI loads this file on every command, torch only
when the adapter runs.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Annotated

import typer

from dagpilot.core.cpu_list import parse_cpus
from dagpilot.core.errors import SpecError

online_app = typer.Typer(help="The online adapter: drift trigger, LoRA fine-tune, gates, "
                         "circuit breaker (docs/ONLINE.md).", no_args_is_help=True)
log = logging.getLogger(__name__)


def fine_tune_cpus(text: str) -> frozenset[int]:
    """`1`, `1,3` or `2-3`: the CPUs the fine-tune process may use, all of them this one's."""
    cpus = parse_cpus(text)
    allowed = os.sched_getaffinity(0)
    if not cpus <= allowed:
        raise SpecError(text, f"--cpus: this process may use CPUs {sorted(allowed)}")
    return cpus


def default_cpus() -> frozenset[int]:
    """The last CPU this process may use: serving pins itself from the first (serve --cpus)."""
    return frozenset({max(os.sched_getaffinity(0))})


Config = Annotated[Path, typer.Option("--config", help="config.yaml (online_learning: ...)")]
JournalPath = Annotated[Path, typer.Option("--journal", help="the decision journal")]
Models = Annotated[Path, typer.Option("--models", help="the model registry")]
State = Annotated[Path, typer.Option("--state", help="the breaker's state, online.prom")]
Cpus = Annotated[str, typer.Option("--cpus", help="CPUs of the fine-tune process, disjoint "
                                   "from the serving process's (default: the last one)")]
Kubeconfig = Annotated[Path | None, typer.Option("--kubeconfig",
                                                 help="send the breaker's Event here")]
Namespace = Annotated[str, typer.Option("--namespace", help="the Event's namespace")]
Interval = Annotated[float, typer.Option("--interval-s", help="seconds between cycles")]
Once = Annotated[bool, typer.Option("--once", help="one cycle, then exit")]


@online_app.command("run")
def run(*, config: Config, journal: JournalPath = Path("journal.jsonl"),
        models: Models = Path("models"), state: State = Path(".dagpilot-online"),
        cpus: Cpus = "", kubeconfig: Kubeconfig = None, namespace: Namespace = "default",
        interval_s: Interval = 60.0, once: Once = False) -> None:
    """Watch the journal; on drift fine-tune, validate, publish; roll back when it goes wrong."""
    from dagpilot.online.adapter import Adapter  # noqa: PLC0415  (torch)
    from dagpilot.online.config import load_config  # noqa: PLC0415

    settings = load_config(config)
    adapter = Adapter(settings, journal_path=journal, models=models, state=state,
                      cpus=fine_tune_cpus(cpus) if cpus else default_cpus(),
                      kubeconfig=kubeconfig, namespace=namespace)
    while True:
        report = adapter.cycle()
        typer.echo(f"online: {report.action}{': ' + report.detail if report.detail else ''}")
        if once:
            return
        time.sleep(interval_s)
