#!/usr/bin/env bash
# Sets up, builds, and runs the main job: generation with the default model (GPT-2 124M
# initialized by eagerlm from seed 0; pass -m DIR for a real checkpoint). Extra arguments go
# to `eagerlm generate`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target eagerlm_dist
if [[ $# -eq 0 ]]; then set -- -p "The meaning of life is" -n 32 --seed 0; fi
exec build/bin/eagerlm generate "$@"
