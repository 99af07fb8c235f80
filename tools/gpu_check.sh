#!/usr/bin/env bash
# The GPU check (docs/cuda.md, "The GPU check"): one device-tool call on the lent H200.
#
#   bash tools/gpu/prepare.sh          # first, HERE: the Debian packages the build needs
#   bash tools/gpu_check.sh            # on the GPU machine (.gpu-deps/debs carried along)
#   bash tools/gpu_check.sh --dry-run  # here, without a GPU (CI): everything up to the GPU
#
# Unpacks the carried packages into a private prefix (nothing is fetched), configures and builds
# only the CUDA-relevant targets against that prefix, checks that every dependency came from it,
# then runs the GPU steps: the three CUDA test binaries (exit 77, "no GPU", is a failure here),
# the op tests once more with CUDA_LAUNCH_BLOCKING=1 if they failed, CPU-vs-CUDA logits of an
# odd 3-layer model and of GPT-2 124M, `eagerlm bench --device cuda`, GPT-2 XL initialized on
# both devices, and compute-sanitizer memcheck (op tests) and racecheck (attention, sampling).
# Every step runs under `timeout`, within one budget (EAGERLM_GPU_CHECK_BUDGET seconds, 300 by
# default: under the device call's limit), and adds its row to $OUT/gpu_check.md and
# $OUT/gpu_check.json the moment it ends; $OUT/gpu_check.log holds each step's output, trimmed.
#
# --dry-run hides the system's copies of the carried packages (tools/gpu/isolated.sh), hides any
# GPU (CUDA_VISIBLE_DEVICES=""), and exits 0 only if every CPU step passed and every GPU step
# reported "no GPU". Without --dry-run, the exit code is 0 only if every step passed (or a
# sanitizer was refused by the device: "unsupported").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dry=0
case "${1:-}" in
  "") ;;
  --dry-run) dry=1 ;;
  *) echo "usage: bash tools/gpu_check.sh [--dry-run]" >&2; exit 2 ;;
esac
if ((dry)) && [[ -z "${EAGERLM_GPU_ISOLATION:-}" ]]; then
  exec bash tools/gpu/isolated.sh bash tools/gpu_check.sh --dry-run
fi
# shellcheck source=tools/gpu/common.sh
source tools/gpu/common.sh

out=${OUT:-$PWD/out-gpu}
mkdir -p "$out" && rm -f "$out"/gpu_check.*
log=$out/gpu_check.log
: >"$log"
export GPU_WORK=${EAGERLM_GPU_WORK:-/tmp/eagerlm-gpu-check}
rm -rf "$GPU_WORK" && mkdir -p "$GPU_WORK"
start=$(date +%s)
budget=${EAGERLM_GPU_CHECK_BUDGET:-$((dry ? 3600 : 300))}

if ((dry)); then
  export CUDA_VISIBLE_DEVICES=""
  have_gpu=0 gpu="none (dry run: CUDA_VISIBLE_DEVICES is empty)"
elif gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null) &&
     [[ -n "$gpu" ]]; then
  have_gpu=1
else
  have_gpu=0 gpu="none: nvidia-smi found no GPU"
fi

version() { "$@" 2>/dev/null | grep -m1 -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1 | grep . || echo none; }
python3 tools/gpu/report.py init "$out" \
  "mode=$( ((dry)) && echo "dry run (no GPU)" || echo "GPU run")" \
  "commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + local changes')" \
  "date=$(date -u +%Y-%m-%dT%H:%MZ)" "gpu=$gpu" \
  "host=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(uname -r), $(nproc) cores, $(getconf GNU_LIBC_VERSION)" \
  "tools=cmake $(version cmake --version), ninja $(version ninja --version), nvcc $(nvcc --version 2>/dev/null | grep -oE "V[0-9]+\.[0-9.]+" | head -1 || echo none), c++ $(version c++ --version), compute-sanitizer $(version compute-sanitizer --version), python3 $(version python3 --version)" \
  "isolation=${EAGERLM_GPU_ISOLATION:-none (not a dry run: the carried packages come first, nothing is hidden)}" \
  "budget=${budget} s"
echo "gpu_check: GPU $gpu; budget ${budget} s; report in $out/gpu_check.md"

