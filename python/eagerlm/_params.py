"""init_params and param_shapes: GPT-2 parameters as NumPy arrays, exactly as `eagerlm init` makes them."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import _core
from ._arrays import as_numpy, numpy_dtype_name, storage_dtype
from ._config import ConfigLike, resolve_config
from ._model import _seed


class ParamShape(NamedTuple):
    """One parameter a config implies, without its values."""

    shape: tuple[int, ...]
    dtype: str  #: "float32", "float16" or "bfloat16"
    nbytes: int


def param_shapes(preset_or_config: ConfigLike, dtype: Any = "float32") -> dict[str, ParamShape]:
    """Every parameter of a config, {Hugging Face name: ParamShape}, nothing allocated: the dry run
    (what `eagerlm init --dry-run` lists). Names have no "transformer." prefix; Conv1D weights are
    [in, out]. preset_or_config: "gpt2" (or another preset), a config.json path, or a dict.
    """
    code = storage_dtype(dtype)
    return {p.name: ParamShape(tuple(p.shape), numpy_dtype_name(p.dtype), p.bytes)
            for p in _core.parameter_shapes(resolve_config(preset_or_config), code)}


def init_params(preset_or_config: ConfigLike, seed: int = 0, dtype: Any = "float32") -> dict[str, np.ndarray]:
    """Fresh GPT-2 parameters, {Hugging Face name: array}, bit for bit those `eagerlm init --seed
    SEED --dtype ...` writes (and Model.initialize computes with, in float32).

    Hugging Face's initialization, N(0, initializer_range) with the residual projections scaled
    by 1/sqrt(2 n_layer), drawn with JAX's random numbers: each parameter is
    jax.random.normal(fold_in(jax.random.key(seed), fnv1a32(name)), shape) * stddev, computed in
    memory with no compilation. dtype: float32, float16 or bfloat16 (bfloat16 needs ml_dtypes),
    rounded to nearest even. The arrays share one block of memory (no copy) and are writable.
    """
    code = storage_dtype(dtype)
    arrays = _core.initialize_parameters(resolve_config(preset_or_config), _seed(seed), code)
    return {name: as_numpy(array, code) for name, array in arrays}
