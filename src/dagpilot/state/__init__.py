"""The state encoder: a ClusterView (simulated or live) -> named features in physical units ->
semantic levels and bands -> normalised float32 arrays. numpy only; docs/STATE.md lists every
feature.

    context = EncodeContext()                       # one per episode or live session
    observation = encode(view, candidates, normaliser, context)
"""

from dagpilot.state.calibration import Calibration
from dagpilot.state.context import EncodeContext
from dagpilot.state.encode import encode, observe
from dagpilot.state.normaliser import Normaliser, NormaliserError, RunningStats
from dagpilot.state.observation import Observation
from dagpilot.state.schema import FEATURE_SCHEMA_VERSION

__all__ = ["FEATURE_SCHEMA_VERSION", "Calibration", "EncodeContext", "Normaliser",
           "NormaliserError", "Observation", "RunningStats", "encode", "observe"]
