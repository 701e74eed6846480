"""`Agent.ready` for the lanes of a lock-step group together: the node side in one pass.

Each lane keeps what an agent keeps for its own episode (the decoder with its filters and the
encoder memory); a round first shortlists each lane's view (a lane with nothing feasible steps
on, as before), then computes the node features of all the lanes' views stacked
(`state.lane_nodes`) and normalises them in one call, the candidates' task rows likewise
(`state.lane_tasks`), their job graphs and distances lane by lane (they are remembered per
job, and mostly not recomputed), and normalises those groups stacked again
(`state.lane_normalise`). Each lane's input is the one `Agent.ready` gives the same
view with the same memory, bit for bit (tests/train/test_lane_encoder.py): only the number of
numpy calls changes. A lane's agent still places the pick (`lane_choice.choose_all`, then
`Agent.decision`: its own decoder turns the pick into a placement, which without explanations
reads no memory).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dagpilot.agent import Observed, Ready
from dagpilot.core.view import ClusterView
from dagpilot.decide.candidates import Candidates
from dagpilot.decide.decoder import Decoder
from dagpilot.decide.filters import DEFAULT_FILTERS
from dagpilot.decide.root_complex_mask import Bias
from dagpilot.policy import PolicyConfig, PolicyInput
from dagpilot.state import EncodeContext, Normaliser
from dagpilot.state.encode import assemble, candidate_jobs
from dagpilot.state.lane_nodes import stacked_node_features
from dagpilot.state.lane_normalise import normalise_lanes
from dagpilot.state.lane_tasks import lane_task_features
from dagpilot.state.normalised_nodes import NormalisedNodes
from dagpilot.state.schema import NODE

Shortlist = tuple[Candidates, Bias | None]
F32 = npt.NDArray[np.float32]


class LaneEncoder:
    """One lane's decoder and encoder memory, for one episode (a new episode: a new one),
    with the filters and sizes of the agents `PolicySnapshot.agents` builds."""

    __slots__ = ("context", "decoder", "limit", "normalised")

    def __init__(self, config: PolicyConfig,
                 filter_names: tuple[str, ...] = DEFAULT_FILTERS) -> None:
        self.decoder = Decoder(filter_names)
        self.context = EncodeContext(graph_tasks=config.graph_tasks)
        self.normalised = NormalisedNodes()  # the node rows of a view not stacked
        self.limit = config.max_candidates

    def shortlist(self, view: ClusterView) -> Shortlist | None:
        """`Agent.observe`'s candidates: None when no pending pod fits anywhere."""
        return self.decoder.shortlist(view, self.limit)


def ready_all(lanes: Sequence[tuple[LaneEncoder, ClusterView, Shortlist]],
              normaliser: Normaliser) -> list[Ready]:
    """Each lane's `Agent.ready` of its view (with `normaliser`), from its shortlist."""
    encoders = [encoder for encoder, _, _ in lanes]
    views = [view for _, view, _ in lanes]
    pods = [candidates.pods for _, _, (candidates, _) in lanes]
    contexts = [encoder.context for encoder in encoders]
    nodes, normalised = _node_rows(encoders, views, normaliser)
    jobs = [candidate_jobs(view, lane_pods, context)
            for view, lane_pods, context in zip(views, pods, contexts, strict=True)]
    tasks = lane_task_features([(lane_pods, lane_jobs, view.now_s) for view, lane_pods, lane_jobs
                                in zip(views, pods, jobs, strict=True)])
    raw = [assemble(view, lane_pods, context, nodes=rows, jobs=lane_jobs, tasks=lane_tasks)
           for view, lane_pods, context, rows, lane_jobs, lane_tasks in zip(
               views, pods, contexts, nodes, jobs, tasks, strict=True)]
    inputs = normalise_lanes(normaliser, raw, normalised)
    return [Ready(Observed(candidates, observation, bias),
                  PolicyInput(normalised_observation, candidates.feasible, bias))
            for (_, _, (candidates, bias)), observation, normalised_observation in zip(
                lanes, raw, inputs, strict=True)]


def _node_rows(encoders: Sequence[LaneEncoder], views: Sequence[ClusterView],
               normaliser: Normaliser) -> tuple[list[F32], list[F32]]:
    """Each lane's raw and normalised node rows: all lanes' stacked when they can be."""
    contexts = [encoder.context for encoder in encoders]
    stacked = stacked_node_features(views, contexts)
    if stacked is not None:
        return list(stacked), list(normaliser.apply(NODE, stacked))
    rows = [context.node_features(view) for view, context in zip(views, contexts, strict=True)]
    return rows, [encoder.normalised.nodes(normaliser, lane_rows)
                  for encoder, lane_rows in zip(encoders, rows, strict=True)]
