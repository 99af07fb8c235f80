"""Evaluates a flat program (_program.py) step by step on NumPy arrays.

Each primitive has a rule here when NumPy or one of eagerlm's kernels gives exactly XLA:CPU's
bits for it (integer and bit operations, IEEE-exact float arithmetic, layout changes, the
random primitives, erf_inv); any other primitive runs through JAX itself, one operation at a
time, which is correct by construction. Constant steps (inputs known when tracing) without a
rule are folded by XLA, as jax.jit folds them.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .. import _core
from . import _keys, _memory
from ._keys import Keys
from ._program import Const, Program, Step

Value = Any  # np.ndarray or Keys

# ---- Folded constants: a step whose inputs are all known when tracing is evaluated by XLA at
# compile time (HloConstantFolding), and its evaluator's transcendental functions are not those
# of the compiled code (erf, tanh and log in double precision, log1p in single: measured). So a
# constant step without an exact rule here is folded by XLA itself, as a jit of constants, once
# per distinct primitive, parameters and input values.
_FOLDED: dict[Any, list[Value]] = {}
_FOLD_MAX_ELEMENTS = 4096  # larger constants are rare (and XLA does not fold its largest)


def _fold_through_xla(step: Step, xs: list[Value]) -> list[Value] | None:
    if not all(isinstance(x, np.ndarray) for x in xs) or sum(x.size for x in xs) > _FOLD_MAX_ELEMENTS:
        return None
    try:
        key = (step.primitive.name, repr(sorted(step.params.items())),
               tuple((x.dtype.str, x.shape, x.tobytes()) for x in xs))
    except Exception:  # parameters that do not print: not cached
        key = None
    if key is not None and key in _FOLDED:
        return _FOLDED[key]
    constants = [np.array(x) for x in xs]
    out = jax.jit(lambda: step.primitive.bind(*[jnp.asarray(c) for c in constants], **step.params))()
    results = [_from_jax(r) for r in (out if step.primitive.multiple_results else [out])]
    if key is not None:
        _FOLDED[key] = results
    return results


# ---- Rules: (step, inputs) -> outputs, or None to fall back to JAX.
Rule = Callable[[Step, list[Value]], list[Value] | None]
_RULES: dict[str, Rule] = {}


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def register(f: Rule) -> Rule:
        for n in names:
            _RULES[n] = f
        return f
    return register


def _out_dtype(step: Step, i: int = 0) -> np.dtype:
    return np.dtype(step.out_avals[i].dtype)


def _plain(*xs: Value) -> bool:
    """Whether NumPy's arithmetic on these is XLA's: float32 or integer arrays (bf16/f16 and
    float64 have their own rounding rules in XLA: excess precision, x64 off)."""
    return all(isinstance(x, np.ndarray) and (x.dtype == np.float32 or x.dtype.kind in "uib") for x in xs)


_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
           "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "nextafter": np.nextafter,
           "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}


@_rule(*_BINARY)
def _binary(step: Step, xs: list[Value]) -> list[Value] | None:
    a, b = xs
    if not _plain(a, b):
        return None
    name = step.primitive.name
    if name in ("and", "or", "xor") and a.dtype.kind == "f":
        return None
    if name in ("add", "sub", "mul") and a.dtype.kind != "f" and a.dtype.kind != "b":
        with np.errstate(over="ignore"):
            return [_BINARY[name](a, b).astype(_out_dtype(step))]  # integers wrap, as in XLA
    with np.errstate(all="ignore"):
        return [np.asarray(_BINARY[name](a, b)).astype(_out_dtype(step), copy=False)]


@_rule("div")
def _div(step: Step, xs: list[Value]) -> list[Value] | None:
    a, b = xs
    if not _plain(a, b) or a.dtype != np.float32:
        return None  # integer division rounds toward zero in XLA, and may divide by zero
    with np.errstate(all="ignore"):
        return [np.divide(a, b).astype(np.float32, copy=False)]


_UNARY = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "not": np.invert, "sign": np.sign,
          "floor": np.floor, "ceil": np.ceil, "square": np.square}


@_rule(*_UNARY)
def _unary(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    if not _plain(x):
        return None
    if step.primitive.name == "not" and x.dtype.kind == "f":
        return None
    with np.errstate(all="ignore"):
        return [np.asarray(_UNARY[step.primitive.name](x)).astype(_out_dtype(step), copy=False)]


@_rule("stop_gradient", "copy", "copy_p", "optimization_barrier")
def _identity(step: Step, xs: list[Value]) -> list[Value] | None:
    return list(xs)


@_rule("erf_inv")
def _erf_inv(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or step.constant:
        return None
    x = np.asarray(x, order="C")
    out = _memory.empty(x.shape, np.float32)
    _core.jax_erf_inv_f32(x, out)
    return [out]


@_rule("shift_right_logical", "shift_left")
def _shift(step: Step, xs: list[Value]) -> list[Value] | None:
    a, b = xs
    if not _plain(a, b) or a.dtype.kind != "u":
        return None
    bits = a.dtype.itemsize * 8
    b = np.asarray(b).astype(a.dtype)
    big = b >= bits  # XLA: shifting by the width or more gives 0
    shifted = np.right_shift(a, np.where(big, 0, b)) if step.primitive.name == "shift_right_logical" \
        else np.left_shift(a, np.where(big, 0, b))
    return [np.where(big, a.dtype.type(0), shifted).astype(a.dtype)]


@_rule("bitcast_convert_type")
def _bitcast(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    to = _out_dtype(step)
    if not isinstance(x, np.ndarray) or x.dtype.itemsize != to.itemsize:
        return None
    return [np.asarray(x, order="C").view(to)]


@_rule("convert_element_type")
def _convert(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    to = np.dtype(step.params["new_dtype"])
    if not isinstance(x, np.ndarray):
        return None
    if to.kind in "iu" and x.dtype.kind == "f":
        return None  # XLA saturates and maps NaN to 0; NumPy's cast is undefined there
    if x.dtype == to:
        return [x]
    if (x.dtype.kind in "iub" and to == np.float32) or (x.dtype == np.float32 and to.kind == "f" and
                                                          to.itemsize <= 4) or (x.dtype.kind in "iub" and to.kind in "iub"):
        return [x.astype(to)]  # round to nearest even; integers wrap as in XLA
    return None


@_rule("broadcast_in_dim")
def _broadcast(step: Step, xs: list[Value]) -> list[Value] | None:
    x = xs[0]
    if len(xs) != 1 or not isinstance(x, np.ndarray):
        return None
    shape = tuple(step.params["shape"])
    dims = step.params["broadcast_dimensions"]
    expanded = [1] * len(shape)
    for d, size in zip(dims, x.shape):
        expanded[d] = size
    return [np.broadcast_to(x.reshape(expanded), shape)]


@_rule("reshape")
def _reshape(step: Step, xs: list[Value]) -> list[Value] | None:
    if len(xs) != 1 or step.params.get("dimensions") is not None:
        return None
    x = xs[0]
    shape = tuple(step.params["new_sizes"])
    if isinstance(x, Keys):
        return [Keys(x.data.reshape(shape + (2,)), x.impl)]
    return [np.reshape(x, shape)]


@_rule("squeeze")
def _squeeze(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    dims = tuple(step.params["dimensions"])
    if isinstance(x, Keys):
        return [Keys(np.squeeze(x.data, axis=dims), x.impl)]
    return [np.squeeze(x, axis=dims)]


@_rule("transpose")
def _transpose(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    if not isinstance(x, np.ndarray):
        return None
    return [np.transpose(x, step.params["permutation"])]


@_rule("slice")
def _slice(step: Step, xs: list[Value]) -> list[Value] | None:
    (x,) = xs
    strides = step.params["strides"] or (1,) * len(step.params["start_indices"])
    index = tuple(slice(a, b, s) for a, b, s in zip(step.params["start_indices"], step.params["limit_indices"], strides))
    if isinstance(x, Keys):
        return [Keys(x.data[index], x.impl)]
    return [x[index]]


@_rule("concatenate")
def _concatenate(step: Step, xs: list[Value]) -> list[Value] | None:
    if not all(isinstance(x, np.ndarray) for x in xs):
        return None
    return [np.concatenate(xs, axis=step.params["dimension"]).astype(_out_dtype(step), copy=False)]


@_rule("iota")
def _iota(step: Step, xs: list[Value]) -> list[Value] | None:
    shape, dim, dtype = tuple(step.params["shape"]), step.params["dimension"], np.dtype(step.params["dtype"])
    if dtype.kind not in "iu":
        return None
    line = np.arange(shape[dim], dtype=dtype).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    return [np.broadcast_to(line, shape)]


@_rule("select_n")
def _select_n(step: Step, xs: list[Value]) -> list[Value] | None:
    which, *cases = xs
    if not all(isinstance(c, np.ndarray) for c in xs):
        return None
    if which.dtype == np.bool_:
        return [np.where(which, cases[1], cases[0])]
    return [np.choose(which.astype(np.int64), cases)]


# ---- The random primitives (threefry2x32 keys; any other PRNG goes to JAX).
@_rule("random_wrap")
def _random_wrap(step: Step, xs: list[Value]) -> list[Value] | None:
    impl = step.params["impl"]
    if not _keys.is_threefry(impl):
        return None
    return [Keys(np.asarray(xs[0], dtype=np.uint32, order="C"), impl)]


@_rule("random_unwrap")
def _random_unwrap(step: Step, xs: list[Value]) -> list[Value] | None:
    return [xs[0].data] if isinstance(xs[0], Keys) else None


@_rule("random_split")
def _random_split(step: Step, xs: list[Value]) -> list[Value] | None:
    (k,) = xs
    if not isinstance(k, Keys) or not jax.config.jax_threefry_partitionable:
        return None
    return [_keys.split(k, tuple(step.params["shape"]))]


@_rule("random_fold_in")
def _random_fold_in(step: Step, xs: list[Value]) -> list[Value] | None:
    k, data = xs
    if not isinstance(k, Keys):
        return None
    return [_keys.fold_in(k, data)]


@_rule("random_bits")
def _random_bits(step: Step, xs: list[Value]) -> list[Value] | None:
    (k,) = xs
    width, shape = step.params["bit_width"], tuple(step.params["shape"])
    if not isinstance(k, Keys) or k.shape != () or width not in (8, 16, 32) or not jax.config.jax_threefry_partitionable:
        return None
    bits = _memory.empty(shape, np.uint32)
    _core.jax_random_bits32(int(k.data[0]), int(k.data[1]), bits)
    return [bits if width == 32 else bits.astype(np.uint8 if width == 8 else np.uint16)]


@_rule("threefry2x32")
def _threefry2x32(step: Step, xs: list[Value]) -> list[Value] | None:
    if not all(isinstance(x, np.ndarray) for x in xs):
        return None
    return list(_keys.threefry2x32(*xs))


# ---- Fused multiply-adds (_program._plan_contractions).
class _Product:
    """A float32 product not yet rounded: the add it feeds computes a·b + c in one rounding."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    a, b, c = (np.asarray(np.broadcast_to(x, shape), dtype=np.float32, order="C") for x in (a, b, c))
    out = _memory.empty(shape, np.float32)
    _core.jax_fma_f32(a, b, c, out)
    return out


