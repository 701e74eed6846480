"""Each component of the sandbox: its configuration files, its command line, its probe.

Everything listens on 127.0.0.1 on ports chosen free at `up`. There is no controller manager,
so the ServiceAccount and TaintNodesByCondition admission plugins are off (nothing would make
the default ServiceAccounts or lift the not-ready taint), and nothing garbage-collects.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dagpilot.live import prometheus_config
from dagpilot.sandbox import rest
from dagpilot.sandbox.layout import Layout
from dagpilot.sandbox.process import Component

STAGES = Path(__file__).parent / "stages"
ARGO_NAMESPACE = "argo"
KWOK_NODE_LABEL = ("type", "kwok")
SCRAPE_INTERVAL_S = prometheus_config.SCRAPE_INTERVAL_S


@dataclass(frozen=True, slots=True)
class Ports:
    etcd: int
    etcd_peer: int
    apiserver: int
    scheduler: int
    kwok: int
    argo_metrics: int
    node_exporter: int
    prometheus: int
    twin: int

    @classmethod
    def of(cls, numbers: list[int]) -> Ports:
        return cls(*numbers)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def api_endpoint(layout: Layout, port: int) -> rest.Endpoint:
    pki = layout.pki
    return rest.Endpoint("kube-apiserver", port, pki / "ca.crt", pki / "admin.crt",
                         pki / "admin.key")


def kubeconfig(layout: Layout, path: Path, api_port: int, identity: str,
               namespace: str = "default") -> Path:
    """A kubeconfig for `identity`'s client certificate, pointing at the sandbox."""
    pki = layout.pki
    return _write(path, {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "sandbox", "cluster": {
            "server": f"https://127.0.0.1:{api_port}",
            "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": identity, "user": {
            "client-certificate": str(pki / f"{identity}.crt"),
            "client-key": str(pki / f"{identity}.key")}}],
        "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": identity,
                                                     "namespace": namespace}}],
        "current-context": "sandbox"})


def etcd(layout: Layout, bins: Path, ports: Ports) -> Component:
    client, peer = f"http://127.0.0.1:{ports.etcd}", f"http://127.0.0.1:{ports.etcd_peer}"
    endpoint = rest.Endpoint("etcd", ports.etcd)
    return Component("etcd", [
        str(bins / "etcd"), "--name=sandbox", f"--data-dir={layout.data / 'etcd'}",
        f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=sandbox={peer}", "--unsafe-no-fsync",
        "--auto-compaction-retention=1", "--quota-backend-bytes=8589934592",
        "--log-level=warn"], lambda: rest.healthy(endpoint, "/health"), ports.etcd)


