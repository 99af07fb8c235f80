"""The same generation request through the three routes the package must agree with: the package
itself, `eagerlm generate --json` (the CLI drives the engine's generation loop directly) and
bin/eagerlm-api-generate (the public C++ API). Options are the package's keyword arguments."""

import json

from conftest import binary, run

# Library defaults, given to the CLI explicitly (its own defaults sample).
DEFAULTS = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0}
VALUED_FLAGS = {"max_new_tokens": "-n", "min_new_tokens": "--min-new-tokens", "temperature": "--temperature",
                "top_k": "--top-k", "top_p": "--top-p", "min_p": "--min-p",
                "repetition_penalty": "--repetition-penalty", "presence_penalty": "--presence-penalty",
                "frequency_penalty": "--frequency-penalty", "no_repeat_ngram_size": "--no-repeat-ngram-size",
                "seed": "--seed", "top_logprobs": "--top-logprobs", "n": "--num-samples", "num_beams": "--num-beams",
                "length_penalty": "--length-penalty", "num_return_sequences": "--num-return-sequences"}
SWITCHES = {"ignore_eos": "--ignore-eos", "logprobs": "--logprobs", "early_stopping": "--early-stopping"}


def cli_args(options):
    args = []
    for name, value in {**DEFAULTS, **options}.items():
        if name in VALUED_FLAGS:
            args += [VALUED_FLAGS[name], repr(value)]
        elif name in SWITCHES:
            args += [SWITCHES[name]] if value else []
        elif name == "stop":
            for s in [value] if isinstance(value, str) else value:
                args += ["--stop", s]
        elif name == "stop_token_ids":
            args += ["--stop-token-ids", ",".join(map(str, value))]
        elif name == "logit_bias":
            args += ["--logit-bias", ",".join(f"{k}:{v!r}" for k, v in value.items())]
        else:
            raise KeyError(name)
    return args


def via_cli(model_dir, prompts, options, tmp_path):
    """Results of `eagerlm generate --json`: one prompt (-p or --prompt-ids) or a --prompt-file."""
    if isinstance(prompts, str):
        source = ["-p", prompts]
    elif prompts and isinstance(prompts[0], int):
        source = ["--prompt-ids", ",".join(map(str, prompts))]
    else:
        path = tmp_path / "prompts.txt"
        path.write_text("".join(p + "\n" for p in prompts))
        source = ["--prompt-file", path]
    out = json.loads(run([binary("eagerlm"), "generate", "-m", model_dir, *source, "--json", *cli_args(options)]).stdout)
    return out["results"]


def via_api(model_dir, prompts, options, max_batch=1):
    """Results of the C++ API, or its error as {"error": {...}}."""
    if isinstance(prompts, str):
        prompts = [prompts]
    elif prompts and isinstance(prompts[0], int):
        prompts = ["ids:" + ",".join(map(str, prompts))]
    api_options = {**options, "max_batch": max_batch}
    if isinstance(api_options.get("stop"), str):
        api_options["stop"] = [api_options["stop"]]
    if "logit_bias" in api_options:
        api_options["logit_bias"] = [[k, v] for k, v in api_options["logit_bias"].items()]
    result = run_unchecked([binary("eagerlm-api-generate"), model_dir, json.dumps(api_options), *prompts])
    return json.loads(result.stdout)


def run_unchecked(args):
    import subprocess
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if result.returncode not in (0, 1):
        raise AssertionError(f"{args[0]} exited {result.returncode}: {result.stderr[-2000:]}")
    return result
