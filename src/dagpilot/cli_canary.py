"""`dagpilot ops canary plan|advance|abort|status`: a model version rolled out by topology
(docs/OPERATION_GUIDE.md, checkpoint 7; docs/SERVING.md, "Two versions at once").

Part of the command line (cli.py mounts it under `ops`): it composes ops (the plan, the gate,
the state changes) with serve's shadow regret, which ops may not import. Heavy imports stay
inside the commands.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from dagpilot.cli_json import print_json

canary_app = typer.Typer(help="Roll a model version out by topology: stages of nodes chosen by "
                         "their zone and rack labels, gated on the canary's metrics.",
                         no_args_is_help=True)
out = Console()

Models = Annotated[Path, typer.Option("--models", help="The model registry (canary.json lives "
                                      "in its root).")]
Journal = Annotated[Path, typer.Option("--journal", help="The serving scheduler's decision "
                                       "journal (`serve scheduler --journal`).")]


@canary_app.command("plan")
def plan(
    *,
    model: Annotated[str, typer.Option("--model", help="The version to roll out (published, "
                                       "not current).")],
    kubeconfig: Annotated[Path, typer.Option(help="The cluster whose node labels make the "
                                             "stages.")],
    models: Models = Path("models"),
    stage: Annotated[list[str] | None, typer.Option(
        "--stage", help="A stage's label selector, in order (repeatable; `zone` and `rack` "
                        "stand for the topology labels; \"\" is every node). Default: the first "
                        "--racks racks of the first zone, that zone, every node.")] = None,
    racks: Annotated[int, typer.Option(help="Racks of the default first stage.")] = 3,
    window_minutes: Annotated[float, typer.Option(help="The gate's window.")] = 30.0,
    min_decisions: Annotated[int, typer.Option(
        help="Canary decisions the gate needs in the window.")] = 20,
    max_fallback_increase: Annotated[float, typer.Option(
        help="Fallback rate the canary may add over the stable (0.05: 5 points).")] = 0.05,
    max_unschedulable_increase: Annotated[float, typer.Option(
        help="Own-set unschedulable rate the canary may add.")] = 0.05,
    max_regret_increase: Annotated[float, typer.Option(
        help="Shadow regret the canary may add (mean JCT over kube-default's).")] = 0.02,
    no_regret_gate: Annotated[bool, typer.Option(
        "--no-regret-gate", help="Do not gate on shadow regret (no shadow journal).")] = False,
) -> None:
    """Write canary.json at stage 1 and print the nodes of each stage; refused for a version
    the registry does not verify, or while another canary is active."""
    from dagpilot.core.errors import SpecError  # noqa: PLC0415
    from dagpilot.ops import canary_plan  # noqa: PLC0415
    from dagpilot.registry.canary import Gate, read_canary, write_canary  # noqa: PLC0415

    for name, value in (("--window-minutes", window_minutes),
                        ("--max-fallback-increase", max_fallback_increase + 1),
                        ("--max-unschedulable-increase", max_unschedulable_increase + 1),
                        ("--max-regret-increase", max_regret_increase + 1),
                        ("--min-decisions", min_decisions)):
        if not value > 0:
            raise SpecError(str(value), f"{name} must be positive")
    gate = Gate(window_minutes * 60.0, min_decisions, max_fallback_increase,
                max_unschedulable_increase, None if no_regret_gate else max_regret_increase)
    cluster = canary_plan.live_cluster(kubeconfig)
    state = canary_plan.plan(models, cluster, model, texts=stage, gate=gate,
                             now_t=time.time(), racks=racks)
    present = read_canary(models)
    written = write_canary(models, state, present.revision if present else None)
    out.print(escape(f"canary {written.canary} over stable {written.stable}, "
                     f"{len(written.stages)} stages of {len(cluster.nodes)} nodes:"),
              soft_wrap=True)
    for index, one in enumerate(written.stages):
        here = "  <- now" if index == written.stage else ""
        out.print(escape(f"  {index + 1}. {one.nodes:5d} nodes  {one.selector or '(every node)'}"
                         f"{here}"), soft_wrap=True, highlight=False)


@canary_app.command("advance")
def advance(
    *,
    journal: Journal,
    models: Models = Path("models"),
    shadow_journal: Annotated[Path | None, typer.Option(
        help="A `serve scheduler --shadow` journal: its stream gives the shadow regret.")]
    = None,
) -> None:
    """The next stage (past the last: the canary becomes current) when the gate passes over
    the window; exit 1 naming each check that failed, and nothing changes."""
    from dagpilot.journal import read  # noqa: PLC0415
    from dagpilot.ops import canary_actions  # noqa: PLC0415

    state = canary_actions.active(models)
    regret = None
    if shadow_journal is not None and state.gate.max_regret_increase is not None:
        from dagpilot.serve.shadow_regret import regrets  # noqa: PLC0415

        regret = regrets(shadow_journal, models, (state.stable, state.canary))
    step = canary_actions.advance(models, read(journal).records, regret, time.time())
    for check in step.verdict.checks:
        verdict = "[green]PASS[/]" if check.passed else "[bold red]FAIL[/]"
        out.print(f"{verdict} {escape(check.detail)}", soft_wrap=True)
    if not step.verdict.passed:
        out.print(escape(f"refused: the canary stays at stage {state.stage + 1} of "
                         f"{len(state.stages)}"), soft_wrap=True)
        raise typer.Exit(1)
    after = step.state
    if step.promoted:
        out.print(escape(f"promoted: {after.canary} is current on every node"), soft_wrap=True)
        return
    out.print(escape(f"stage {after.stage + 1} of {len(after.stages)}: "
                     f"{after.stages[after.stage].nodes} nodes "
                     f"({after.stages[after.stage].selector or 'every node'})"), soft_wrap=True)


@canary_app.command("abort")
def abort(
    *,
    models: Models = Path("models"),
    reason: Annotated[str, typer.Option(help="Why, for the history.")] = "aborted by operator",
) -> None:
    """Every node back to the stable model at once (the scheduler's next reload)."""
    from dagpilot.ops import canary_actions  # noqa: PLC0415

    ended = canary_actions.abort(models, time.time(), reason)
    out.print(escape(f"aborted: {ended.canary} serves no node; {ended.stable} serves all"),
              soft_wrap=True)


@canary_app.command("status")
def status(
    *,
    models: Models = Path("models"),
    kubeconfig: Annotated[Path | None, typer.Option(
        help="Count each stage's nodes as the cluster has them now.")] = None,
    journal: Annotated[Path | None, typer.Option(
        help="The serving journal: the window's rates per node set.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The canary's stage, its nodes per stage, and the gate's figures over the window."""
    from dagpilot.journal import read  # noqa: PLC0415
    from dagpilot.ops import canary_actions, canary_plan  # noqa: PLC0415

    cluster = canary_plan.live_cluster(kubeconfig) if kubeconfig is not None else None
    records = read(journal).records if journal is not None else None
    document = canary_actions.status(models, cluster, records, time.time())
    if as_json:
        print_json(document)
        return
    _print_status(document)


def _print_status(document: dict[str, Any]) -> None:
    if document.get("canary") is None:
        out.print(escape(f"no canary; current: {document.get('current')}"), soft_wrap=True)
        return
    out.print(escape(f"canary {document['canary']} over stable {document['stable']}: "
                     f"{document['status']}, stage {document['stage'] + 1} of "
                     f"{len(document['stages'])} (current: {document['current']})"),
              soft_wrap=True)
    for index, stage in enumerate(document["stages"]):
        now = f", {stage['nodes_now']} now" if "nodes_now" in stage else ""
        mark = "  <- now" if index == document["stage"] else ""
        out.print(escape(f"  {index + 1}. {stage['nodes']} nodes planned{now}  "
                         f"{stage['selector'] or '(every node)'}{mark}"), soft_wrap=True,
                  highlight=False)
    for name in ("canary", "stable"):
        rates = document.get("window", {}).get(name)
        if rates is not None:
            out.print(escape(f"  {name}: {rates['placed']} placed, fallback "
                             f"{rates['fallback_rate']:.2%}, unschedulable "
                             f"{rates['unschedulable_rate']:.2%}"), soft_wrap=True)
