"""eagerlm.Model: a GPT-2 model and its tokenizer, loaded, initialized or built over arrays."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union, overload

import numpy as np

from . import _core
from ._arrays import is_token_ids, tensor_view, token_ids
from ._config import ConfigLike, resolve_config

TokenIds = Union[Sequence[int], "np.ndarray"]


@dataclass(frozen=True)
class ModelInfo:
    """A model's shape and origin (Model.info)."""

    n_layer: int
    n_embd: int
    n_head: int
    context_length: int  #: n_positions: the longest sequence the model takes
    vocab_size: int
    eos_token_id: int
    parameter_count: int
    device: str  #: "cpu" or "cuda"
    source: str  #: the directory, or e.g. "gpt2 initialized from seed 0"
    weights: str  #: the weight matrices' type: "f32", "bf16", "f16" or "int8"
    kv_type: str  #: the KV cache's: "f32", "bf16" or "f16"
    gemm_math: str  #: the matrix products': "fp32", "tf32" or "bf16"


def _load_options(weights: str | None, kv_type: str | None, gemm_math: str | None) -> _core.LoadOptions:
    """LoadOptions from the keyword arguments; the names are checked by the engine (InvalidArgumentError)."""
    options = _core.LoadOptions()
    for name, value in (("weights", weights), ("kv_type", kv_type), ("gemm_math", gemm_math)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name}: expected a name such as 'bf16', got {type(value).__name__}")
    options.weights = weights or ""
    options.kv_type = kv_type or "f32"
    options.gemm_math = gemm_math or "fp32"
    return options


