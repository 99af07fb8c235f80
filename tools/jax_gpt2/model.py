"""GPT-2 in plain JAX, written the way a JAX user writes it: a dict of parameters with Hugging
Face's names, pure functions, `jax.jit` around the step.

One function runs new tokens through the model with a key/value cache, in either of the two
styles a JAX user meets:

* a fixed-size cache (`init_cache`): every layer holds [batch, heads, max_len, d_head] keys and
  values from the start; a step writes its new ones at `offset` with
  `jax.lax.dynamic_update_slice`, so shapes never change and a jitted step compiles once (per
  number of new tokens: one prefill shape, one decode shape);
* a growing cache (`empty_growing_cache`, `grow=True`): the past keys and values are
  concatenated with the new ones, so every token changes the shapes and a jitted step
  recompiles (the naive loop);
* the fixed-size cache with eagerlm's attention op (`attention_op=True`): each sequence has its
  own position (`offset` is int32 [batch]), keys and values are written with
  eagerlm.jax.kv_append and attended with eagerlm.jax.padded_attention over each sequence's
  valid prefix only (an XLA FFI call), so one jitted step serves prefill and decode alike.

Numerics follow GPT-2: layer norm with epsilon, gelu_new (tanh approximation), attention scores
scaled by 1/sqrt(d_head), the output head tied to wte.
"""

import math

import jax
import jax.numpy as jnp


def layer_norm(x, weight, bias, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * weight + bias


def gelu_new(x):
    return jax.nn.gelu(x, approximate=True)


def init_cache(config, batch, max_len):
    """Fixed-size cache: per layer (keys, values), each [batch, n_head, max_len, d_head] zeros."""
    shape = (batch, config.n_head, max_len, config.d_head)
    return [(jnp.zeros(shape, jnp.float32), jnp.zeros(shape, jnp.float32)) for _ in range(config.n_layer)]


def empty_growing_cache(config, batch):
    """Growing cache holding no positions yet."""
    return init_cache(config, batch, 0)


def _attention(q, k, v, positions):
    """q [B, H, T, D] at `positions` [T]; k, v [B, H, S, D] for positions 0..S-1. Each query sees
    the keys at or before its own position (later cache entries are empty or stale)."""
    scores = jnp.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(q.shape[-1])
    visible = jnp.arange(k.shape[2])[None, :] <= positions[:, None]
    scores = jnp.where(visible, scores, jnp.finfo(jnp.float32).min)
    return jnp.einsum("bhts,bhsd->bhtd", jax.nn.softmax(scores, axis=-1), v)


def forward(params, config, ids, cache, offset, *, grow=False, last_only=False, attention_op=False):
    """Runs `ids` [B, T] (at positions offset .. offset+T-1 of every sequence) through the model.

    With the fixed-size cache `offset` may be a traced integer; with `grow=True` it must equal the
    cache's length (a Python int); with `attention_op=True` it is int32 [B], each sequence's own
    position. Returns (logits, new cache): logits [B, T, vocab], or [B, 1, vocab] for the last
    position only with `last_only`.
    """
    batch, length = ids.shape
    heads, d_head, eps = config.n_head, config.d_head, config.layer_norm_epsilon
    if attention_op:
        import eagerlm.jax as ejax  # only this variant needs the eagerlm package

        positions = offset[:, None] + jnp.arange(length)  # [B, T]
    else:
        positions = offset + jnp.arange(length)
    x = params["wte.weight"][ids] + params["wpe.weight"][positions]

    def split_heads(t):
        return t.reshape(batch, length, heads, d_head).transpose(0, 2, 1, 3)

    new_cache = []
    for i in range(config.n_layer):
        p = f"h.{i}."
        h = layer_norm(x, params[p + "ln_1.weight"], params[p + "ln_1.bias"], eps)
        qkv = h @ params[p + "attn.c_attn.weight"] + params[p + "attn.c_attn.bias"]
        k_past, v_past = cache[i]
        if attention_op:  # queries stay [B, T, H, D]; each sequence attends its own prefix
            q, k, v = (t.reshape(batch, length, heads, d_head) for t in jnp.split(qkv, 3, axis=-1))
            k_all = ejax.kv_append(k_past, k.transpose(0, 2, 1, 3), offset)
            v_all = ejax.kv_append(v_past, v.transpose(0, 2, 1, 3), offset)
            a = ejax.padded_attention(q, k_all, v_all, offset + length)
        else:
            q, k, v = (split_heads(t) for t in jnp.split(qkv, 3, axis=-1))
            if grow:
                k_all = jnp.concatenate([k_past, k], axis=2)
                v_all = jnp.concatenate([v_past, v], axis=2)
            else:
                k_all = jax.lax.dynamic_update_slice(k_past, k, (0, 0, offset, 0))
                v_all = jax.lax.dynamic_update_slice(v_past, v, (0, 0, offset, 0))
            a = _attention(q, k_all, v_all, positions).transpose(0, 2, 1, 3)
        new_cache.append((k_all, v_all))
        a = a.reshape(batch, length, config.n_embd)
        x = x + a @ params[p + "attn.c_proj.weight"] + params[p + "attn.c_proj.bias"]
        h = layer_norm(x, params[p + "ln_2.weight"], params[p + "ln_2.bias"], eps)
        m = gelu_new(h @ params[p + "mlp.c_fc.weight"] + params[p + "mlp.c_fc.bias"])
        x = x + m @ params[p + "mlp.c_proj.weight"] + params[p + "mlp.c_proj.bias"]
    if last_only:
        x = x[:, -1:]
    x = layer_norm(x, params["ln_f.weight"], params["ln_f.bias"], eps)
    return x @ params["wte.weight"].T, new_cache


def logits(params, config, ids):
    """Logits at every position of `ids` [B, T] from an empty cache (no generation)."""
    out, _ = forward(params, config, ids, init_cache(config, ids.shape[0], ids.shape[1]), 0)
    return out
