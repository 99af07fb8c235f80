#!/usr/bin/env bash
# Sets up, builds (Release; the CUDA backend too when nvcc is present) and runs the whole test
# suite through CTest. GPU tests report themselves skipped on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j2
# The installed library: find_package, pkg-config, add_subdirectory and ctypes consumers.
bash tools/check_install.sh build
# Conformance against Hugging Face and JAX (pytest, in the project virtual environment).
bash tools/test_python.sh build
