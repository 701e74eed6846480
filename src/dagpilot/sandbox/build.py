"""Builds the control-plane binaries from Go modules into a cache outside the clone.

kube-apiserver, kube-scheduler and etcd come from the project's own module (`go/`), which
requires k8s.io/kubernetes with one `replace` per staging module: `go install` refuses modules
whose go.mod has replace directives. kwok and Argo's workflow-controller are built with
`go install PKG@VERSION`, each in its own module context, so their dependencies never mix
with Kubernetes'. The cache key is go.sum plus the pinned versions and the Go toolchain, so a
change to any of them builds a fresh set and an unchanged tree reuses the binaries.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from dagpilot.sandbox import versions
from dagpilot.sandbox.errors import SandboxError

GO_MODULE = Path(__file__).parent / "go"


@dataclass(frozen=True, slots=True)
class Binary:
    name: str
    package: str
    installed: bool  # `go install PKG@VERSION` in its own module context, else built in go/
    ldflags: str = "-s -w"


def _kube_ldflags() -> str:
    # Module zips are not `git archive` exports: without these /version says v0.0.0-master.
    major, minor = versions.KUBERNETES.lstrip("v").split(".")[:2]
    base = "k8s.io/component-base/version"
    return " ".join(["-s -w", f"-X {base}.gitVersion={versions.KUBERNETES}",
                     f"-X {base}.gitMajor={major}", f"-X {base}.gitMinor={minor}",
                     f"-X {base}.gitTreeState=clean",
                     f"-X {base}.buildDate=1970-01-01T00:00:00Z"])


BINARIES = (
    Binary("etcd", "go.etcd.io/etcd/server/v3", installed=False),
    Binary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", installed=False,
           ldflags=_kube_ldflags()),
    Binary("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", installed=False,
           ldflags=_kube_ldflags()),
    Binary("kwok", versions.KWOK_PACKAGE, installed=True),
    Binary("workflow-controller", versions.ARGO_PACKAGE, installed=True,
           ldflags=f"-s -w -X {versions.ARGO_MODULE}.version={versions.ARGO}"),
)


def go_command() -> str:
    go = shutil.which("go")
    if go is None:
        raise SandboxError("go", "the Go toolchain is not on PATH (Go 1.26 builds the "
                                 "control plane; see docs/LIVE.md)")
    return go


def cache_key() -> str:
    """go.sum, the pinned versions and the toolchain: what decides the bytes of the binaries."""
    digest = hashlib.sha256((GO_MODULE / "go.sum").read_bytes())
    for binary in BINARIES:
        digest.update(f"{binary.name} {binary.package} {binary.ldflags}\n".encode())
    toolchain = subprocess.run([go_command(), "env", "GOVERSION"], capture_output=True,
                               text=True, check=False).stdout.strip()
    digest.update(toolchain.encode())
    return digest.hexdigest()[:16]


def bin_dir() -> Path:
    """Where the binaries of this tree live: outside the clone, so no build output is committed."""
    root = os.environ.get("DAGPILOT_SANDBOX_CACHE")
    base = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return (base if root else base / "dagpilot-sandbox") / cache_key() / "bin"


def missing(directory: Path) -> list[Binary]:
    return [binary for binary in BINARIES if not os.access(directory / binary.name, os.X_OK)]


def build(directory: Path, log_dir: Path, progress: Callable[[str], None] = lambda _: None,
          only: Iterable[Binary] | None = None) -> None:
    """Builds every missing binary (or `only` these) into `directory`, one log file each."""
    directory.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    for binary in list(only) if only is not None else missing(directory):
        progress(binary.name)
        _build_one(binary, directory, log_dir / f"build-{binary.name}.log")


def _build_one(binary: Binary, directory: Path, log: Path) -> None:
    # Build beside the target, then rename: a half-written binary is never taken as built.
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{binary.name}-") as scratch:
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-buildvcs=false"}
        if binary.installed:
            env["GOBIN"] = scratch
            command = [go_command(), "install", "-trimpath", "-ldflags", binary.ldflags,
                       binary.package]
            cwd = scratch  # outside every module: go install PKG@VERSION uses its own go.mod
        else:
            command = [go_command(), "build", "-trimpath", "-ldflags", binary.ldflags,
                       "-o", str(Path(scratch) / binary.name), binary.package]
            cwd = str(GO_MODULE)
        with log.open("wb") as out:
            result = subprocess.run(command, cwd=cwd, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, check=False)
        built = Path(scratch) / binary.name
        if result.returncode != 0 or not built.exists():
            raise SandboxError(binary.name, f"build failed (exit {result.returncode}); "
                                            f"see {log}")
        built.replace(directory / binary.name)