class Model:
    """A GPT-2-style model with its tokenizer: a cheap handle to immutable weights.

    Make one with Model.load (a Hugging Face directory), Model.initialize (fresh weights, as
    `eagerlm init`) or Model.from_params (arrays you hold). One Model may serve any number of
    Generators and threads at once.
    """

    __slots__ = ("_native", "__weakref__")

    def __init__(self) -> None:
        raise TypeError("make a Model with Model.load, Model.initialize or Model.from_params")

    @classmethod
    def _wrap(cls, native: _core.Model) -> Model:
        model = cls.__new__(cls)
        model._native = native
        return model

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "cpu", *, weights: str | None = None,
             kv_type: str | None = None, gemm_math: str | None = None) -> Model:
        """Loads a Hugging Face GPT-2 directory.

        The directory holds config.json and model.safetensors (or shards listed in
        model.safetensors.index.json), float32, float16 or bfloat16, and its tokenizer files if
        it has any (else GPT-2's built-in vocabulary is used). device: "cpu" or "cuda".
        weights: "f32", "bf16", "f16" or "int8" to convert the weight matrices at load (default:
        as the checkpoint stores them); kv_type: "f32" (default), "bf16" or "f16" for the cache;
        gemm_math: "fp32" (default), on CUDA "tf32" or "bf16" (tensor cores), on the CPU "bf16"
        for bf16 weights where it has AMX or AVX512_BF16 (inputs rounded to bf16).

        Raises IoError for a missing path, InvalidFileError for a malformed file (naming the file
        and the field or tensor), UnsupportedError for "cuda" without a GPU or a gemm_math the
        device lacks for these weights, InvalidArgumentError for an unknown name.
        """
        return cls._wrap(_core.Model.load(os.fspath(path), device, _load_options(weights, kv_type, gemm_math)))

    @classmethod
    def initialize(cls, preset_or_config: ConfigLike = "gpt2", seed: int = 0, device: str = "cpu", *,
                   weights: str | None = None, kv_type: str | None = None,
                   gemm_math: str | None = None) -> Model:
        """A model with fresh random weights, the same as `eagerlm init --seed SEED` draws.

        preset_or_config: "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", a config.json path
        (or a directory holding one), or a dict of config.json fields. Hugging Face's
        initialization, drawn with JAX's random numbers. GPT-2's tokenizer. weights, kv_type
        and gemm_math as for Model.load (random weights are drawn in float32, then converted).
        """
        seed = _seed(seed)
        options = _load_options(weights, kv_type, gemm_math)
        if isinstance(preset_or_config, Mapping):
            return cls._wrap(_core.Model.initialize(resolve_config(preset_or_config), seed, device, options))
        if not isinstance(preset_or_config, (str, os.PathLike)):
            raise TypeError(f"preset_or_config: expected a preset name, a path or a dict, "
                            f"got {type(preset_or_config).__name__}")
        return cls._wrap(_core.Model.initialize(os.fspath(preset_or_config), seed, device, options))

    @classmethod
    def from_params(cls, params: Mapping[str, Any], config: ConfigLike, device: str = "cpu") -> Model:
        """A model over parameters you hold, with GPT-2's tokenizer.

        params maps Hugging Face names ("wte.weight", "h.0.attn.c_attn.weight", ...; all with
        the "transformer." prefix or all without; "lm_head.weight" only if equal to wte) to
        arrays: NumPy arrays, DLPack producers such as JAX or PyTorch arrays, or anything with
        __array__ or the buffer protocol, in float32, float16 or bfloat16, with the shapes the
        config implies (Conv1D weights [in, out]). config: a dict of config.json fields, a
        config.json path, or a preset name.

        Zero-copy: contiguous float32 host arrays (NumPy, or JAX/PyTorch CPU arrays through
        DLPack) are used in place, not copied. The model keeps them alive, and they must not be
        changed while it (or a Generator over it) lives. Other arrays are converted or copied once.

        Raises InvalidArgumentError naming the tensor and what was expected (a missing
        parameter, a wrong shape or dtype, an unexpected name), or the config field.
        """
        if not isinstance(params, Mapping):
            raise TypeError(f"params: expected a mapping of names to arrays, got {type(params).__name__}")
        tensors = [tensor_view(name, value) for name, value in params.items()]
        return cls._wrap(_core.Model.from_parameters(resolve_config(config), tensors, device))

    @property
    def info(self) -> ModelInfo:
        """Layers, width, heads, context length, vocabulary, eos id, parameter count, device, source,
        weight and KV cache types, GEMM math."""
        i = self._native.info()
        return ModelInfo(i.n_layer, i.n_embd, i.n_head, i.context_length, i.vocab_size, i.eos_token_id,
                         i.parameter_count, i.device, i.source, i.weights, i.kv_type, i.gemm_math)

    def tokenize(self, text: str, *, parse_special: bool = False) -> list[int]:
        """GPT-2 byte-level BPE ids of `text`; "<|endoftext|>" is plain text unless parse_special."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected str, got {type(text).__name__}")
        return self._native.tokenize(text, bool(parse_special))

    def detokenize(self, ids: TokenIds) -> str:
        """The text of `ids`; bytes that are not valid UTF-8 (a character cut between tokens) become U+FFFD."""
        return self.detokenize_bytes(ids).decode("utf-8", errors="replace")

    def detokenize_bytes(self, ids: TokenIds) -> bytes:
        """The raw bytes `ids` stand for, concatenated (may end inside a UTF-8 character)."""
        return self._native.detokenize(token_ids(ids))

    @overload
    def logits(self, ids: TokenIds) -> np.ndarray: ...
    @overload
    def logits(self, ids: Sequence[TokenIds]) -> list[np.ndarray]: ...

    def logits(self, ids: Any) -> Any:
        """Next-token logits at every position: float32 [len(ids), vocab_size]; row t scores the
        token after ids[:t + 1].

        A list of sequences (any lengths) runs as one batch and gives one array each. Each call
        runs its own forward pass, so calls from several threads may overlap (the GIL is released).
        The array owns the engine's result: no copy is made on the way to Python.
        """
        if is_token_ids(ids) or (isinstance(ids, Sequence) and len(ids) == 0):
            return self._native.logits(token_ids(ids))
        if isinstance(ids, np.ndarray) and ids.ndim == 2:
            ids = list(ids)
        if not isinstance(ids, Sequence) or isinstance(ids, (str, bytes)):
            raise TypeError(f"ids: expected token ids or a list of them, got {type(ids).__name__}")
        return self._native.logits_batch([token_ids(s, f"ids[{i}]") for i, s in enumerate(ids)])

    def __repr__(self) -> str:
        i = self._native.info()
        return f"<eagerlm.Model {i.source!r}: {i.n_layer} layers x {i.n_embd}, {i.parameter_count} parameters on {i.device}>"


def _seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        from ._errors import InvalidArgumentError
        raise InvalidArgumentError(f"seed: expected an integer in [0, 2**64), got {seed!r}")
    return int(seed)
