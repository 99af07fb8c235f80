"""eagerlm.jax.padded_attention (the XLA FFI op) and kv_append inside jitted JAX code: values
against a plain attention computed in float64 on ragged lengths (0, 1, a block boundary, the
full cache) with a derived bound, for float32, bfloat16 and float16 caches and several queries
per sequence; one compilation whatever the lengths; vmap; bad input refused.

The bound is test/kernels/test_attention.cpp's, per (row, head) with L keys, u = 2^-24:
    eta = (d + 1)·u·scale·max_j Σ_c |q_c k_jc| + 2·R·u + (4·⌈L/64⌉ + 3)·u   (R: the score range)
    |out - exact| <= V·(2·eta + (2L + 4)·u)·1.01                           (V: max |v|)
"""

import math

import numpy as np
import pytest

from conftest import missing

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    missing("jax is not installed (tools/requirements-python-tests.txt)")

import eagerlm  # noqa: E402
import eagerlm.jax as ejax  # noqa: E402

U = 2.0**-24


def reference(q, k, v, lengths, scale):
    """float64 attention and its bound, as the op defines it (zeros where no key is visible)."""
    batch, new, heads, d = q.shape
    out = np.zeros(q.shape)
    bound = np.zeros(q.shape)
    for b in range(batch):
        for t in range(new):
            n_keys = int(lengths[b]) - new + t + 1
            if n_keys <= 0:
                continue
            for h in range(heads):
                qs, ks, vs = q[b, t, h].astype(np.float64), k[b, h, :n_keys].astype(np.float64), v[b, h, :n_keys]
                s = scale * (ks @ qs)
                p = np.exp(s - s.max())
                out[b, t, h] = (p / p.sum()) @ vs.astype(np.float64)
                eta = ((d + 1) * U * scale * np.max(np.abs(ks * qs).sum(axis=1)) + 2 * (s.max() - s.min()) * U
                       + (4 * math.ceil(n_keys / 64) + 3) * U)
                bound[b, t, h] = 1.01 * np.max(np.abs(vs)) * (2 * eta + (2 * n_keys + 4) * U)
    return out, bound


def random_case(rng, batch, new, heads, max_len, d, dtype, lengths):
    q = rng.uniform(-2, 2, (batch, new, heads, d)).astype(np.float32)
    k = rng.uniform(-1, 1, (batch, heads, max_len, d)).astype(np.float32)
    v = rng.uniform(-1, 1, (batch, heads, max_len, d)).astype(np.float32)
    for b, n in enumerate(lengths):  # never read: a stray read would turn the output into NaN
        k[b, :, n:] = np.nan
        v[b, :, n:] = np.nan
    k, v = jnp.asarray(k, dtype), jnp.asarray(v, dtype)
    return jnp.asarray(q), k, v, jnp.asarray(lengths, jnp.int32)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("batch,new,heads,max_len,d,lengths", [
    (5, 1, 3, 130, 64, [0, 1, 64, 65, 130]),  # decode: empty, one key, block boundary, full cache
    (4, 3, 2, 20, 7, [3, 2, 0, 20]),          # a chunk of 3 queries, shorter sequences padded
])
def test_padded_attention_against_float64(dtype, batch, new, heads, max_len, d, lengths):
    rng = np.random.default_rng(len(lengths) * 31 + d)
    q, k, v, lens = random_case(rng, batch, new, heads, max_len, d, dtype, lengths)
    got = np.asarray(jax.jit(ejax.padded_attention)(q, k, v, lens))
    assert got.dtype == np.float32 and got.shape == q.shape
    # The reference uses the cache's values as the op reads them (exactly widened to float32).
    expected, bound = reference(np.asarray(q), np.asarray(k.astype(jnp.float32)), np.asarray(v.astype(jnp.float32)),
                                lengths, 1 / math.sqrt(d))
    assert np.all(np.isfinite(got))
    error = np.abs(got - expected)
    worst = np.unravel_index(np.argmax(error - bound), got.shape)
    assert np.all(error <= bound), f"worst at {worst}: got {got[worst]}, exact {expected[worst]}, bound {bound[worst]}"
    assert np.all(got[2 if new == 3 else 0] == 0.0)  # the sequence of length 0


