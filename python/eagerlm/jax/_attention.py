"""eagerlm.jax.padded_attention and kv_append: attention over a fixed-size cache inside jitted
JAX code, so that a decode step's shapes never change with the position and it compiles once.

padded_attention is an XLA FFI call (jax.ffi.ffi_call) to eagerlm's CPU attention kernel,
registered the first time it is used: XLA passes the buffers to eagerlm's handler in the
compiled program (no copy, no Python callback). kv_append is plain JAX (dynamic_update_slice per
sequence), which XLA already does in place on a donated cache.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _core
from .._errors import InvalidArgumentError, UnsupportedError

_TARGET = "eagerlm_padded_attention"
_CACHE_TYPES = (jnp.float32, jnp.bfloat16, jnp.float16)


@functools.cache
def _register() -> None:
    targets = _core.xla_ffi_targets()
    if _TARGET not in targets:
        raise UnsupportedError(
            "eagerlm.jax.padded_attention: this eagerlm was built without XLA's FFI headers (jaxlib's "
            "jax.ffi.include_dir()); reinstall it with `pip install .` (EAGERLM_JAX unset or ON), or build with "
            "-DEAGERLM_XLA_FFI_INCLUDE_DIR=<jax.ffi.include_dir()>")
    jax.ffi.register_ffi_target(_TARGET, targets[_TARGET], platform="cpu")


def _shape_error(what: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"eagerlm.jax.padded_attention: {what}")


def padded_attention(q: jax.Array, k_cache: jax.Array, v_cache: jax.Array, lengths: jax.Array, *,
                     scale: float | None = None) -> jax.Array:
    """Attention of each sequence's new queries over its first `lengths[b]` cached positions.

    q: float32 [batch, new_tokens, heads, head_dim] (the projection's layout, no transpose);
    k_cache, v_cache: [batch, heads, max_len, head_dim], float32, bfloat16 or float16, the new
    tokens' keys and values already written (kv_append); lengths: int32 [batch], the valid
    positions of each sequence, its queries being the last new_tokens of them: query t attends
    positions [0, lengths[b] - new_tokens + t] (causal). Queries before position 0 and sequences
    of length 0 give zeros; cache positions past lengths[b] are never read. scale defaults to
    1/sqrt(head_dim). Returns float32 [batch, new_tokens, heads, head_dim].

    Shapes and dtypes are checked when the call is traced (InvalidArgumentError); a length
    outside [0, max_len] is found when the step runs and raised by JAX as a runtime error whose
    message names lengths[b]. Runs on the CPU (eagerlm's kernel for this machine's vector width).
    """
    arrays: dict[str, jax.Array] = {"q": q, "k_cache": k_cache, "v_cache": v_cache, "lengths": lengths}
    for name, a in arrays.items():
        if not hasattr(a, "shape") or not hasattr(a, "dtype"):
            raise _shape_error(f"{name} must be an array, got {type(a).__name__}")
    if q.ndim != 4:
        raise _shape_error(f"q must be [batch, new_tokens, heads, head_dim], got shape {tuple(q.shape)}")
    for name in ("k_cache", "v_cache"):
        if arrays[name].ndim != 4:
            raise _shape_error(f"{name} must be [batch, heads, max_len, head_dim], got shape {tuple(arrays[name].shape)}")
    if lengths.ndim != 1:
        raise _shape_error(f"lengths must be [batch], got shape {tuple(lengths.shape)}")
    batch, new_tokens, heads, head_dim = q.shape
    if k_cache.shape != v_cache.shape:
        raise _shape_error(f"k_cache {tuple(k_cache.shape)} and v_cache {tuple(v_cache.shape)} differ")
    max_len = k_cache.shape[2]
    if (k_cache.shape[0], k_cache.shape[1], k_cache.shape[3]) != (batch, heads, head_dim):
        raise _shape_error(f"the caches {tuple(k_cache.shape)} do not fit q {tuple(q.shape)}: expected "
                           f"[{batch}, {heads}, max_len, {head_dim}]")
    if lengths.shape[0] != batch:
        raise _shape_error(f"lengths has {lengths.shape[0]} entries for a batch of {batch}")
    if min(batch, new_tokens, heads, head_dim) < 1 or max_len < new_tokens:
        raise _shape_error(f"every dimension must be >= 1 and max_len ({max_len}) >= new_tokens ({new_tokens})")
    if q.dtype != jnp.float32:
        raise _shape_error(f"q must be float32, got {q.dtype}")
    if k_cache.dtype != v_cache.dtype or k_cache.dtype not in _CACHE_TYPES:
        raise _shape_error(f"the caches must both be float32, bfloat16 or float16, got {k_cache.dtype} and {v_cache.dtype}")
    if lengths.dtype != jnp.int32:
        raise _shape_error(f"lengths must be int32, got {lengths.dtype}")
    _register()
    scale = float(1.0 / np.sqrt(head_dim)) if scale is None else float(scale)
    call = jax.ffi.ffi_call(_TARGET, jax.ShapeDtypeStruct(q.shape, jnp.float32), vmap_method="sequential")
    return call(q, k_cache, v_cache, lengths, scale=np.float32(scale))


def kv_append(cache: jax.Array, new: jax.Array, positions: jax.Array) -> jax.Array:
    """Writes each sequence's new keys (or values) into a fixed-size cache: cache [batch, heads,
    max_len, head_dim], new [batch, heads, new_tokens, head_dim] of the cache's dtype, positions
    int32 [batch]: new[b] lands at positions[b] .. positions[b] + new_tokens - 1 of sequence b.

    Plain JAX (jax.lax.dynamic_update_slice per sequence), so inside a jitted step with the cache
    donated XLA writes in place. As dynamic_update_slice does, a start past max_len - new_tokens
    is clamped (JAX cannot raise inside a compiled step): keep positions[b] + new_tokens <=
    max_len; padded_attention then refuses lengths past the cache.
    """
    if cache.ndim != 4 or new.ndim != 4 or new.shape[:2] != cache.shape[:2] or new.shape[3] != cache.shape[3]:
        raise InvalidArgumentError(f"eagerlm.jax.kv_append: new {tuple(new.shape)} does not fit the cache "
                                   f"{tuple(cache.shape)}: expected [batch, heads, new_tokens, head_dim]")
    if new.shape[2] > cache.shape[2]:
        raise InvalidArgumentError(f"eagerlm.jax.kv_append: {new.shape[2]} new positions exceed max_len {cache.shape[2]}")
    if positions.shape != (cache.shape[0],):
        raise InvalidArgumentError(f"eagerlm.jax.kv_append: positions must be [{cache.shape[0]}], got "
                                   f"{tuple(positions.shape)}")
    write = lambda c, n, p: jax.lax.dynamic_update_slice(c, n.astype(c.dtype), (0, p, 0))  # noqa: E731
    return jax.vmap(write)(cache, new, positions)
