"""`DIR/sandbox.json`: every component's pid, port and log file, written as each one starts."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagpilot.core.errors import InvalidInput
from dagpilot.sandbox.process import Running

VERSION = 1


@dataclass(frozen=True)
class SandboxState:
    cluster: str
    twin: bool
    kubeconfig: str
    ports: dict[str, int]
    time_scale: float = 1.0  # the twin's simulated seconds per wall second
    components: dict[str, Running] = field(default_factory=dict)

    def with_component(self, running: Running) -> SandboxState:
        return dataclasses.replace(self, components={**self.components, running.name: running})

    def as_json(self) -> dict[str, Any]:
        return {"version": VERSION, "cluster": self.cluster, "twin": self.twin,
                "kubeconfig": self.kubeconfig, "ports": self.ports, "time_scale": self.time_scale,
                "components": {name: {"pid": r.pid, "port": r.port, "log": str(r.log),
                                      "executable": r.executable}
                               for name, r in self.components.items()}}


def write(path: Path, state: SandboxState) -> None:
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(json.dumps(state.as_json(), indent=2) + "\n")
    os.replace(scratch, path)  # a reader sees the old file or the new one, never half of one


def read(path: Path) -> SandboxState | None:
    """The recorded state, None when there is none; InvalidInput when the file is damaged."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise InvalidInput(str(path), "", "", f"unreadable sandbox state: {error}") from None
    try:
        if data["version"] != VERSION:
            raise InvalidInput(str(path), "", "version", f"expected {VERSION}")
        components = {name: Running(name, int(c["pid"]), int(c["port"]), Path(c["log"]),
                                    str(c["executable"]))
                      for name, c in data["components"].items()}
        return SandboxState(str(data["cluster"]), bool(data["twin"]), str(data["kubeconfig"]),
                            {k: int(v) for k, v in data["ports"].items()},
                            float(data.get("time_scale", 1.0)), components)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InvalidInput(str(path), "", "", f"damaged sandbox state ({error!r:.80})") from None
