"""eagerlm.jax.init against jax.jit on JAX's CPU backend: the same pytree, dtypes and bits, for
Hugging Face's FlaxGPT2 (an odd config), Flax linen models with every standard initializer,
Equinox-style plain functions, a primitive eagerlm does not implement (the fallback through
JAX), and what it does with bad input. Each test also checks that eagerlm computed the steps it
claims (the statistics), so a silent fallback everywhere would fail.
"""

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
from eagerlm.jax._init import init_with_stats  # noqa: E402


def jitted(fn, *args):
    """jax.jit(fn)(*args) with every non-array argument static, as eagerlm.jax.init treats it."""
    static = tuple(i for i, a in enumerate(args) if not isinstance(a, (jax.Array, np.ndarray)))
    return jax.jit(fn, static_argnums=static)(*args)


def assert_same_bits(expected, got):
    e_leaves, e_tree = jax.tree_util.tree_flatten_with_path(expected)
    g_leaves, g_tree = jax.tree_util.tree_flatten_with_path(got)
    assert e_tree == g_tree
    for (path, e), (_, g) in zip(e_leaves, g_leaves):
        name = jax.tree_util.keystr(path)
        assert isinstance(g, jax.Array), name
        e, g = np.asarray(e), np.asarray(g)
        assert (e.dtype, e.shape) == (g.dtype, g.shape), name
        if e.tobytes() != g.tobytes():
            differ = int(np.sum(e.view(np.uint8) != g.view(np.uint8)))
            pytest.fail(f"{name}: {differ} of {e.nbytes} bytes differ from jax.jit")


def check(fn, *args, eagerlm_computes=(), falls_back=()):
    expected = jitted(fn, *args)
    got, stats = init_with_stats(fn, *args)
    assert_same_bits(expected, got)
    for name in eagerlm_computes:
        assert stats.eagerlm.get(name, 0) > 0, (name, stats.eagerlm)
    for name in falls_back:
        assert stats.jax.get(name, 0) + stats.folded.get(name, 0) > 0, (name, stats.jax, stats.folded)
    return got, stats


def test_hugging_face_flax_gpt2_odd_config():
    try:
        from transformers import FlaxGPT2LMHeadModel, GPT2Config
    except ImportError:
        missing("transformers is not installed (tools/requirements-python-tests.txt)")
    config = GPT2Config(n_layer=3, n_embd=45, n_head=5, n_inner=77, n_positions=80, vocab_size=1001,
                        initializer_range=0.3)
    model = FlaxGPT2LMHeadModel(config, _do_init=False)
    _, stats = check(model.init_weights, jax.random.PRNGKey(11), (1, 1), eagerlm_computes=("normal",))
    assert stats.jax == {}  # the whole initializer without JAX's help


def flax_linen():
    try:
        import flax.linen as nn
    except ImportError:
        missing("flax is not installed (tools/requirements-python-tests.txt)")
    return nn


def test_flax_linen_every_standard_initializer():
    nn = flax_linen()
    init = nn.initializers

    class Every(nn.Module):
        @nn.compact
        def __call__(self, x):
            layers = [
                (init.lecun_normal(), init.zeros_init()),
                (init.truncated_normal(0.02), init.normal(0.1)),
                (init.xavier_uniform(), init.uniform(0.5)),
                (init.he_normal(), init.constant(0.3)),
                (init.variance_scaling(2.0, "fan_avg", "uniform"), init.ones_init()),
                (init.glorot_normal(), init.zeros_init()),
                (init.lecun_uniform(), init.normal(1.0)),
                (init.kaiming_uniform(), init.truncated_normal(1.5, lower=-1.0, upper=3.0)),
                (init.variance_scaling(0.7, "fan_out", "truncated_normal"), init.zeros_init()),
                (init.variance_scaling(1.3, "fan_in", "normal"), init.zeros_init()),
            ]
            for kernel, bias in layers:
                x = nn.Dense(13, kernel_init=kernel, bias_init=bias)(x)
            x = nn.Embed(17, 13, embedding_init=init.normal(0.02))(jnp.zeros((2,), jnp.int32)) + x
            return nn.LayerNorm()(x)

    _, stats = check(Every().init, jax.random.PRNGKey(3), jnp.ones((2, 7)),
                     eagerlm_computes=("uniform", "erf_inv", "normal", "random_fold_in"))
    assert stats.jax == {}


