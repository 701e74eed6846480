"""How far one Argo file may unroll: items per fan-out, template depth, nodes and edges per file.

A ten-line manifest can ask for `withSequence: {count: "1000000000"}`, nest fan-outs, or fan a
100,000-item task into another (ten billion parent links). Each count is checked against its
ceiling before anything is unrolled, and the file's running totals are checked as it unrolls,
so memory and time stay bounded by these constants whatever the input says:

- MAX_FAN_OUT items in one `withItems`, `withSequence`, literal `withParam` or
  `dagpilot.io/fan-out`: Argo sets no limit, the largest fan-outs its users report are tens of
  thousands, and the shared examples fan out to at most 4.
- MAX_TEMPLATE_DEPTH templates calling each other: Argo's controller stops at the same depth
  (maxAllowedStackDepth, 100).
- MAX_NODES_PER_FILE templates unrolled (one per pod, one per inlined DAG or steps template, as
  Argo counts nodes) over every workflow of one file, the digest included, and
  MAX_EDGES_PER_FILE parent links between its pods. At these ceilings a file loads in seconds
  and about 100 MB (100,000 pods: 1.3 s of CPU here), well inside the fuzzer's 10 s and 1 GiB
  per input; a workflow that size is far past what Argo's controller keeps in one object
  without offloading its node status.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagpilot.workloads.argo_manifest import Where

MAX_FAN_OUT = 50_000
MAX_TEMPLATE_DEPTH = 100
MAX_NODES_PER_FILE = 100_000
MAX_EDGES_PER_FILE = 1_000_000


def fan_out(count: int, where: Where, field: str) -> int:
    """`count` items, if they are no more than MAX_FAN_OUT (and not negative)."""
    if count < 0:
        raise where.error(field, f"expected a number of items, got {count}")
    if count > MAX_FAN_OUT:
        raise where.error(field, f"{count:,} items, beyond the limit of {MAX_FAN_OUT:,} "
                          "per task")
    return count


@dataclass
class Budget:
    """What is left of one file's nodes and edges; each unrolling step spends from it."""

    nodes: int = MAX_NODES_PER_FILE
    edges: int = MAX_EDGES_PER_FILE

    def reserve(self, nodes: int, where: Where) -> None:
        """Refuse, before unrolling them, `nodes` more nodes than the file has left."""
        if nodes > self.nodes:
            raise where.error("", f"the file unrolls to more than {MAX_NODES_PER_FILE:,} "
                              "Argo nodes (pods and the DAG and steps templates around them)")

    def spend(self, where: Where) -> None:
        """One more node."""
        self.reserve(1, where)
        self.nodes -= 1

    def link(self, edges: int, where: Where) -> None:
        """`edges` more parent links."""
        if edges > self.edges:
            raise where.error("", f"the file unrolls to more than {MAX_EDGES_PER_FILE:,} "
                              "dependencies between pods")
        self.edges -= edges
