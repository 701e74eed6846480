"""The sandbox's Go module: one replace per staging module of the Kubernetes it requires,
derived from Kubernetes' own go.mod (read from the Go module cache), and the pinned versions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from dagpilot.sandbox import build, versions

GO_MOD = (build.GO_MODULE / "go.mod").read_text()


def _kubernetes_go_mod() -> str:
    go = shutil.which("go")
    if go is None:
        pytest.fail("the Go toolchain is required (docs/LIVE.md)")
    result = subprocess.run([go, "mod", "download", "-json",
                             f"k8s.io/kubernetes@{versions.KUBERNETES}"],
                            capture_output=True, text=True, check=True, cwd="/")
    with open(json.loads(result.stdout)["GoMod"]) as mod:
        return mod.read()


def test_every_staging_module_is_replaced_at_the_matching_version() -> None:
    staging = set(re.findall(r"^\s*(k8s\.io/\S+) => \./staging/src/", _kubernetes_go_mod(),
                             re.MULTILINE))
    replaced = dict(re.findall(r"^replace (k8s\.io/\S+) => k8s\.io/\S+ (v\S+)$", GO_MOD,
                               re.MULTILINE))
    assert staging and set(replaced) == staging
    minor = versions.KUBERNETES.replace("v1.", "v0.")
    assert set(replaced.values()) == {minor}


def test_the_module_requires_the_pinned_kubernetes_and_builds_etcd_of_its_go_sum() -> None:
    pinned = rf"^\s+k8s.io/kubernetes {versions.KUBERNETES}( // indirect)?$"
    assert re.search(pinned, GO_MOD, re.MULTILINE)
    go_sum = (build.GO_MODULE / "go.sum").read_text()
    assert f"go.etcd.io/etcd/server/v3 {versions.ETCD} " in go_sum
    assert {b.name for b in build.BINARIES} == {
        "etcd", "kube-apiserver", "kube-scheduler", "kwok", "workflow-controller"}


def test_the_cache_key_follows_go_sum_and_the_binaries_live_outside_the_clone(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("DAGPILOT_SANDBOX_CACHE", str(tmp_path))
    directory = build.bin_dir()
    assert directory.is_relative_to(str(tmp_path))
    assert not directory.is_relative_to(build.GO_MODULE.parents[3])
    assert build.missing(directory) == list(build.BINARIES)
