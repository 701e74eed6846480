"""dagpilot: a physics-aware deep-reinforcement-learning scheduler for DAG workflows on Kubernetes."""

__version__ = "0.1.0"
