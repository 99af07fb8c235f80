"""eagerlm's beam search against Hugging Face's own (transformers 4.x FlaxGPT2LMHeadModel.generate
with num_beams > 1, FlaxGenerationMixin._beam_search), on models written by `eagerlm init --out`:
for each setting (num_beams, length_penalty, early_stopping, num_return_sequences,
max_new_tokens, min_new_tokens, no_repeat_ngram_size) and prompt, `eagerlm generate --json`
returns exactly Flax's sequences, in Flax's order, with Flax's scores (within float32 noise).

What a Flax sequence means as eagerlm ids: Flax pads with end-of-text (GPT-2 has no pad id), so
a finished hypothesis is its generated ids up to and including the first end-of-text; a running
one (returned where none finished) is all max_new_tokens ids. A finished slot that no hypothesis
filled comes back as Flax's placeholder, a row of padding from position 0 (the prompt too)
scored -1e7: eagerlm returns it as no ids with score -1e7.

Mappings, as Flax has them:
* min_new_tokens m: Flax has no min_new_tokens of its own (it ignores the option); its
  min_length processor bans end-of-text while cur_len <= min_length, so eagerlm's "end-of-text
  banned while fewer than m ids were generated" is min_length = prompt length + m - 1.
* no_repeat_ngram_size: Flax's FlaxNoRepeatNGramLogitsProcessor fails under JAX 0.10
  (bcoo_gather: mode CLIP not supported), so the test passes Flax's generate a dense processor
  with the same rule (a token is banned where it and the n-1 before it repeat an n-gram of the
  sequence so far, prompt included), applied where Flax applies its own: to the log-softmax.
* early_stopping is True or False (eagerlm has no "never").

Batch size 1 throughout: Flax's loop condition is taken over the whole batch (any / all), so in
a batch a prompt's search goes on while another's does; eagerlm searches each prompt alone.

End-of-text: the config's own id is rarely among the candidates of a random model, which tests
the running path; the "likely-eos" models (the same weights) make the end-of-text id the token
their hypotheses use most, so that hypotheses finish, early_stopping and the
end-of-search rule matter, and placeholders occur.
"""

import json

import numpy as np
import pytest
from conftest import eagerlm_binary, run_checked

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("transformers")

from transformers.generation.flax_logits_process import FlaxLogitsProcessor, FlaxLogitsProcessorList  # noqa: E402

from jax_gpt2 import hf_reference  # noqa: E402

EAGERLM = eagerlm_binary()
PLACEHOLDER_SCORE = -1.0e7
PROMPT_LENGTH = 6
PROMPTS = 2

# name -> (config for `eagerlm init --config`, seed, end-of-text: "config" or "likely")
MODELS = {
    "1-layer": ({"n_layer": 1, "n_embd": 45, "n_head": 5, "n_inner": 77, "n_positions": 80,
                 "vocab_size": 1001, "eos_token_id": 1000, "initializer_range": 0.3}, 11, "config"),
    "1-layer-likely-eos": ({"n_layer": 1, "n_embd": 45, "n_head": 5, "n_inner": 77, "n_positions": 80,
                            "vocab_size": 1001, "eos_token_id": 1000, "initializer_range": 0.3}, 11, "likely"),
    "2-layer-likely-eos": ({"n_layer": 2, "n_embd": 72, "n_head": 6, "n_positions": 128, "vocab_size": 50257,
                            "initializer_range": 0.2}, 12, "likely"),
}


def setting(beams, length_penalty, early, returned, new, min_new=0, ngram=0):
    return {"num_beams": beams, "length_penalty": length_penalty, "early_stopping": early,
            "num_return_sequences": returned, "max_new_tokens": new, "min_new_tokens": min_new,
            "no_repeat_ngram_size": ngram}


# (model, setting)
CASES = [
    ("1-layer", setting(4, 1.0, False, 4, 10)),
    ("1-layer", setting(3, 2.0, True, 2, 12, ngram=2)),
    ("1-layer-likely-eos", setting(4, 1.0, False, 4, 10)),
    ("1-layer-likely-eos", setting(3, 2.0, False, 2, 12)),
    ("1-layer-likely-eos", setting(5, 0.0, True, 3, 10)),
    ("1-layer-likely-eos", setting(2, -0.5, False, 1, 16)),
    ("1-layer-likely-eos", setting(6, 1.3, True, 6, 8)),
    ("1-layer-likely-eos", setting(4, 0.7, False, 4, 14, min_new=4)),
    ("1-layer-likely-eos", setting(3, 1.0, True, 3, 12, ngram=2)),
    ("2-layer-likely-eos", setting(4, 1.0, False, 2, 10)),
    ("2-layer-likely-eos", setting(3, 1.5, True, 3, 12, min_new=2, ngram=3)),
]


