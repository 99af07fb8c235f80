#!/usr/bin/env python3
"""The Python package's costs (docs/benchmarks.md, "Python package"), in the environment where
`eagerlm` is installed (`pip install .`):

  1. per-token overhead of the Python layer at batch 1: `Generator.generate` timed from Python
     against the decode ms/token that `eagerlm generate --json` reports for the same request
     (GPT-2 124M, random weights from seed 0, greedy, --ignore-eos), rounds interleaved;
  2. `Model.from_params` of GPT-2 124M's float32 arrays (zero-copy), and of the same arrays as
     bfloat16 (converted), for comparison.

    venv/bin/python tools/bench_python.py [--build build] [--tokens 129] [--rounds 5]

The Python figure is conservative: its wall-clock time (options in, the Result out, the GIL taken
per token for Ctrl-C) minus the engine's first-token time, over the tokens after the first, which
is how the CLI's decode ms/token is defined (timings.decode_ms_per_token: the tokens after the
first). Both run with the same OMP_NUM_THREADS; the rounds alternate which goes first.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

PROMPT = "Hello, my name is"


def cli_decode_ms(eagerlm_bin, tokens, threads):
    out = subprocess.run([eagerlm_bin, "generate", "--preset", "gpt2", "--init-seed", "0", "-p", PROMPT, "-n",
                          str(tokens), "--temperature", "0", "--ignore-eos", "--json", "-t", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    timings = json.loads(out)["timings"]
    assert timings["generated_tokens"] == tokens, timings
    return timings["decode_ms_per_token"]


def python_decode_ms(generator, tokens):
    start = time.perf_counter()
    result = generator.generate(PROMPT, max_new_tokens=tokens, ignore_eos=True)
    wall_ms = (time.perf_counter() - start) * 1e3
    assert len(result.ids) == tokens, len(result.ids)
    engine = result.timings.decode_ms_per_token
    return (wall_ms - result.timings.first_token_ms) / (tokens - 1), engine


def from_params_ms(eagerlm, params, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        model = eagerlm.Model.from_params(params, "gpt2")
        times.append((time.perf_counter() - start) * 1e3)
        del model
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build", help="build directory holding bin/eagerlm")
    parser.add_argument("--tokens", type=int, default=129, help="tokens generated per request")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved CLI/Python rounds")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))  # before eagerlm loads OpenMP

    import eagerlm

    eagerlm_bin = str(pathlib.Path(args.build) / "bin" / "eagerlm")
    print(f"eagerlm {eagerlm.__version__}, Python {sys.version.split()[0]}, {args.threads} threads, "
          f"{args.tokens} tokens, {args.rounds} rounds", flush=True)

    model = eagerlm.Model.initialize("gpt2", seed=0)
    generator = eagerlm.Generator(model)
    python_decode_ms(generator, 8)  # warm-up: first touch of the cache and the weights
    cli, python, engine = [], [], []
    for round_ in range(args.rounds):
        if round_ % 2:  # alternating which goes first, against a trend in the machine's load
            wall, inner = python_decode_ms(generator, args.tokens)
            cli.append(cli_decode_ms(eagerlm_bin, args.tokens, args.threads))
        else:
            cli.append(cli_decode_ms(eagerlm_bin, args.tokens, args.threads))
            wall, inner = python_decode_ms(generator, args.tokens)
        python.append(wall)
        engine.append(inner)
        print(f"round {round_ + 1}: CLI {cli[-1]:.2f} ms/token, Python {wall:.2f} ms/token "
              f"(the engine inside: {inner:.2f})", flush=True)
    c, p, e = (statistics.median(x) for x in (cli, python, engine))
    print(f"decode, batch 1, medians: CLI {c:.2f} ms/token, Python generate {p:.2f} ms/token "
          f"({(p / c - 1) * 100:+.1f} %), the engine inside Python {e:.2f} ms/token "
          f"(Python layer {(p / e - 1) * 100:+.2f} %); median of the rounds' Python/CLI ratios "
          f"{(statistics.median(a / b for a, b in zip(python, cli)) - 1) * 100:+.1f} %")
    del generator, model

    params = eagerlm.init_params("gpt2", seed=0)
    print(f"from_params, GPT-2 124M float32 (zero-copy): {from_params_ms(eagerlm, params, 5):.2f} ms (median of 5)")
    import ml_dtypes  # noqa: F401 (bfloat16 arrays)
    half = {name: array.astype(ml_dtypes.bfloat16) for name, array in params.items()}
    del params
    print(f"from_params, GPT-2 124M bfloat16 (widened to float32): {from_params_ms(eagerlm, half, 3):.2f} ms "
          f"(median of 3)")


if __name__ == "__main__":
    main()
