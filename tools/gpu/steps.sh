#!/usr/bin/env bash
# The steps of tools/gpu_check.sh, one function each, run as `bash tools/gpu/steps.sh NAME ARGS`
# under `timeout` by its step runner. A step prints what it does; it may write into $STEP_DIR:
# `status` (its own verdict, e.g. "unsupported"), `detail` (one line for the report's table) and
# `data.json` (numbers for the report). The exit code says pass (0) or fail.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tools/gpu/common.sh
source tools/gpu/common.sh
: "${STEP_DIR:?}" "${GPU_WORK:?}"
bin=$gpu_build/bin
tests=$gpu_build/test
export EAGERLM_CUDA_MODULE=$gpu_build/lib/libeagerlm-cuda.so
loopback=$tests/core/libeagerlm_test_loopback_module.so
detail() { echo "$*" >"$STEP_DIR/detail"; }

unpack() { gpu_unpack; }

configure() {
  gpu_configure || return 1
  # Where each dependency was found, from the cache (the report's proof, with `deps` below).
  local cache=$gpu_build/CMakeCache.txt
  python3 - "$cache" >"$STEP_DIR/data.json" <<'EOF'
import json, sys
keys = ["CMAKE_COMMAND", "CMAKE_CXX_COMPILER", "CUDAToolkit_BIN_DIR", "CMAKE_CUDA_ARCHITECTURES",
        "CUDA_cublas_LIBRARY", "OpenMP_gomp_LIBRARY", "PKG_CONFIG_EXECUTABLE", "nlohmann_json_DIR", "CLI11_DIR",
        "Catch2_DIR", "pkgcfg_lib_OPENBLAS_openblas", "OPENBLAS_INCLUDE_DIRS", "pkgcfg_lib_UTF8PROC_utf8proc",
        "UTF8PROC_INCLUDE_DIRS"]
found = {}
for line in open(sys.argv[1]):
    name = line.split(":", 1)[0].split("=", 1)[0]
    if name in keys and "=" in line:
        found[name] = line.split("=", 1)[1].strip()
print(json.dumps(found))
EOF
}

build() {
  gpu_build_targets || return 1
  detail "eagerlm, eagerlm-dump-logits, libeagerlm-cuda.so, test_cuda_ops, test_cuda_model, test_library_cuda"
}

# No header or library of the carried packages came from anywhere but the prefix.
deps() {
  local all bad=0 h lib f
  all=$(ninja -C "$gpu_build" -t deps | awk 'NF == 1 && $1 ~ /^\// {print $1}' | sort -u)
  local sys
  sys=$(grep -E '^/usr/include/(nlohmann|CLI/|catch2|utf8proc\.h|x86_64-linux-gnu/(cblas|openblas|f77blas))' <<<"$all")
  if [[ -n "$sys" ]]; then
    echo "headers read from the system's copies:"; echo "$sys" | head -20; bad=1
  fi
  # (No CUDA-check target includes cblas.h since the CPU products are eagerlm's own; OpenBLAS is
  # still linked, and the library check below sees where it comes from.)
  for h in nlohmann/json.hpp CLI/CLI.hpp catch2/catch.hpp utf8proc.h; do
    f=$(grep -F "$gpu_prefix/" <<<"$all" | grep -m1 -F "/$h")
    if [[ -z "$f" ]]; then echo "no object read $h from $gpu_prefix"; bad=1; else echo "$h: $f"; fi
  done
  for f in "$bin/eagerlm" "$bin/eagerlm-dump-logits" "$tests/cuda/test_cuda_ops" "$tests/cuda/test_cuda_model" \
           "$tests/library/test_library_cuda" "$gpu_build/lib/libeagerlm.so" "$EAGERLM_CUDA_MODULE"; do
    [[ -e "$f" ]] || { echo "missing: $f"; bad=1; continue; }
    echo "$(basename "$f"):"
    while read -r lib; do
      echo "  $lib"
      [[ "$lib" == *"not found"* ]] && bad=1
      [[ "$lib" =~ (openblas|utf8proc|gfortran|quadmath) && "$lib" != *"=> $gpu_prefix/"* ]] && bad=1
    done < <(ldd "$f" | grep -E 'openblas|utf8proc|gfortran|quadmath|not found|cublas|eagerlm')
  done
  ((bad == 0)) && detail "every header and library of the carried packages came from $gpu_prefix"
  return $bad
}

