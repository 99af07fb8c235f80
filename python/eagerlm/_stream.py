"""Generator.stream's iterator: generation runs on a worker thread, whose per-token callback puts
each TokenEvent on a queue that the iterator reads. Closing the iterator (close(), leaving a with
block, dropping it, or Ctrl-C while it waits) makes that callback return False, which ends the
generation after the token in progress; the iterator then waits for the worker to finish."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Optional

from ._results import TokenEvent, TokenLogprob

NativeCallback = Callable[[int, int, int, str, float, Optional[list]], bool]


class _Shared:
    """What the worker and the iterator share (the worker never holds the iterator itself, so that
    dropping the iterator is seen)."""

    def __init__(self, logprobs: bool, top_logprobs: bool) -> None:
        self.events: queue.Queue[Any] = queue.Queue()  # (its get() is interruptible by Ctrl-C)
        self.stop = False
        self.logprobs = logprobs
        self.top_logprobs = top_logprobs

    def on_token(self, index: int, sample: int, token: int, text: str, logprob: float, top: Optional[list]) -> bool:
        if self.stop:
            return False
        alternatives = [TokenLogprob(*a) for a in top] if self.top_logprobs and top is not None else None
        self.events.put(TokenEvent(index, sample, token, text, logprob if self.logprobs else None, alternatives))
        return True


class _End:
    def __init__(self, results: Any = None, error: Optional[BaseException] = None) -> None:
        self.results = results
        self.error = error


def _work(shared: _Shared, run: Callable[[NativeCallback], Any]) -> None:
    try:
        shared.events.put(_End(results=run(shared.on_token)))
    except BaseException as e:  # handed to the reading thread, which raises it
        shared.events.put(_End(error=e))


class Stream:
    """The token events of a generation, as they come: ``for event in generator.stream(...)``.

    Each item is a TokenEvent. Once the iteration ends, ``results`` holds what generate() would
    have returned. An error of the generation (a bad option, say) is raised by the iteration.
    ``close()`` (or leaving ``with generator.stream(...) as s:``, or dropping the iterator) stops
    the generation after the token in progress; the results then end with finish_reason
    "callback".
    """

    def __init__(self, run: Callable[[NativeCallback], Any], finish: Callable[[Any], Any], logprobs: bool,
                 top_logprobs: bool) -> None:
        self._shared = _Shared(logprobs, top_logprobs)
        self._finish = finish
        self._done = False
        self._results: Any = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=_work, args=(self._shared, run), name="eagerlm-stream")
        self._thread.start()

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> TokenEvent:
        if self._done:
            raise StopIteration
        try:
            item = self._shared.events.get()
        except BaseException:  # KeyboardInterrupt while waiting: stop the generation too
            self.close()
            raise
        if isinstance(item, TokenEvent):
            return item
        self._end(item)
        raise StopIteration

    def _end(self, end: _End) -> None:
        self._done = True
        self._thread.join()
        self._error = end.error
        if end.error is not None:
            raise end.error
        self._results = self._finish(end.results)

    def close(self) -> None:
        """Stops the generation after the token in progress and waits for it to end."""
        if self._done:
            return
        self._shared.stop = True
        while True:
            item = self._shared.events.get()
            if isinstance(item, _End):
                break
        self._done = True
        self._thread.join()
        self._error = item.error
        if item.error is None:
            self._results = self._finish(item.results)

    @property
    def results(self) -> Any:
        """What generate() returns for the same call: available once the stream has ended or was closed."""
        if not self._done:
            raise RuntimeError("the stream is still running: iterate it to the end, or close() it")
        if self._error is not None:
            raise self._error
        return self._results

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # Dropped unfinished (a loop left with break): stop, and wait for the worker to let go of
        # the generator, so that the generator can be used again at once.
        if getattr(self, "_done", True):
            return
        self._shared.stop = True
        if threading.current_thread() is not self._thread:
            self.close()
