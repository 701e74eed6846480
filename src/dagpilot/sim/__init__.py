"""The discrete-event cluster simulator (no torch): kernel, physics, cluster state, engine, env."""
