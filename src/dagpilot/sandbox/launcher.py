"""`dagpilot sandbox up|status|down`: the components started in order, stopped by pid.

`up` builds what is missing, generates the PKI, starts etcd, kube-apiserver, loads Argo's
CRDs and the cluster's nodes, then kube-scheduler, kwok, Argo's workflow-controller,
node_exporter, Prometheus and (by default) the hardware twin, and returns when every node is
Ready. A failure stops whatever it started. `up` on a running sandbox changes nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dagpilot.clusters import load_cluster
from dagpilot.sandbox import bootstrap, build, components, pki, process, state
from dagpilot.sandbox.components import Ports
from dagpilot.sandbox.errors import SandboxError
from dagpilot.sandbox.layout import Layout, free_ports
from dagpilot.sandbox.state import SandboxState

DEBIAN = {"prometheus": "prometheus", "node-exporter": "prometheus-node-exporter"}
Progress = Callable[[str], None]
SERVERS = {"kube-apiserver", "etcd"}


@dataclass(frozen=True, slots=True)
class Health:
    component: str
    pid: int
    port: int
    running: bool
    log: Path


def _debian_binary(component: str) -> str:
    package = DEBIAN[component]
    found = shutil.which(package)
    if found is None:
        raise SandboxError(component, f"{package} is not installed (Debian package "
                                      f"{package}: apt-get install {package})")
    return found


def up(cluster_spec: str, directory: Path, twin: bool = True,
       progress: Progress = lambda _: None, time_scale: float = 1.0) -> SandboxState:
    layout = Layout(directory.resolve())
    current = state.read(layout.state)
    if current is not None:
        down_ones = [h.component for h in status(directory) if not h.running]
        if not down_ones:
            return current
        raise SandboxError(down_ones[0], f"the sandbox in {directory} is partly down "
                           f"({', '.join(down_ones)}); run `dagpilot sandbox down --dir "
                           f"{directory}` first")
    cluster = load_cluster(cluster_spec)
    executables = {name: _debian_binary(name) for name in DEBIAN}
    layout.make()
    bins = build.bin_dir()
    build.build(bins, layout.logs, lambda name: progress(f"building {name}"))
    if not pki.complete(layout.pki):
        pki.generate(layout.pki)
    ports = Ports.of(free_ports(len(Ports.__slots__)))
    api = components.api_endpoint(layout, ports.apiserver)
    started = SandboxState(cluster_spec, twin, str(layout.kubeconfig), ports.as_dict(),
                           time_scale)
    try:
        started = _start(layout, started, components.etcd(layout, bins, ports), progress)
        started = _start(layout, started, components.kube_apiserver(layout, bins, ports),
                         progress)
        components.kubeconfig(layout, layout.kubeconfig, ports.apiserver, "admin")
        progress("loading Argo's CRDs and the nodes")
        bootstrap.create_argo(api, components.workflow_controller_configmap(ports))
        bootstrap.create_nodes(api, cluster)
        for component in (components.kube_scheduler(layout, bins, ports),
                          components.kwok(layout, bins, ports, twin),
                          components.workflow_controller(layout, bins, ports),
                          components.node_exporter(executables["node-exporter"], ports),
                          components.prometheus(layout, executables["prometheus"], ports, twin),
                          *([components.twin(layout, ports, time_scale)] if twin else [])):
            started = _start(layout, started, component, progress)
        progress("waiting for the nodes to be Ready")
        bootstrap.wait_nodes_ready(api, {node.name for node in cluster.nodes})
    except BaseException:
        _stop_all(started)
        layout.state.unlink(missing_ok=True)
        raise
    return started


def _start(layout: Layout, current: SandboxState, component: process.Component,
           progress: Progress) -> SandboxState:
    progress(f"starting {component.name}")
    running = process.start(component, layout.logs)
    current = current.with_component(running)
    state.write(layout.state, current)  # recorded before the wait: `down` can always stop it
    process.wait_ready(component, running)
    return current


def status(directory: Path) -> list[Health]:
    current = state.read(Layout(directory.resolve()).state)
    if current is None:
        raise SandboxError("sandbox", f"no sandbox in {directory} (no sandbox.json); "
                                      "start one with `dagpilot sandbox up`")
    return [Health(name, r.pid, r.port, process.alive(r), r.log)
            for name, r in current.components.items()]


def down(directory: Path) -> list[str]:
    """Stops exactly the processes `up` started (newest first); returns their names."""
    layout = Layout(directory.resolve())
    current = state.read(layout.state)
    if current is None:
        return []
    stopped = _stop_all(current)
    shutil.rmtree(layout.data, ignore_errors=True)  # etcd's data: the next `up` starts clean
    layout.state.unlink(missing_ok=True)
    return stopped


def _stop_all(current: SandboxState) -> list[str]:
    names = list(reversed(current.components))
    # Clients first, then the API server, then its store: a server whose store is gone
    # waits out its whole graceful shutdown.
    for wave in (set(names) - SERVERS, {"kube-apiserver"}, {"etcd"}):
        process.stop([current.components[name] for name in names if name in wave])
    return names
