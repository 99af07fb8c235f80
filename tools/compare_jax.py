#!/usr/bin/env python3
"""eagerlm against JAX on one machine, in one run: initialization and greedy generation.

1. Initialization of --preset: `jax.jit(init)` of the JAX GPT-2 (tools/jax_gpt2, the same keys
   and values as eagerlm), first call (compile + run) and second call, and `jax.eval_shape`,
   against `eagerlm init` in memory and `eagerlm init --dry-run`.
2. Generation of -n tokens (greedy, end-of-text ignored) at each --batch, each system in a fresh
   process: (a) the naive JAX loop whose cache grows each token (recompiles every step);
   (b) JAX with a preallocated cache and one jitted step; (c) Hugging Face Flax `generate`
   under jax.jit; (d) eagerlm; (e) JAX with the preallocated cache and eagerlm's attention op
   (eagerlm.jax.padded_attention, an XLA FFI call: one step for prompt and decode, one compile). Same weights for all (a model directory `eagerlm init` writes),
   same prompts (text lines of equal token length), and their ids must agree.
   Measured: time to first token from process start, the latency of every token (token 0: from
   process start), total time to the last token. (c) produces all tokens in one compiled call,
   so its tokens all arrive at the end; its per-token line is a second, compiled call / n.

Output: a table on standard output, a JSON file and a PNG plot (per-token latency against token
index, log scale, one line per system, one panel per batch size).

    .venv/bin/python tools/compare_jax.py                       # GPT-2 124M, 128 tokens, batch 1 and 8
    .venv/bin/python tools/compare_jax.py --preset gpt2-xl --init-only
    .venv/bin/python tools/compare_jax.py --plot docs/compare_jax_gpt2.png

Needs tools/requirements.txt (tools/setup_python.sh) and a built eagerlm (--eagerlm, default
$EAGERLM_BIN or build/bin/eagerlm); (e) also the eagerlm Python package built with its XLA FFI
op (--python-package: a directory holding eagerlm/, default build/python, or installed). --device cuda runs both on the GPU: eagerlm built with CUDA
and a JAX with CUDA installed (JAX_PLATFORMS pins JAX to the chosen device either way).
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
PACKAGE_DIR = [str(REPO / "build" / "python")]  # where (e)'s worker finds the eagerlm package
SYSTEMS = {  # key: label
    "growing": "(a) JAX, growing cache (recompiles each token)",
    "preallocated": "(b) JAX, preallocated cache, one jitted step",
    "hf": "(c) Hugging Face Flax generate under jit",
    "eagerlm": "(d) eagerlm",
    "attention-op": "(e) JAX, preallocated cache, eagerlm's attention op",
}
PRESETS = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]
PROMPT_TOKENS = 16
CANDIDATE_PROMPTS = [  # each longer than PROMPT_TOKENS; cut to exactly that many tokens
    "The meaning of life is a question that has puzzled philosophers for many centuries, and the answer",
    "In a shocking finding, scientists discovered a herd of unicorns living in a remote valley in the Andes",
    "Once upon a time, in a kingdom by the sea, there lived a young princess who loved to sail",
    "The stock market fell sharply on Monday after the central bank announced that interest rates would rise",
    "To install the package, open a terminal and run the following command from the directory of the project",
    "My favourite recipe for a rainy afternoon is a bowl of hot tomato soup with fresh bread and butter",
    "The spacecraft entered orbit around Jupiter after a long journey of almost five years through the cold of space",
    "def fibonacci(n): if n < 2: return n else: return fibonacci(n - 1) + fibonacci(n - 2)",
    "Researchers at the university have developed a new kind of battery that charges fully in under a minute",
    "It was the best of times, it was the worst of times, it was the age of wisdom",
    "The old lighthouse keeper climbed the spiral stairs every evening to light the great lamp at the top",
    "After the storm had passed, the villagers gathered in the square to count the damage and help their neighbours",
]


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        command = " ".join(map(str, args[:4]))
        sys.exit(f"compare_jax: {command} ... failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def timed_process(args, env=None):
    """(start on CLOCK_MONOTONIC, wall seconds, parsed JSON stdout) of a fresh process."""
    start = time.monotonic()
    result = run(args, env=env)
    return start, time.monotonic() - start, json.loads(result.stdout)


def worker(device, *args):
    # JAX runs where eagerlm runs: JAX_PLATFORMS pins it (a GPU JAX would otherwise take the GPU
    # during a CPU comparison), and on the GPU matmuls stay float32 (JAX's default there may use
    # TF32, which changes greedy ids; eagerlm's default is plain FP32 too).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOOLS), *PACKAGE_DIR]), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               JAX_PLATFORMS="cuda" if device == "cuda" else "cpu")
    if device == "cuda":
        env["JAX_DEFAULT_MATMUL_PRECISION"] = "float32"
    return timed_process([sys.executable, "-m", "jax_gpt2.bench_worker", *args], env=env)


def attention_op_available():
    """Whether (e)'s worker can import eagerlm.jax with the padded_attention op built in."""
    check = "import eagerlm._core as c; assert 'eagerlm_padded_attention' in c.xla_ffi_targets()"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TOOLS), *PACKAGE_DIR]))
    return subprocess.run([sys.executable, "-c", check], env=env, capture_output=True).returncode == 0


