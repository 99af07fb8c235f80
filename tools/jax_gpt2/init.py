"""GPT-2 parameters initialized exactly as `eagerlm init` does, in JAX.

Each parameter is drawn from its own key, derived from the seed and its name only:

    key(name) = jax.random.fold_in(jax.random.key(seed), fnv1a32(name))
    value     = jax.random.normal(key(name), shape, float32) * stddev

(ones and zeros for layer norms and biases), so the values do not depend on the order of
initialization, and `eagerlm init --seed S` writes the same numbers. This is the scheme a JAX
user would write by hand; `jax.jit(init_fn(config))(key)` is the compiled initializer that
tools/compare_jax.py times.
"""

import jax
import jax.numpy as jnp
import numpy as np

from .config import parameter_specs


def fnv1a32(text):
    """FNV-1a, 32-bit, of the UTF-8 bytes of `text`: the fold_in data of a parameter name."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def seed_key(seed):
    """jax.random.key(seed) for any seed in [0, 2^64): the key words are [seed >> 32, seed & 0xffffffff]
    (what jax.random.key gives with jax_enable_x64 on; without x64 JAX truncates seeds to 32 bits)."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed {seed} is outside [0, 2^64)")
    return jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))


def init(config, key):
    """Every parameter of `config`, as a dict from Hugging Face name to a float32 array."""
    params = {}
    for spec in parameter_specs(config):
        if spec.init == "ones":
            params[spec.name] = jnp.ones(spec.shape, jnp.float32)
        elif spec.init == "zeros":
            params[spec.name] = jnp.zeros(spec.shape, jnp.float32)
        else:
            name_key = jax.random.fold_in(key, np.uint32(fnv1a32(spec.name)))
            params[spec.name] = jax.random.normal(name_key, spec.shape, jnp.float32) * spec.stddev
    return params


def init_fn(config):
    """`key -> params` for `config`, ready for jax.jit or jax.eval_shape."""
    return lambda key: init(config, key)
