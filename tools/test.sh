#!/usr/bin/env bash
# Sets up, builds (Release; the CUDA backend too when nvcc is present) and runs the whole test
# suite through CTest. GPU tests report themselves skipped on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# The server is built (ON, not AUTO): setup.sh installs its library, so a missing one is an error
# rather than a silently smaller test suite.
cmake -S . -B build -DEAGERLM_SERVER=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j2
# The installed library: find_package, pkg-config and add_subdirectory consumers.
bash tools/check_install.sh build
# Conformance against Hugging Face and JAX (pytest, in the project virtual environment), and the
# Python package, installed into a fresh virtual environment with `pip install .` and tested there.
bash tools/test_python.sh build
