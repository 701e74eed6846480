"""The sandbox's Prometheus scrapes a real node agent on this host (a file_sd target, as a
real cluster's service discovery would add it) and holds its series with their sample times."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from dagpilot.live.node_agent import metric_names as m
from dagpilot.sandbox.components import add_scrape_target
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.state import SandboxState
from tests.live.kube import wait_for
from tests.live.node_agent.conftest import start_agent, stop_agent


def _query(state: SandboxState, promql: str) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"query": promql})
    url = f"http://127.0.0.1:{state.ports['prometheus']}/api/v1/query?{query}"
    with urllib.request.urlopen(url, timeout=5) as reply:
        return list(json.load(reply)["data"]["result"])


def test_prometheus_scrapes_the_node_agent_and_keeps_its_sample_times(
        sandbox: SandboxState) -> None:
    agent = start_agent("--node-name", "sandbox-host", "--address", "127.0.0.1", "--port",
                        "0", "--period", "1")
    target = add_scrape_target(Layout(Path(sandbox.kubeconfig).parent), "node-agent",
                               agent.port, {"role": "node-agent"})
    try:
        stamps = wait_for("the agent's probe times in Prometheus", lambda: _query(
            sandbox, f'{m.PROBE_SAMPLE_TIMESTAMP_SECONDS}{{node="sandbox-host"}}'), 60)
        up = _query(sandbox, 'up{role="node-agent"}')
        assert [sample["value"][1] for sample in up] == ["1"]
        for sample in stamps:
            scraped_at, probe_time = sample["value"][0], float(sample["value"][1])
            assert 0 <= scraped_at - probe_time < 30  # a real, recent measurement time
        awaits = _query(sandbox, f'{m.DISK_AWAIT_MILLISECONDS}{{node="sandbox-host"}}')
        assert awaits and all(float(s["value"][1]) >= 0 for s in awaits)
    finally:
        target.unlink()
        assert stop_agent(agent) == 0
