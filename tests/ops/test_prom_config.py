"""The Prometheus configuration: its keep list is exactly what the live view queries, Debian's
promtool accepts the config and the rules, the rules compute MBPI and sustained await as the
state encoder does, the sandbox's Prometheus uses the same jobs, and deploy/ is current."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.core.errors import SpecError
from dagpilot.live import prometheus_config
from dagpilot.live.node_agent.metric_names import METRICS_BY_NAME
from dagpilot.live.prometheus import Prometheus, default_queries
from dagpilot.ops import prom_config, prom_rules
from dagpilot.sandbox import components
from dagpilot.sandbox.layout import Layout
from dagpilot.state import bands
from tests.conftest import REPO

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian's prometheus)")


class Recording(Prometheus):
    """Answers every query with no series and keeps the PromQL it was asked."""

    def __init__(self) -> None:
        super().__init__("http://recording.invalid")
        self.asked: list[str] = []

    def query(self, promql: str, at_s: float | None = None) -> list[tuple[dict[str, str], float]]:
        self.asked.append(promql)
        return []


def test_the_keep_list_is_exactly_node_exporters_metrics_the_view_queries() -> None:
    prometheus = Recording()
    prometheus.sample(default_queries(), 1000.0)  # what the live view's poller sends
    named = set().union(*(prometheus_config.metric_names(q) for q in prometheus.asked))
    keep = set(prometheus_config.node_exporter_keep_list())
    assert keep == named - set(METRICS_BY_NAME)
    assert keep == {"node_cpu_seconds_total"}
    jobs = prom_config.cluster_config()["scrape_configs"]
    node_exporter = next(j for j in jobs if j["job_name"] == "node-exporter")
    assert node_exporter["metric_relabel_configs"] == [
        {"source_labels": ["__name__"], "regex": "node_cpu_seconds_total", "action": "keep"}]
    assert node_exporter["scrape_interval"] == "5s"


@pytest.mark.parametrize(("promql", "names"), [
    ('sum by (node) (rate(node_cpu_seconds_total{mode!~"idle|iowait",node!=""}[20s]))',
     {"node_cpu_seconds_total"}),
    ("max by (node) (a_metric) or 0 * min by (node) (timestamp(b:rule{x=\"y z\"}))",
     {"a_metric", "b:rule"}),
    ("clamp((max(u) - 0.3) / 1e9, 0, 1) > bool 2", {"u"}),
    ("rate(x_total[5m] offset 1h) and on (node) y", {"x_total", "y"}),
])
def test_metric_names_are_read_from_promql(promql: str, names: set[str]) -> None:
    assert prometheus_config.metric_names(promql) == names


def test_a_keep_rule_refuses_what_is_not_a_metric_name() -> None:
    with pytest.raises(ValueError, match="metric names"):
        prometheus_config.keep_rule(["node_cpu", "a|b"])


def _promtool(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)


@needs_promtool
def test_promtool_accepts_the_file_sd_config_and_its_rules(tmp_path: Path) -> None:
    config = prom_config.cluster_config(targets_dir=tmp_path / "targets")
    out, rules = prom_config.write(tmp_path / "prometheus.yaml", config)
    checked = _promtool("check", "config", out.name, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 1 rule files found" in checked.stdout  # the rules file it references
    checked = _promtool("check", "rules", rules.name, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "3 rules found" in checked.stdout


@needs_promtool
def test_the_kubernetes_config_passes_promtool_but_for_the_discovery_debian_leaves_out(
        tmp_path: Path) -> None:
    """Debian builds Prometheus without Kubernetes discovery, so its promtool cannot parse
    kubernetes_sd_configs: every other part is checked with file_sd in its place."""
    config = prom_config.cluster_config()
    for job in config["scrape_configs"]:
        sd = job.pop("kubernetes_sd_configs")
        assert sd[0]["role"] == "pod" and sd[0]["selectors"][0]["role"] == "pod"
        job["file_sd_configs"] = [{"files": [str(tmp_path / "*.json")]}]
    prom_config.write(tmp_path / "prometheus.yaml", config)
    checked = _promtool("check", "config", "prometheus.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    node_exporter = config["scrape_configs"][0]
    assert {"source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node",
            "action": "replace"} in node_exporter["relabel_configs"]


@needs_promtool
def test_the_rules_compute_mbpi_and_sustained_await_as_the_state_encoder(
        tmp_path: Path) -> None:
    utilisation = [0.2, 0.5, 0.9, 1.2]  # below the floor, inside, near the top, above
    awaits = [10, 60, 70, 55, 80]  # one 5 s sample each; the last three are all above 50
    tests = {"rule_files": [prom_rules.RULES_FILE], "evaluation_interval": "5s", "tests": [{
        "interval": "5s",
        "input_series": [
            {"series": f'dagpilot_memory_bandwidth_utilisation{{node="n{i}",source="x"}}',
             "values": f"{u} {u} {u}"} for i, u in enumerate(utilisation)] + [
            {"series": 'dagpilot_disk_await_milliseconds{node="a",device="vda"}',
             "values": " ".join(map(str, awaits))},
            {"series": 'dagpilot_disk_await_milliseconds{node="a",device="vdb"}',
             "values": "1 1 1 1 1"}],
        "promql_expr_test": [
            {"expr": prom_rules.MBPI, "eval_time": "10s", "exp_samples": [
                {"labels": f'{prom_rules.MBPI}{{node="n{i}"}}',
                 "value": float(bands.mbpi(u))} for i, u in enumerate(utilisation)]},
            {"expr": prom_rules.AWAIT_MAX, "eval_time": "20s", "exp_samples": [
                {"labels": f'{prom_rules.AWAIT_MAX}{{node="a"}}', "value": 80}]},
            {"expr": prom_rules.AWAIT_SUSTAINED, "eval_time": "20s", "exp_samples": [
                {"labels": f'{prom_rules.AWAIT_SUSTAINED}{{node="a"}}', "value": 55}]},
        ]}]}
    (tmp_path / prom_rules.RULES_FILE).write_text(
        prom_config.render(prom_rules.recording_rules()))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests))
    checked = _promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _sandbox_config(tmp_path: Path, twin: bool) -> dict[str, Any]:
    layout = Layout(tmp_path)
    layout.config.mkdir(parents=True, exist_ok=True)
    ports = components.Ports.of(list(range(20000, 20009)))
    components.prometheus(layout, "prometheus", ports, twin=twin)
    loaded: dict[str, Any] = yaml.safe_load((layout.config / "prometheus.yaml").read_text())
    return loaded


@needs_promtool
def test_the_sandbox_prometheus_uses_the_same_jobs(tmp_path: Path) -> None:
    config = _sandbox_config(tmp_path, twin=True)
    assert config["global"] == prometheus_config.global_config()
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == {"node-exporter", "node-agent"}
    assert jobs["node-exporter"]["metric_relabel_configs"] == \
        prom_config.cluster_config()["scrape_configs"][0]["metric_relabel_configs"]
    assert jobs["node-exporter"]["static_configs"] == [{"targets": ["127.0.0.1:20006"]}]
    assert jobs["node-agent"]["static_configs"] == [{"targets": ["127.0.0.1:20008"]}]
    assert jobs["node-agent"]["file_sd_configs"][0]["files"] == [
        str(Layout(tmp_path).scrape_targets / "*.json")]
    checked = _promtool("check", "config", "prometheus.yaml", cwd=Layout(tmp_path).config)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "static_configs" not in _sandbox_config(tmp_path, twin=False)["scrape_configs"][1]


def test_deploy_ships_what_the_code_generates(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ops", "prom-config", "--out",
                                      str(tmp_path / "prometheus.yaml")])
    assert result.exit_code == 0, result.output
    for name in ("prometheus.yaml", prom_rules.RULES_FILE):
        shipped = (REPO / "deploy" / "prometheus" / name).read_text()
        assert shipped == (tmp_path / name).read_text(), \
            f"deploy/prometheus/{name} is stale: dagpilot ops prom-config --out " \
            "deploy/prometheus/prometheus.yaml"


def test_stdout_has_the_config_or_with_rules_the_rules() -> None:
    config = CliRunner().invoke(app, ["ops", "prom-config"])
    assert config.exit_code == 0
    assert yaml.safe_load(config.stdout)["rule_files"] == [prom_rules.RULES_FILE]
    rules = CliRunner().invoke(app, ["ops", "prom-config", "--rules"])
    assert [r["record"] for r in yaml.safe_load(rules.stdout)["groups"][0]["rules"]] == [
        prom_rules.AWAIT_MAX, prom_rules.AWAIT_SUSTAINED, prom_rules.MBPI]


def test_a_config_named_like_the_rules_or_unwritable_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="rules file's name"):
        prom_config.write(tmp_path / prom_rules.RULES_FILE, prom_config.cluster_config())
    with pytest.raises(SpecError, match="cannot write"):
        prom_config.write(tmp_path / "missing" / "p.yaml", prom_config.cluster_config())