def kube_apiserver(layout: Layout, bins: Path, ports: Ports) -> Component:
    pki = layout.pki
    # The API server presents this client certificate to every admission webhook ("*").
    webhook_kubeconfig = _write(layout.config / "webhook-client.kubeconfig", {
        "apiVersion": "v1", "kind": "Config", "users": [{"name": "*", "user": {
            "client-certificate": str(pki / "apiserver-to-webhook.crt"),
            "client-key": str(pki / "apiserver-to-webhook.key")}}]})
    webhook_config = {"apiVersion": "apiserver.config.k8s.io/v1",
                      "kind": "WebhookAdmissionConfiguration",
                      "kubeConfigFile": str(webhook_kubeconfig)}
    admission = _write(layout.config / "admission.yaml", {
        "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration",
        "plugins": [{"name": name, "configuration": webhook_config}
                    for name in ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook")]})
    endpoint = api_endpoint(layout, ports.apiserver)
    return Component("kube-apiserver", [
        str(bins / "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{ports.etcd}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
        f"--secure-port={ports.apiserver}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--service-account-issuer=https://kubernetes.default.svc",
        f"--service-account-key-file={pki / 'service-account.pub'}",
        f"--service-account-signing-key-file={pki / 'service-account.key'}",
        "--service-cluster-ip-range=10.96.0.0/16", "--authorization-mode=RBAC",
        "--allow-privileged=true",
        "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
        f"--admission-control-config-file={admission}",
        "--enable-priority-and-fairness=false", "--max-requests-inflight=0",
        "--max-mutating-requests-inflight=0", "--endpoint-reconciler-type=none",
        "--profiling=false", "--event-ttl=1h"],
        lambda: rest.healthy(endpoint, "/readyz"), ports.apiserver)


def kube_scheduler(layout: Layout, bins: Path, ports: Ports, *,
                   extenders: list[dict[str, Any]] | None = None,
                   profile: str = "default-scheduler", name: str = "kube-scheduler",
                   port: int | None = None, extra: dict[str, Any] | None = None) -> Component:
    """The stock kube-scheduler, default profile, client QPS raised, no leader election.

    A second one (another `name`, `profile`, `port`; `extenders` and any other configuration
    keys in `extra`) schedules only the pods whose schedulerName is its profile's."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig(
            layout, layout.config / "kube-scheduler.kubeconfig", ports.apiserver,
            "kube-scheduler")), "qps": 1000, "burst": 2000},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": profile}], **(extra or {})}
    if extenders:
        config["extenders"] = extenders
    path = _write(layout.config / f"{name}.yaml", config)
    pki = layout.pki
    port = ports.scheduler if port is None else port
    endpoint = rest.Endpoint(name, port, pki / "ca.crt")
    return Component(name, [
        str(bins / "kube-scheduler"), f"--config={path}", "--bind-address=127.0.0.1",
        f"--secure-port={port}", f"--tls-cert-file={pki / 'serving.crt'}",
        f"--tls-private-key-file={pki / 'serving.key'}"],
        lambda: rest.healthy(endpoint, "/healthz"), port)


def kwok(layout: Layout, bins: Path, ports: Ports, twin: bool) -> Component:
    """kwok with dagpilot's stages; with the twin on, the twin (not kwok) ends each pod."""
    stages = ["node.yaml", "pod-start.yaml", *([] if twin else ["pod-complete.yaml"])]
    endpoint = rest.Endpoint("kwok", ports.kwok)
    key, value = KWOK_NODE_LABEL
    return Component("kwok", [
        str(bins / "kwok"), f"--kubeconfig={kubeconfig(layout, layout.config / 'kwok.kubeconfig', ports.apiserver, 'admin')}",  # noqa: E501
        f"--manage-nodes-with-label-selector={key}={value}",
        *(f"--config={STAGES / name}" for name in stages),
        "--cidr=10.244.0.0/16", "--node-ip=10.240.0.1", "--node-lease-duration-seconds=40",
        f"--server-address=127.0.0.1:{ports.kwok}"],
        lambda: rest.healthy(endpoint, "/healthz"), ports.kwok)


def workflow_controller_configmap(ports: Ports) -> dict[str, Any]:
    """The configmap Argo's controller refuses to start without; metrics on a free port."""
    metrics = {"enabled": True, "port": ports.argo_metrics, "secure": False}
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "workflow-controller-configmap", "namespace": ARGO_NAMESPACE},
            "data": {"metricsConfig": yaml.safe_dump(metrics),
                     "telemetryConfig": yaml.safe_dump({"enabled": False})}}


def workflow_controller(layout: Layout, bins: Path, ports: Ports) -> Component:
    endpoint = rest.Endpoint("workflow-controller", ports.argo_metrics)
    path = kubeconfig(layout, layout.config / "workflow-controller.kubeconfig",
                      ports.apiserver, "admin", ARGO_NAMESPACE)
    return Component("workflow-controller", [
        str(bins / "workflow-controller"), f"--kubeconfig={path}",
        "--configmap=workflow-controller-configmap",
        # Nothing pulls images here: kwok "runs" the pods, so any name will do.
        "--executor-image=quay.io/argoproj/argoexec:sandbox", "--qps=500", "--burst=1000",
        "--workflow-workers=8"],
        lambda: rest.healthy(endpoint, "/metrics"), ports.argo_metrics,
        env={"LEADER_ELECTION_DISABLE": "true",
             # Argo re-reads a workflow this long after a pod changes (default 10 s).
             "DEFAULT_REQUEUE_TIME": "1s"})


def node_exporter(executable: str, ports: Ports) -> Component:
    endpoint = rest.Endpoint("node-exporter", ports.node_exporter)
    return Component("node-exporter", [
        executable, f"--web.listen-address=127.0.0.1:{ports.node_exporter}"],
        lambda: rest.healthy(endpoint, "/metrics"), ports.node_exporter)


def twin(layout: Layout, ports: Ports, time_scale: float) -> Component:
    """The hardware twin (sandbox/twin.py), a Python process of this installation."""
    endpoint = rest.Endpoint("twin", ports.twin)
    return Component("twin", [
        sys.executable, "-m", "dagpilot.sandbox.twin",
        f"--dir={layout.root}", f"--api-port={ports.apiserver}", f"--port={ports.twin}",
        f"--time-scale={time_scale!r}"],
        lambda: rest.healthy(endpoint, "/healthz"), ports.twin)


def prometheus(layout: Layout, executable: str, ports: Ports, twin: bool) -> Component:
    """Prometheus with live.prometheus_config's jobs: node-exporter scrapes the sandbox's
    node_exporter, node-agent the twin and every target a file in `scrape_targets` names."""
    agents: dict[str, Any] = {"file_sd_configs": [{
        "files": [str(layout.scrape_targets / "*.json")], "refresh_interval": "5s"}]}
    if twin:
        agents["static_configs"] = [{"targets": [f"127.0.0.1:{ports.twin}"]}]
    config: dict[str, Any] = {
        "global": prometheus_config.global_config(),
        "scrape_configs": prometheus_config.scrape_configs(
            {"static_configs": [{"targets": [f"127.0.0.1:{ports.node_exporter}"]}]}, agents)}
    path = _write(layout.config / "prometheus.yaml", config)
    endpoint = rest.Endpoint("prometheus", ports.prometheus)
    return Component("prometheus", [
        executable, f"--config.file={path}", f"--storage.tsdb.path={layout.data / 'prometheus'}",
        f"--web.listen-address=127.0.0.1:{ports.prometheus}", "--web.enable-lifecycle",
        "--storage.tsdb.retention.time=1d", "--log.level=warn"],
        lambda: rest.healthy(endpoint, "/-/ready"), ports.prometheus)


def add_scrape_target(layout: Layout, name: str, port: int, labels: dict[str, str]) -> Path:
    """Makes the sandbox's Prometheus scrape 127.0.0.1:`port` (picked up within 5 s)."""
    path = layout.scrape_targets / f"{name}.json"
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps([{"targets": [f"127.0.0.1:{port}"],
                                    "labels": {"instance_name": name, **labels}}]))
    scratch.replace(path)  # file_sd reads whole files: never a half-written one
    return path
