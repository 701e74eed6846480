"""`dagpilot ops canary plan`: the canary's stages from the cluster's node labels.

The default rollout widens by topology, never by traffic share: the first `racks` racks of
the first zone, then that whole zone, then every node (zones and racks from
`topology.kubernetes.io/zone` and `topology.dagpilot.io/rack`, in natural order). Stages given
by hand are label selectors (`zone` and `rack` stand for those keys). Each stage must hold
every node of the one before it (a rollout never takes a node back from the canary but by
abort), and a stage that adds no node is dropped. The version must load as serving loads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from dagpilot.clusters.node_conventions import RACK, ZONE
from dagpilot.core.errors import SpecError
from dagpilot.core.label_selector import Selector, parse
from dagpilot.core.types import Cluster
from dagpilot.live.inventory import cluster_of
from dagpilot.live.kube_api import KubeApi, Resource
from dagpilot.registry import load_version, read_current, verify
from dagpilot.registry.canary import CanaryState, Gate, Stage, node_labels, read_canary
from dagpilot.registry.errors import RegistryError
from dagpilot.state import FEATURE_SCHEMA_VERSION

ALIASES = {"zone": ZONE, "rack": RACK}
DEFAULT_RACKS = 3


def live_cluster(kubeconfig: Path) -> Cluster:
    """The cluster's Node objects now, as NodeSpecs."""
    api = KubeApi(kubeconfig)
    try:
        return cluster_of(list(api.list_all(Resource.NODES).items), "live", str(kubeconfig))
    finally:
        api.close()


def matching(cluster: Cluster, selector: Selector) -> list[str]:
    return [spec.name for spec in cluster.nodes if selector.matches(node_labels(spec))]


def default_stages(cluster: Cluster, racks: int = DEFAULT_RACKS) -> list[str]:
    """First racks of the first zone, that zone, everything (as selector texts)."""
    if racks < 1:
        raise SpecError(str(racks), "--racks takes a count >= 1")
    if not cluster.nodes:
        raise SpecError(cluster.name, "the cluster has no nodes to roll out on")
    zone = min((node_labels(spec)[ZONE] for spec in cluster.nodes), key=_natural)
    in_zone = sorted({node_labels(spec)[RACK] for spec in cluster.nodes
                      if node_labels(spec)[ZONE] == zone}, key=_natural)
    first = ",".join(in_zone[:racks])
    return [f"{ZONE}={zone},{RACK} in ({first})", f"{ZONE}={zone}", ""]


def stages(cluster: Cluster, texts: Sequence[str]) -> tuple[Stage, ...]:
    """The stages as the cluster has them now; each a superset of the one before."""
    chosen: list[Stage] = []
    previous: set[str] = set()
    for index, text in enumerate(texts):
        selector = parse(text, ALIASES)
        nodes = set(matching(cluster, selector))
        if not nodes and index == 0:
            raise SpecError(text, "stage 1 matches no node of the cluster")
        if not previous <= nodes:
            lost = ", ".join(sorted(previous - nodes)[:5])
            raise SpecError(text, f"stage {index + 1} leaves out nodes of the stage before it "
                                  f"({lost}): each stage must widen the canary")
        if nodes != previous:
            chosen.append(Stage(selector.text(), len(nodes)))
        previous = nodes
    if not chosen:
        raise SpecError(";".join(texts), "no stage")
    return tuple(chosen)


def plan(root: Path, cluster: Cluster, version: str, *, texts: Sequence[str] | None,
         gate: Gate, now_t: float, racks: int = DEFAULT_RACKS) -> CanaryState:
    """A new canary of VERSION at its first stage; refused while another is active, or when
    the registry does not vouch for VERSION (every file checked, loaded as serving loads it)."""
    present = read_canary(root)
    if present is not None and present.active:
        raise RegistryError(f"canary of {present.canary} is active (stage {present.stage + 1}"
                            f" of {len(present.stages)}): advance it to the end or abort it "
                            "first")
    stable = read_current(root)
    if stable is None:
        raise RegistryError(f"{root}: no version is current, so there is no stable version")
    if version == stable:
        raise RegistryError(f"{version} is current already: a canary needs another version")
    folder = str(root / version)
    problems = [p for p in verify(root) if p.file in (str(root), folder, str(root / "SHA256SUMS"))
                or p.file.startswith(folder + "/")]
    if problems:
        raise RegistryError(f"{version} does not verify: {problems[0].file}: "
                            f"{problems[0].message}")
    load_version(root, version, FEATURE_SCHEMA_VERSION)
    chosen = stages(cluster, list(texts) if texts else default_stages(cluster, racks))
    detail = f"{version} on {chosen[0].nodes} of {len(cluster.nodes)} nodes"
    return CanaryState(stable=stable, canary=version, stages=chosen, gate=gate,
                       stage_started_t=now_t, revision=0,
                       history=({"t": now_t, "action": "plan", "stage": 0,
                                 "detail": detail},))


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """rack-2 before rack-10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text) if part)
