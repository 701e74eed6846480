"""dagpilot: a physics-aware DRL scheduler for DAG workflows on Kubernetes."""

__version__ = "0.1.0"