# The built programs run on the carried libraries; writes the odd model the logits step uses.
smoke() {
  "$bin/eagerlm" --version || return 1
  mkdir -p "$GPU_WORK"
  # 3 layers, width 200 (5 heads of 40: no 32- or 64-multiple), MLP 300, N(0, 0.15) weights so
  # that attention is far from uniform and every layer moves the logits.
  cat >"$GPU_WORK/odd.json" <<'EOF'
{"n_layer": 3, "n_embd": 200, "n_head": 5, "n_inner": 300, "n_positions": 320, "vocab_size": 50257,
 "initializer_range": 0.15}
EOF
  "$bin/eagerlm" init --config "$GPU_WORK/odd.json" --seed 7 --out "$GPU_WORK/odd" --force
}

# STEP ARGS with the loopback test module serving Device::kCuda (on the CPU): the dry run's
# rehearsal of a GPU step's code.
rehearse() {
  EAGERLM_CUDA_MODULE=$loopback "$@"
}

cuda_test() {  # cuda_test BINARY ARGS...
  "$tests/$1" "${@:2}" --durations yes
}

# The op tests again with every launch synchronous, so the first failing kernel names itself.
ops_blocking() {
  CUDA_LAUNCH_BLOCKING=1 "$tests/cuda/test_cuda_ops" --order decl
  local rc=$?
  detail "first fault: $(grep -m1 -iE 'cuda.*(error|fail)|illegal|misaligned|launch' "$STEP_DIR/out" 2>/dev/null |
                          cut -c1-200)"
  return $rc
}

# compute-sanitizer TOOL over test_cuda_ops (Catch2 test spec SPEC), on our kernels only (their
# mangled names hold "eagerlm"; cuBLAS's are not ours to judge).
sanitize() {  # sanitize TOOL SPEC
  local cs
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [[ -x "$cs" ]] || { detail "no compute-sanitizer on this machine"; return 1; }
  local log=$GPU_WORK/sanitizer.log
  "$cs" --tool "$1" --kernel-name kns=eagerlm --error-exitcode 86 --print-limit 20 \
    "$tests/cuda/test_cuda_ops" "$2" >"$log" 2>&1
  local rc=$?
  cat "$log"
  if ((rc != 0)) && grep -qiE 'device (is )?not supported' "$log"; then
    echo unsupported >"$STEP_DIR/status"
    detail "compute-sanitizer refused the device: $(grep -m1 -iE 'device (is )?not supported' "$log" | cut -c1-160)"
    return 0
  fi
  local summary
  summary=$(grep -m1 -E '(ERROR|RACECHECK) SUMMARY' "$log")
  case $rc in
    0) detail "$summary" ;;
    86) detail "sanitizer errors: $summary" ;;
    *) detail "exit $rc (tests failed under the sanitizer?) $summary" ;;
  esac
  return $rc
}

# Comma-separated token ids: n of them, a different sequence for each s.
ids() { awk -v n="$1" -v s="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s%d", (i ? "," : ""), (i * 7919 + s * 104729 + 13) % 50257 }'; }

