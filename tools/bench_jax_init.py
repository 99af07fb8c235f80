#!/usr/bin/env python3
"""eagerlm.jax.init against jax.jit(init) on one machine, in one run: time and bits.

For each model (Hugging Face FlaxGPT2LMHeadModel at each --preset, through
`init_weights(rng, (1, 1))`, and a plain Flax linen Transformer), each system runs in a fresh
process after `import jax` and building the model:
  jit       jax.jit(init): the first call (trace + XLA compile + run) and a second call (run only)
  eagerlm   eagerlm.jax.init(init): the first call (trace + evaluate) and a second one
The floor is the time NumPy takes to write as many float32 once into fresh memory (the fastest
of three), in the same process. eagerlm's first call is also split into its phases: tracing
(make_jaxpr, which jax.jit's first call pays too), building the program, evaluating it, and
handing the outputs to JAX.
Both processes digest every output leaf (SHA-256 of the bytes in tree order): equal digests mean
bit-identical parameters. Medians over --repeat fresh processes per system.

    python tools/bench_jax_init.py --presets gpt2,gpt2-medium --json out/bench_jax_init.json

Needs a Python with the eagerlm package, jax, flax and transformers (the package's test
environment has them: tools/requirements-python-tests.txt).
"""

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys

PRESETS = {  # Hugging Face's GPT-2 sizes
    "gpt2": dict(n_layer=12, n_embd=768, n_head=12),
    "gpt2-medium": dict(n_layer=24, n_embd=1024, n_head=16),
    "gpt2-large": dict(n_layer=36, n_embd=1280, n_head=20),
    "gpt2-xl": dict(n_layer=48, n_embd=1600, n_head=25),
}


def build(model):
    """(init function, its arguments) for a model name: an HF preset or "linen"."""
    import jax
    import jax.numpy as jnp

    if model == "linen":
        import flax.linen as nn

        class Block(nn.Module):
            @nn.compact
            def __call__(self, x):
                h = nn.LayerNorm()(x)
                h = nn.MultiHeadDotProductAttention(num_heads=8)(h, h)
                x = x + h
                h = nn.Dense(2048, kernel_init=nn.initializers.truncated_normal(0.02))(nn.LayerNorm()(x))
                return x + nn.Dense(512)(nn.gelu(h))

        class Transformer(nn.Module):
            @nn.compact
            def __call__(self, ids):
                x = nn.Embed(32000, 512)(ids)
                for _ in range(8):
                    x = Block()(x)
                return nn.Dense(32000)(nn.LayerNorm()(x))

        return Transformer().init, (jax.random.key(0), jnp.zeros((1, 16), jnp.int32))
    from transformers import FlaxGPT2LMHeadModel, GPT2Config

    hf = FlaxGPT2LMHeadModel(GPT2Config(**PRESETS[model]), _do_init=False)
    return hf.init_weights, (jax.random.PRNGKey(0), (1, 1))


def digest(tree):
    import hashlib

    import jax
    import numpy as np

    h = hashlib.sha256()
    for leaf in jax.tree.leaves(tree):
        h.update(np.ascontiguousarray(np.asarray(leaf)).view(np.uint8).data)
    return h.hexdigest()[:16]


def worker(system, model):
    import time

    import jax

    fn, args = build(model)
    phases = {}
    if system == "jit":
        static = tuple(i for i, a in enumerate(args) if not isinstance(a, jax.Array))
        run = jax.jit(fn, static_argnums=static)
        call = lambda: run(*args)  # noqa: E731
    else:
        from eagerlm.jax._init import init_with_stats

        def call():
            out, stats = init_with_stats(fn, *args)
            if not phases:  # the first call's: trace, build the program, evaluate, outputs
                phases.update(stats.seconds)
            return out
    times = []
    for _ in range(2):
        start = time.perf_counter()
        out = jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
        if len(times) == 1:
            first_digest = digest(out)
            count = sum(int(x.size) for x in jax.tree.leaves(out))
        del out
    import numpy as np

    # The floor: writing that many float32 once (NumPy, fresh memory), measured in this process.
    floors = []
    for _ in range(3):  # the fastest of three: page faults of fresh memory included, as for init
        start = time.perf_counter()
        np.full(count, 1.0, np.float32)
        floors.append(time.perf_counter() - start)
    floor = min(floors)
    print(json.dumps({"first_s": times[0], "second_s": times[1], "digest": first_digest, "parameters": count,
                      "write_floor_s": floor, "first_phases_s": phases}))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--presets", default="gpt2,gpt2-medium", help="comma-separated HF presets (and 'linen')")
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per system and model (median)")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    models = [m for m in args.presets.split(",") if m]
    for m in models:
        if m not in PRESETS and m != "linen":
            parser.error(f"--presets: unknown model {m!r} (expected {', '.join(PRESETS)} or linen)")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    report = {"machine": {"cpu": cpu_name(), "cores": os.cpu_count()}, "models": {}}
    print(f"# {report['machine']['cpu']}, {os.cpu_count()} cores", file=sys.stderr)
    for model in models:
        row = {}
        for system in ("jit", "eagerlm"):
            runs = []
            for r in range(args.repeat):
                print(f"# {model}: {system} ({r + 1}/{args.repeat})", file=sys.stderr, flush=True)
                out = subprocess.run([sys.executable, __file__, "--worker", system, model], env=env,
                                     capture_output=True, text=True, check=True)
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            row[system] = {
                "first_s": statistics.median(r["first_s"] for r in runs),
                "second_s": statistics.median(r["second_s"] for r in runs),
                "digests": sorted({r["digest"] for r in runs}),
                "parameters": runs[0]["parameters"],
                "write_floor_s": statistics.median(r["write_floor_s"] for r in runs),
                "first_phases_s": {k: statistics.median(r["first_phases_s"][k] for r in runs)
                                   for k in runs[0]["first_phases_s"]},
            }
        row["bit_identical"] = row["jit"]["digests"] == row["eagerlm"]["digests"]
        row["first_call_speedup"] = row["jit"]["first_s"] / row["eagerlm"]["first_s"]
        row["vs_compiled_second_call"] = row["jit"]["second_s"] / row["eagerlm"]["first_s"]
        report["models"][model] = row
        print(f"{model:12s} {row['jit']['parameters'] / 1e6:8.1f} M params | jit first {row['jit']['first_s']:7.2f} s, "
              f"second {row['jit']['second_s']:6.2f} s | eagerlm.jax.init first {row['eagerlm']['first_s']:6.2f} s, "
              f"second {row['eagerlm']['second_s']:6.2f} s (floor: writing the bytes {row['eagerlm']['write_floor_s']:5.2f} s) | first-call speedup {row['first_call_speedup']:5.1f}x, "
              f"vs jit's second call {row['vs_compiled_second_call']:4.2f}x | bits "
              f"{'identical' if row['bit_identical'] else 'DIFFER'}", flush=True)
        phases = row["eagerlm"]["first_phases_s"]
        print(f"{'':12s} eagerlm's first call: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()), flush=True)
    if args.json:
        pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
