"""`Agent.ready` for the lanes of a lock-step group together: the node side in one pass.

Each lane keeps what an agent keeps for its own episode (the decoder with its filters and the
encoder memory); a round first shortlists each lane's view (a lane with nothing feasible steps
on, as before), then computes the node features of all the lanes' views stacked
(`state.lane_nodes`) and normalises them in one call, encodes the rest (candidates' tasks,
job graphs, distances) lane by lane, and normalises those groups stacked again
(`state.lane_normalise`). Each lane's input is the one `Agent.ready` gives the same
view with the same memory, bit for bit (tests/train/test_lane_encoder.py): only the number of
numpy calls changes. A lane's agent still makes the choice (`Agent.choose`: its own decoder
turns the pick into a placement, which without explanations reads no memory).
"""

from __future__ import annotations

from collections.abc import Sequence

from dagpilot.agent import Observed, Ready
from dagpilot.core.view import ClusterView
from dagpilot.decide.candidates import Candidates
from dagpilot.decide.decoder import Decoder
from dagpilot.decide.filters import DEFAULT_FILTERS
from dagpilot.decide.root_complex_mask import Bias
from dagpilot.policy import PolicyConfig, PolicyInput
from dagpilot.state import EncodeContext, Normaliser, observe
from dagpilot.state.lane_nodes import stacked_node_features
from dagpilot.state.lane_normalise import normalise_lanes
from dagpilot.state.normalised_nodes import NormalisedNodes
from dagpilot.state.schema import NODE

Shortlist = tuple[Candidates, Bias | None]


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
    raw = stacked_node_features(views, [encoder.context for encoder in encoders])
    normalised = None if raw is None else normaliser.apply(NODE, raw)
    observations, rows = [], []
    for lane, (encoder, view, (candidates, _)) in enumerate(lanes):
        observation = observe(view, candidates.pods, encoder.context,
                              nodes=None if raw is None else raw[lane])
        observations.append(observation)
        rows.append(encoder.normalised.nodes(normaliser, observation.node_features)
                    if normalised is None else normalised[lane])
    return [Ready(Observed(candidates, raw_observation, bias),
                  PolicyInput(observation, candidates.feasible, bias))
            for (_, _, (candidates, bias)), raw_observation, observation in zip(
                lanes, observations, normalise_lanes(normaliser, observations, rows),
                strict=True)]
