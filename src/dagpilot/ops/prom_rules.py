"""The recording rules for await and MBPI, from the same constants the state encoder uses
(state/bands.py), so a dashboard's MBPI is the policy's MBPI.

- `dagpilot:node_disk_await_milliseconds:max`: the node's worst device (what the view reads);
- `dagpilot:node_disk_await_milliseconds:min_3_samples`: its lowest over the last three
  samples, i.e. the await the node kept for three samples running (the seed's "await > 50 ms
  three samples running": compare this with the threshold);
- `dagpilot:node_mbpi`: clamp((u - 0.3) / 0.7, 0, 1) of the node's memory-bandwidth
  utilisation u.
"""

from __future__ import annotations

from typing import Any

from dagpilot.live.node_agent import metric_names as m
from dagpilot.live.prometheus_config import SCRAPE_INTERVAL_S
from dagpilot.state.bands import MBPI_FLOOR, MBPI_SPAN, SUSTAINED_SAMPLES

GROUP = "dagpilot-node-signals"
AWAIT_MAX = "dagpilot:node_disk_await_milliseconds:max"
AWAIT_SUSTAINED = "dagpilot:node_disk_await_milliseconds:min_3_samples"
MBPI = "dagpilot:node_mbpi"
RULES_FILE = "dagpilot-rules.yaml"


def recording_rules() -> dict[str, Any]:
    """The rules file: one group evaluated every scrape interval."""
    window_s = SUSTAINED_SAMPLES * SCRAPE_INTERVAL_S
    utilisation = f"max by ({m.NODE}) ({m.MEMORY_BANDWIDTH_UTILISATION})"
    return {"groups": [{
        "name": GROUP, "interval": f"{SCRAPE_INTERVAL_S}s",
        "rules": [
            {"record": AWAIT_MAX,
             "expr": f"max by ({m.NODE}) ({m.DISK_AWAIT_MILLISECONDS})"},
            # Three evaluation intervals: the last three values of the rule above (four when
            # an evaluation falls on the window's edge, which only lowers the minimum).
            {"record": AWAIT_SUSTAINED, "expr": f"min_over_time({AWAIT_MAX}[{window_s}s])"},
            {"record": MBPI,
             "expr": f"clamp(({utilisation} - {MBPI_FLOOR!r}) / {MBPI_SPAN!r}, 0, 1)"},
        ]}]}
