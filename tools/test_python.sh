#!/usr/bin/env bash
# Runs the Python conformance suite (test/python/: eagerlm against JAX and Hugging Face) on a
# build directory, after setting up the Python environment (tools/setup_python.sh).
#
#   bash tools/test_python.sh [BUILD_DIR] [pytest args...]     (default BUILD_DIR: build)
#
# BUILD_DIR must hold tools/eagerlm and tools/conformance/eagerlm-dump-logits. Every test runs:
# EAGERLM_PYTHON_STRICT=1 turns a skip (missing package, binary or data) into a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
if [[ ! -d "$build" ]]; then
  echo "test_python: build directory $build does not exist: build eagerlm first (cmake -S . -B $build && cmake --build $build)" >&2
  exit 1
fi
build="$(cd "$build" && pwd)"

bash "$root/tools/setup_python.sh"
for binary in tools/eagerlm tools/conformance/eagerlm-dump-logits; do
  if [[ ! -x "$build/$binary" ]]; then
    echo "test_python: $build/$binary is missing: build it first (cmake --build $build)" >&2
    exit 1
  fi
done

export EAGERLM_BUILD="$build" EAGERLM_PYTHON_STRICT=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1  # nothing is downloaded
cd "$root"
exec "${EAGERLM_VENV:-$root/.venv}/bin/python" -m pytest test/python -q -rfEs -p no:cacheprovider "$@"