def eagerlm_tokenize(eagerlm, text):
    return json.loads(run([eagerlm, "tokenize", "--json"], input=text).stdout)


def equal_length_prompts(eagerlm, count):
    """`count` one-line texts of exactly PROMPT_TOKENS tokens each that tokenize back to the same
    ids (so eagerlm's --prompt-file and JAX's ids are the same prompts)."""
    prompts = []
    for text in CANDIDATE_PROMPTS:
        ids = eagerlm_tokenize(eagerlm, text)[:PROMPT_TOKENS]
        cut = run([eagerlm, "detokenize"], input=" ".join(map(str, ids))).stdout
        if len(ids) == PROMPT_TOKENS and "\n" not in cut and eagerlm_tokenize(eagerlm, cut) == ids:
            prompts.append((cut, ids))
        if len(prompts) == count:
            return prompts
    sys.exit(f"compare_jax: only {len(prompts)} usable prompts for batch {count}")


def measure_init(eagerlm, preset, seed, device):
    out = {}
    # Three fresh processes, the median kept: on a virtual machine the first touch of gigabytes
    # of memory the host has reclaimed can cost several times a normal one (gpt2-xl: 3 s or 10 s).
    runs = []
    for _ in range(3):
        _, wall, report = timed_process([eagerlm, "init", "--preset", preset, "--seed", seed, "--device", device,
                                         "--json"])
        runs.append((report["seconds"], wall))
    runs.sort()
    out["eagerlm_init_runs_s"] = [r[0] for r in runs]
    out["eagerlm_init_s"], out["eagerlm_init_process_s"] = runs[1]
    out["parameters"] = report["total_parameters"]
    out["bytes"] = report["total_bytes"]
    _, wall, _ = timed_process([eagerlm, "init", "--preset", preset, "--dry-run", "--json"])
    out["eagerlm_dry_run_process_s"] = wall
    _, wall, jax_report = worker(device, "init", "--preset", preset, "--seed", str(seed))
    out.update({f"jax_{k}": v for k, v in jax_report.items()})
    out["jax_process_s"] = wall
    out["speedup_vs_jit_first_call"] = out["jax_first_call_s"] / out["eagerlm_init_s"]
    return out


def per_token(start, token_times):
    """Latency of each token: token 0 from process start, then the gap to the previous token."""
    times = [t - start for t in token_times]
    return [times[0]] + [b - a for a, b in zip(times, times[1:])]