class DenseNoRepeatNGram(FlaxLogitsProcessor):
    """Bans, in each row, every token that with the n-1 tokens before cur_len repeats an n-gram
    of row[:cur_len] (Flax's rule, written with dense arrays)."""

    def __init__(self, n):
        self.n = n

    def __call__(self, input_ids, scores, cur_len):
        n = self.n
        rows, length = input_ids.shape
        starts = length - n + 1
        windows = jnp.stack([input_ids[:, j:j + starts] for j in range(n)], axis=-1)  # [rows, starts, n]
        valid = jnp.arange(starts) + n <= cur_len
        if n > 1:
            tail = jax.lax.dynamic_slice(input_ids, (0, cur_len - (n - 1)), (rows, n - 1))
            valid = valid & jnp.all(windows[:, :, :n - 1] == tail[:, None, :], axis=-1)
        hits = jnp.zeros(scores.shape, jnp.int32).at[jnp.arange(rows)[:, None], windows[:, :, n - 1]].max(valid)
        banned = (hits > 0) & (cur_len >= n - 1)
        return jnp.where(banned, -jnp.inf, scores)


def write_model(root, name):
    spec, seed, eos = MODELS[name]
    out = root / name
    config_path = root / f"{name}.json"
    config_path.write_text(json.dumps(spec))
    run_checked([EAGERLM, "init", "--config", config_path, "--seed", seed, "--out", out, "--json"])
    return out


