"""`dagpilot sandbox`: a real Kubernetes control plane on loopback, built from Go modules."""
