"""Whole calls computed by one eagerlm kernel: `jax.random.normal(key, shape, float32)`.

A traced initializer calls jax.random.normal as a nested jit named `_normal`. When such a call
is, equation for equation, what jax.random.normal itself traces to for that shape (checked by
tracing it and comparing the printed jaxprs, so a user function of the same name or another JAX
version's different sampler is never mistaken for it), eagerlm's fused normal kernel computes it
in one pass: the same bits as its primitives one by one, several times faster.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _core
from . import _memory
from ._keys import Keys, is_threefry
from ._program import Step


@functools.lru_cache(maxsize=256)
def _normal_reference(shape: tuple[int, ...]) -> str:
    closed = jax.make_jaxpr(lambda k: jax.random.normal(k, shape, jnp.float32))(jax.random.key(0))
    (eqn,) = closed.jaxpr.eqns
    return str(eqn.params["jaxpr"])


_SQRT2 = np.array(np.sqrt(2), np.float32)  # as jax.random.normal rounds it


def recognize(eqn: Any) -> tuple[str, list[Any]] | None:
    """(the fast path computing this call equation, the constant inputs it adds), or None to
    inline the call. A normal's added input is its scale: sqrt(2), the call's last multiply."""
    if eqn.params.get("name") != "_normal" or len(eqn.invars) != 1 or len(eqn.outvars) != 1:
        return None
    key, out = eqn.invars[0].aval, eqn.outvars[0].aval
    if out.dtype != np.float32 or key.shape != () or not jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return None
    if not jax.config.jax_threefry_partitionable or not is_threefry(key.dtype._impl):
        return None
    callee = eqn.params.get("jaxpr")
    if callee is None or str(callee) != _normal_reference(tuple(out.shape)):
        return None
    return "normal", [_SQRT2]


def _normal(step: Step, xs: list[Any]) -> list[Any]:
    keys, scale = xs
    assert isinstance(keys, Keys)
    shape = tuple(step.out_avals[0].shape)
    if np.size(scale) != 1:  # a scale per element: the normal, then the multiply
        normal = _memory.empty(shape, np.float32)
        _core.jax_normal_f32(int(keys.data[0]), int(keys.data[1]), 1.0, normal)
        return [np.multiply(normal, scale, dtype=np.float32)]
    out = _memory.empty(shape, np.float32)
    _core.jax_normal_f32(int(keys.data[0]), int(keys.data[1]), float(np.asarray(scale).reshape(())), out)
    return [out]


FAST_CALLS = {"normal": _normal}
