"""eagerlm inside JAX: an initializer's parameters with no XLA compilation.

    import eagerlm.jax
    params = eagerlm.jax.init(model.init, jax.random.key(0), x)   # == jax.jit(model.init)(key, x)
    shapes = eagerlm.jax.shapes(model.init, jax.random.key(0), x)  # == jax.eval_shape(...)

`init` traces the function once to a jaxpr (no compile), drops what the outputs do not need
(the forward pass an init runs), and evaluates the rest eagerly: eagerlm's C++ kernels for the
random bits, the normal sampler, erf_inv and the multiply-adds XLA:CPU fuses; NumPy for cheap
structural and elementwise ops; JAX's own op-by-op execution for any other primitive. The result
is the pytree `jax.jit(fn)(*args, **kwargs)` returns on JAX's CPU backend, the same bits
(docs/python.md, "eagerlm.jax"). Arguments that are not arrays are static, as static_argnums
would make them.

    out = eagerlm.jax.padded_attention(q, k_cache, v_cache, lengths)  # inside a jitted step

`padded_attention` is eagerlm's attention kernel as an XLA FFI call: each sequence's queries
attend its first `lengths[b]` positions of a fixed-size cache, so a decode step compiles once;
`kv_append` writes new keys or values at each sequence's position. Needs jax (pip install jax); `import eagerlm` alone does not.
"""

from ._attention import kv_append, padded_attention
from ._init import init, shapes

__all__ = ["init", "kv_append", "padded_attention", "shapes"]
