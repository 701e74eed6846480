"""The policy: the only torch model code. A Transformer over each candidate's job graph with a
topology-aware positional encoding, a node encoder shared by all nodes, pair scores over
(candidate, node) pairs (the actor, masked by the hard-constraint filters) and a critic.
docs/TRAINING.md describes the model; `decide.candidates` bounds the pods scored per decision.
"""

from dagpilot.policy.config import DEFAULT_CANDIDATES, PolicyConfig, PolicyConfigError
from dagpilot.policy.distribution import greedy, log_probs, sample
from dagpilot.policy.inputs import Batch, PolicyInput, collate
from dagpilot.policy.network import Evaluation, PolicyNet, PolicyOutput, padded_index

__all__ = ["DEFAULT_CANDIDATES", "Batch", "Evaluation", "PolicyConfig", "PolicyConfigError",
           "PolicyInput", "PolicyNet", "PolicyOutput", "collate", "greedy", "log_probs",
           "padded_index", "sample"]
