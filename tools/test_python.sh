#!/usr/bin/env bash
# Runs the Python suites on a build directory:
#   1. conformance (test/python/: eagerlm against JAX and Hugging Face), in the project's
#      environment (.venv, tools/setup_python.sh);
#   2. the Python package (test/python_package/): installed into a fresh virtual environment
#      exactly as README.md says (`pip install .` from the repository root), then tested there
#      against this build's CLI, C++ API and tools, with tools/requirements-python-tests.txt.
#
#   bash tools/test_python.sh [BUILD_DIR] [pytest args...]     (default BUILD_DIR: build)
#
# BUILD_DIR must hold bin/eagerlm, bin/eagerlm-dump-logits and bin/eagerlm-api-generate. Every
# test runs: EAGERLM_PYTHON_STRICT=1 turns a skip (missing package, binary or data) into a
# failure. The package's CMake build is kept in build-python/ (pyproject.toml), so a second run
# recompiles only what changed.
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
for binary in bin/eagerlm bin/eagerlm-dump-logits bin/eagerlm-api-generate; do
  if [[ ! -x "$build/$binary" ]]; then
    echo "test_python: $build/$binary is missing: build it first (cmake --build $build)" >&2
    exit 1
  fi
done

export EAGERLM_BUILD="$build" EAGERLM_PYTHON_STRICT=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1  # nothing is downloaded
cd "$root"
echo "== test_python: conformance (test/python)"
"${EAGERLM_VENV:-$root/.venv}/bin/python" -m pytest test/python -q -rfEs -p no:cacheprovider "$@"

echo "== test_python: the package, installed into a fresh virtual environment (pip install .)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"${EAGERLM_PYTHON:-python3}" -m venv "$scratch/venv"
start=$SECONDS
# Without the CUDA module unless EAGERLM_CUDA asks for it: BUILD_DIR's CUDA build already compiles
# that code (three architectures, minutes of CI time) and these tests run on the CPU.
(cd "$root" && EAGERLM_CUDA="${EAGERLM_CUDA:-OFF}" "$scratch/venv/bin/pip" install --quiet --disable-pip-version-check .)
echo "test_python: pip install . took $((SECONDS - start)) s"
"$scratch/venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/tools/requirements-python-tests.txt"
# From the repository root, where no eagerlm/ folder shadows the installed package
# (test_package.py checks which one is imported).
"$scratch/venv/bin/python" -m pytest test/python_package -q -rfEs -p no:cacheprovider "$@"

echo "== test_python: eagerlm serve through the real openai client and curl"
if "$build/bin/eagerlm" serve --help >/dev/null 2>&1; then
  EAGERLM="$build/bin/eagerlm" "$scratch/venv/bin/python" test/server/test_openai_client.py
else
  echo "test_python: $build/bin/eagerlm was built without the server (EAGERLM_SERVER=OFF): the openai client test cannot run" >&2
  exit 1
fi
