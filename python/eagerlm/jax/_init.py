"""eagerlm.jax.init and eagerlm.jax.shapes: trace once, evaluate without compiling."""

from __future__ import annotations

import time
from typing import Any, Callable

import jax
import numpy as np

from .._errors import InvalidArgumentError
from . import _evaluate, _fast_calls, _memory, _program
from ._keys import Keys


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


def _trace(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, list[Any]]:
    """(closed jaxpr, output shapes pytree, array arguments): arrays are the traced inputs;
    every other leaf of the arguments (shapes, Python scalars, strings) is static."""
    if not callable(fn):
        raise InvalidArgumentError(f"eagerlm.jax: expected a function to initialize, got {type(fn).__name__}")
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    positions = [i for i, leaf in enumerate(leaves) if _is_array(leaf)]

    def with_arrays(*arrays: Any) -> Any:
        filled = list(leaves)
        for i, a in zip(positions, arrays):
            filled[i] = a
        a, k = jax.tree_util.tree_unflatten(treedef, filled)
        return fn(*a, **k)

    arrays = [leaves[i] for i in positions]
    closed, out_shapes = jax.make_jaxpr(with_arrays, return_shape=True)(*arrays)
    return closed, out_shapes, arrays


def shapes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """What `jax.eval_shape(fn, *args, **kwargs)` returns (a pytree of jax.ShapeDtypeStruct), from
    one trace: nothing compiled, nothing allocated. Non-array arguments are static."""
    return _trace(fn, args, kwargs)[1]


def _as_value(x: Any) -> Any:
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return Keys.from_jax(x)
    return np.asarray(x)


def _as_output(value: Any, like: Any) -> Any:
    if isinstance(value, Keys):
        return value.to_jax()
    array = np.asarray(value, dtype=like.dtype)
    if array.shape != tuple(like.shape):
        array = np.broadcast_to(array, like.shape)
    if not _memory.adoptable(array):  # a view, a broadcast or NumPy's own allocation: copy once
        adopted = _memory.empty(array.shape, array.dtype)
        adopted[...] = array
        array = adopted
    return jax.device_put(array)  # on the CPU, the same memory (nothing else writes to it)


def init(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`jax.jit(fn)(*args, **kwargs)` for an initializer, with no XLA compilation.

    The same pytree, dtypes and bits as the jitted call on JAX's CPU backend (threefry2x32 keys;
    other PRNGs and primitives eagerlm does not implement run through JAX op by op). Arrays in
    the arguments are inputs; every other leaf is static, as static_argnums would make it.
    Results are JAX arrays on JAX's default device.
    """
    return init_with_stats(fn, *args, **kwargs)[0]


def init_with_stats(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, _evaluate.Stats]:
    """init(), and how many steps of each primitive eagerlm computed and JAX computed."""
    stats = _evaluate.Stats()
    start = time.perf_counter()
    closed, out_shapes, arrays = _trace(fn, args, kwargs)
    traced = time.perf_counter()
    program = _program.build(closed, _fast_calls.recognize)
    built = time.perf_counter()
    values = _evaluate.evaluate(program, [_as_value(a) for a in arrays], _fast_calls.FAST_CALLS, stats)
    evaluated = time.perf_counter()
    likes, out_tree = jax.tree_util.tree_flatten(out_shapes)
    outputs = [_as_output(v, like) for v, like in zip(values, likes)]
    stats.seconds = {"trace": traced - start, "build": built - traced, "evaluate": evaluated - built,
                     "outputs": time.perf_counter() - evaluated}
    return jax.tree_util.tree_unflatten(out_tree, outputs), stats
