"""The node encoder: one MLP shared by every node, so its cost is linear in the node count."""

from __future__ import annotations

from dagpilot.policy.layers import Embedding


class NodeEncoder(Embedding):
    """(B, N, node_dim) -> (B, N, d_model)."""
