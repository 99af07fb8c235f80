"""eagerlm.Engine: continuous batching over one model for concurrent callers (eagerlm::Engine).

Requests are submitted from any thread and run together on the engine's worker thread, each
with its own options; a request's results are the same, bit for bit on the CPU, as a Generator
gives for it alone. Options are Generator.generate's (converted by the same make_options)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union, Unpack

import numpy as np

from . import _core
from ._arrays import token_ids
from ._errors import InvalidArgumentError
from ._model import Model
from ._options import GenerateKwargs, _count, options_from_kwargs
from ._results import Result, TokenEvent, TokenLogprob, result_of


@dataclass(frozen=True)
class StepCounts:
    """Steps of one kind since the engine started."""

    steps: int
    rows: int  #: tokens they carried
    seconds: float  #: the model's time on them (host-side sampling left out)


@dataclass(frozen=True)
class EngineStats:
    """What an Engine is doing now, and has done since it started (counts of tokens and steps)."""

    queued: int  #: requests waiting for a slot
    running: int  #: requests holding slots
    busy_slots: int
    max_batch: int
    steps: int  #: forward passes run
    prefill_tokens: int  #: prompt tokens run through the model
    cached_tokens: int  #: prompt tokens reused from the prompt cache instead
    generated_tokens: int
    #: The steps by what they carried: decode rows only, decode rows beside a prompt chunk, prompt
    #: chunks only (decode-only steps read every weight for a few rows; prompt chunks are arithmetic).
    decode_steps: StepCounts
    mixed_steps: StepCounts
    prompt_steps: StepCounts


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class Request:
    """A submitted request. ``wait()`` for its results, or iterate it for its tokens as they come
    (``for event in request:``, TokenEvent items whose texts concatenate to each result's text);
    ``cancel()`` ends it with what it has so far (finish_reason "cancelled"). Thread-safe.

    While waiting the GIL is released; on the main thread Ctrl-C interrupts the wait, cancels the
    request and raises KeyboardInterrupt.
    """

    __slots__ = ("_native", "_logprobs", "_top_logprobs")

    def __init__(self, native: _core.Request, logprobs: bool, top_logprobs: bool) -> None:
        self._native = native
        self._logprobs = logprobs
        self._top_logprobs = top_logprobs

    @property
    def id(self) -> int:
        """The engine's number for it, unique per engine."""
        return self._native.id

    @property
    def done(self) -> bool:
        """Whether it has ended (finished, cancelled or failed)."""
        return self._native.done

    def cancel(self) -> None:
        """Ends it now: its results so far, finish_reason "cancelled". No effect once done."""
        self._native.cancel()

    def wait(self) -> list[Result]:
        """Blocks until it is done; its results (one per sample, or per returned beam), or raises the
        error that ended it. May be called again, and after iterating."""
        try:
            results = self._native.wait(_on_main_thread())
        except KeyboardInterrupt:
            self.cancel()
            raise
        return [result_of(r, self._logprobs, self._top_logprobs) for r in results]

    def next(self, timeout: Optional[float] = None) -> Optional[TokenEvent]:
        """The next token within `timeout` seconds (None: until one comes), or None when it timed out
        or the request is done and every token was taken."""
        try:
            t = self._native.next(timeout, _on_main_thread())
        except KeyboardInterrupt:
            self.cancel()
            raise
        if t is None:
            return None
        top = [TokenLogprob(*a) for a in t.top] if self._top_logprobs else None
        return TokenEvent(0, t.sample, t.token, t.text, t.logprob if self._logprobs else None, top)

    def __iter__(self) -> Request:
        return self

    def __next__(self) -> TokenEvent:
        event = self.next()
        if event is None:
            raise StopIteration
        return event

    def __repr__(self) -> str:
        return f"<eagerlm.Request id={self.id} {'done' if self.done else 'running'}>"


class Engine:
    """Continuous batching over one Model: up to max_batch requests decode together over one KV
    cache allocated once (max_length tokens per slot, prompt + generated; None: the model's
    context length). A request joins the running batch at the next step, its prompt prefilled in
    chunks of at most prefill_chunk tokens between the others' decode steps (None: the device's
    choice, 64 on the CPU and 256 on CUDA, since each chunk delays every running stream); a
    prompt starting with tokens still cached from an earlier request reuses them (prompt_cache).
    Beyond max_queue waiting requests (None: no limit), submit() raises BusyError.

    Any thread may submit at any time; the engine computes on its own worker thread, without the
    GIL. ``with eagerlm.Engine(model) as engine:`` drains it at the end of the block (waits for
    the requests still running; cancels them if the block raised). Dropping the Engine cancels
    what is still queued or running; Request handles stay usable.
    """

    __slots__ = ("_native", "_model")

    def __init__(self, model: Model, max_batch: int = 8, max_length: Optional[int] = None,
                 prefill_chunk: Optional[int] = None, max_queue: Optional[int] = None,
                 prompt_cache: bool = True) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model: expected an eagerlm.Model, got {type(model).__name__}")
        if not isinstance(prompt_cache, bool):
            raise TypeError(f"prompt_cache: expected True or False, got {prompt_cache!r}")
        length = 0 if max_length is None else _count("max_length", max_length)
        queue = None if max_queue is None else _count("max_queue", max_queue)
        chunk = 0 if prefill_chunk is None else _count("prefill_chunk", prefill_chunk)
        if prefill_chunk is not None and chunk < 1:
            raise InvalidArgumentError(f"prefill_chunk must be at least 1 (None: the device's), got {chunk}")
        self._model = model
        self._native = _core.Engine(model._native, _count("max_batch", max_batch), length,
                                    chunk, queue, prompt_cache)

    @property
    def model(self) -> Model:
        return self._model

    def submit(self, prompt: Union[str, Sequence[int], np.ndarray], **options: Unpack[GenerateKwargs]) -> Request:
        """Queues a request and returns at once.

        prompt: a string or token ids (a list of ints or a 1-D integer array); an empty string
        starts from the end-of-text token. options: exactly Generator.generate's keyword options,
        with its defaults (help(eagerlm.Generator.generate)); n samples or num_beams beams give
        several results. A bad option raises InvalidArgumentError naming it (a wrong type:
        TypeError); a full queue, or an engine drained or closed, raises BusyError.
        """
        native_options = options_from_kwargs("submit", options)
        logprobs = bool(native_options.logprobs)
        top = native_options.top_logprobs > 0
        if isinstance(prompt, str):
            native = self._native.submit(prompt, native_options)
        elif isinstance(prompt, np.ndarray) or (isinstance(prompt, Sequence) and not isinstance(prompt, bytes)):
            native = self._native.submit_tokens(token_ids(prompt, "prompt"), native_options)
        else:
            raise TypeError(f"prompt: expected a string or token ids, got {type(prompt).__name__}")
        return Request(native, logprobs, top)

    def stats(self) -> EngineStats:
        """Requests queued and running, slots in use, and the counts since the engine started."""
        s = self._native.stats()
        def counts(c: Any) -> StepCounts:
            return StepCounts(c.steps, c.rows, c.seconds)

        return EngineStats(s.queued, s.running, s.busy_slots, s.max_batch, s.steps, s.prefill_tokens,
                           s.cached_tokens, s.generated_tokens, counts(s.decode_steps), counts(s.mixed_steps),
                           counts(s.prompt_steps))

    def drain(self, timeout: Optional[float] = None) -> None:
        """Stops taking requests (submit raises BusyError from now on), lets the running ones finish,
        waiting at most `timeout` seconds (None: as long as they take), then cancels what is left."""
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
            raise TypeError(f"timeout: expected a number of seconds or None, got {timeout!r}")
        self._native.drain(None if timeout is None else float(timeout))

    def close(self) -> None:
        """drain(0): stops taking requests and cancels every request still queued or running."""
        self.drain(0)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.drain(0 if exc_type is not None else None)

    def __repr__(self) -> str:
        s = self._native.stats()
        return f"<eagerlm.Engine max_batch={s.max_batch} running={s.running} queued={s.queued} over {self._model!r}>"
