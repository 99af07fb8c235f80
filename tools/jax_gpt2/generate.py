"""Greedy generation loops around the JAX GPT-2, as a JAX user writes them.

* `greedy_preallocated`: a fixed-size cache sized prompt + new tokens, and one jitted step
  (prefill compiles once for the prompt's shape, decoding once for one token); the cache is
  donated so XLA updates it in place.
* `greedy_attention_op`: the fixed-size cache with eagerlm's attention op (eagerlm.jax): one
  jitted one-token step with each sequence's position as an int32 [batch] argument, used for the
  prompt (a token at a time) and for decoding alike, so it compiles exactly once.
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


def _greedy_step(params, ids, cache, offset, *, config, grow, attention_op=False):
    logits, cache = forward(params, config, ids, cache, offset, grow=grow, last_only=True, attention_op=attention_op)
    # [B, 1]: the next step's input as it is, so the loop runs no eager op (nothing else compiles).
    return jnp.argmax(logits[:, -1], axis=-1, keepdims=True).astype(jnp.int32), cache


def _run(step, prompt, n_new, cache, offsets, on_token):
    ids = np.asarray(prompt, np.int32)
    out = []
    for i in range(n_new):
        next_ids, cache = step(ids, cache, offsets(i))
        out.append(np.asarray(next_ids)[:, 0])  # waits for the step: the token is on the host
        if on_token:
            on_token(i)
        ids = next_ids
    return np.stack(out, axis=1) if out else np.zeros((prompt.shape[0], 0), np.int32)


_BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"  # one per XLA compilation
_compiled = [0]
_listening = [False]


def _count_compile(event, _duration, **_):
    if event == _BACKEND_COMPILE_EVENT:
        _compiled[0] += 1


def compilations():
    """XLA compilations counted so far (jax.monitoring's backend-compile events). The listener is
    registered on the first call, not at import, so importing this module changes nothing in
    the process; callers take differences between two calls."""
    if not _listening[0]:
        jax.monitoring.register_event_duration_secs_listener(_count_compile)
        _listening[0] = True
    return _compiled[0]


def greedy_preallocated(params, config, prompt, n_new, on_token=None, stats=None):
    prompt = np.asarray(prompt)
    prompt_len = prompt.shape[1]
    step = jax.jit(functools.partial(_greedy_step, config=config, grow=False), donate_argnums=(2,))
    cache = init_cache(config, prompt.shape[0], prompt_len + n_new)
    compiled_before = compilations()
    # Offsets are traced int32 scalars, so every decode step reuses one compilation.
    offsets = lambda i: np.int32(0 if i == 0 else prompt_len + i - 1)  # noqa: E731
    ids = _run(functools.partial(step, params), prompt, n_new, cache, offsets, on_token)
    if stats is not None:
        stats["compilations"] = compilations() - compiled_before
    return ids


def greedy_attention_op(params, config, prompt, n_new, on_token=None, stats=None):
    prompt = np.asarray(prompt, np.int32)
    batch, prompt_len = prompt.shape
    step = jax.jit(functools.partial(_greedy_step, config=config, grow=False, attention_op=True),
                   donate_argnums=(2,))
    cache = init_cache(config, batch, prompt_len + n_new)
    compiled_before = compilations()
    position = lambda p: np.full(batch, p, np.int32)  # noqa: E731
    for t in range(prompt_len - 1):  # the prompt but its last token, through the same step
        _, cache = step(params, prompt[:, t:t + 1], cache, position(t))
    # From the prompt's last token on, as _run does: token i comes from position prompt_len-1+i.
    offsets = lambda i: position(prompt_len - 1 + i)  # noqa: E731
    ids = _run(functools.partial(step, params), prompt[:, -1:], n_new, cache, offsets, on_token)
    if stats is not None:
        stats["compilations"] = compilations() - compiled_before
    return ids


def greedy_growing(params, config, prompt, n_new, on_token=None, stats=None):
    prompt = np.asarray(prompt)
    step = jax.jit(functools.partial(_greedy_step, config=config, grow=True), static_argnums=(3,))
    cache = empty_growing_cache(config, prompt.shape[0])
    compiled_before = compilations()
    offsets = lambda i: 0 if i == 0 else prompt.shape[1] + i - 1  # noqa: E731
    ids = _run(functools.partial(step, params), prompt, n_new, cache, offsets, on_token)
    if stats is not None:
        stats["compilations"] = compilations() - compiled_before
    return ids
