"""verify-release on the repository (a clone of its last commit, as CI checks out) and on
small copies made to disagree one entity at a time."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dagpilot.cli import app
from dagpilot.ops import verify_release
from tests.conftest import REPO

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _git(root: Path, *arguments: str) -> None:
    subprocess.run([*GIT, "-C", str(root), *arguments], check=True, capture_output=True,
                   timeout=120)


def _verdicts(root: Path) -> dict[str, verify_release.Check]:
    return {check.entity: check for check in verify_release.verify(root)}


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's last commit, checked out clean (no eBPF build: it is gitignored)."""
    root = tmp_path_factory.mktemp("release") / "repo"
    _git(REPO, "clone", "--quiet", "--no-hardlinks", str(REPO), str(root))
    return root


def test_the_repository_agrees_but_for_its_unbuilt_ebpf_objects(clone: Path) -> None:
    result = CliRunner().invoke(app, ["ops", "verify-release", "--root", str(clone)])
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines] == [
        "code:", "ebpf:", "prometheus:", "webhook:", "models:"]
    verdicts = {line.split()[1].rstrip(":"): line.split()[0] for line in lines}
    assert verdicts == {"code": "PASS", "ebpf": "FAIL", "prometheus": "PASS",
                        "webhook": "PASS", "models": "PASS"}, result.stdout
    assert "not built" in lines[1]
    assert result.exit_code == 1


@pytest.fixture
def copy(tmp_path: Path, clone: Path) -> Path:
    """A small repository with every entity, committed: each test breaks one."""
    root = tmp_path / "copy"
    for part in ("pyproject.toml", "deploy", "models", "ebpf", "src/dagpilot/serve"):
        source, target = clone / part, root / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)
    build = root / "ebpf" / "build"
    build.mkdir()
    record = []
    for source in [*sorted((root / "ebpf").glob("*.bpf.c")), root / "ebpf" / "Makefile"]:
        if source.name.endswith(".bpf.c"):
            (build / (source.name[:-2] + ".o")).write_bytes(b"\x7fELF")
        record.append(f"{hashlib.sha256(source.read_bytes()).hexdigest()}  {source.name}")
    (build / verify_release.EBPF_SOURCES_RECORD).write_text("\n".join(record) + "\n")
    (root / ".gitignore").write_text("ebpf/build/\n")
    _git(root, "init", "--quiet")
    _git(root, "add", ".")
    _git(root, "commit", "--quiet", "-m", "release")
    return root


def test_a_consistent_release_passes_everything(copy: Path) -> None:
    assert all(check.passed for check in _verdicts(copy).values()), _verdicts(copy)


def test_ebpf_objects_built_from_other_sources_fail(copy: Path) -> None:
    source = next((copy / "ebpf").glob("*.bpf.c"))
    source.write_text(source.read_text() + "\n// changed\n")
    _git(copy, "commit", "--quiet", "-am", "changed source, objects not rebuilt")
    check = _verdicts(copy)["ebpf"]
    assert not check.passed and f"{source.name} changed since" in check.detail


def test_stale_prometheus_rules_fail(copy: Path) -> None:
    rules = copy / "deploy" / "prometheus" / "dagpilot-rules.yaml"
    rules.write_text(rules.read_text().replace("0.7", "0.8"))
    _git(copy, "commit", "--quiet", "-am", "hand-edited rules")
    check = _verdicts(copy)["prometheus"]
    assert not check.passed and "dagpilot-rules.yaml differ" in check.detail


def test_a_webhook_calling_another_path_or_without_a_ca_fails(copy: Path) -> None:
    hook = copy / "deploy" / "webhook" / "mutating-webhook.yaml"
    text = hook.read_text().replace("path: /mutate", "path: /admit")
    hook.write_text(text.replace("cert-manager.io/inject-ca-from", "example.com/other"))
    _git(copy, "commit", "--quiet", "-am", "webhook drift")
    check = _verdicts(copy)["webhook"]
    assert not check.passed
    assert "path '/admit', the webhook serves '/mutate'" in check.detail
    assert "no caBundle" in check.detail


def test_a_model_file_that_fails_its_checksum_fails(copy: Path) -> None:
    metadata = next((copy / "models").glob("*/metadata.json"))
    metadata.write_text(metadata.read_text() + " ")
    _git(copy, "commit", "--quiet", "-am", "model edited")
    assert not _verdicts(copy)["models"].passed


def test_files_changed_since_the_commit_fail_their_entity(copy: Path) -> None:
    (copy / "deploy" / "webhook" / "extra.yaml").write_text("kind: ConfigMap\n")
    check = _verdicts(copy)["webhook"]
    assert not check.passed and "1 files differ from the commit" in check.detail
    assert _verdicts(copy)["models"].passed
