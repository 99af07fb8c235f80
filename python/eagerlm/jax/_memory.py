"""Output arrays JAX can adopt: JAX's CPU client uses a NumPy array's memory in place (no copy)
when it is aligned to 64 bytes, which NumPy's own allocations are not (16). Only memory
allocated here is handed over that way, never a caller's array (a constant the traced function
closed over, say), which the caller could change later."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

_ALIGNMENT = 64
_ours: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()


def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialized C-contiguous array whose data starts on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    raw = np.empty(count * dtype.itemsize + _ALIGNMENT, np.uint8)
    _ours[id(raw)] = raw
    offset = (-raw.ctypes.data) % _ALIGNMENT
    return raw[offset:offset + count * dtype.itemsize].view(dtype).reshape(shape)


def adoptable(array: np.ndarray) -> bool:
    """Whether JAX may take this array's memory: allocated here, aligned, contiguous."""
    root: Any = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (_ours.get(id(root)) is root and bool(array.flags.c_contiguous and array.flags.writeable)
            and array.ctypes.data % _ALIGNMENT == 0)
