"""A traced initializer as one flat program: every jit-like call inlined, what no output needs
dropped, and the multiply-adds XLA:CPU would fuse marked.

Why flat: XLA compiles `jax.jit(fn)` as one module in which nested jits are inlined, and its CPU
code generator contracts a float32 multiply whose only use is an add or subtract into one fused
multiply-add (one rounding instead of two). Reproducing its bits means seeing those pairs across
call boundaries, and that needs the whole program as one list of steps.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Callable

import numpy as np
from jax.extend import core as jcore

# Primitives that only call a jaxpr: inlined. Each maps an equation to (closed or open jaxpr).
_CALLS: dict[str, Callable[[Any], Any]] = {
    "jit": lambda e: e.params["jaxpr"],
    "pjit": lambda e: e.params["jaxpr"],
    "closed_call": lambda e: e.params["call_jaxpr"],
    "core_call": lambda e: e.params["call_jaxpr"],
    "remat": lambda e: e.params["jaxpr"],
    "checkpoint": lambda e: e.params["jaxpr"],
    "custom_jvp_call": lambda e: e.params["call_jaxpr"],
    "custom_vjp_call": lambda e: e.params["call_jaxpr"],
}


@dataclasses.dataclass(frozen=True)
class Const:
    """A value known when tracing (a literal or a closed-over constant)."""

    value: Any


Ref = int | Const  # a step's input: the id of an earlier result, or a constant


@dataclasses.dataclass
class Step:
    primitive: Any  # the jax Primitive
    params: dict[str, Any]
    inputs: list[Ref]
    outputs: list[int]  # result ids (-1: a result nothing reads, jax's DropVar)
    out_avals: list[Any]
    fast: str | None = None  # a recognized call computed as one kernel (see _fast_calls)
    contract: int = -1  # for add/sub: which input is a multiply fused into it (-1: none)
    deferred: bool = False  # for mul: its product is consumed by a fused add, never rounded
    constant: bool = False  # every input is known when tracing: XLA folds it before compiling
    eqn: Any = None  # the equation it came from
    effectful: bool = False  # has effects (printing, I/O, ordering): always run, never folded


@dataclasses.dataclass
class Program:
    inputs: list[int]
    steps: list[Step]
    outputs: list[Ref]


def _is_literal(v: Any) -> bool:
    return isinstance(v, jcore.Literal)


def _literal_value(v: Any) -> np.ndarray:
    return np.asarray(v.val, dtype=v.aval.dtype)


# recognize(eqn) -> (fast path name, constant inputs it adds) for a call taken whole, or None.
Recognizer = Callable[[Any], tuple[str, list[Any]] | None]


class _Flattener:
    def __init__(self, recognize: Recognizer):
        self.steps: list[Step] = []
        self.next_id = 0
        self.recognize = recognize

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def flatten(self, jaxpr: Any, consts: list[Any], args: list[Ref]) -> list[Ref]:
        env: dict[Any, Ref] = {}
        for var, c in zip(jaxpr.constvars, consts):
            env[var] = Const(c)
        for var, a in zip(jaxpr.invars, args):
            env[var] = a

        def read(v: Any) -> Ref:
            return Const(_literal_value(v)) if _is_literal(v) else env[v]

        for eqn in jaxpr.eqns:
            inputs = [read(v) for v in eqn.invars]
            name = eqn.primitive.name
            recognized = self.recognize(eqn) if name in _CALLS else None
            fast = None
            if recognized is not None:
                fast, extra = recognized
                inputs += [Const(c) for c in extra]
            if name in _CALLS and fast is None:
                callee = _CALLS[name](eqn)
                inner, inner_consts = (callee.jaxpr, callee.consts) if hasattr(callee, "consts") else (callee, [])
                results = self.flatten(inner, list(inner_consts), inputs)
                for var, r in zip(eqn.outvars, results):
                    env[var] = r
                continue
            outputs = []
            for var in eqn.outvars:
                if isinstance(var, jcore.DropVar):
                    outputs.append(-1)
                else:
                    outputs.append(self.new_id())
                    env[var] = outputs[-1]
            self.steps.append(Step(eqn.primitive, dict(eqn.params), inputs, outputs,
                                   [v.aval for v in eqn.outvars], fast=fast, eqn=eqn,
                                   effectful=bool(eqn.effects)))
        return [read(v) for v in jaxpr.outvars]


def build(closed_jaxpr: Any, recognize: Recognizer) -> Program:
    """The flat program of a traced function, reduced to what its outputs need."""
    refused: set[int] = set()  # calls not to take whole: a multiply inside them is fused
    while True:
        f = _Flattener(lambda eqn: None if id(eqn) in refused else recognize(eqn))
        inputs = [f.new_id() for _ in closed_jaxpr.jaxpr.invars]
        outputs = f.flatten(closed_jaxpr.jaxpr, list(closed_jaxpr.consts), list(inputs))
        steps = _live(f.steps, outputs)
        _mark_constants(steps)
        steps = _live(_fold_constant_products(steps, f.new_id), outputs)
        fused_into = _plan_contractions(steps, outputs)
        conflicts = {id(s.eqn) for s in fused_into if s.fast is not None}
        if not conflicts:
            return Program(inputs, steps, outputs)
        refused |= conflicts


def _live(steps: list[Step], outputs: list[Ref]) -> list[Step]:
    """The steps some output depends on, plus any with effects (kept in order)."""
    needed = {r for r in outputs if isinstance(r, int)}
    kept = []
    for step in reversed(steps):
        if any(o in needed for o in step.outputs) or step.effectful:
            kept.append(step)
            needed.update(r for r in step.inputs if isinstance(r, int))
    kept.reverse()
    return kept


def _mark_constants(steps: list[Step]) -> None:
    """Marks the steps XLA evaluates at compile time (HloConstantFolding): those whose inputs are
    all constants. Folded values round each operation on its own (no fused multiply-adds) and
    take transcendental functions from the C library rather than from XLA's generated code."""
    constant_ids: set[int] = set()
    for step in steps:
        if step.effectful:
            continue
        if all(isinstance(r, Const) or r in constant_ids for r in step.inputs):
            step.constant = True
            constant_ids.update(o for o in step.outputs if o >= 0)


