"""`eagerlm perplexity` against Hugging Face's perplexity guide
(https://huggingface.co/docs/transformers/perplexity) run with transformers' own Flax GPT-2
(FlaxGPT2LMHeadModel), on models written by `eagerlm init --out`, for a text several times longer
than the window, with a stride smaller than the window (overlapping windows) and equal to it.

Hugging Face's side is the guide's loop: windows [begin, min(begin + max_length, seq_len)) with
begin stepping by `stride`, labels = the window's ids with all but the last trg_len = end -
previous_end set to -100, shifted by one as GPT2LMHeadModel's loss shifts them; the loss of a
window is the mean of -log_softmax(logits)[label] over its valid shifted labels (Flax returns no
loss, so it is computed here exactly as PyTorch's CrossEntropyLoss does), and it is weighted by
the number of those labels. (The guide's code multiplies by trg_len - 1, which is that number
only when windows do not overlap; with overlap its mean is over trg_len labels. Weighting by the
true count is the guide's stated quantity, exp of the mean NLL per scored token, and is what
eagerlm computes; the literal formula's result is printed beside it.)

Tolerances, derived from float32 accumulation on both sides:
* per token: |log p_eagerlm - log p_HF| <= 2·2e-4·max(1, max |Z|) + (V + 1024 + 2·(max z - min z)
  + 16)·2^-24, z the HF logits of the row, Z those of its window, V the vocabulary. log p = z_t - logsumexp(z) moves by
  at most 2·max|δz| (its gradient e_t - softmax(z) has 1-norm <= 2), and the logits of the two
  implementations, float32 sums in different orders, agree within 2e-4 of their scale
  (test_hf_conformance.py, which measures a few 1e-6); each side's float32 log-sum-exp adds its
  own rounding: at most (V - 1)·u for XLA's sum of V terms in any order, and below (1024 +
  2·(max z - min z) + 16)·u for eagerlm's blocked one (test_target_logprobs.cpp), u = 2^-24.
* perplexity: the NLL is summed in float64 on both sides (no accumulation error of its own), so
  the mean NLL differs by at most the largest per-token bound τ, and the perplexity, exp of it,
  by a relative exp(τ) - 1.
"""

import json

import numpy as np
import pytest
from conftest import eagerlm_binary, run_checked

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("transformers")

from jax_gpt2 import hf_reference  # noqa: E402

EAGERLM = eagerlm_binary()
LOGIT_TOLERANCE = 2e-4
U = 2.0 ** -24

# name -> (config for `eagerlm init --config`, or a preset; seed; window; strides). GPT-2's
# vocabulary size, so that text can be tokenized.
CONFIGS = {
    "2-layer": ({"n_layer": 2, "n_embd": 72, "n_head": 6, "n_positions": 128, "vocab_size": 50257,
                 "initializer_range": 0.2}, 21, 128, [48, 128]),
    "gpt2-124M": ("gpt2", 22, 160, [64]),
}

PARAGRAPH = " ".join([
    "The committee met on a grey morning in the old library, where the shelves still smelled of dust",
    "and varnish. Nobody had expected the report to be finished so soon, and fewer still had read it.",
    "Its author, a quiet engineer from the northern office, had measured every bridge in the county",
    "twice, once in summer and once in the deep of winter, because steel and stone move with the",
    "seasons and a number taken only once tells you less than you think. She began by thanking the",
    "clerks who had carried her instruments, then turned to the first table: seventeen crossings,",
    "eleven of them older than the railway, four repaired so often that little of the original",
    "remained, and two that she recommended closing before the spring floods.",
])
TEXT = "\n\n".join([PARAGRAPH] * 5)  # about 700 tokens


def write_model(root, name):
    spec, seed, _, _ = CONFIGS[name]
    out = root / name
    if isinstance(spec, str):
        source = ["--preset", spec]
    else:
        config_path = root / f"{name}.json"
        config_path.write_text(json.dumps(spec))
        source = ["--config", config_path]
    run_checked([EAGERLM, "init", *source, "--seed", seed, "--out", out, "--json"])
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """name -> the model written and loaded once, for every stride tested on it."""
    loaded = {}

    def get(name):
        if name not in loaded:
            root = tmp_path_factory.mktemp("perplexity")
            directory = write_model(root, name)
            text_file = root / "text.txt"
            text_file.write_text(TEXT)
            model, params = hf_reference.load(directory)
            forward = jax.jit(lambda p, ids: model(ids, params=p).logits)
            loaded[name] = {"name": name, "dir": directory, "text": text_file, "forward": forward, "params": params}
        return loaded[name]
    return get


