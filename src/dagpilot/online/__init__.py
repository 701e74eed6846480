"""The online adapter (docs/ONLINE.md): drift trigger, LoRA fine-tune in its own process,
validation gates, circuit breaker. It changes serving's weights only through the registry."""
