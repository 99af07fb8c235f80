#!/usr/bin/env python3
"""CPU against CUDA logits, as eagerlm-dump-logits writes them (float32 .npy, [rows, vocab]).

    compare_logits.py CPU.npy CUDA.npy --tolerance T [--label L]

Per row: the worst |cuda - cpu| over the row's scale, max(1, max |cpu|) (as
test/cuda/test_cuda_forward.cpp); and the argmax (lowest id among ties), which must agree unless
the CPU's two best logits lie within the tolerance of each other (a near-tie either device may
break). Also the relative L2 error ||cuda - cpu|| / ||cpu|| over everything. Prints one JSON
object; exits 0 when every row is within T, has no NaN or infinity, and the argmaxes agree.
Standard library only (the GPU machine's Python has numpy, but this needs none).
"""

import argparse
import array
import ast
import json
import math
import operator
import sys


def load_npy(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            sys.exit(f"{path}: not an .npy file")
        major = f.read(2)[0]
        size = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = ast.literal_eval(f.read(size).decode("latin1"))
        if header["descr"] != "<f4" or header["fortran_order"] or len(header["shape"]) != 2:
            sys.exit(f"{path}: expected a C-order float32 matrix, got {header}")
        data = array.array("f")
        data.frombytes(f.read())
    rows, cols = header["shape"]
    if len(data) != rows * cols:
        sys.exit(f"{path}: {len(data)} values for shape {header['shape']}")
    return data, rows, cols


def argmax(row):
    return max(range(len(row)), key=row.__getitem__)  # the first maximum: the lowest id


def compare(cpu, cuda, rows, vocab, tol):
    worst, worst_row, near_ties, mismatches, bad_rows = 0.0, -1, 0, [], 0
    err2 = ref2 = 0.0
    for r in range(rows):
        want = cpu[r * vocab:(r + 1) * vocab]
        got = cuda[r * vocab:(r + 1) * vocab]
        if not math.isfinite(math.fsum(got)):
            return {"error": f"row {r}: NaN or infinity in the CUDA logits"}
        diff = list(map(operator.sub, got, want))
        scale = max(1.0, max(map(abs, want)))
        rel = max(map(abs, diff)) / scale
        if rel > worst:
            worst, worst_row = rel, r
        bad_rows += rel > tol
        err2 += math.fsum(map(operator.mul, diff, diff))
        ref2 += math.fsum(map(operator.mul, want, want))
        a, b = argmax(want), argmax(got)
        if a != b:
            gap = abs(want[a] - want[b])
            if gap <= tol * scale:
                near_ties += 1
            else:
                mismatches.append({"row": r, "cpu": a, "cuda": b, "cpu_gap": gap})
    return {"worst_rel": worst, "worst_row": worst_row, "rows_over_tolerance": bad_rows,
            "rel_l2": math.sqrt(err2 / ref2) if ref2 else 0.0,
            "argmax_agree": rows - near_ties - len(mismatches), "argmax_near_ties": near_ties,
            "argmax_mismatches": mismatches[:10]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cpu")
    p.add_argument("cuda")
    p.add_argument("--tolerance", type=float, required=True)
    p.add_argument("--label", default="")
    a = p.parse_args()
    cpu, rows, vocab = load_npy(a.cpu)
    cuda, rows2, vocab2 = load_npy(a.cuda)
    if (rows, vocab) != (rows2, vocab2):
        sys.exit(f"shapes differ: {rows}x{vocab} (cpu) against {rows2}x{vocab2} (cuda)")
    result = {"label": a.label, "rows": rows, "vocab": vocab, "tolerance": a.tolerance}
    result.update(compare(cpu, cuda, rows, vocab, a.tolerance))
    ok = "error" not in result and result["rows_over_tolerance"] == 0 and not result["argmax_mismatches"]
    result["pass"] = ok
    print(json.dumps(result))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
