"""docs/API_REFERENCE.md and docs/openapi/*.json, generated from the code itself.

`dagpilot docs api-reference` writes them, run in the repository root (`--check` says whether
the committed ones are current; tests/test_api_reference.py fails when they are not). The
sources: each HTTP server's ENDPOINTS table (core/endpoints.py), the CLI's click tree (every
command, argument, option, default and help, handed in by cli.py, which this module cannot
import: it sits below the CLI in .importlinter's layers), the settings' defaults and ranges,
the signing keys file's fields, and the online adapter's config.yaml keys.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dagpilot.core.config import Settings
from dagpilot.core.endpoints import Endpoint
from dagpilot.core.setting_ranges import RANGES, flattened
from dagpilot.live.node_agent import exporter as node_agent_exporter
from dagpilot.sandbox import twin
from dagpilot.serve import extender_app, keys, serve_metrics, webhook_app

REFERENCE_PATH = Path("docs/API_REFERENCE.md")
OPENAPI_DIR = Path("docs/openapi")
COMMAND = "dagpilot docs api-reference"
ONLINE_CONFIG_MODULE = "dagpilot.online.config"


@dataclass(frozen=True, slots=True)
class Server:
    name: str  # also the OpenAPI file's name
    started_by: str
    transport: str
    module: str
    endpoints: tuple[Endpoint, ...]


SERVERS = (
    Server("webhook", "dagpilot serve webhook", "HTTPS/1.1 with mTLS: a client certificate "
           "signed by --client-ca; /mutate and /v1/workflows also check the subject against "
           "--admission-client / --submit-client", webhook_app.__name__, webhook_app.ENDPOINTS),
    Server("extender", "dagpilot serve extender", "HTTPS/1.1 with mTLS: kube-scheduler's "
           "client certificate; filter and prioritize check its subject", extender_app.__name__,
           extender_app.ENDPOINTS),
    Server("scheduler-metrics", "dagpilot serve scheduler --metrics-port P", "plain HTTP "
           "(prometheus_client)", serve_metrics.__name__, serve_metrics.ENDPOINTS),
    Server("node-agent", "dagpilot node-agent", "plain HTTP (prometheus_client)",
           node_agent_exporter.__name__, node_agent_exporter.ENDPOINTS),
    Server("sandbox-twin", "dagpilot sandbox up (python -m dagpilot.sandbox.twin)",
           "plain HTTP on 127.0.0.1", twin.__name__, twin.ENDPOINTS),
)


def generated(cli: Any) -> dict[Path, str]:
    """Every generated file (relative to the repository root) and its text; `cli` is the
    click command of `dagpilot` (typer.main.get_command(app))."""
    files = {REFERENCE_PATH: reference(cli)}
    for server in SERVERS:
        files[OPENAPI_DIR / f"{server.name}.json"] = json.dumps(openapi(server), indent=2) + "\n"
    return files


def stale(cli: Any, root: Path) -> list[Path]:
    """The generated files under `root` that are missing or differ from the code."""
    out = []
    for path, text in generated(cli).items():
        target = root / path
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            out.append(path)
    return out


def reference(cli: Any) -> str:
    parts = [_HEADER.format(command=COMMAND), "## HTTP endpoints\n", *map(_server_section, SERVERS),
             "## CLI commands\n", _cli_index(cli), *(_command_section(path, command)
                                                    for path, command in _commands(cli)),
             "## Configuration keys\n", _settings_section(), _keys_section(),
             _online_section(), _SANDBOX_SECTION]
    return "\n".join(part.rstrip("\n") + "\n" for part in parts)


_HEADER = """\
# API reference

Generated from the code by `{command}` (run in the repository root); do not edit it by hand:
change the code, then run that command. tests/test_api_reference.py fails while this file or
docs/openapi/ is out of date.
The guides are docs/OPERATION_GUIDE.md and docs/TROUBLESHOOTING.md; the serving modes are
explained in docs/SERVING.md, the settings in docs/SETTINGS.md.
"""

_SANDBOX_SECTION = """\
### The sandbox

The sandbox has no configuration file: its flags are those of `dagpilot sandbox up|status|down|
build` above, and the state it writes is `sandbox.json` in its folder (docs/LIVE.md). The hardware
twin it starts takes `--dir`, `--api-port`, `--port`, `--time-scale` and `--physics on|off`
(`python -m dagpilot.sandbox.twin --help`), set by `sandbox up` from its own flags.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _server_section(server: Server) -> str:
    lines = [f"### {server.name}: `{server.started_by}`\n",
             f"{server.transport}. Table: `{server.module}.ENDPOINTS`; OpenAPI 3: "
             f"`docs/openapi/{server.name}.json`.\n",
             "| method | path | what | request body | responses |", "|---|---|---|---|---|"]
    for point in server.endpoints:
        answers = "<br>".join(f"{status}: {_cell(text)}" for status, text in point.responses)
        lines.append(f"| {point.method} | `{point.path}` | {_cell(point.summary)} | "
                     f"{_cell(point.request) or '(none)'} | {answers} |")
    return "\n".join(lines) + "\n"


