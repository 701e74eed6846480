"""PNG plots of a benchmark: JCT CDF, backlog over time, utilisation over time.

Matplotlib's object API with the Agg canvas (no pyplot, no global figure state, no display).
Time series come from the first seed each scheduler finished (runs of different seeds do not
line up in time); the JCT CDF pools every seed. Long series are reduced to a few hundred bins:
the backlog keeps each bin's maximum (spikes stay visible), utilisation its time-weighted mean.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from dagpilot.bench.metrics import FloatArray, Window
from dagpilot.bench.results import RunResult, RunSeries

BINS = 600
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
           "tab:pink", "tab:gray", "tab:olive", "tab:cyan")
LINESTYLES = ("-", "--", "-.", ":")
BURST_COLOUR = "gold"


def write_plots(results: Sequence[RunResult], schedulers: Sequence[str],
                bursts: Sequence[Window], out_dir: Path) -> list[Path]:
    """jct_cdf.png, backlog.png and utilisation.png in `out_dir`; the paths written."""
    names = [name for name in schedulers if any(r.scheduler == name for r in results)]
    if not names:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    first = {name: _first_seed(results, name) for name in names}
    paths = [out_dir / "jct_cdf.png", out_dir / "backlog.png", out_dir / "utilisation.png"]
    plot_jct_cdf({name: [r.series for r in results if r.scheduler == name] for name in names},
                 paths[0])
    plot_backlog(first, bursts, paths[1])
    plot_utilisation(first, bursts, paths[2])
    return paths


def plot_jct_cdf(runs: dict[str, list[RunSeries]], path: Path) -> None:
    """Per scheduler, the share of all jobs finished within each JCT (log time axis); jobs that
    never finished keep a curve below 1."""
    figure = Figure(figsize=(9, 5.5), layout="constrained")
    axes = figure.add_subplot()
    for (name, series), (colour, style) in zip(runs.items(), _styles(), strict=False):
        values = np.sort(np.concatenate([run.jcts_s for run in series]))
        total = sum(run.jobs for run in series)
        if not values.size or not total:
            continue
        fraction = np.arange(1, values.size + 1) / total
        missing = total - values.size
        note = f", {missing} of {total} never finished" if missing else ""
        axes.step(values, fraction, where="post", color=colour, linestyle=style, linewidth=1.6,
                  label=f"{name} (finished: median {_duration(float(np.median(values)))}{note})")
    axes.set_xscale("log")
    axes.set_xlabel("job completion time (s, log scale)")
    axes.set_ylabel("share of jobs finished")
    axes.set_ylim(0, 1.01)
    axes.set_title("Job completion time CDF (all seeds)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="upper left", fontsize="small")
    figure.savefig(path, dpi=110)


def plot_backlog(series: dict[str, RunSeries], bursts: Sequence[Window], path: Path) -> None:
    """Pending pods over time, one panel per scheduler, the burst shaded."""
    figure, panels, scale, unit = _panels(series, "pending pods (backlog) over time")
    for panel, (name, run), colour in zip(panels, series.items(), itertools.cycle(COLOURS),
                                          strict=False):
        edges = _edges(run)
        peaks = binned_max(run.times_s, run.pending, edges)
        panel.fill_between(edges[:-1] / scale, peaks, step="post", color=colour, alpha=0.35)
        panel.step(edges[:-1] / scale, peaks, where="post", color=colour, linewidth=1.2)
        _shade(panel, bursts, scale)
        panel.set_title(f"{name}: peak {int(run.pending.max()) if run.pending.size else 0} pods",
                        fontsize="medium")
        panel.set_ylabel("pending pods")
        panel.yaxis.set_major_locator(MaxNLocator(integer=True))
    _finish(figure, panels, bursts, unit, path)


def plot_utilisation(series: dict[str, RunSeries], bursts: Sequence[Window],
                     path: Path) -> None:
    """CPU requested, CPU busy and GPUs bound (shares of the cluster), one panel per scheduler."""
    figure, panels, scale, unit = _panels(series, "cluster utilisation over time")
    lines = (("cpu_allocated", "CPU requested", "tab:blue", "-"),
             ("cpu_used", "CPU busy", "tab:green", "--"),
             ("gpu_allocated", "GPUs bound", "tab:red", "-"))
    for panel, (name, run) in zip(panels, series.items(), strict=False):
        edges = _edges(run)
        for field, label, colour, style in lines:
            means = binned_mean(run.times_s, getattr(run, field), edges)
            panel.plot(edges[:-1] / scale, 100 * means, color=colour, linestyle=style,
                       linewidth=1.2, label=label)
        _shade(panel, bursts, scale)
        panel.set_title(name, fontsize="medium")
        panel.set_ylim(0, 105)
        panel.set_ylabel("% of cluster")
    panels[0].legend(loc="upper right", fontsize="small")
    _finish(figure, panels, bursts, unit, path)


def binned_max(times: FloatArray, values: FloatArray, edges: FloatArray) -> FloatArray:
    """The maximum of the step function over each bin [edges[i], edges[i+1])."""
    if not times.size:
        return np.zeros(edges.size - 1)
    starts = np.searchsorted(times, edges[:-1], side="right") - 1
    peaks = np.where(starts >= 0, values[np.clip(starts, 0, None)], 0.0)
    inside = np.searchsorted(edges, times, side="right") - 1
    valid = (inside >= 0) & (inside < peaks.size)
    np.maximum.at(peaks, inside[valid], values[valid])
    return peaks


def binned_mean(times: FloatArray, values: FloatArray, edges: FloatArray) -> FloatArray:
    """The time-weighted mean of the step function over each bin (0 before the first sample)."""
    if not times.size:
        return np.zeros(edges.size - 1)
    areas = np.concatenate(([0.0], np.cumsum(values[:-1] * np.diff(times))))
    index = np.searchsorted(times, edges, side="right") - 1
    clipped = np.clip(index, 0, None)
    integral = np.where(index >= 0, areas[clipped] + values[clipped] * (edges - times[clipped]),
                        0.0)
    return np.diff(integral) / np.diff(edges)


def _first_seed(results: Sequence[RunResult], name: str) -> RunSeries:
    return min((r for r in results if r.scheduler == name), key=lambda r: r.seed).series


def _edges(run: RunSeries) -> FloatArray:
    end = max(run.end_s, float(run.times_s[-1]) if run.times_s.size else 0.0, 1.0)
    return np.linspace(0.0, end, BINS + 1)


def _panels(series: dict[str, RunSeries],
            title: str) -> tuple[Figure, list[Axes], float, str]:
    columns = 1 if len(series) <= 3 else 2
    rows = math.ceil(len(series) / columns)
    figure = Figure(figsize=(7 * columns, 1.2 + 2.1 * rows), layout="constrained")
    grid = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    panels = list(grid.flat)
    for spare in panels[len(series):]:
        spare.set_visible(False)
    end = max((run.end_s for run in series.values()), default=1.0)
    scale, unit = (3600.0, "h") if end > 3 * 3600 else (60.0, "min")
    figure.suptitle(f"{title} (first seed)")
    return figure, panels[:len(series)], scale, unit


def _finish(figure: Figure, panels: list[Axes], bursts: Sequence[Window], unit: str,
            path: Path) -> None:
    for panel in panels:
        panel.grid(True, alpha=0.3)
    columns = 1 if len(panels) <= 3 else 2
    for panel in panels[-columns:]:
        panel.set_xlabel(f"simulated time ({unit})")
        panel.tick_params(labelbottom=True)
    if bursts:
        figure.text(0.01, 0.005, "shaded: arrival burst", fontsize="small",
                    color="darkgoldenrod")
    figure.savefig(path, dpi=100)


def _shade(panel: Axes, bursts: Sequence[Window], scale: float) -> None:
    """The burst window, with edge lines so that a short burst on a long axis still shows."""
    for start, end in bursts:
        panel.axvspan(start / scale, end / scale, color=BURST_COLOUR, alpha=0.35, linewidth=0)
        for edge in (start, end):
            panel.axvline(edge / scale, color="darkgoldenrod", linestyle=":", linewidth=1.0)


def _styles() -> itertools.cycle[tuple[str, str]]:
    return itertools.cycle((colour, style) for style in LINESTYLES for colour in COLOURS)


def _duration(seconds: float) -> str:
    if seconds >= 7200:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"