def hf_guide(case, ids, max_length, stride):
    """The guide's loop on Flax logits: per window, (first scored index in the text, HF's
    per-token log p of its valid shifted labels, the logit rows they come from)."""
    seq_len = len(ids)
    windows = []
    prev_end_loc = 0
    for begin_loc in range(0, seq_len, stride):
        end_loc = min(begin_loc + max_length, seq_len)
        trg_len = end_loc - prev_end_loc
        input_ids = np.asarray(ids[begin_loc:end_loc], np.int32)
        target_ids = input_ids.copy()
        target_ids[:-trg_len] = -100
        logits = np.asarray(case["forward"](case["params"], jnp.asarray(input_ids[None])))[0]
        # GPT2LMHeadModel's loss: logits[:-1] predict labels[1:]; -100 is ignored.
        shift_logits, shift_labels = logits[:-1], target_ids[1:]
        valid = np.nonzero(shift_labels != -100)[0]
        log_probs = np.asarray(jax.nn.log_softmax(jnp.asarray(shift_logits[valid]), axis=-1))
        token_lp = log_probs[np.arange(len(valid)), shift_labels[valid]]
        windows.append({"positions": begin_loc + 1 + valid, "logprobs": token_lp, "logits": shift_logits[valid],
                        "scale": max(1.0, float(np.abs(logits).max())), "trg_len": trg_len})
        prev_end_loc = end_loc
        if end_loc == seq_len:
            break
    return windows


@pytest.mark.parametrize("name,stride", [(name, stride) for name, spec in CONFIGS.items() for stride in spec[3]])
def test_perplexity_matches_hf_guide(cases, name, stride):
    case = cases(name)
    window = CONFIGS[name][2]
    result = run_checked([EAGERLM, "perplexity", "-m", case["dir"], "-f", case["text"], "--ctx", window,
                          "--stride", stride, "--json", "--logprobs"], text=True)
    ours = json.loads(result.stdout)
    ids = ours["ids"]
    assert len(ids) > 3 * window, "the text must span several windows"

    windows = hf_guide(case, ids, window, stride)
    vocab = windows[0]["logits"].shape[-1]
    nll_sum, n_tokens, literal_sum, literal_tokens = 0.0, 0, 0.0, 0
    worst, worst_ratio, tau = 0.0, 0.0, 0.0
    for w in windows:
        mean_loss = float(-np.mean(w["logprobs"].astype(np.float64)))
        count = len(w["positions"])
        nll_sum += mean_loss * count
        n_tokens += count
        literal_sum += mean_loss * (w["trg_len"] - 1)  # the guide's code as written
        literal_tokens += w["trg_len"] - 1
        for position, hf_lp, z in zip(w["positions"], w["logprobs"], w["logits"]):
            got = ours["logprobs"][int(position)]
            assert got is not None, f"token {position} is scored by HF but not by eagerlm"
            bound = 2 * LOGIT_TOLERANCE * w["scale"] + (vocab + 1024 + 2 * float(z.max() - z.min()) + 16) * U
            error = abs(got - float(hf_lp))
            worst = max(worst, error)
            worst_ratio = max(worst_ratio, error / bound)
            tau = max(tau, bound)
            assert error <= bound, f"token {position}: eagerlm {got} vs HF {hf_lp} (bound {bound:.3g})"
    scored_hf = {int(p) for w in windows for p in w["positions"]}
    scored_ours = {i for i, lp in enumerate(ours["logprobs"]) if lp is not None}
    assert scored_ours == scored_hf
    assert ours["tokens"] == n_tokens
    assert ours["windows"] == len(windows)

    hf_ppl = float(np.exp(nll_sum / n_tokens))
    relative = abs(ours["perplexity"] / hf_ppl - 1)
    allowed = float(np.expm1(tau))
    print(f"\n{case['name']} ctx {window} stride {stride}: {n_tokens} tokens in {len(windows)} windows; "
          f"perplexity eagerlm {ours['perplexity']:.6f}, HF {hf_ppl:.6f} (relative difference {relative:.2g}, "
          f"allowed {allowed:.2g}); per-token max error {worst:.2g} ({worst_ratio:.2g} of its bound); "
          f"the guide's literal formula gives {np.exp(literal_sum / literal_tokens):.6f}")
    assert relative <= allowed
    assert abs(ours["nll"] - nll_sum) <= tau * n_tokens
