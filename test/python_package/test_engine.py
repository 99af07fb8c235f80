"""eagerlm.Engine: requests submitted from several threads at once get exactly what a Generator
gives each alone (ids, text, logprobs: the CPU forward pass is batch-invariant), streamed tokens
make up the text, cancel ends a request with finish_reason "cancelled", a full queue raises
BusyError, bad options raise naming the option, and the options are Generator.generate's."""

import dataclasses
import inspect
import os
import signal
import threading
import time

import numpy as np
import pytest

import eagerlm
from eagerlm._options import OPTION_DEFAULTS

PROMPTS = ["The meaning of life is", "Once upon a time", "", "A B C D E F G", "Hello, my name is",
           "In 1869 the railway"]

CASES = {
    "greedy": dict(max_new_tokens=12, logprobs=True),
    "sampled": dict(max_new_tokens=12, temperature=0.9, top_k=40, seed=5, logprobs=True, top_logprobs=3,
                    ignore_eos=True),
    "two samples": dict(max_new_tokens=8, temperature=1.1, top_p=0.9, seed=9, n=2, logprobs=True, ignore_eos=True),
    "beams": dict(max_new_tokens=8, num_beams=3, num_return_sequences=2),  # (compared: the ids and scores)
}


@pytest.fixture(scope="module")
def gpt2():
    """Big enough that a long request is still running while a test acts on it (tens of ms per token)."""
    return eagerlm.Model.initialize("gpt2", seed=3)


def alone(model, prompt, options):
    result = eagerlm.Generator(model, max_batch=4).generate(prompt, **options)
    return result if isinstance(result, list) else [result]


def unseeded(results):
    """Results with the seed left out: without a seed each call draws its own (greedy ignores it)."""
    return [dataclasses.replace(r, seed=0) for r in results]


