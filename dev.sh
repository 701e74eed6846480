#!/usr/bin/env bash
# One entry point for a fresh machine: sets everything up, then runs the main job or the tests.
#   ./dev.sh run    the main job (`dagpilot run`)
#   ./dev.sh test   ruff, mypy, import-linter and the whole pytest suite (the live tests start
#                   a real control plane: Go and apt-get are used to set it up)
#   ./dev.sh setup  only the setup
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
# numpy picks its SIMD loops by CPU: with AVX-512 its float reductions round differently, and
# a simulated trajectory (the pinned ones in tests/schedulers, the figures in docs/) would
# depend on the machine. Without those loops every x86-64 machine computes the same bits.
export NPY_DISABLE_CPU_FEATURES=${NPY_DISABLE_CPU_FEATURES-"X86_V4 AVX512_ICL AVX512_SPR"}
VENV=.venv

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  # Reinstall only when the dependency list or the native core's sources changed (the install
  # compiles the core, src/dagpilot/native/csrc, in place), or the compiled core is missing.
  local stamp="$VENV/.dagpilot-installed"
  local want
  want=$(cat pyproject.toml setup.py src/dagpilot/native/csrc/* | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! compgen -G "src/dagpilot/native/_core.*.so" >/dev/null; then
    "$VENV/bin/pip" install --quiet --upgrade pip
    # torch first and pinned: the CPU build; an unpinned torch pulls a multi-GB CUDA build.
    "$VENV/bin/pip" install --quiet "torch==2.13.0"
    "$VENV/bin/pip" install --quiet -e ".[dev,gen,ray,serve,live]"
    echo "$want" > "$stamp"
  fi
}

# The live tests' parts: Prometheus and node_exporter from Debian, the control plane built from
# Go modules into a cache outside the clone (docs/LIVE.md).
setup_live() {
  if ! command -v prometheus >/dev/null || ! command -v prometheus-node-exporter >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      prometheus prometheus-node-exporter >/dev/null
  fi
  # The node agent's eBPF (docs/LIVE.md, "Per-task feedback"): built against this kernel's BTF.
  if ! command -v clang >/dev/null || ! command -v bpftool >/dev/null || [ ! -e /usr/include/bpf/libbpf.h ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      clang llvm libbpf-dev bpftool linux-libc-dev >/dev/null
  fi
  make -s -C ebpf
  "$VENV/bin/dagpilot" sandbox build
}

checks() {
  "$VENV/bin/ruff" check src tests bench
  "$VENV/bin/mypy"
  "$VENV/bin/lint-imports"
  "$VENV/bin/pytest" -n 2 --ignore=tests/live "$@"
  # Serially, against one sandbox for the whole run (tests/live/conftest.py).
  "$VENV/bin/pytest" tests/live
}

command=${1:-run}
shift || true
setup
case "$command" in
  setup) ;;
  run) exec "$VENV/bin/dagpilot" run "$@" ;;
  test) setup_live; checks "$@" ;;
  *) echo "usage: ./dev.sh run|test|setup" >&2; exit 2 ;;
esac