def _fused_add(step: Step, xs: list[Value]) -> np.ndarray:
    shape = tuple(step.out_avals[0].shape)
    product, other = xs[step.contract], xs[1 - step.contract]
    if step.primitive.name == "add":
        return _fma(product.a, product.b, other, shape)
    if step.contract == 0:  # a·b - c
        return _fma(product.a, product.b, np.negative(other), shape)
    return _fma(np.negative(product.a), product.b, other, shape)  # c - a·b


# ---- The fallback: the primitive through JAX, op by op.
def _to_jax(x: Value) -> Any:
    return x.to_jax() if isinstance(x, Keys) else jnp.asarray(x)


def _from_jax(x: Any) -> Value:
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return Keys.from_jax(x)
    return np.asarray(x)


def _through_jax(step: Step, xs: list[Value]) -> list[Value]:
    out = step.primitive.bind(*[_to_jax(x) for x in xs], **step.params)
    results = out if step.primitive.multiple_results else [out]
    return [_from_jax(r) for r in results]


class Stats:
    """How many steps of each primitive eagerlm computed, XLA folded (constants) and JAX ran,
    and the seconds of each phase of init (trace, build the program, evaluate, hand to JAX)."""

    def __init__(self) -> None:
        self.eagerlm: dict[str, int] = {}
        self.folded: dict[str, int] = {}
        self.jax: dict[str, int] = {}
        self.seconds: dict[str, float] = {}