# step NAME KIND LIMIT STEP ARGS...: runs `tools/gpu/steps.sh STEP ARGS` under timeout and adds
# its row. KIND: cpu; gpu (not run without a GPU: "no GPU"); gpu-test (a CUDA test binary, run
# either way: exit 77 is "no GPU" where there is none, and a failure where there is one).
step() {
  local name=$1 kind=$2 limit=$3
  shift 3
  steps_run=$((steps_run + 1))
  local dir=$GPU_WORK/step status detail="" rc t0 secs
  rm -rf "$dir" && mkdir -p "$dir"
  local left=$((budget - ($(date +%s) - start)))
  if [[ $kind == gpu ]] && ((!have_gpu)); then
    add "$name" gpu "no GPU" 0 "not run: $gpu"
    return 1
  fi
  if ((left < 15)); then
    add "$name" "${kind%-test}" "not run" 0 "out of time: the ${budget} s budget is spent"
    return 1
  fi
  ((limit > left)) && limit=$left
  t0=$(date +%s%N)
  STEP_DIR=$dir timeout -k 10 "$limit" bash tools/gpu/steps.sh "$@" >"$dir/out" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if ((rc == 124 || rc == 137)); then
    status=timeout detail="killed after ${limit} s"
  elif [[ $kind == gpu-test ]] && ((rc == 77)); then
    detail=$(grep -m1 -i skipped "$dir/out" | cut -c1-160)
    if ((have_gpu)); then status=FAIL detail="exit 77, the binary saw no GPU: $detail"; else status="no GPU"; fi
  elif ((rc == 0)); then
    status=pass
  else
    status=FAIL detail="exit $rc"
  fi
  [[ -s "$dir/status" ]] && status=$(<"$dir/status")
  [[ -s "$dir/detail" ]] && detail="${detail:+$detail; }$(<"$dir/detail")"
  {
    echo "== $name: $status, $secs s: $*"
    if (($(wc -l <"$dir/out") <= 400)); then cat "$dir/out"; else
      head -n 100 "$dir/out"; echo "... ($(($(wc -l <"$dir/out") - 300)) lines cut) ..."; tail -n 200 "$dir/out"
    fi
  } >>"$log"
  local tail=()
  [[ $status == pass || $status == unsupported || $status == "no GPU" ]] || tail=(--tail "$dir/out")
  add "$name" "${kind%-test}" "$status" "$secs" "$detail" --data "$dir/data.json" "${tail[@]}"
  [[ $status == pass || $status == unsupported ]]
}
add() {  # add NAME KIND STATUS SECONDS DETAIL [report.py options]
  printf '[%4d s] %s: %s\n' $(($(date +%s) - start)) "$1" "$3"
  python3 tools/gpu/report.py add "$out" --name "$1" --kind "$2" --status "$3" --seconds "$4" --detail "$5" "${@:6}"
}
steps_run=0
finish() {
  echo
  sed -n '/^| step/,/^$/p' "$out/gpu_check.md"
  python3 tools/gpu/report.py result "$out" --expect "$steps_run" "$( ((dry)) && echo --dry-run)"
  exit $?
}

step "unpack the carried packages" cpu 60 unpack || finish
step "configure (CUDA, sm_${EAGERLM_GPU_ARCH:-90}, the prefix alone)" cpu 180 configure || finish
step "build the CUDA targets" cpu "$budget" build || finish
step "dependencies came from the prefix" cpu 60 deps
step "CPU smoke: the programs run on the carried libraries" cpu 60 smoke
if ((dry)); then
  # The logits step's own code, with the loopback test module standing in for the CUDA module
  # (test/core: Device::kCuda served by the CPU), so its plumbing has run before a GPU sees it.
  step "rehearsal: the logits step, the loopback module as CUDA" cpu 120 rehearse logits "odd 3-layer" \
    "$GPU_WORK/odd" 0 130 300 77 5
fi

step "test_cuda_ops" gpu-test 120 cuda_test cuda/test_cuda_ops --order rand --rng-seed time ||
  step "test_cuda_ops with CUDA_LAUNCH_BLOCKING=1" gpu 120 ops_blocking
step "test_cuda_model" gpu-test 180 cuda_test cuda/test_cuda_model --order rand --rng-seed time
step "test_library_cuda" gpu-test 90 cuda_test library/test_library_cuda --order rand --rng-seed time
# Tolerances, relative to each row's largest CPU logit (at least 1): 2e-4 for the 3-layer model,
# test_cuda_forward.cpp's bound for models of at most three layers; 1e-3 for GPT-2's 12 layers
# and sums of up to 3072 terms (a float32 dot product's worst-case error grows with its length,
# K·2^-24 ≈ 1.8e-4 at K = 3072). A wrong mask, position, slot or split moves logits by far more.
step "logits CPU vs CUDA: 3-layer odd model" gpu 90 logits "odd 3-layer" "$GPU_WORK/odd" 2e-4 130 300 77 5
step "logits CPU vs CUDA: GPT-2 124M" gpu 120 logits "gpt2 124M" gpt2 1e-3 8 64 17 1
step "eagerlm bench --device cuda" gpu 120 bench
step "GPT-2 XL init, CUDA vs CPU" gpu 120 init_xl
draws='"cuda draws follow the kept probabilities"'  # 100 launches of 1024-2048 rows: too slow under a sanitizer
# The sanitizers last (the slowest, and their time is the least known), the shorter first.
step "compute-sanitizer racecheck: attention" gpu 90 sanitize racecheck "[attention]"
step "compute-sanitizer racecheck: sampling" gpu 90 sanitize racecheck "[sampling]~$draws"
step "compute-sanitizer memcheck: test_cuda_ops" gpu 150 sanitize memcheck "~[linear_typed]~$draws"
# The typed products apart: their double references take ~10 s of the host's time on their own.
step "compute-sanitizer memcheck: typed products" gpu 90 sanitize memcheck "[linear_typed]"
finish