def measure_generation(eagerlm, system, model_dir, prompts, n, workdir, device):
    batch = len(prompts)
    if system == "eagerlm":
        prompt_file = workdir / f"prompts-{batch}.txt"
        prompt_file.write_text("".join(text + "\n" for text, _ in prompts))
        start, wall, report = timed_process([eagerlm, "generate", "-m", model_dir, "--prompt-file", prompt_file,
                                             "-n", n, "--temp", 0, "--ignore-eos", "--device", device, "--json",
                                             "--timings-per-token"])
        timings = report["timings"]
        for r, (_, ids) in zip(report["results"], prompts):
            if r["prompt_ids"] != ids:
                sys.exit("compare_jax: eagerlm tokenized a prompt differently")
        token_times = [(timings["monotonic_origin_ms"] + ms) / 1e3 for ms in timings["token_ms"]]
        ids = [r["ids"] for r in report["results"]]
        result = {"load_s": timings["load_ms"] / 1e3}
    else:
        ids_file = workdir / f"prompt-ids-{batch}.json"
        ids_file.write_text(json.dumps([ids for _, ids in prompts]))
        start, wall, report = worker(device, "generate", "--system", system, "--model", str(model_dir), "--prompts",
                                     str(ids_file), "-n", str(n))
        token_times, ids = report["token_times"], report["ids"]
        result = {k: report[k] for k in ("import_s", "load_s", "backend", "compilations") if k in report}
        if "warm_call_s" in report:
            result["warm_call_s"] = report["warm_call_s"]
    latencies = per_token(start, token_times)
    if system == "hf":  # one compiled call: a steady per-token cost is the warm call / n
        steady = result["warm_call_s"] / n
    else:
        steady = statistics.median(latencies[2:]) if n > 2 else latencies[-1]
    result.update({"ttft_s": latencies[0], "per_token_s": latencies, "steady_per_token_s": steady,
                   "total_s": token_times[-1] - start, "process_s": wall, "ids": ids})
    return result


def print_table(report):
    init = report.get("init")
    if init:
        print(f"\nInitialization, {report['preset']} ({init['parameters'] / 1e6:.0f}M parameters, "
              f"{init['bytes'] / 1e9:.2f} GB float32):")
        rows = [("jax.jit(init), first call (compile + run)", init["jax_first_call_s"]),
                ("jax.jit(init), second call", init["jax_second_call_s"]),
                ("jax.eval_shape(init)", init["jax_eval_shape_s"]),
                ("eagerlm init (in memory, median of 3)", init["eagerlm_init_s"]),
                ("eagerlm init, whole process", init["eagerlm_init_process_s"]),
                ("eagerlm init --dry-run, whole process", init["eagerlm_dry_run_process_s"])]
        for label, seconds in rows:
            print(f"  {label:<44} {seconds:10.3f} s")
        print(f"  eagerlm init is {init['speedup_vs_jit_first_call']:.0f}x faster than jax.jit(init)'s first call")
    for batch, systems in report.get("generation", {}).items():
        print(f"\nGeneration, {report['preset']}, batch {batch}, {report['n']} tokens "
              "(times from process start; per token: median after token 2):")
        print(f"  {'system':<48} {'first token':>12} {'per token':>11} {'total':>10}  ids")
        for key, r in systems.items():
            print(f"  {SYSTEMS[key]:<48} {r['ttft_s']:10.3f} s {r['steady_per_token_s'] * 1e3:8.2f} ms "
                  f"{r['total_s']:8.2f} s  {'same' if r['ids_agree'] else 'DIFFER'}")
    for line in report.get("targets", []):
        print(line)
    print("load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}, after: {:.2f} {:.2f} {:.2f}".format(
        *report["load_average_before"], *report["load_average_after"]))


def markdown(report):
    """The tables of print_table as Markdown, for docs/benchmarks.md."""
    lines = [f"Machine: {report['machine']}; load average before/after: "
             f"{report['load_average_before'][0]:.2f} / {report['load_average_after'][0]:.2f}.", ""]
    init = report.get("init")
    if init:
        lines += [f"Initialization, {report['preset']} ({init['parameters'] / 1e6:.0f}M parameters, "
                  f"{init['bytes'] / 1e9:.2f} GB float32):", "", "| | seconds |", "|---|---:|"]
        for label, key in [("`jax.jit(init)`, first call (compile + run)", "jax_first_call_s"),
                           ("`jax.jit(init)`, second call", "jax_second_call_s"),
                           ("`jax.eval_shape(init)`", "jax_eval_shape_s"),
                           ("`eagerlm init` (in memory, median of 3 processes)", "eagerlm_init_s"),
                           ("`eagerlm init`, whole process", "eagerlm_init_process_s"),
                           ("`eagerlm init --dry-run`, whole process", "eagerlm_dry_run_process_s")]:
            lines.append(f"| {label} | {init[key]:.3f} |")
        lines.append("")
    for batch, systems in report.get("generation", {}).items():
        lines += [f"Generation, {report['preset']}, batch {batch}, {report['n']} new tokens after "
                  f"{PROMPT_TOKENS}-token prompts, each system in a fresh process:", "",
                  "| system | first token (from process start) | per token (median, tokens 2+) "
                  "| last token (from process start) | greedy ids | jit compilations |", "|---|---:|---:|---:|---|---:|"]
        for key, r in systems.items():
            lines.append(f"| {SYSTEMS[key]} | {r['ttft_s']:.2f} s | {r['steady_per_token_s'] * 1e3:.1f} ms "
                         f"| {r['total_s']:.2f} s | {'same' if r['ids_agree'] else 'DIFFER'} "
                         f"| {r.get('compilations', '')} |")
        lines.append("")
    lines += [f"- {t}" for t in report.get("targets", [])]
    return "\n".join(lines) + "\n"