def prompts_for(name, vocab_size):
    rng = np.random.default_rng(MODELS[name][1] + 100)
    return [rng.integers(0, vocab_size - 1, size=PROMPT_LENGTH).astype(np.int32) for _ in range(PROMPTS)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("beam-models")
    loaded = {}

    def get(name):
        if name in loaded:
            return loaded[name]
        directory = write_model(root, name)
        hf_model, hf_params = hf_reference.load(directory)
        prompts = prompts_for(name, hf_model.config.vocab_size)
        if MODELS[name][2] == "likely":
            # The token the hypotheses of a first search (whose end-of-text id never comes up)
            # use most, lowest id on ties: it is among the candidates of many steps.
            first = flax_beams(hf_model, setting(4, 1.0, False, 4, 10))
            used = np.concatenate([np.asarray(first(hf_params, jnp.asarray(p[None]))[0])[:, PROMPT_LENGTH:].ravel()
                                   for p in prompts])
            eos = int(np.argmax(np.bincount(used)))
            config = json.loads((directory / "config.json").read_text())
            config["eos_token_id"] = eos
            (directory / "config.json").write_text(json.dumps(config, indent=2))
            hf_model, hf_params = hf_reference.load(directory)
        assert hf_model.config.eos_token_id == hf_model.generation_config.eos_token_id
        loaded[name] = {"dir": directory, "hf": hf_model, "params": hf_params, "prompts": prompts,
                        "eos": int(hf_model.config.eos_token_id)}
        return loaded[name]

    return get


def flax_beams(model, s):
    """`(params, prompt [1, T]) -> (sequences [K, T + max_new], scores [K])`, jitted."""
    kwargs = dict(do_sample=False, num_beams=s["num_beams"], length_penalty=s["length_penalty"],
                  early_stopping=s["early_stopping"], num_return_sequences=s["num_return_sequences"],
                  max_new_tokens=s["max_new_tokens"])
    processors = FlaxLogitsProcessorList()
    if s["no_repeat_ngram_size"]:
        processors.append(DenseNoRepeatNGram(s["no_repeat_ngram_size"]))

    def generate(params, prompt):
        extra = {}
        if s["min_new_tokens"]:
            extra["min_length"] = prompt.shape[1] + s["min_new_tokens"] - 1
        out = model.generate(prompt, params=params, logits_processor=processors, **kwargs, **extra)
        return out.sequences, out.scores
    return jax.jit(generate)


def expected_results(sequences, scores, prompt, eos):
    """Flax's rows as (ids, finish reason, score), per the module docstring."""
    out = []
    for row, score in zip(np.asarray(sequences).tolist(), np.asarray(scores).tolist()):
        prompt_part, generated = row[:len(prompt)], row[len(prompt):]
        if prompt_part != list(prompt):
            assert all(t == eos for t in row) and score == PLACEHOLDER_SCORE, "neither a hypothesis nor a placeholder"
            out.append(([], "length", score))
        elif eos in generated:
            out.append((generated[:generated.index(eos) + 1], "eos", score))
        else:
            out.append((generated, "length", score))
    return out


def eagerlm_beams(directory, prompt, s, returned):
    args = [EAGERLM, "generate", "-m", directory, "--prompt-ids", ",".join(map(str, prompt)),
            "--num-beams", s["num_beams"], "--length-penalty", repr(s["length_penalty"]),
            "--num-return-sequences", returned, "-n", s["max_new_tokens"], "--json"]
    if s["early_stopping"]:
        args.append("--early-stopping")
    if s["min_new_tokens"]:
        args += ["--min-new-tokens", s["min_new_tokens"]]
    if s["no_repeat_ngram_size"]:
        args += ["--no-repeat-ngram-size", s["no_repeat_ngram_size"]]
    results = json.loads(run_checked(args, text=True).stdout)["results"]
    return [(r["ids"], r["finish_reason"], r["score"]) for r in results]


def compare(label, ours, expected):
    assert len(ours) >= len(expected), f"{label}: {len(ours)} results, Flax has {len(expected)}"
    for k, ((ids, reason, score), (want_ids, want_reason, want_score)) in enumerate(zip(ours, expected)):
        assert ids == want_ids, f"{label}, sequence {k}: eagerlm {ids} vs Flax {want_ids}"
        assert reason == want_reason, f"{label}, sequence {k}: finish reason {reason} vs {want_reason}"
        assert abs(score - want_score) <= 1e-4 * max(1.0, abs(want_score)), \
            f"{label}, sequence {k}: score {score} vs Flax {want_score}"


_compared = {}


def run_case(models, name, s, eagerlm_returned=None):
    """Compares eagerlm with Flax on every prompt; returns Flax's results per prompt (computed
    once per case: the coverage tests reuse them)."""
    key = (name, json.dumps(s, sort_keys=True), eagerlm_returned)
    if key not in _compared:
        _compared[key] = _run_case(models, name, s, eagerlm_returned)
    return _compared[key]


def _run_case(models, name, s, eagerlm_returned):
    m = models(name)
    generate = flax_beams(m["hf"], s)
    all_expected = []
    for i, prompt in enumerate(m["prompts"]):
        sequences, scores = generate(m["params"], jnp.asarray(prompt[None]))
        expected = expected_results(sequences, scores, prompt, m["eos"])
        assert len(expected) == s["num_return_sequences"]
        # The CLI sizes its cache by --num-return-sequences, which beam search outgrows (see
        # test_fewer_returned_sequences_than_beams): ask for all beams and compare the first K,
        # which are Flax's K, as it only slices its finished (or running) set.
        ours = eagerlm_beams(m["dir"], prompt, s, eagerlm_returned or s["num_beams"])
        label = f"{name} {s} prompt {i}"
        print(f"\n{label}:\n  Flax    {expected}\n  eagerlm {ours[:len(expected)]}")
        compare(label, ours, expected)
        all_expected.append(expected)
    return all_expected


@pytest.mark.parametrize("name,s", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_beam_search_matches_flax(models, name, s):
    results = run_case(models, name, s)
    reasons = {reason for prompt in results for _, reason, _ in prompt}
    if MODELS[name][2] == "likely":
        assert "eos" in reasons, "no hypothesis finished: the setting does not test the finished set"


def test_the_cases_cover_running_finished_and_placeholders(models):
    """The comparisons above mean something only if Flax's output takes each of its forms."""
    kinds = set()
    for name, s in [CASES[0], CASES[2], CASES[6]]:
        for prompt in run_case(models, name, s):
            for ids, reason, score in prompt:
                kinds.add("placeholder" if score == PLACEHOLDER_SCORE and not ids else reason)
    assert kinds == {"length", "eos", "placeholder"}, kinds


@pytest.mark.parametrize("option,on,off", [
    ("min_new_tokens", 6, 0),
    ("no_repeat_ngram_size", 2, 0),
    ("early_stopping", True, False),
])
def test_each_option_changes_flax_and_eagerlm_alike(models, option, on, off):
    """Each processor or rule changes Flax's result in some case, and eagerlm's the same way."""
    base = setting(4, 1.0, False, 4, 12)
    with_option = run_case(models, "1-layer-likely-eos", dict(base, **{option: on}))
    without = run_case(models, "1-layer-likely-eos", dict(base, **{option: off}))
    assert with_option != without, f"{option} changed nothing in Flax's results: the comparison proves little"


def test_fewer_returned_sequences_than_beams(models):
    name, s = CASES[3]
    run_case(models, name, s, eagerlm_returned=s["num_return_sequences"])
