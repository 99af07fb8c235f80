"""Typed PRNG keys while a program is evaluated outside JAX: the raw key data and its impl."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from .. import _core


@dataclasses.dataclass
class Keys:
    """An array of keys: data is uint32[*shape, 2] (threefry2x32), impl the jax PRNG impl."""

    data: np.ndarray
    impl: Any

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape[:-1]

    def to_jax(self) -> jax.Array:
        return jax.random.wrap_key_data(self.data, impl=self.impl)

    @staticmethod
    def from_jax(keys: jax.Array) -> "Keys":
        return Keys(np.asarray(jax.random.key_data(keys)), jax.random.key_impl(keys))


def is_threefry(impl: Any) -> bool:
    """Whether eagerlm's kernels implement this PRNG (JAX's default, threefry2x32)."""
    name = getattr(impl, "name", None) or str(impl)
    return name in ("threefry2x32", "fry")


def threefry2x32(k0: np.ndarray, k1: np.ndarray, x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The threefry2x32 primitive on broadcast-compatible uint32 arrays."""
    arrays = [np.asarray(a, dtype=np.uint32, order="C") for a in np.broadcast_arrays(k0, k1, x0, x1)]
    y0 = np.empty(arrays[0].shape, np.uint32)
    y1 = np.empty(arrays[0].shape, np.uint32)
    _core.jax_threefry2x32(*arrays, y0, y1)
    return y0, y1


def counters(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """JAX's partitionable counters for an array of this shape: the flat index as (high, low)."""
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).reshape(shape)
    return (index >> np.uint64(32)).astype(np.uint32), (index & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def split(keys: Keys, shape: tuple[int, ...]) -> Keys:
    """jax.random.split(key, shape) in partitionable mode: each new key is threefry2x32 of the
    key and the new key's flat index."""
    hi, lo = counters(shape)
    k0 = keys.data[..., 0].reshape(keys.shape + (1,) * len(shape))
    k1 = keys.data[..., 1].reshape(keys.shape + (1,) * len(shape))
    y0, y1 = threefry2x32(k0, k1, hi, lo)
    return Keys(np.stack([y0, y1], axis=-1), keys.impl)


def fold_in(keys: Keys, data: np.ndarray) -> Keys:
    """jax.random.fold_in: threefry2x32 of the key and the counter (0, data)."""
    y0, y1 = threefry2x32(keys.data[..., 0], keys.data[..., 1], np.uint32(0), np.asarray(data).astype(np.uint32))
    return Keys(np.stack([y0, y1], axis=-1), keys.impl)