def evaluate(program: Program, args: list[Value], fast_calls: dict[str, Callable[[Step, list[Value]], list[Value]]],
             stats: Stats | None = None) -> list[Value]:
    env: dict[int, Value] = dict(zip(program.inputs, args))

    def read(r: Any) -> Value:
        return r.value if isinstance(r, Const) else env[r]

    for step in program.steps:
        xs = [read(r) for r in step.inputs]
        name = step.primitive.name
        results: list[Value] | None = None
        tally = stats.eagerlm if stats is not None else None
        if step.fast is not None:
            results = fast_calls[step.fast](step, xs)
        elif step.deferred:
            results = [_Product(*xs)]
        elif step.contract >= 0:
            results = [_fused_add(step, xs)]
        elif name in _RULES:
            results = _RULES[name](step, xs)
        if results is None and step.constant and not step.effectful:
            results = _fold_through_xla(step, xs)
            tally = stats.folded if stats is not None else None
        if results is None:
            results = _through_jax(step, xs)
            tally = stats.jax if stats is not None else None
        if tally is not None:
            tally[step.fast or name] = tally.get(step.fast or name, 0) + 1
        for o, value in zip(step.outputs, results):
            if o >= 0:  # NumPy makes 0-d results scalars: the rules take arrays
                env[o] = value if isinstance(value, (Keys, _Product, np.ndarray)) else np.asarray(value)
    return [read(r) for r in program.outputs]
