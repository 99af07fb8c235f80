"""One measurement of tools/compare_jax.py, run in a fresh Python process so that imports,
loading and compilation count as a user meets them. Prints one JSON object on stdout; times are
`time.monotonic()` seconds (CLOCK_MONOTONIC, the clock of the parent and of eagerlm's
`--timings-per-token`), so the parent can measure from the moment it started this process.

    python -m jax_gpt2.bench_worker init --preset gpt2 --seed 0
    python -m jax_gpt2.bench_worker generate --system preallocated|growing|hf|attention-op \\
        --model DIR --prompts ids.json -n 128

The attention-op system imports eagerlm (the Python package: on PYTHONPATH or installed).
"""

import argparse
import json
import sys
import time


def run_init(args):
    t_start = time.monotonic()
    import jax

    from .config import PRESETS, config_from_file
    from .init import init_fn, seed_key

    t_imported = time.monotonic()
    config = PRESETS[args.preset] if args.preset else config_from_file(args.config)
    key = seed_key(args.seed)
    init = jax.jit(init_fn(config))

    t0 = time.monotonic()
    params = jax.block_until_ready(init(key))
    t1 = time.monotonic()
    del params  # gpt2-xl is 6.2 GB: do not hold two copies
    t2 = time.monotonic()
    jax.block_until_ready(init(key))
    t3 = time.monotonic()
    shapes = jax.eval_shape(init_fn(config), key)
    t4 = time.monotonic()
    return {"import_s": t_imported - t_start, "first_call_s": t1 - t0, "second_call_s": t3 - t2,
            "eval_shape_s": t4 - t3, "parameters": len(shapes),
            "backend": jax.default_backend(), "jax": jax.__version__}


def run_generate(args):
    t_start = time.monotonic()
    import jax
    import numpy as np

    jax.config.update("jax_default_matmul_precision", "highest")
    prompts = np.array(json.loads(open(args.prompts).read()), np.int32)
    token_times = []
    on_token = lambda i: token_times.append(time.monotonic())  # noqa: E731
    result = {"backend": jax.default_backend(), "jax": jax.__version__}

    if args.system == "hf":
        from . import hf_reference

        t_imported = time.monotonic()
        model, params = hf_reference.load(args.model)
        t_loaded = time.monotonic()
        generate = hf_reference.jit_greedy(model, args.n)
        ids = np.asarray(generate(params, prompts))  # one call: every token arrives at its end
        token_times = [time.monotonic()] * args.n
        t_warm = time.monotonic()
        np.asarray(generate(params, prompts))  # compiled: the steady cost of a whole generation
        result["warm_call_s"] = time.monotonic() - t_warm
    else:
        from . import checkpoint
        from .generate import greedy_attention_op, greedy_growing, greedy_preallocated

        if args.system == "attention-op":
            import eagerlm.jax  # noqa: F401  (counted with the imports)
        t_imported = time.monotonic()
        config, params = checkpoint.load(args.model)
        jax.block_until_ready(params)
        t_loaded = time.monotonic()
        loop = {"preallocated": greedy_preallocated, "growing": greedy_growing,
                "attention-op": greedy_attention_op}[args.system]
        stats = {}
        ids = loop(params, config, prompts, args.n, on_token, stats)
        result["compilations"] = stats["compilations"]
    result.update({"import_s": t_imported - t_start, "load_s": t_loaded - t_imported, "token_times": token_times,
                   "ids": ids.tolist(), "end": time.monotonic()})
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="task", required=True)
    init = sub.add_parser("init")
    init.add_argument("--preset")
    init.add_argument("--config")
    init.add_argument("--seed", type=int, default=0)
    gen = sub.add_parser("generate")
    gen.add_argument("--system", choices=["preallocated", "growing", "hf", "attention-op"], required=True)
    gen.add_argument("--model", required=True)
    gen.add_argument("--prompts", required=True)
    gen.add_argument("-n", type=int, default=128)
    args = parser.parse_args()
    result = run_init(args) if args.task == "init" else run_generate(args)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
