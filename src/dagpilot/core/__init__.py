"""The leaf layer: value types, statuses, errors and settings (stdlib and numpy only; PyYAML in
reading/yaml_documents.py, the bounded YAML loader the workload and cluster readers share)."""