def targets(report):
    lines = []
    init = report.get("init")
    if init:
        ratio = init["speedup_vs_jit_first_call"]
        goal = (": " + ("met" if ratio >= 50 else "not met")) if report["preset"] == "gpt2-xl" else ""
        lines.append(f"init {report['preset']}: {ratio:.0f}x faster than jax.jit(init) incl. compile "
                     f"(target >= 50x for gpt2-xl){goal}")
    for batch, systems in report.get("generation", {}).items():
        if "eagerlm" in systems and "preallocated" in systems:
            e, b = systems["eagerlm"], systems["preallocated"]
            cold = b["total_s"] / e["total_s"]
            lines.append(f"batch {batch}: cold {report['n']}-token generation {cold:.1f}x faster than (b) "
                         f"(target >= 10x): {'met' if cold >= 10 else 'not met'}")
            steady = b["steady_per_token_s"] / e["steady_per_token_s"]
            goal = " (target >= 1.5x at batch 1): " + ("met" if steady >= 1.5 else "not met") if batch == "1" else ""
            lines.append(f"batch {batch}: steady decode {steady:.2f}x faster per token than (b){goal}")
        if "attention-op" in systems and "preallocated" in systems:
            e, b = systems["attention-op"], systems["preallocated"]
            ratio = e["steady_per_token_s"] / b["steady_per_token_s"]
            growing = systems.get("growing", {}).get("compilations")
            lines.append(f"batch {batch}: (e) steady decode {ratio:.3f}x (b)'s time per token (target <= 1.05): "
                         f"{'met' if ratio <= 1.05 else 'not met'}; (e) compiled {e['compilations']} time(s), "
                         f"(b) {b['compilations']}" + (f", (a) {growing}" if growing is not None else ""))
    return lines


