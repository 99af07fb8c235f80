"""Whole calls computed by one eagerlm kernel: `jax.random.normal(key, shape, float32)` and
`jax.random.uniform(key, shape, float32, minval, maxval)` with scalar bounds (which
`jax.random.truncated_normal` and the uniform and variance-scaling initializers call).

A traced initializer calls them as nested jits named `_normal` and `_uniform`. When such a call
is, equation for equation, what the JAX function itself traces to for that shape and those input
types (checked by tracing it and comparing the printed jaxprs, so a user function of the same
name or another JAX version's different sampler is never mistaken for it), eagerlm's fused
kernel computes it in one pass: the same bits as its primitives one by one, several times faster.
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


def _callee_text(closed: Any) -> str | None:
    """The printed callee of a program that is one nested call, or None when it is not."""
    eqns = closed.jaxpr.eqns
    if len(eqns) != 1 or "jaxpr" not in eqns[0].params:
        return None
    return str(eqns[0].params["jaxpr"])


@functools.lru_cache(maxsize=256)
def _normal_reference(shape: tuple[int, ...]) -> str | None:
    """The printed callee of jax.random.normal(key, shape, float32), or None when it does not
    trace to one call."""
    return _callee_text(jax.make_jaxpr(lambda k: jax.random.normal(k, shape, jnp.float32))(jax.random.key(0)))


@functools.lru_cache(maxsize=256)
def _uniform_reference(shape: tuple[int, ...], bounds: tuple[tuple[Any, bool], ...]) -> str | None:
    """The printed callee of jax.random.uniform(key, shape, float32, lo, hi) traced with bounds
    of these (dtype, weak_type), or None when it does not trace to one call."""
    lo, hi = (jax.ShapeDtypeStruct((), dtype, weak_type=weak) for dtype, weak in bounds)
    closed = jax.make_jaxpr(lambda k, a, b: jax.random.uniform(k, shape, jnp.float32, a, b))(
        jax.random.key(0), lo, hi)
    return _callee_text(closed)


_SQRT2 = np.array(np.sqrt(2), np.float32)  # as jax.random.normal rounds it


def _threefry_key(aval: Any) -> bool:
    return (aval.shape == () and jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key)
            and bool(jax.config.jax_threefry_partitionable) and is_threefry(aval.dtype._impl))


def recognize(eqn: Any) -> tuple[str, list[Any]] | None:
    """(the fast path computing this call equation, the constant inputs it adds), or None to
    inline the call. A normal's added input is its scale: sqrt(2), the call's last multiply."""
    name, callee = eqn.params.get("name"), eqn.params.get("jaxpr")
    if name not in ("_normal", "_uniform") or callee is None or len(eqn.outvars) != 1 or not eqn.invars:
        return None
    key, out = eqn.invars[0].aval, eqn.outvars[0].aval
    if out.dtype != np.float32 or not _threefry_key(key):
        return None
    if name == "_normal":
        if len(eqn.invars) != 1 or str(callee) != _normal_reference(tuple(out.shape)):
            return None
        return "normal", [_SQRT2]
    bounds = [v.aval for v in eqn.invars[1:]]
    if len(bounds) != 2 or any(b.shape != () or b.dtype != np.float32 for b in bounds):
        return None  # array bounds, other dtypes: the primitives one by one
    if str(callee) != _uniform_reference(tuple(out.shape), tuple((b.dtype, bool(b.weak_type)) for b in bounds)):
        return None
    return "uniform", []


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


def _uniform(step: Step, xs: list[Any]) -> list[Any]:
    keys, lo, hi = xs
    assert isinstance(keys, Keys)
    lo32, hi32 = np.float32(np.asarray(lo).reshape(())), np.float32(np.asarray(hi).reshape(()))
    with np.errstate(over="ignore"):  # an infinite width is what XLA computes too
        width = np.float32(hi32 - lo32)  # `sub maxval minval` in float32, as the callee does
    out = _memory.empty(tuple(step.out_avals[0].shape), np.float32)
    _core.jax_uniform_f32(int(keys.data[0]), int(keys.data[1]), float(lo32), float(width), out)
    return [out]


FAST_CALLS = {"normal": _normal, "uniform": _uniform}
