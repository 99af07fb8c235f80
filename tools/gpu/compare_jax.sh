#!/usr/bin/env bash
# Optional, a second device call after tools/gpu_check.sh: tools/compare_jax.py --device cuda,
# eagerlm against JAX's preallocated-cache loop (and Hugging Face Flax generate where the wheels
# of `tools/gpu/prepare.sh --wheels` came along) on the same GPU. Writes
# $OUT/compare_jax_cuda.{md,json,png} and $OUT/compare_jax.log.
#
# The image's JAX (0.11.2, CUDA plugin) is used as it is. Its transformers is 5.x, which has no
# Flax models: the "hf" system needs transformers 4.57.6 (with tokenizers 0.22.2 and
# huggingface_hub 0.36.2) from .gpu-deps/wheels, installed into a private --target directory
# that shadows the image's copies for this run only; without them "hf" is left out.
# COMPARE_JAX_SYSTEMS overrides the systems (compare_jax.py --systems).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tools/gpu/common.sh
source tools/gpu/common.sh
out=${OUT:-$PWD/out-gpu}
mkdir -p "$out"
log=$out/compare_jax.log
exec > >(tee "$log") 2>&1

# The build of gpu_check.sh where the machine still has it, else only what compare_jax runs.
if [[ ! -x "$gpu_build/bin/eagerlm" || ! -e "$gpu_build/lib/libeagerlm-cuda.so" ]]; then
  timeout 240 bash -c 'source tools/gpu/common.sh && gpu_unpack && gpu_configure && \
    gpu_build_targets eagerlm_cli eagerlm_cuda_module' || { echo "compare_jax: build failed"; exit 1; }
fi

systems=preallocated,eagerlm
if compgen -G ".gpu-deps/wheels/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/eagerlm-site .gpu-deps/wheels/*.whl && export PYTHONPATH=/tmp/eagerlm-site
fi
if python3 -c 'from transformers import FlaxGPT2LMHeadModel' >/dev/null 2>&1; then
  systems=preallocated,hf,eagerlm
else
  echo "compare_jax: no transformers with Flax models here: the hf system is left out"
fi
python3 -c 'import jax; print("JAX", jax.__version__, jax.devices("gpu"))' || {
  echo "compare_jax: this Python's JAX sees no GPU"
  exit 1
}
PYTHONUNBUFFERED=1 timeout -k 10 "${COMPARE_JAX_TIMEOUT:-420}" python3 tools/compare_jax.py --device cuda \
  --systems "${COMPARE_JAX_SYSTEMS:-$systems}" --eagerlm "$gpu_build/bin/eagerlm" --workdir /tmp/eagerlm-compare-jax \
  --json "$out/compare_jax_cuda.json" --plot "$out/compare_jax_cuda.png" --markdown "$out/compare_jax_cuda.md"
