"""Hugging Face's own Flax GPT-2 (transformers 4.x, FlaxGPT2LMHeadModel) as a reference: loads
a model directory's model.safetensors (PyTorch names, {"format": "pt"} metadata; converted by
transformers itself, no PyTorch needed), and runs logits and jitted greedy `generate`.

Nothing is downloaded: the directory is local and the hub is switched off.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import transformers  # noqa: E402
from transformers import FlaxGPT2LMHeadModel  # noqa: E402

transformers.logging.set_verbosity_error()


def load(directory):
    """(model, params), params float32. (transformers converts PyTorch-named checkpoints only into
    a model it has initialized first, so `_do_init=False` is not an option here.)"""
    model = FlaxGPT2LMHeadModel.from_pretrained(str(directory), local_files_only=True)
    return model, model.params


def logits(model, params, ids):
    """Logits [B, T, vocab] at every position of `ids` [B, T]."""
    return np.asarray(jax.jit(lambda p, i: model(i, params=p).logits)(params, jnp.asarray(ids, jnp.int32)))


def jit_greedy(model, n_new):
    """`(params, prompt [B, T]) -> new ids [B, n_new]`: `model.generate` under jax.jit, greedy,
    exactly n_new tokens: end-of-text does not stop it, as with eagerlm --ignore-eos (transformers
    refuses to switch the end-of-text id off, so it is given one past the vocabulary, an id that
    is never generated)."""
    never = model.config.vocab_size

    def generate(params, prompt):
        out = model.generate(prompt, params=params, max_new_tokens=n_new, do_sample=False,
                             eos_token_id=never, pad_token_id=never)
        return out.sequences[:, prompt.shape[1]:]
    return jax.jit(generate)