def until(condition, what, timeout=60.0):
    """Waits for the engine's worker to get somewhere (stats are published after each step)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.002)


def submit_from_threads(engine, prompts, options):
    """Every prompt submitted from its own thread at the same moment; the results of each."""
    out = [None] * len(prompts)
    errors = []
    barrier = threading.Barrier(len(prompts))

    def work(i):
        try:
            barrier.wait()
            out[i] = engine.submit(prompts[i], **options).wait()
        except BaseException as e:  # reported by the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_concurrent_requests_get_what_a_generator_gives_each_alone(text_model, case):
    options = CASES[case]
    expected = [alone(text_model, p, options) for p in PROMPTS]
    # Fewer slots than requests: some wait in the queue and join a running batch later.
    with eagerlm.Engine(text_model, max_batch=4, prefill_chunk=5) as engine:
        got = submit_from_threads(engine, PROMPTS, options)
        assert engine.stats().generated_tokens > 0
    for prompt, g, e in zip(PROMPTS, got, expected):
        assert [r.ids for r in g] == [r.ids for r in e], prompt
        assert [r.logprobs for r in g] == [r.logprobs for r in e], prompt
        if "seed" in options:
            assert g == e, prompt  # text, finish reason, top_logprobs, score, seed, sample too
        else:
            assert unseeded(g) == unseeded(e), prompt
    if options.get("logprobs"):
        assert all(r.logprobs is not None and len(r.logprobs) == len(r.ids) for g in got for r in g)


def test_token_id_prompts_on_odd_sizes(odd_model):
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, 1000, size=k).tolist() for k in (1, 7, 30, 3)]
    options = dict(max_new_tokens=10, temperature=0.7, seed=2, logprobs=True)
    expected = [alone(odd_model, p, options) for p in prompts]
    with eagerlm.Engine(odd_model, max_batch=3) as engine:
        got = submit_from_threads(engine, [np.array(p, dtype=np.int32) if i % 2 else p for i, p in enumerate(prompts)],
                                  options)
    assert got == expected


def test_streamed_tokens_make_up_the_results(text_model):
    options = dict(max_new_tokens=20, temperature=0.8, seed=4, n=2, logprobs=True, top_logprobs=2, stop=[" the"])
    with eagerlm.Engine(text_model) as engine:
        request = engine.submit("Once upon a time", **options)
        events = list(request)
        results = request.wait()
    assert request.done
    assert results == alone(text_model, "Once upon a time", options)
    for r in results:
        mine = [e for e in events if e.sample == r.sample]
        assert "".join(e.text for e in mine) == r.text
        ids = [e.token for e in mine if e.token != -1]
        assert ids == r.ids[:len(ids)]  # (a stop string's tokens may be cut from ids, not from the stream)
        assert [e.logprob for e in mine if e.token != -1] == r.logprobs[:len(ids)]
        assert all(len(e.top_logprobs) == 2 for e in mine if e.token != -1)
    assert all(e.index == 0 for e in events)


def test_next_times_out_and_returns_none_at_the_end(text_model):
    with eagerlm.Engine(text_model) as engine:
        request = engine.submit("Hi", max_new_tokens=3, ignore_eos=True)
        first = request.next(timeout=30)
        assert first is not None and isinstance(first.text, str) and first.logprob is None
        request.wait()
        rest = []
        while (event := request.next(timeout=0)) is not None:
            rest.append(event)
        assert [first.token] + [e.token for e in rest if e.token != -1] == request.wait()[0].ids
        assert request.next() is None


def test_cancel_ends_a_request_with_finish_reason_cancelled(gpt2):
    with eagerlm.Engine(gpt2, max_batch=1, max_length=1024) as engine:
        running = engine.submit("Once upon a time", max_new_tokens=1000, ignore_eos=True)
        queued = engine.submit("Hello", max_new_tokens=5)
        assert running.next(timeout=60) is not None  # running: the other waits for its slot
        queued.cancel()
        running.cancel()
        for request in (running, queued):
            [result] = request.wait()
            assert result.finish_reason == "cancelled"
            assert request.done
        assert 1 <= len(running.wait()[0].ids) < 1000
        assert queued.wait()[0].ids == []
        running.cancel()  # no effect once done


def test_a_full_queue_raises_busy(gpt2):
    engine = eagerlm.Engine(gpt2, max_batch=1, max_length=1024, max_queue=1)
    running = engine.submit("Once upon a time", max_new_tokens=1000, ignore_eos=True)
    assert running.next(timeout=60) is not None  # holds the one slot
    until(lambda: engine.stats().running == 1, "the first request to hold the slot")
    waiting = engine.submit("Hello", max_new_tokens=2)
    until(lambda: engine.stats().queued == 1, "the second request to be queued")
    with pytest.raises(eagerlm.BusyError, match="queue is full") as e:
        engine.submit("Full", max_new_tokens=2)
    assert e.value.code is eagerlm.ErrorCode.BUSY and isinstance(e.value, eagerlm.Error)
    assert engine.stats().queued == 1 and engine.stats().running == 1
    engine.close()  # cancels both
    assert running.wait()[0].finish_reason == waiting.wait()[0].finish_reason == "cancelled"
    with pytest.raises(eagerlm.BusyError, match="shutting down"):
        engine.submit("After", max_new_tokens=2)


@pytest.mark.parametrize("options, error, name", [
    (dict(top_p=1.5), eagerlm.InvalidArgumentError, "top_p"),
    (dict(temperature=-1.0), eagerlm.InvalidArgumentError, "temperature"),
    (dict(top_logprobs=21), eagerlm.InvalidArgumentError, "top_logprobs"),
    (dict(num_return_sequences=3, num_beams=2), eagerlm.InvalidArgumentError, "num_return_sequences"),
    (dict(max_new_tokens="many"), TypeError, "max_new_tokens"),
    (dict(max_new_tokens=-1), eagerlm.InvalidArgumentError, "max_new_tokens"),
    (dict(temprature=0.5), TypeError, "temprature"),
    (dict(stop=[3]), TypeError, "stop"),
])
def test_bad_options_raise_naming_the_option(text_model, options, error, name):
    with eagerlm.Engine(text_model, max_batch=1) as engine:
        with pytest.raises(error, match=name):
            engine.submit("Hello", **options)
        assert engine.stats().queued == 0 and engine.stats().running == 0


def test_bad_prompts_and_settings(text_model):
    with eagerlm.Engine(text_model, max_batch=1, max_length=16) as engine:
        with pytest.raises(TypeError, match="prompt"):
            engine.submit(3.5)
        with pytest.raises(TypeError, match="prompt"):
            engine.submit(["a", "b"])
        with pytest.raises(eagerlm.InvalidArgumentError, match="vocabulary"):
            engine.submit([50257]).wait()
        with pytest.raises(eagerlm.InvalidArgumentError):
            engine.submit("word " * 40).wait()  # longer than max_length 16
    with pytest.raises(eagerlm.InvalidArgumentError, match="max_batch"):
        eagerlm.Engine(text_model, max_batch=0)
    with pytest.raises(eagerlm.InvalidArgumentError, match="max_length"):
        eagerlm.Engine(text_model, max_length=10_000)
    with pytest.raises(eagerlm.InvalidArgumentError, match="prefill_chunk"):
        eagerlm.Engine(text_model, prefill_chunk=0)
    with pytest.raises(TypeError, match="model"):
        eagerlm.Engine("gpt2")


def test_submit_takes_generates_options_with_its_defaults():
    parameters = inspect.signature(eagerlm.Generator.generate).parameters
    defaults = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert defaults == OPTION_DEFAULTS


def test_the_prompt_cache_reuses_a_prompt_and_stats_count_it(text_model):
    prompt = "The meaning of life is to find your gift. The purpose of life is to give it away."
    with eagerlm.Engine(text_model, max_batch=2) as engine:
        first = engine.submit(prompt, max_new_tokens=4).wait()[0]
        second = engine.submit(prompt, max_new_tokens=4).wait()[0]
        stats = engine.stats()
    assert unseeded([first]) == unseeded([second])
    assert second.timings.cached_prompt_tokens > 0 and stats.cached_tokens > 0
    assert stats.max_batch == 2 and stats.steps > 0 and stats.generated_tokens == 8
    # Each step is of one kind; the two requests ran one after the other, so none was mixed.
    kinds = (stats.decode_steps, stats.mixed_steps, stats.prompt_steps)
    assert sum(k.steps for k in kinds) == stats.steps and stats.mixed_steps.steps == 0
    assert stats.prompt_steps.steps == 2 and stats.decode_steps.steps == 6
    assert sum(k.rows for k in kinds) == stats.prefill_tokens + stats.generated_tokens - 2
    assert stats.prompt_steps.seconds > 0 and stats.decode_steps.seconds > 0
    assert stats.queued == stats.running == stats.busy_slots == 0
    with eagerlm.Engine(text_model, prompt_cache=False) as engine:
        engine.submit(prompt, max_new_tokens=4).wait()
        assert engine.submit(prompt, max_new_tokens=4).wait()[0].timings.cached_prompt_tokens == 0


def test_drain_waits_then_takes_no_more(text_model):
    engine = eagerlm.Engine(text_model)
    requests = [engine.submit(p, max_new_tokens=6, ignore_eos=True) for p in PROMPTS]
    engine.drain()
    assert all(r.done for r in requests)
    assert [len(r.wait()[0].ids) for r in requests] == [6] * len(PROMPTS)
    with pytest.raises(eagerlm.BusyError):
        engine.submit("more")
    with pytest.raises(eagerlm.InvalidArgumentError, match="timeout"):
        engine.drain(-1.0)


def test_waiting_releases_the_gil(gpt2):
    """Python runs on another thread while one waits on a long request (wait() off the main
    thread blocks; on the main thread it polls for signals): that thread sees it unfinished."""
    with eagerlm.Engine(gpt2, max_length=1024) as engine:
        for waiter_is_main in (False, True):
            request = engine.submit("Once upon a time", max_new_tokens=1000, ignore_eos=True)
            seen = {}

            def spin_then_cancel():
                start, spins = time.perf_counter(), 0
                while time.perf_counter() - start < 0.3:
                    spins += 1
                seen.update(spins=spins, done=request.done)
                request.cancel()

            other = threading.Thread(target=spin_then_cancel if waiter_is_main else request.wait)
            other.start()
            if waiter_is_main:
                [result] = request.wait()
            else:
                spin_then_cancel()
                [result] = request.wait()
            other.join()
            assert seen["done"] is False and seen["spins"] > 1000, waiter_is_main
            assert result.finish_reason == "cancelled"


def test_ctrl_c_while_iterating_cancels_the_request(gpt2):
    with eagerlm.Engine(gpt2, max_length=1024) as engine:
        request = engine.submit("Once upon a time", max_new_tokens=1000, ignore_eos=True)
        assert request.next(timeout=60) is not None
        timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in request:
                pass
        timer.join()
        [result] = request.wait()
        assert result.finish_reason == "cancelled" and len(result.ids) < 1000
        assert engine.submit("Hi", max_new_tokens=2).wait()[0].finish_reason in ("length", "eos")


def test_a_request_outlives_its_engine(text_model):
    engine = eagerlm.Engine(text_model)
    request = engine.submit("Hello", max_new_tokens=4, ignore_eos=True)
    request.wait()
    del engine
    assert request.done and len(request.wait()[0].ids) == 4
    request.cancel()  # no engine: nothing to do
