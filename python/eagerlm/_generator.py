"""eagerlm.Generator: text generation with a KV cache allocated once, Hugging Face's option names."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

import numpy as np

from . import _core
from ._arrays import is_token_ids, token_ids
from ._model import Model
from ._options import _count, make_options
from ._results import Result, result_of
from ._stream import Stream

Prompt = Union[str, Sequence[int], "np.ndarray"]
Prompts = Union[Prompt, Sequence[str], Sequence[Sequence[int]]]
LogitBias = Union[Mapping[int, float], Sequence[tuple[int, float]], None]


def _prompts(prompt: Any) -> tuple[bool, list[Any], bool]:
    """(as text?, the prompts, was one prompt given?)"""
    if isinstance(prompt, str):
        return True, [prompt], True
    if is_token_ids(prompt):
        return False, [token_ids(prompt, "prompt")], True
    if isinstance(prompt, np.ndarray) and prompt.ndim == 2:
        prompt = list(prompt)
    if isinstance(prompt, Sequence) and not isinstance(prompt, bytes):
        items = list(prompt)
        if all(isinstance(p, str) for p in items):
            return True, items, False
        if all(is_token_ids(p) for p in items):
            return False, [token_ids(p, f"prompt {i}") for i, p in enumerate(items)], False
    raise TypeError("prompt: expected a string, token ids, or a list of strings or of token-id lists, "
                    f"got {type(prompt).__name__}")


class Generator:
    """Generates text from one Model, with the KV cache for up to max_batch sequences of
    max_length tokens (prompt + generated; None: the model's context length) allocated once.

    A Generator runs one call at a time; give each thread its own (they may share the Model).
    Calls release the GIL while the engine computes, so generators in several threads run in
    parallel. Ctrl-C stops a generation within one token and raises KeyboardInterrupt; the
    generator stays usable.
    """

    __slots__ = ("_native", "_model")

    def __init__(self, model: Model, max_batch: int = 1, max_length: Optional[int] = None) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model: expected an eagerlm.Model, got {type(model).__name__}")
        self._model = model
        length = 0 if max_length is None else _count("max_length", max_length)
        self._native = _core.Generator(model._native, _count("max_batch", max_batch), length)

    @property
    def model(self) -> Model:
        return self._model

    @property
    def max_batch(self) -> int:
        return self._native.max_batch

    @property
    def max_length(self) -> int:
        return self._native.max_length

    def generate(self, prompt: Prompts, *, max_new_tokens: int = 128, temperature: float = 0.0, top_k: int = 0,
                 top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                 presence_penalty: float = 0.0, frequency_penalty: float = 0.0, logit_bias: LogitBias = None,
                 no_repeat_ngram_size: int = 0, min_new_tokens: int = 0, seed: Optional[int] = None,
                 stop: Union[str, Sequence[str], None] = None, stop_token_ids: Optional[Sequence[int]] = None,
                 ignore_eos: bool = False, logprobs: bool = False, top_logprobs: int = 0, n: int = 1,
                 num_beams: int = 1, length_penalty: float = 1.0, early_stopping: bool = False,
                 num_return_sequences: int = 1) -> Union[Result, list[Result]]:
        """Generates continuations of a prompt, or of several prompts at once.

        prompt: a string, token ids (a list of ints or a 1-D integer array), or a list of either
        (at most max_batch prompts, or max_batch / n with n samples each). An empty string starts
        from the end-of-text token, as GPT-2's unconditional samples do.

        Returns one Result for one prompt with one result (n = 1, num_return_sequences = 1),
        else a list of Results: prompt by prompt, each prompt's samples (or beams) in order.

        Options, named and defaulting as in Hugging Face's generate() with do_sample=False
        (greedy), checked by the engine (InvalidArgumentError names the option):

        max_new_tokens      tokens to generate per result, at most (128)
        min_new_tokens      end-of-text and stop ids are suppressed before this many (0)
        temperature         0: greedy; > 0: sample at this temperature (0)
        top_k               keep the k most likely tokens; 0: off
        top_p               nucleus: the smallest set with this probability mass; 1: off
        min_p               drop tokens below min_p x the top probability; 0: off
        repetition_penalty  Hugging Face's rule on every token of the prompt and output; 1: off
        presence_penalty    OpenAI's: minus this from every token generated so far; 0: off
        frequency_penalty   OpenAI's: minus this times each generated token's count; 0: off
        logit_bias          {token_id: bias} added to those logits
        no_repeat_ngram_size  never repeat an n-gram of this size; 0: off
        seed                sampling seed; the same seed, prompt and options give the same ids.
                            None: a random one, reported in Result.seed
        stop                a string or strings; the text is cut before the first one found
        stop_token_ids      ids that end a result as end-of-text does
        ignore_eos          keep going after end-of-text
        logprobs            fill Result.logprobs with log p(id) under the model
        top_logprobs        also the N most likely alternatives per token (at most 20)
        n                   independent samples per prompt, sharing one prefill
        num_beams           beam search with this many beams when > 1 (deterministic)
        length_penalty      beam score = sum of logprobs / length ** length_penalty
        early_stopping      beam search ends once num_beams hypotheses are finished
        num_return_sequences  beams returned per prompt (<= num_beams)

        Filters apply in Hugging Face's order: repetition penalty, temperature, top-k, top-p, min-p.
        """
        options = make_options(max_new_tokens=max_new_tokens, min_new_tokens=min_new_tokens, temperature=temperature,
                               top_k=top_k, top_p=top_p, min_p=min_p, repetition_penalty=repetition_penalty,
                               presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
                               logit_bias=logit_bias, no_repeat_ngram_size=no_repeat_ngram_size, seed=seed, stop=stop,
                               stop_token_ids=stop_token_ids, ignore_eos=ignore_eos, logprobs=logprobs,
                               top_logprobs=top_logprobs, n=n, num_beams=num_beams, length_penalty=length_penalty,
                               early_stopping=early_stopping, num_return_sequences=num_return_sequences)
        as_text, prompts, single = _prompts(prompt)
        on_main_thread = threading.current_thread() is threading.main_thread()
        run = self._native.generate_batch if as_text else self._native.generate_tokens
        results = run(prompts, options, None, on_main_thread) if prompts else []
        return _shape(results, single, options, logprobs, top_logprobs > 0)

    def stream(self, prompt: Prompts, *, max_new_tokens: int = 128, temperature: float = 0.0, top_k: int = 0,
               top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0, presence_penalty: float = 0.0,
               frequency_penalty: float = 0.0, logit_bias: LogitBias = None, no_repeat_ngram_size: int = 0,
               min_new_tokens: int = 0, seed: Optional[int] = None, stop: Union[str, Sequence[str], None] = None,
               stop_token_ids: Optional[Sequence[int]] = None, ignore_eos: bool = False, logprobs: bool = False,
               top_logprobs: int = 0, n: int = 1, num_beams: int = 1, length_penalty: float = 1.0,
               early_stopping: bool = False, num_return_sequences: int = 1) -> Stream:
        """Generates as generate() does, yielding each token's text as it comes.

        Returns a Stream, an iterator of TokenEvent (index, sample, token, text, logprob,
        top_logprobs); after the loop, stream.results holds what generate() would have returned.
        Generation runs on a worker thread while you iterate; closing the stream early
        (stream.close(), a with block, break and drop it, or Ctrl-C) stops it after the token in
        progress. Errors of the generation (a bad option) are raised by the iteration. Beam search
        streams nothing until it ends (beams change until then). Options: see generate().
        """
        options = make_options(max_new_tokens=max_new_tokens, min_new_tokens=min_new_tokens, temperature=temperature,
                               top_k=top_k, top_p=top_p, min_p=min_p, repetition_penalty=repetition_penalty,
                               presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
                               logit_bias=logit_bias, no_repeat_ngram_size=no_repeat_ngram_size, seed=seed, stop=stop,
                               stop_token_ids=stop_token_ids, ignore_eos=ignore_eos, logprobs=logprobs,
                               top_logprobs=top_logprobs, n=n, num_beams=num_beams, length_penalty=length_penalty,
                               early_stopping=early_stopping, num_return_sequences=num_return_sequences)
        as_text, prompts, single = _prompts(prompt)
        native = self._native.generate_batch if as_text else self._native.generate_tokens

        def run(callback: Any) -> list[_core.Result]:
            return native(prompts, options, callback, False) if prompts else []

        return Stream(run, lambda results: _shape(results, single, options, logprobs, top_logprobs > 0), logprobs,
                      top_logprobs > 0)

    def __repr__(self) -> str:
        return f"<eagerlm.Generator max_batch={self.max_batch} max_length={self.max_length} over {self._model!r}>"


def _shape(results: list[_core.Result], single: bool, options: _core.GenerateOptions, logprobs: bool,
           top_logprobs: bool) -> Union[Result, list[Result]]:
    out = [result_of(r, logprobs, top_logprobs) for r in results]
    per_prompt = options.num_return_sequences if options.num_beams > 1 else options.n
    return out[0] if single and per_prompt == 1 and len(out) == 1 else out
