"""Arrays in and out of the engine: the caller's parameters as host memory the engine can use in
place, token ids, and storage dtype names (NumPy's spelling outside, safetensors' inside)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._errors import InvalidArgumentError

# NumPy's names of element types -> safetensors' names, which the engine's checks speak.
_SAFETENSORS = {"float32": "F32", "float16": "F16", "bfloat16": "BF16", "float64": "F64", "int64": "I64",
                "int32": "I32", "int16": "I16", "int8": "I8", "uint64": "U64", "uint32": "U32", "uint16": "U16",
                "uint8": "U8", "bool": "BOOL"}
_STORAGE = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}
_NUMPY_NAME = {code: name for name, code in _STORAGE.items()}
_INT32_MAX = 2**31 - 1


def storage_dtype(dtype: Any) -> str:
    """"F32", "F16" or "BF16" for float32, float16 or bfloat16 (a name, a NumPy or ml_dtypes type)."""
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in _STORAGE:
        raise InvalidArgumentError(f"dtype: expected float32, float16 or bfloat16, got {dtype!r}")
    return _STORAGE[name]


def numpy_dtype_name(code: str) -> str:
    """NumPy's name for a storage dtype code: "F32" -> "float32"."""
    return _NUMPY_NAME[code]


def as_numpy(array: np.ndarray, code: str) -> np.ndarray:
    """An array the engine returned, typed: BF16 arrives as uint16 and is viewed as ml_dtypes.bfloat16."""
    if code != "BF16":
        return array
    try:
        import ml_dtypes
    except ImportError:
        raise ImportError("dtype bfloat16 needs the ml_dtypes package (pip install ml_dtypes)") from None
    return array.view(ml_dtypes.bfloat16)


def host_array(name: str, value: Any) -> np.ndarray:
    """`value` as a C-contiguous host array in native byte order, sharing its memory where it can.

    NumPy arrays are used as they are; DLPack producers (JAX, PyTorch) through np.from_dlpack,
    which shares host memory; anything else with __array__ or the buffer protocol through
    np.asarray; nested sequences become float32. A copy is made only where one is needed: for
    non-contiguous arrays, non-native byte order, device memory, or types NumPy cannot share.
    """
    if isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__dlpack__"):
        try:
            array = np.from_dlpack(value)
        except (BufferError, TypeError, ValueError, RuntimeError):
            array = np.asarray(value)  # e.g. bfloat16 (NumPy has no DLPack type for it), or a GPU array
    elif isinstance(value, (list, tuple)):
        array = np.asarray(value, dtype=np.float32)
    else:
        try:
            array = np.asarray(value)
        except Exception as e:
            raise TypeError(f"parameter {name!r}: expected an array (NumPy, DLPack, __array__ or a buffer), "
                            f"got {type(value).__name__}: {e}") from None
        if array.dtype == object:
            raise TypeError(f"parameter {name!r}: expected an array (NumPy, DLPack, __array__ or a buffer), "
                            f"got {type(value).__name__}")
    if array.dtype.byteorder == (">" if np.little_endian else "<"):
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array


def tensor_view(name: str, value: Any) -> tuple[str, str, list[int], np.ndarray]:
    """(name, safetensors dtype, shape, the memory as uint8) for Model.from_parameters."""
    if not isinstance(name, str):
        raise TypeError(f"parameter names must be strings, got {name!r}")
    array = host_array(name, value)
    dtype = _SAFETENSORS.get(array.dtype.name, array.dtype.name)
    return name, dtype, list(array.shape), array.reshape(-1).view(np.uint8)


def token_ids(ids: Any, what: str = "ids") -> list[int]:
    """A sequence of token ids (ints, or an integer array) as a list of Python ints in int32 range."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise TypeError(f"{what}: expected a 1-D integer array, got {ids.ndim}-D {ids.dtype}")
        values = ids.tolist()
    elif isinstance(ids, Sequence) and not isinstance(ids, (str, bytes)):
        values = list(ids)
    else:
        raise TypeError(f"{what}: expected a sequence of token ids, got {type(ids).__name__}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{what}: token ids are integers, got {value!r}")
        if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
            raise InvalidArgumentError(f"{what}: token id {value} is outside the vocabulary")
    return [int(v) for v in values]


def is_token_ids(value: Any) -> bool:
    """Whether `value` is one sequence of token ids (not text, not a list of prompts)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1
    return (isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0 and
            all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value))