def _fold_constant_products(steps: list[Step], new_id: Callable[[], int]) -> list[Step]:
    """XLA's algebraic simplifier rewrites (A * C1) * C2 as A * (C1 * C2) when C1 and C2 are
    constants: one rounding fewer, so other bits (jax.random.normal(...) * stddev under jit is
    erfinv(u) * (sqrt(2) * stddev)). The same here, C1 * C2 a new constant step; a whole-call
    normal (whose last step is * sqrt(2)) takes the product as its scale."""
    producer: dict[int, Step] = {}
    constant_ids = {o for s in steps if s.constant for o in s.outputs if o >= 0}
    avals: dict[int, Any] = {o: a for s in steps for o, a in zip(s.outputs, s.out_avals) if o >= 0}

    def is_constant(r: Ref) -> bool:
        return isinstance(r, Const) or r in constant_ids

    def shape_of(r: Ref) -> tuple[int, ...]:
        return np.shape(r.value) if isinstance(r, Const) else tuple(avals[r].shape)

    def split(step: Step) -> tuple[Ref, Ref] | None:  # (the other operand, the constant one)
        a, b = step.inputs
        return (a, b) if is_constant(b) else (b, a) if is_constant(a) else None

    out: list[Step] = []
    for step in steps:
        parts = split(step) if step.primitive.name == "mul" and not step.constant else None
        inner = producer.get(parts[0]) if parts is not None and isinstance(parts[0], int) else None
        if (inner is not None and step.out_avals[0].dtype == np.float32 and
                ((inner.primitive.name == "mul" and not inner.constant and split(inner) is not None) or
                 inner.fast == "normal")):
            base, c1 = split(inner) if inner.fast is None else (inner.inputs[0], inner.inputs[1])
            c2 = parts[1]
            k = new_id()
            shape = np.broadcast_shapes(shape_of(c1), shape_of(c2))
            aval = types.SimpleNamespace(shape=shape, dtype=np.dtype(np.float32))
            out.append(Step(step.primitive, {}, [c1, c2], [k], [aval], constant=True))
            constant_ids.add(k)
            avals[k] = aval
            step = dataclasses.replace(step, inputs=[base, k]) if inner.fast is None else \
                dataclasses.replace(inner, inputs=[base, k], outputs=list(step.outputs), out_avals=list(step.out_avals))
        out.append(step)
        producer.update((o, step) for o in step.outputs if o >= 0)
    return out


def _plan_contractions(steps: list[Step], outputs: list[Ref]) -> list[Step]:
    """Marks each float32 add/sub that XLA:CPU would fuse with a multiply feeding it.

    LLVM contracts fadd(fmul(a, b), c) when the product has no other use; with a product on
    either side it takes the left one. A product that is a program output is materialized.
    Returns the whole-call steps (fast paths) whose result feeds such an add alone: their last
    multiply would be fused into it, so they must be inlined instead.
    """
    uses: dict[int, int] = {}
    for step in steps:
        for r in step.inputs:
            if isinstance(r, int):
                uses[r] = uses.get(r, 0) + 1
    for r in outputs:
        if isinstance(r, int):
            uses[r] = uses.get(r, 0) + 1
    producer = {o: s for s in steps for o in s.outputs if o >= 0}
    fused_into: list[Step] = []
    for step in steps:
        if step.constant or step.primitive.name not in ("add", "sub") or step.out_avals[0].dtype != np.float32:
            continue
        fused_into += [producer[r] for r in step.inputs
                       if isinstance(r, int) and r in producer and producer[r].fast is not None and uses.get(r) == 1]
        for side, r in enumerate(step.inputs):
            p = producer.get(r) if isinstance(r, int) else None
            if (p is not None and p.primitive.name == "mul" and not p.deferred and not p.constant and uses.get(r) == 1
                    and p.out_avals[0].dtype == np.float32):
                p.deferred = True
                step.contract = side
                break
    return fused_into
