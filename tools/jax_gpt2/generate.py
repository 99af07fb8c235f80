"""Greedy generation loops around the JAX GPT-2, as a JAX user writes them.

* `greedy_preallocated`: a fixed-size cache sized prompt + new tokens, and one jitted step
  (prefill compiles once for the prompt's shape, decoding once for one token); the cache is
  donated so XLA updates it in place.
* `greedy_growing`: the naive loop: the cache is concatenated each token, so each step has new
  shapes and `jax.jit` compiles it again.

Both take prompts of equal length [batch, prompt_len] (numpy or jax ints), return the new ids
[batch, n_new] as numpy, and call `on_token(index)` right after token `index` of the batch is
on the host, so callers can time each token.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .model import empty_growing_cache, forward, init_cache


def _greedy_step(params, ids, cache, offset, *, config, grow):
    logits, cache = forward(params, config, ids, cache, offset, grow=grow, last_only=True)
    return jnp.argmax(logits[:, -1], axis=-1).astype(jnp.int32), cache


def _run(step, prompt, n_new, cache, offsets, on_token):
    ids = jnp.asarray(prompt, jnp.int32)
    out = []
    for i in range(n_new):
        next_ids, cache = step(ids, cache, offsets(i))
        out.append(np.asarray(next_ids))  # waits for the step: the token is on the host
        if on_token:
            on_token(i)
        ids = next_ids[:, None]
    return np.stack(out, axis=1) if out else np.zeros((prompt.shape[0], 0), np.int32)


def greedy_preallocated(params, config, prompt, n_new, on_token=None):
    prompt = np.asarray(prompt)
    prompt_len = prompt.shape[1]
    step = jax.jit(functools.partial(_greedy_step, config=config, grow=False), donate_argnums=(2,))
    cache = init_cache(config, prompt.shape[0], prompt_len + n_new)
    # Offsets are traced int32 scalars, so every decode step reuses one compilation.
    offsets = lambda i: np.int32(0 if i == 0 else prompt_len + i - 1)  # noqa: E731
    return _run(functools.partial(step, params), prompt, n_new, cache, offsets, on_token)


def greedy_growing(params, config, prompt, n_new, on_token=None):
    prompt = np.asarray(prompt)
    step = jax.jit(functools.partial(_greedy_step, config=config, grow=True), static_argnums=(3,))
    cache = empty_growing_cache(config, prompt.shape[0])
    offsets = lambda i: 0 if i == 0 else prompt.shape[1] + i - 1  # noqa: E731
    return _run(functools.partial(step, params), prompt, n_new, cache, offsets, on_token)