# CPU against CUDA logits of MODEL, every position of a ragged batch of prompts, once in one
# packed prefill step and once with decode steps from DECODE_FROM on.
logits() {  # logits LABEL MODEL TOLERANCE DECODE_FROM LENGTH...
  local label=$1 model=$2 tol=$3 from=$4 prompts=() s=0 n mode dev fail=0
  shift 4
  if [[ "$model" == gpt2 ]]; then
    model=$GPU_WORK/gpt2
    "$bin/eagerlm" init --preset gpt2 --seed 0 --out "$model" --force --json >/dev/null || return 1
  fi
  for n in "$@"; do prompts+=("$(ids "$n" "$s")"); s=$((s + 1)); done
  : >"$GPU_WORK/logits.jsonl"
  for mode in prefill decode; do
    local extra=()
    [[ $mode == decode ]] && extra=(--decode-from "$from")
    for dev in cpu cuda; do
      "$bin/eagerlm-dump-logits" "$model" "$GPU_WORK/$dev.npy" --device "$dev" "${extra[@]}" "${prompts[@]}" || return 1
    done
    python3 tools/gpu/compare_logits.py "$GPU_WORK/cpu.npy" "$GPU_WORK/cuda.npy" --tolerance "$tol" \
      --label "$label, $mode" | tee -a "$GPU_WORK/logits.jsonl" || fail=1
  done
  python3 - "$GPU_WORK/logits.jsonl" "$STEP_DIR" <<'EOF'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
json.dump(runs, open(sys.argv[2] + "/data.json", "w"))
parts = [f"{r['label'].split(', ')[-1]}: worst {r.get('worst_rel', float('nan')):.1e} of scale (tol {r['tolerance']:.0e}), "
         f"argmax {r.get('argmax_agree', 0)}/{r['rows']}" for r in runs]
open(sys.argv[2] + "/detail", "w").write("; ".join(parts))
EOF
  rm -f "$GPU_WORK/cpu.npy" "$GPU_WORK/cuda.npy"
  return $fail
}

bench() {
  "$bin/eagerlm" bench --device cuda --json >"$STEP_DIR/data.json" || return 1
  python3 - "$STEP_DIR" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1] + "/data.json"))
m, f = b["machine"], b["decode_floor"]
tps = {d["batch"]: d["tokens_per_second"] for d in b["decode_batch"]}
ok = m["read_gbps"] > 0 and m["fp32_peak_gflops"] > 0
scale = f"{tps[32] / tps[1]:.1f}x" if 1 in tps and 32 in tps else "?"
open(sys.argv[1] + "/detail", "w").write(
    f"{m.get('gpu')}: copy {m['read_gbps']:.0f} GB/s, fp32 {m['fp32_peak_gflops'] / 1e3:.1f} / tf32 "
    f"{m.get('tf32_peak_gflops', 0) / 1e3:.0f} / bf16 {m.get('bf16_peak_gflops', 0) / 1e3:.0f} TFLOP/s; decode b1 "
    f"{f['measured_ms']:.3f} ms = {f['ratio']:.1f}x floor (target < 1 ms); b32/b1 tokens/s {scale} (target >= 20x)")
sys.exit(0 if ok else 1)
EOF
}

# GPT-2 XL initialized on the GPU and on the CPU: the same checksum, and the times.
init_xl() {
  "$bin/eagerlm" init --preset gpt2-xl --device cuda --json >"$GPU_WORK/xl_cuda.json" || return 1
  "$bin/eagerlm" init --preset gpt2-xl --device cpu --json >"$GPU_WORK/xl_cpu.json" || return 1
  python3 - "$GPU_WORK" "$STEP_DIR" <<'EOF'
import json, sys
keys = ("seconds", "device_start_seconds", "checksum", "total_bytes")
r = {d: {k: json.load(open(f"{sys.argv[1]}/xl_{d}.json")).get(k) for k in keys} for d in ("cuda", "cpu")}
r["same_checksum"] = r["cuda"]["checksum"] == r["cpu"]["checksum"]
json.dump(r, open(sys.argv[2] + "/data.json", "w"))
open(sys.argv[2] + "/detail", "w").write(
    f"cuda {r['cuda']['seconds'] * 1e3:.0f} ms (+{r['cuda']['device_start_seconds']:.2f} s device start; target "
    f"< 50 ms), cpu {r['cpu']['seconds']:.2f} s; checksums {'equal' if r['same_checksum'] else 'DIFFER'} "
    f"({r['cuda']['checksum']})")
sys.exit(0 if r["same_checksum"] else 1)
EOF
}

"$@"
