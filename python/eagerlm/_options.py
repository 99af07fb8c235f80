"""Keyword arguments of generate() and stream() as the engine's GenerateOptions.

Only Python's side is checked here (types, and values a C++ size_t cannot hold); ranges are the
engine's rules (eagerlm::GenerateOptions), whose errors name the option as it is spelled here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional, TypedDict, Union

import numpy as np

from . import _core
from ._errors import InvalidArgumentError

_U64 = 2**64


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not 0 <= value < _U64:
        raise InvalidArgumentError(f"{name} must be >= 0, got {value}")
    return int(value)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    return float(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def _ids(name: str, values: Iterable[Any]) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name}: expected token ids (integers), got {v!r}")
        if not -2**31 <= v < 2**31:
            raise InvalidArgumentError(f"{name}: token id {v} is outside the vocabulary")
        out.append(int(v))
    return out


def _logit_bias(value: Union[Mapping[int, float], Iterable[tuple[int, float]], None]) -> list[tuple[int, float]]:
    if value is None:
        return []
    pairs = value.items() if isinstance(value, Mapping) else value
    out = []
    for pair in pairs:
        try:
            token, bias = pair
        except (TypeError, ValueError):
            raise TypeError(f"logit_bias: expected {{token_id: bias}} or (token_id, bias) pairs, got {pair!r}") from None
        out.append((_ids("logit_bias", [token])[0], _number("logit_bias", bias)))
    return out


def make_options(*, max_new_tokens: int, min_new_tokens: int, temperature: float, top_k: int, top_p: float,
                 min_p: float, repetition_penalty: float, presence_penalty: float, frequency_penalty: float,
                 logit_bias: Any, no_repeat_ngram_size: int, seed: Optional[int], stop: Any, stop_token_ids: Any,
                 ignore_eos: bool, logprobs: bool, top_logprobs: int, n: int, num_beams: int, length_penalty: float,
                 early_stopping: bool, num_return_sequences: int) -> _core.GenerateOptions:
    o = _core.GenerateOptions()
    o.max_new_tokens = _count("max_new_tokens", max_new_tokens)
    o.min_new_tokens = _count("min_new_tokens", min_new_tokens)
    o.temperature = _number("temperature", temperature)
    o.top_k = _count("top_k", top_k)
    o.top_p = _number("top_p", top_p)
    o.min_p = _number("min_p", min_p)
    o.repetition_penalty = _number("repetition_penalty", repetition_penalty)
    o.presence_penalty = _number("presence_penalty", presence_penalty)
    o.frequency_penalty = _number("frequency_penalty", frequency_penalty)
    o.logit_bias = _logit_bias(logit_bias)
    o.no_repeat_ngram_size = _count("no_repeat_ngram_size", no_repeat_ngram_size)
    o.seed = None if seed is None else _count("seed", seed)
    if isinstance(stop, str):
        stop = [stop]
    stop = list(stop or [])
    if not all(isinstance(s, str) for s in stop):
        raise TypeError(f"stop: expected a string or a list of strings, got {stop!r}")
    o.stop = stop
    o.stop_token_ids = _ids("stop_token_ids", stop_token_ids or [])
    o.ignore_eos = _flag("ignore_eos", ignore_eos)
    o.logprobs = _flag("logprobs", logprobs)
    o.top_logprobs = _count("top_logprobs", top_logprobs)
    o.n = _count("n", n)
    o.num_beams = _count("num_beams", num_beams)
    o.length_penalty = _number("length_penalty", length_penalty)
    o.early_stopping = _flag("early_stopping", early_stopping)
    o.num_return_sequences = _count("num_return_sequences", num_return_sequences)
    return o


class GenerateKwargs(TypedDict, total=False):
    """The keyword options of Generator.generate, for callers that take them as **options
    (Engine.submit); their meaning and defaults are generate()'s (OPTION_DEFAULTS)."""

    max_new_tokens: int
    min_new_tokens: int
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    repetition_penalty: float
    presence_penalty: float
    frequency_penalty: float
    logit_bias: Union[Mapping[int, float], Iterable[tuple[int, float]], None]
    no_repeat_ngram_size: int
    seed: Optional[int]
    stop: Union[str, Iterable[str], None]
    stop_token_ids: Optional[Iterable[int]]
    ignore_eos: bool
    logprobs: bool
    top_logprobs: int
    n: int
    num_beams: int
    length_penalty: float
    early_stopping: bool
    num_return_sequences: int


# generate()'s defaults (Hugging Face's, greedy), which test_engine.py checks against its signature.
OPTION_DEFAULTS: dict[str, Any] = {
    "max_new_tokens": 128, "min_new_tokens": 0, "temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0,
    "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0, "logit_bias": None,
    "no_repeat_ngram_size": 0, "seed": None, "stop": None, "stop_token_ids": None, "ignore_eos": False,
    "logprobs": False, "top_logprobs": 0, "n": 1, "num_beams": 1, "length_penalty": 1.0, "early_stopping": False,
    "num_return_sequences": 1}


def options_from_kwargs(caller: str, kwargs: Mapping[str, Any]) -> _core.GenerateOptions:
    """make_options over keyword options given as a mapping; an unknown name is a TypeError naming it."""
    for name in kwargs:
        if name not in OPTION_DEFAULTS:
            raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")
    return make_options(**{**OPTION_DEFAULTS, **kwargs})
