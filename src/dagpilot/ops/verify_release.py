"""`dagpilot ops verify-release`: the five things a release versions together agree with one
commit and with each other. One Check each, PASS or FAIL with the reason:

- code: the git commit, and the version in pyproject.toml, the installed metadata and
  `dagpilot.__version__` are one version;
- eBPF objects: built (ebpf/build) from exactly the sources beside them: the build's
  SOURCES.sha256 (sha256sum lines of every ebpf/*.bpf.c and the Makefile) matches them;
- Prometheus rules and config: deploy/prometheus/ is what `dagpilot ops prom-config` generates;
- webhook configuration: deploy/webhook's MutatingWebhookConfiguration calls the path the
  webhook serves (serve/webhook_app.py, read as source: ops may not import serve), on the
  Service and port deploy/ ships, for Argo's Workflows, with a CA (caBundle or cert-manager's
  inject-ca-from annotation);
- models: every line of models/SHA256SUMS verifies (registry.verify).

Each entity's files must also be unchanged from the commit: a release is one commit.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

import dagpilot
from dagpilot import registry
from dagpilot.live.kube_api import ARGO_GROUP, ARGO_VERSION
from dagpilot.ops import prom_config
from dagpilot.ops.prom_rules import RULES_FILE, recording_rules

EBPF_SOURCES_RECORD = "SOURCES.sha256"
PROMETHEUS_DIR = Path("deploy/prometheus")
PROMETHEUS_CONFIG = "prometheus.yaml"
WEBHOOK_DIR = Path("deploy/webhook")
WEBHOOK_APP = Path("src/dagpilot/serve/webhook_app.py")
CA_INJECTION = "cert-manager.io/inject-ca-from"


@dataclass(frozen=True, slots=True)
class Check:
    entity: str
    passed: bool
    detail: str


def verify(root: Path) -> list[Check]:
    checks: list[tuple[str, Callable[[Path], str], tuple[str, ...]]] = [
        ("code", _code, ("pyproject.toml", "src")),
        ("ebpf", _ebpf, ("ebpf",)),
        ("prometheus", _prometheus, (str(PROMETHEUS_DIR),)),
        ("webhook", _webhook, (str(WEBHOOK_DIR),)),
        ("models", _models, ("models",)),
    ]
    return [_run(root, entity, check, paths) for entity, check, paths in checks]


class Failed(Exception):
    """A check's reason for FAIL."""


def _run(root: Path, entity: str, check: Callable[[Path], str],
         paths: tuple[str, ...]) -> Check:
    try:
        detail = check(root)
        changed = _changed(root, paths)
        if changed:
            raise Failed(f"{detail}; but {len(changed)} files differ from the commit "
                         f"({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})")
    except Failed as failure:
        return Check(entity, False, str(failure))
    return Check(entity, True, detail)


