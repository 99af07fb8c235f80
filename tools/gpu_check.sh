#!/usr/bin/env bash
# The one GPU check, for a machine with an NVIDIA GPU (run through the device tool in one call):
# builds with CUDA, runs every test (the CUDA ones included), compute-sanitizer memcheck and
# racecheck on a small model's generation, `eagerlm bench --device cuda`, CUDA-vs-CPU greedy
# ids, GPT-2 XL initialization on the GPU and tools/compare_jax.py --device cuda (when a CUDA JAX
# is installed); writes everything as one Markdown
# report to $OUT/gpu_check.md (or ./gpu_check.md). Budget: under 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out_dir=${OUT:-.}
report="$out_dir/gpu_check.md"
log="$out_dir/gpu_check.log"
: >"$log"
start=$(date +%s)
rows=()
step() {  # step NAME COMMAND...: runs it, logs it, records pass/fail and seconds
  local name=$1; shift
  local t0=$(date +%s)
  echo "== $name: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then rows+=("| $name | pass | $(( $(date +%s) - t0 )) s |")
  else rows+=("| $name | **FAIL** | $(( $(date +%s) - t0 )) s |"); fi
}

gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU")
bash tools/setup.sh >>"$log" 2>&1
step "configure (CUDA on, sm_90)" cmake -S . -B build-gpu -DEAGERLM_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90
step "build" cmake --build build-gpu -j"$(nproc)"
step "ctest (all tests, CUDA included)" ctest --test-dir build-gpu --output-on-failure -j4
step "test_cuda_ops verbose" build-gpu/test/cuda/test_cuda_ops --durations yes

bin=build-gpu/tools/eagerlm
tiny=$(mktemp -d)
cat >"$tiny/config.json" <<'JSON'
{"n_layer": 2, "n_embd": 96, "n_head": 3, "n_positions": 128, "vocab_size": 50257}
JSON
step "init tiny model" "$bin" init --config "$tiny/config.json" --seed 1 --out "$tiny/model"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
gen=("$bin" generate -m "$tiny/model" --device cuda -p "Hello, world" -n 8 --temp 0 --json)
step "compute-sanitizer memcheck" "$sanitizer" --tool memcheck --error-exitcode 1 "${gen[@]}"
step "compute-sanitizer racecheck" "$sanitizer" --tool racecheck --error-exitcode 1 "${gen[@]}"
step "compute-sanitizer initcheck" "$sanitizer" --tool initcheck --error-exitcode 1 "${gen[@]}"

# Greedy ids of the default GPT-2 124M (seed 0) must agree between CPU and CUDA.
cpu_ids=$("$bin" generate --device cpu -p "The meaning of life is" -n 32 --temp 0 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["ids"])')
gpu_ids=$("$bin" generate --device cuda -p "The meaning of life is" -n 32 --temp 0 --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["ids"])')
echo "cpu ids $cpu_ids" >>"$log"; echo "gpu ids $gpu_ids" >>"$log"
if [[ -n "$cpu_ids" && "$cpu_ids" == "$gpu_ids" ]]; then rows+=("| greedy ids CPU == CUDA (gpt2, 32 tokens) | pass | |")
else rows+=("| greedy ids CPU == CUDA (gpt2, 32 tokens) | **FAIL** | |"); fi

step "eagerlm bench --device cuda" "$bin" bench --device cuda --json
"$bin" bench --device cuda --json >"$out_dir/bench_cuda.json" 2>>"$log" || true
"$bin" init --preset gpt2-xl --device cuda --json >"$out_dir/init_xl_cuda.json" 2>>"$log" || true

# eagerlm against JAX's preallocated-cache loop on this GPU (the target system of issue #8), with
# whichever Python has a CUDA JAX and the comparison's packages (.venv first, then python3).
jax_python=""
for py in .venv/bin/python python3; do
  if "$py" -c 'import jax, flax, transformers, matplotlib; assert jax.devices("gpu")' >/dev/null 2>&1; then
    jax_python=$py; break
  fi
done
if [[ -n "$jax_python" ]]; then
  step "compare_jax --device cuda (gpt2, batch 1 and 8)" timeout 240 "$jax_python" tools/compare_jax.py \
    --device cuda --skip-init --systems preallocated,eagerlm --eagerlm "$bin" --workdir "$tiny/cmp" \
    --json "$out_dir/compare_jax_cuda.json" --plot "$out_dir/compare_jax_cuda.png" \
    --markdown "$out_dir/compare_jax_cuda.md"
else
  rows+=("| compare_jax --device cuda | skipped: no Python with a CUDA JAX, flax and transformers | |")
fi

{
  echo "# eagerlm GPU check"
  echo
  echo "GPU: $gpu · commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') · $(date -u +%Y-%m-%dT%H:%MZ) · $(( $(date +%s) - start )) s in all"
  echo
  echo "| check | result | time |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## eagerlm bench --device cuda"
  echo '```json'
  cat "$out_dir/bench_cuda.json" 2>/dev/null
  echo '```'
  echo "## eagerlm init --preset gpt2-xl --device cuda"
  echo '```json'
  cat "$out_dir/init_xl_cuda.json" 2>/dev/null
  echo '```'
  if [[ -f "$out_dir/compare_jax_cuda.md" ]]; then
    echo "## eagerlm vs JAX on this GPU"
    cat "$out_dir/compare_jax_cuda.md"
  fi
} >"$report"
cat "$report"
grep -q FAIL "$report" && exit 1 || exit 0
