"""The scrape jobs the live view needs: one definition for the sandbox's Prometheus and for
`dagpilot ops prom-config`, which differ only in where the targets come from.

Two jobs, each scraped every 5 s (the view polls Prometheus once per scrape interval):
- `node-exporter`: node_exporter's series, of which `metric_relabel_configs` keeps only the
  metrics the view's queries name, so a 5 s scrape stores a handful of series per host, not
  the thousand node_exporter exposes;
- `node-agent`: dagpilot's node agent (in the sandbox, the hardware twin), which exports only
  dagpilot's own metrics, all of them read by someone (view, diagnose-node, dashboards).

The keep list is derived from live.prometheus's queries, not written out, so the two cannot
disagree; live/node_agent/metric_names.py tells the agent's names from node_exporter's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from dagpilot.live.node_agent.metric_names import METRICS_BY_NAME
from dagpilot.live.prometheus import default_queries

NODE_EXPORTER_JOB = "node-exporter"
NODE_AGENT_JOB = "node-agent"
SCRAPE_INTERVAL_S = 5

_NAME = re.compile(r"(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                       "and", "or", "unless", "offset", "inf", "nan"})


def metric_names(promql: str) -> frozenset[str]:
    """The metric names a PromQL expression selects: not its functions, aggregations,
    label names, label values or keywords."""
    text = _STRING.sub('""', promql)
    for pattern in (_MATCHERS, _RANGE, _GROUPING):
        text = pattern.sub(" ", text)
    names = set()
    for match in _NAME.finditer(text):
        followed_by_call = text[match.end():].lstrip().startswith("(")
        if not followed_by_call and match.group().lower() not in _KEYWORDS:
            names.add(match.group())
    return frozenset(names)


def view_promql() -> tuple[str, ...]:
    """Every expression of the view's signal queries (value and sample time)."""
    return tuple(text for query in default_queries() for text in (query.value, query.sampled))


def node_exporter_keep_list(expressions: Iterable[str] | None = None) -> tuple[str, ...]:
    """node_exporter's metrics that the expressions (by default the view's) read, sorted."""
    named = set().union(*(metric_names(e) for e in expressions or view_promql()))
    return tuple(sorted(named - set(METRICS_BY_NAME)))


def keep_rule(metrics: Iterable[str]) -> dict[str, Any]:
    """A metric_relabel_configs entry keeping exactly these metric names (RE2, anchored)."""
    names = sorted(metrics)
    if not names or not all(_NAME.fullmatch(name) for name in names):
        raise ValueError(f"not a list of metric names: {names!r}")
    return {"source_labels": ["__name__"], "regex": "|".join(names), "action": "keep"}


def global_config() -> dict[str, str]:
    interval = f"{SCRAPE_INTERVAL_S}s"
    return {"scrape_interval": interval, "evaluation_interval": interval}


def scrape_configs(node_exporter: Mapping[str, Any],
                   node_agent: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The two jobs. `node_exporter` and `node_agent` are each job's target part (any of
    static_configs, file_sd_configs, kubernetes_sd_configs, relabel_configs); node_exporter's
    targets must end up with the Kubernetes node name as label `node`, which the view groups
    by (the agent sets it itself)."""
    interval = f"{SCRAPE_INTERVAL_S}s"
    return [
        {"job_name": NODE_EXPORTER_JOB, "scrape_interval": interval, **node_exporter,
         "metric_relabel_configs": [keep_rule(node_exporter_keep_list())]},
        {"job_name": NODE_AGENT_JOB, "scrape_interval": interval, **node_agent},
    ]