def _git(root: Path, *arguments: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *arguments], capture_output=True,
                              text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Failed(f"git {arguments[0]}: {error}") from None
    if done.returncode != 0:
        raise Failed(f"git {arguments[0]}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def _changed(root: Path, paths: tuple[str, ...]) -> list[str]:
    """Tracked files changed and untracked files not ignored, under `paths`."""
    status = _git(root, "status", "--porcelain", "--", *paths)
    return [line[3:] for line in status.splitlines() if line.strip()]


def _code(root: Path) -> str:
    commit = _git(root, "rev-parse", "HEAD").strip()
    try:
        declared = str(_toml(root / "pyproject.toml")["project"]["version"])
    except (OSError, KeyError, ValueError) as error:
        raise Failed(f"pyproject.toml: no project.version ({error})") from None
    versions = {"pyproject.toml": declared, "dagpilot.__version__": dagpilot.__version__}
    with contextlib.suppress(metadata.PackageNotFoundError):  # run from a source tree
        versions["installed"] = metadata.version("dagpilot")
    if len(set(versions.values())) != 1:
        raise Failed("versions disagree: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return f"commit {commit[:12]}, version {declared}"


def _toml(path: Path) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415  (stdlib; only this check reads TOML)
    with path.open("rb") as file:
        return tomllib.load(file)


def _ebpf(root: Path) -> str:
    folder = root / "ebpf"
    sources = sorted(folder.glob("*.bpf.c")) if folder.is_dir() else []
    if not sources:
        return "no eBPF sources"
    objects = [folder / "build" / (s.name[:-2] + ".o") for s in sources]
    missing = [o.name for o in objects if not o.is_file()]
    if missing:
        raise Failed(f"not built: {', '.join(missing)} missing (make -C ebpf); the node "
                     "agent's per-task feedback needs them")
    record = folder / "build" / EBPF_SOURCES_RECORD
    if not record.is_file():
        raise Failed(f"built, but ebpf/build/{EBPF_SOURCES_RECORD} does not record which "
                     "sources (sha256sum *.bpf.c Makefile > build/SOURCES.sha256)")
    recorded = dict(_sum_lines(record.read_text()))
    expected = {p.name: _sha256(p) for p in (*sources, folder / "Makefile") if p.is_file()}
    stale = sorted(name for name, digest in expected.items() if recorded.get(name) != digest)
    if stale:
        raise Failed(f"built from other sources than these: {', '.join(stale)} changed "
                     "since (make -C ebpf)")
    return f"{len(objects)} objects built from these {len(expected)} sources"


def _sum_lines(text: str) -> Iterator[tuple[str, str]]:
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if name:
            yield Path(name.strip()).name, digest.strip()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _prometheus(root: Path) -> str:
    folder = root / PROMETHEUS_DIR
    if not folder.is_dir():
        raise Failed(f"{PROMETHEUS_DIR} missing (dagpilot ops prom-config --out "
                     f"{PROMETHEUS_DIR / PROMETHEUS_CONFIG})")
    wanted = {RULES_FILE: prom_config.render(recording_rules()),
              PROMETHEUS_CONFIG: prom_config.render(prom_config.cluster_config())}
    stale = [name for name, text in wanted.items()
             if not (folder / name).is_file() or (folder / name).read_text() != text]
    if stale:
        raise Failed(f"{', '.join(stale)} differ from what the code generates (dagpilot ops "
                     f"prom-config --out {PROMETHEUS_DIR / PROMETHEUS_CONFIG})")
    return f"{PROMETHEUS_DIR} is what the code generates"


def _webhook(root: Path) -> str:
    documents = _yaml_documents(root / WEBHOOK_DIR)
    configurations = [d for d in documents if d.get("kind") == "MutatingWebhookConfiguration"]
    services = {((d.get("metadata") or {}).get("namespace"), (d.get("metadata") or {}).get(
        "name")): d for d in documents if d.get("kind") == "Service"}
    if not configurations:
        raise Failed(f"no MutatingWebhookConfiguration in {WEBHOOK_DIR}")
    mutate = _string_constant(root / WEBHOOK_APP, "MUTATE_PATH")
    problems = []
    for configuration in configurations:
        injected = CA_INJECTION in ((configuration.get("metadata") or {}).get("annotations")
                                    or {})
        for hook in configuration.get("webhooks") or []:
            problems += _hook_problems(hook, mutate, services, injected)
    if problems:
        raise Failed("; ".join(problems))
    return f"{len(configurations)} webhook configuration(s) call {mutate} on the shipped Service"


def _hook_problems(hook: dict[str, Any], mutate: str,
                   services: dict[tuple[Any, Any], dict[str, Any]],
                   injected: bool) -> list[str]:
    name = hook.get("name", "?")
    client = hook.get("clientConfig") or {}
    service = client.get("service") or {}
    problems = []
    if service.get("path") != mutate:
        problems.append(f"{name}: path {service.get('path')!r}, the webhook serves {mutate!r}")
    shipped = services.get((service.get("namespace"), service.get("name")))
    if shipped is None:
        problems.append(f"{name}: Service {service.get('namespace')}/{service.get('name')} "
                        f"is not in {WEBHOOK_DIR}")
    else:
        ports = {p.get("port") for p in (shipped.get("spec") or {}).get("ports") or []}
        if service.get("port", 443) not in ports:
            problems.append(f"{name}: port {service.get('port', 443)} not among the "
                            f"Service's {sorted(ports)}")
    if not (client.get("caBundle") or injected):
        problems.append(f"{name}: no caBundle and no {CA_INJECTION} annotation")
    rules = hook.get("rules") or []
    if not any(ARGO_GROUP in r.get("apiGroups", []) and ARGO_VERSION in r.get("apiVersions", [])
               and "workflows" in r.get("resources", []) for r in rules):
        problems.append(f"{name}: no rule for {ARGO_GROUP}/{ARGO_VERSION} workflows")
    return problems


def _yaml_documents(folder: Path) -> list[dict[str, Any]]:
    if not folder.is_dir():
        raise Failed(f"{folder} missing")
    documents = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            documents += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        except yaml.YAMLError as error:
            raise Failed(f"{path.name}: not YAML ({error})") from None
    return documents


def _string_constant(path: Path, name: str) -> str:
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError) as error:
        raise Failed(f"{path}: {error}") from None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                 for t in node.targets)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    raise Failed(f"{path}: no {name} string")


def _models(root: Path) -> str:
    folder = root / "models"
    problems = registry.verify(folder)
    if problems:
        raise Failed(f"{len(problems)} problems: " + "; ".join(map(str, problems[:3])))
    current = folder / "current"
    target = current.readlink().name if current.is_symlink() else "?"
    return f"models/SHA256SUMS verifies; current -> {target}"