def test_one_compilation_whatever_the_lengths():
    rng = np.random.default_rng(7)
    q, k, v, _ = random_case(rng, 2, 1, 2, 32, 16, jnp.float32, [32, 32])
    step = jax.jit(lambda q, k, v, n: ejax.padded_attention(q, k, v, n, scale=0.5))
    for n in ([1, 5], [32, 0], [7, 7], [2, 31]):
        out = np.asarray(step(q, k, v, jnp.asarray(n, jnp.int32)))
        expected, bound = reference(np.asarray(q), np.asarray(k), np.asarray(v), n, 0.5)
        assert np.all(np.abs(out - expected) <= bound)
    assert step._cache_size() == 1


def test_vmap_over_an_extra_batch_axis():
    rng = np.random.default_rng(8)
    cases = [random_case(rng, 2, 1, 2, 16, 8, jnp.float32, [16, 16]) for _ in range(3)]
    q, k, v = (jnp.stack([c[i] for c in cases]) for i in range(3))
    lengths = jnp.asarray([[1, 16], [4, 0], [9, 9]], jnp.int32)
    got = jax.jit(jax.vmap(ejax.padded_attention))(q, k, v, lengths)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(ejax.padded_attention(q[i], k[i], v[i], lengths[i])))


def test_kv_append_writes_each_sequence_at_its_position():
    cache = jnp.zeros((3, 2, 8, 4), jnp.bfloat16)
    new = jnp.asarray(np.arange(3 * 2 * 2 * 4, dtype=np.float32).reshape(3, 2, 2, 4) + 1)
    positions = jnp.asarray([0, 3, 6], jnp.int32)
    got = np.asarray(jax.jit(ejax.kv_append, donate_argnums=0)(cache, new, positions).astype(jnp.float32))
    expected = np.zeros((3, 2, 8, 4), np.float32)
    for b, p in enumerate([0, 3, 6]):
        expected[b, :, p:p + 2] = np.asarray(new[b])
    np.testing.assert_array_equal(got, expected)


def test_bad_input_is_refused_naming_it():
    q = jnp.zeros((2, 1, 2, 8), jnp.float32)
    k = jnp.zeros((2, 2, 8, 8), jnp.float32)
    lengths = jnp.asarray([1, 2], jnp.int32)
    with pytest.raises(eagerlm.InvalidArgumentError, match="q must be"):
        ejax.padded_attention(q[0], k, k, lengths)
    with pytest.raises(eagerlm.InvalidArgumentError, match="k_cache must be"):
        ejax.padded_attention(q, k[0], k, lengths)
    with pytest.raises(eagerlm.InvalidArgumentError, match="do not fit"):
        ejax.padded_attention(q, jnp.zeros((2, 3, 8, 8), jnp.float32), jnp.zeros((2, 3, 8, 8), jnp.float32), lengths)
    with pytest.raises(eagerlm.InvalidArgumentError, match="lengths must be int32"):
        ejax.padded_attention(q, k, k, lengths.astype(jnp.float32))
    with pytest.raises(eagerlm.InvalidArgumentError, match="3 entries"):
        ejax.padded_attention(q, k, k, jnp.asarray([1, 2, 3], jnp.int32))
    with pytest.raises(eagerlm.InvalidArgumentError, match="float32, bfloat16 or float16"):
        ejax.padded_attention(q, k.astype(jnp.int32), k.astype(jnp.int32), lengths)
    with pytest.raises(eagerlm.InvalidArgumentError, match="positions must be"):
        ejax.kv_append(k, k[:, :, :1], jnp.asarray([0], jnp.int32))
    # A length past the cache is found when the compiled step runs: JAX raises the op's error.
    with pytest.raises(Exception, match=r"lengths\[1\] = 9 is outside \[0, 8\]"):
        jax.block_until_ready(jax.jit(ejax.padded_attention)(q, k, k, jnp.asarray([1, 9], jnp.int32)))


def test_a_build_without_the_op_says_how_to_get_it(monkeypatch):
    from eagerlm import _core
    from eagerlm.jax import _attention

    monkeypatch.setattr(_core, "xla_ffi_targets", lambda: {})  # as EAGERLM_JAX=OFF builds it
    _attention._register.cache_clear()
    q = jnp.zeros((1, 1, 1, 4), jnp.float32)
    k = jnp.zeros((1, 1, 4, 4), jnp.float32)
    with pytest.raises(eagerlm.UnsupportedError, match="EAGERLM_JAX"):
        ejax.padded_attention(q, k, k, jnp.asarray([1], jnp.int32))
    monkeypatch.undo()
    _attention._register.cache_clear()  # registering the same target again is harmless
    assert np.asarray(ejax.padded_attention(q, k, k, jnp.asarray([1], jnp.int32))).shape == (1, 1, 1, 4)