def openapi(server: Server) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for point in server.endpoints:
        operation: dict[str, Any] = {
            "summary": point.summary,
            "responses": {str(status): {"description": text} for status, text in point.responses}}
        if point.request:
            operation["requestBody"] = {"description": point.request, "required": True,
                                        "content": {"application/json": {}}}
        paths.setdefault(point.path, {})[point.method.lower()] = operation
    return {"openapi": "3.0.3",
            "info": {"title": f"dagpilot {server.name}", "version": "1",
                     "description": f"Started by `{server.started_by}`. {server.transport}. "
                                    f"Generated from {server.module}.ENDPOINTS by {COMMAND}."},
            "paths": paths}


def _commands(group: Any, prefix: str = "dagpilot") -> Iterator[tuple[str, Any]]:
    """(full name, command) of every leaf command, in the order --help lists them."""
    for name in group.list_commands(_context(group, prefix)):
        command = group.get_command(_context(group, prefix), name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}"
        if hasattr(command, "list_commands"):
            yield from _commands(command, path)
        else:
            yield path, command


def _context(command: Any, path: str) -> Any:
    return command.make_context(path, [], resilient_parsing=True)


def _cli_index(cli: Any) -> str:
    lines = [f"`dagpilot --help`: {_first_line(cli.help)} Every command exits 2 with one "
             "`error: ...` line on bad input.\n", "| command | what |", "|---|---|"]
    for path, command in _commands(cli):
        lines.append(f"| [`{path}`](#{_anchor(path)}) | {_cell(_first_line(command.help))} |")
    return "\n".join(lines) + "\n"


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ")


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def _command_section(path: str, command: Any) -> str:
    context = _context(command, path)
    lines = [f"### {path}\n", "```", command.get_usage(context).strip(), "```\n",
             (command.help or "").strip() + "\n"]
    records = [(param, param.get_help_record(context)) for param in command.params
               if not getattr(param, "hidden", False)]
    if records:
        lines += ["| argument or option | help |", "|---|---|"]
        lines += [f"| `{_cell(record[0])}` | {_cell(_home(record[1]))} |"
                  for param, record in records if record is not None]
    return "\n".join(lines) + "\n"


def _home(text: str) -> str:
    """Help as any machine renders it: a default under the home folder shown from `~`."""
    return text.replace(str(Path.home()), "~")


def _settings_section() -> str:
    lines = ["### Settings file (`--settings FILE.toml`)\n",
             "Every key, its default and its range, from core/config.py and "
             "core/setting_ranges.py; what each one means is in docs/SETTINGS.md.\n",
             "| key | default | range |", "|---|---|---|"]
    for name, value in flattened(Settings(), ""):
        allowed = RANGES.get(name)
        shown = "true/false" if isinstance(value, bool) else str(allowed) if allowed else "-"
        lines.append(f"| `{name}` | {_cell(_value(value))} | {_cell(shown)} |")
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list | frozenset | set):
        return ", ".join(map(str, sorted(value) if isinstance(value, frozenset | set) else value))
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def _keys_section() -> str:
    span_h = keys.MAX_SPAN.total_seconds() / 3600
    return "\n".join([
        "### Signing keys file (`serve webhook --keys`, `submit --keys`)\n",
        "```yaml", "keys:",
        "  - id: <key id>", "    secret: <base64>", "    notBefore: <RFC 3339>",
        "    notAfter: <RFC 3339>", "```\n",
        f"Each entry has exactly the fields {', '.join(f'`{f}`' for f in keys._FIELDS)}; the "
        f"secret decodes to at least {keys.MIN_SECRET_BYTES} bytes; notAfter - notBefore is at "
        f"most {span_h:g} h; the file is at most {keys.MAX_KEY_FILE_BYTES} bytes. A Kubernetes "
        f"Secret holding the document under `{keys.SECRET_ENTRY}` (stringData or data) is read "
        "as well. The webhook re-reads it when it changes; `submit` signs with the newest key "
        "valid now.\n"])


def _online_section() -> str:
    heading = "### Online adapter config.yaml (`dagpilot online run --config config.yaml`)\n"
    module = _online_module()
    root = getattr(module, "OnlineConfig", None)
    if module is None or root is None:
        return heading + "\nNot built yet: dagpilot.online.config has no OnlineConfig.\n"
    section = str(getattr(module, "SECTION", "online_learning"))
    required = {f"{section}.{key}" for key in getattr(module, "SEED_KEYS", ())}
    lines = [heading, _first_line(module.__doc__) + " An unknown key or a bad value is an "
             "error naming the file and the key.\n", "| key | default | required |",
             "|---|---|---|"]
    for dotted, value in flattened(root(), section):
        # `adapter:` is a top-level section of its own beside online_learning.
        nested = dotted.startswith(f"{section}.adapter.")
        name = dotted.removeprefix(f"{section}.") if nested else dotted
        lines.append(f"| `{name}` | {_cell(_value(value))} | "
                     f"{'yes' if name in required else 'no'} |")
    return "\n".join(lines) + "\n"


def _online_module() -> ModuleType | None:
    try:
        return importlib.import_module(ONLINE_CONFIG_MODULE)
    except ModuleNotFoundError as error:
        if error.name not in ("dagpilot.online", ONLINE_CONFIG_MODULE):
            raise
        return None