def plot(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    generation = report["generation"]
    fig, axes = plt.subplots(1, len(generation), figsize=(6 * len(generation), 4.2), squeeze=False)
    styles = {"growing": ("tab:red", "-"), "preallocated": ("tab:blue", "-"), "hf": ("tab:purple", "--"),
              "eagerlm": ("tab:green", "-"), "attention-op": ("tab:orange", "-")}
    for ax, (batch, systems) in zip(axes[0], generation.items()):
        for key, r in systems.items():
            color, line = styles[key]
            latencies = r["per_token_s"]
            if key == "hf":  # all tokens at the end of one call: show first token, then warm call / n
                ys = [latencies[0]] + [r["steady_per_token_s"]] * (len(latencies) - 1)
                label = SYSTEMS[key] + "\n(tokens 1+: compiled call / n)"
            else:
                ys, label = latencies, SYSTEMS[key]
            ax.plot(range(len(ys)), ys, line, color=color, label=label, linewidth=1.2)
        ax.set_yscale("log")
        ax.set_xlabel("token index (token 0: from process start)")
        ax.set_ylabel("latency of the token (s)")
        ax.set_title(f"{report['preset']}, batch {batch}, {report['machine']}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def machine_name(device):
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    name = f"{model}, {os.cpu_count()} cores"
    if device == "cuda":
        try:
            gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[0]
        except (OSError, subprocess.CalledProcessError, IndexError):
            gpu = "unknown GPU"
        name = f"{gpu} ({name})"
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--preset", default="gpt2", choices=PRESETS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-n", type=int, default=128, help="tokens to generate (default 128)")
    parser.add_argument("--batch", default="1,8", help="comma-separated batch sizes (default 1,8; at most 12)")
    parser.add_argument("--systems", default=None,
                        help="which generation systems to run (default all five; (e) only where the eagerlm "
                             "package with its attention op is found)")
    parser.add_argument("--python-package", default=PACKAGE_DIR[0],
                        help="directory holding the eagerlm package for (e) (default build/python)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where both eagerlm and JAX run (cuda: needs a CUDA build of eagerlm and a CUDA JAX)")
    parser.add_argument("--init-only", action="store_true", help="only the initialization comparison")
    parser.add_argument("--skip-init", action="store_true", help="only the generation comparison")
    parser.add_argument("--eagerlm", default=os.environ.get("EAGERLM_BIN", str(REPO / "build" / "bin" / "eagerlm")))
    parser.add_argument("--workdir", default=str(REPO / "out" / "compare_jax"), help="model and prompt files")
    parser.add_argument("--json", help="JSON output (default WORKDIR/compare_jax_PRESET.json)")
    parser.add_argument("--plot", help="PNG output (default WORKDIR/compare_jax_PRESET.png)")
    parser.add_argument("--markdown", help="also write the tables as Markdown to this file")
    args = parser.parse_args()
    if not os.access(args.eagerlm, os.X_OK):
        sys.exit(f"compare_jax: no eagerlm binary at {args.eagerlm} (build it, or pass --eagerlm)")
    PACKAGE_DIR[0] = args.python_package
    workdir = pathlib.Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    json_path = pathlib.Path(args.json or workdir / f"compare_jax_{args.preset}.json")
    plot_path = pathlib.Path(args.plot or workdir / f"compare_jax_{args.preset}.png")

    # Other work on the machine skews every number: the load averages are kept with the results.
    report = {"preset": args.preset, "seed": args.seed, "n": args.n, "device": args.device,
              "machine": machine_name(args.device),
              "load_average_before": os.getloadavg()}
    if not args.init_only:
        batches = [int(b) for b in args.batch.split(",")]
        asked = (args.systems or ",".join(SYSTEMS)).split(",")
        unknown = [s for s in asked if s not in SYSTEMS]
        if unknown:
            sys.exit(f"compare_jax: --systems: unknown {', '.join(unknown)} (expected {', '.join(SYSTEMS)})")
        systems = [s for s in SYSTEMS if s in asked]
        if "attention-op" in systems and not attention_op_available():
            why = (f"the eagerlm package with its XLA FFI op is not importable from {PACKAGE_DIR[0]} or the "
                   "installed packages (build with -DEAGERLM_PYTHON=ON, or pip install ., or pass --python-package)")
            if args.systems:
                sys.exit(f"compare_jax: (e) asked for, but {why}")
            print(f"compare_jax: (e) left out: {why}", file=sys.stderr)
            systems.remove("attention-op")
        all_prompts = equal_length_prompts(args.eagerlm, max(batches))
        report["prompts"] = [text for text, _ in all_prompts]
    if not args.skip_init:
        print(f"initialization of {args.preset} ...", file=sys.stderr)
        report["init"] = measure_init(args.eagerlm, args.preset, args.seed, args.device)
    if not args.init_only:
        model_dir = workdir / f"model-{args.preset}-seed{args.seed}"
        run([args.eagerlm, "init", "--preset", args.preset, "--seed", args.seed, "--out", model_dir, "--force",
             "--json"])
        report["generation"] = {}
        for batch in batches:
            results = {}
            for system in systems:
                print(f"generation, batch {batch}: {SYSTEMS[system]} ...", file=sys.stderr)
                results[system] = measure_generation(args.eagerlm, system, model_dir, all_prompts[:batch], args.n,
                                                     workdir, args.device)
            reference = results["eagerlm" if "eagerlm" in results else systems[-1]]["ids"]
            for r in results.values():
                r["ids_agree"] = r["ids"] == reference
            report["generation"][str(batch)] = results
    report["load_average_after"] = os.getloadavg()
    report["targets"] = targets(report)
    json_path.write_text(json.dumps(report, indent=1))
    if args.markdown:
        pathlib.Path(args.markdown).write_text(markdown(report))
    print_table(report)
    if report.get("generation"):
        plot(report, plot_path)
        print(f"\nwrote {json_path} and {plot_path}")
    else:
        print(f"\nwrote {json_path}")
    disagree = [f"{s} at batch {b}" for b, rs in report.get("generation", {}).items() for s, r in rs.items()
                if not r["ids_agree"]]
    if disagree:
        sys.exit(f"compare_jax: greedy ids differ: {', '.join(disagree)}")


if __name__ == "__main__":
    main()
