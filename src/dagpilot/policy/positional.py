"""The topology-aware positional encoding of the task-graph Transformer.

A job graph has no sequence order, so a task's position is its place in the DAG: depth (share
of the job's depth), parent and child counts, and b-level (share of the critical path), the
four `schema.POSITION` features. An MLP embeds them and the result is added to the token
embedding, where a sequence model would add the embedding of an index.
"""

from __future__ import annotations

from dagpilot.policy.layers import Embedding


class TopologyEncoding(Embedding):
    """(..., position_dim) -> (..., d_model)."""