def test_truncated_normal_and_variance_scaling_with_typed_keys():
    nn = flax_linen()

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Dense(31, kernel_init=nn.initializers.truncated_normal(0.05))(x)
            x = nn.Conv(5, (3, 3), kernel_init=nn.initializers.variance_scaling(1.0, "fan_in", "truncated_normal"))(
                x.reshape(3, 31, 1, 1))
            return x

    for key in (jax.random.key(0), jax.random.key(2**31 + 7)):
        check(Model().init, key, jnp.ones((3, 9)), eagerlm_computes=("erf_inv", "uniform"))


def test_uniform_whole_calls_and_the_bounds_they_do_not_take():
    """Scalar bounds of any kind (Python floats: weak-typed; float32 arrays; a width that
    overflows to inf) run as one uniform kernel; array bounds and bfloat16 draws run
    primitive by primitive; every one bit for bit jax.jit's."""
    def draws(key):
        k = jax.random.split(key, 6)
        return {"weak": jax.random.uniform(k[0], (7, 5), jnp.float32, -0.5, 0.5),
                "typed": jax.random.uniform(k[1], (300,), jnp.float32, jnp.float32(-2), jnp.float32(7)),
                "default": jax.random.uniform(k[2], (4, 4)),
                "huge": jax.random.uniform(k[3], (64,), jnp.float32, -3e38, 3e38),
                "arrays": jax.random.uniform(k[4], (5, 3), jnp.float32, jnp.zeros(3), jnp.arange(1.0, 4.0)),
                "bf16": jax.random.uniform(k[5], (9,), jnp.bfloat16, -1.0, 1.0)}

    _, stats = check(draws, jax.random.key(5), eagerlm_computes=("uniform", "random_bits"))
    assert stats.eagerlm["uniform"] == 4


def test_plain_function_with_shapes_and_scalars_static():
    # The shape of an Equinox/Haiku-style initializer: arrays of keys in, a dict of arrays out.
    def init_fn(key, sizes, scale):
        keys = jax.random.split(key, len(sizes))
        return {f"w{i}": jax.random.normal(k, (n, n + 1)) * scale + 0.5 for i, (k, n) in enumerate(zip(keys, sizes))}

    got, stats = check(init_fn, jax.random.PRNGKey(9), (3, 64, 5), 0.25, eagerlm_computes=("random_split",))
    assert stats.jax == {}
    assert set(got) == {"w0", "w1", "w2"}


def test_a_primitive_eagerlm_does_not_implement_runs_through_jax():
    def init_fn(key):
        w = jax.random.normal(key, (6, 6))
        q, _ = jnp.linalg.qr(w)  # QR: not eagerlm's
        return {"q": q, "cumsum": jnp.cumsum(w, axis=0), "e": jnp.exp(w) * 2.0 + 1.0}

    _, stats = check(init_fn, jax.random.PRNGKey(4), falls_back=("exp",))
    assert stats.jax  # something went through JAX


def test_shapes_is_eval_shape_without_allocating():
    nn = flax_linen()
    model = nn.Dense(1 << 20)  # 4 GiB of kernel at 1024 inputs: shapes must not allocate it
    x = jnp.ones((1, 1024))
    got = ejax.shapes(model.init, jax.random.PRNGKey(0), x)
    expected = jax.eval_shape(model.init, jax.random.PRNGKey(0), x)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(expected)
    assert jax.tree.leaves(got) == jax.tree.leaves(expected)


def test_bad_input_is_a_clear_error():
    with pytest.raises(eagerlm.InvalidArgumentError, match="expected a function"):
        ejax.init(42, jax.random.PRNGKey(0))
    with pytest.raises(TypeError):  # an output of the wrong dtype is refused, not written to a copy
        eagerlm._core.jax_fma_f32(*[np.zeros(3, np.float32)] * 3, np.zeros(3, np.float64))
    with pytest.raises(eagerlm.InvalidArgumentError, match="same size"):
        eagerlm._core.jax_erf_inv_f32(np.zeros(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError):  # the function's own error, from tracing, unchanged
        ejax.init(lambda key: jax.random.normal(key, "not a shape"), jax.random.PRNGKey(0))


def test_results_never_alias_the_callers_arrays():
    # Outputs eagerlm allocated are handed to JAX without a copy; a caller's array never is.
    table = np.arange(12, dtype=np.float32).reshape(3, 4)

    def init_fn(key):
        return {"table": jnp.asarray(table), "view": jnp.asarray(table)[1:], "w": jax.random.normal(key, (64, 64))}

    got, _ = check(init_fn, jax.random.PRNGKey(1))
    table[:] = -1.0
    assert np.asarray(got["table"])[0, 1] == 1.0
    assert np.asarray(got["view"])[0, 0] == 4.0
