"""Where everything of one sandbox lives under its folder, and the ports it took."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

COMPONENTS = ("etcd", "kube-apiserver", "kube-scheduler", "kwok", "workflow-controller",
              "node-exporter", "prometheus", "twin")


@dataclass(frozen=True, slots=True)
class Layout:
    root: Path

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def kubeconfig(self) -> Path:
        """The admin kubeconfig users and tests take (`kubectl --kubeconfig DIR/kubeconfig`)."""
        return self.root / "kubeconfig"

    @property
    def state(self) -> Path:
        return self.root / "sandbox.json"

    @property
    def scrape_targets(self) -> Path:
        """Prometheus file_sd folder: a test adds a scrape target by writing a JSON file here."""
        return self.config / "prometheus-targets"

    def make(self) -> None:
        for folder in (self.root, self.logs, self.config, self.data, self.scrape_targets):
            folder.mkdir(parents=True, exist_ok=True)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free now (held open together, so none repeats)."""
    sockets = []
    try:
        for _ in range(count):
            held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.bind(("127.0.0.1", 0))
            sockets.append(held)
        return [held.getsockname()[1] for held in sockets]
    finally:
        for held in sockets:
            held.close()


def port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False
