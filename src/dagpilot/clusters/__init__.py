"""Node inventories -> Cluster. Each source is one module with `read(argument, settings)`."""

from __future__ import annotations

from collections.abc import Callable

from dagpilot.clusters import alibaba_gpu, builtin, cws_cluster, yaml_file
from dagpilot.core.config import LoaderSettings
from dagpilot.core.spec import split_spec
from dagpilot.core.types import Cluster

Builder = Callable[[str, LoaderSettings], Cluster]

BUILDERS: dict[str, Builder] = {
    "builtin": builtin.read,
    "yaml": yaml_file.read,
    "alibaba-gpu": alibaba_gpu.read,
    "cws": cws_cluster.read,
}


def load_cluster(spec: str, settings: LoaderSettings | None = None) -> Cluster:
    """The Cluster of a spec such as `builtin:default` or `alibaba-gpu:PATH:200`."""
    kind, argument = split_spec(spec, BUILDERS)
    return BUILDERS[kind](argument, settings or LoaderSettings())
