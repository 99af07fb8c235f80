"""The GIL and the engine: generators in two Python threads over one model give what they give
alone, and compute at the same time (the GIL is released while the engine computes); Ctrl-C
(KeyboardInterrupt) stops a generation within a token or so, and leaves the generator usable."""

import os
import signal
import threading
import time

import pytest

import eagerlm

PROMPTS = ["The meaning of life is", "Once upon a time"]


@pytest.fixture(scope="module")
def gpt2():
    return eagerlm.Model.initialize("gpt2", seed=3)


@pytest.fixture
def one_cpu_thread_per_call():
    eagerlm.set_cpu_threads(1)
    yield
    eagerlm.set_cpu_threads(0)


def generate(generator, prompt, seed):
    return generator.generate(prompt, max_new_tokens=24, temperature=0.875, top_k=50, seed=seed, ignore_eos=True)


def test_two_threads_give_the_sequential_results_and_compute_at_the_same_time(gpt2, one_cpu_thread_per_call):
    """Each thread computes on its own CPU thread (one CPU thread per call), so the CPU time the
    two threads spend inside generate() can exceed the wall-clock time of the pair only if they
    computed at the same time: with the GIL held, one would wait while the other computes and
    the sum would stay at most the wall time. Unlike the ratio to a sequential run, this needs
    only the parallel run to get two cores."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    generators = [eagerlm.Generator(gpt2, max_length=64) for _ in PROMPTS]
    for g, p in zip(generators, PROMPTS):
        generate(g, p, 0)  # warm: first-touch of the caches, OpenMP's teams
    alone = [generate(g, p, 11 + i) for i, (g, p) in enumerate(zip(generators, PROMPTS))]

    best = 0.0
    for attempt in range(5):  # against other load on the machine
        together = [None] * len(PROMPTS)
        cpu = [0.0] * len(PROMPTS)

        def work(i):
            start = time.thread_time()
            together[i] = generate(generators[i], PROMPTS[i], 11 + i)
            cpu[i] = time.thread_time() - start

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(PROMPTS))]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start

        assert [r.ids for r in together] == [r.ids for r in alone]
        assert [r.logprobs for r in together] == [r.logprobs for r in alone]
        overlap = sum(cpu) / wall
        best = max(best, overlap)
        print(f"attempt {attempt}: two threads {wall:.3f} s, their CPU time {cpu[0]:.3f} + {cpu[1]:.3f} s "
              f"({overlap:.2f} of the wall time)")
        if best > 1.3:
            break
    if best <= 1.3:
        message = (f"two threads' CPU time was at most {best:.2f} of their wall time (2 when both compute at "
                   f"once, at most 1 if the GIL is held while computing)")
        # Our two threads add 2 to the load average; more than one other runnable process beside
        # them (a shared development machine, a build) takes a core: parallelism cannot show there. On a machine with its
        # cores free, as in CI, this fails. test_python_runs_while_another_thread_generates
        # shows the GIL released under any load.
        load, cores = os.getloadavg()[0], len(os.sched_getaffinity(0))
        if load > cores + 1:
            pytest.xfail(f"{message}, with a load average of {load:.1f} on {cores} cores")
        pytest.fail(f"{message}; load average {load:.1f} on {cores} cores")


def loop_rate(work):
    """Iterations per second of a Python loop on this thread while another thread runs `work`."""
    done = threading.Event()
    thread = threading.Thread(target=lambda: (work(), done.set()))
    n, start = 0, time.perf_counter()
    thread.start()
    while not done.is_set():
        n += 1
    rate = n / (time.perf_counter() - start)
    thread.join()
    return rate


def test_python_runs_while_another_thread_generates(gpt2, one_cpu_thread_per_call):
    """Load-independent evidence that the GIL is free during a call: this thread's Python keeps
    running while a worker is inside generate() (were the GIL held, it would stand still)."""
    generator = eagerlm.Generator(gpt2, max_length=64)
    started = time.perf_counter()
    generate(generator, PROMPTS[0], 1)
    seconds = time.perf_counter() - started
    idle = loop_rate(lambda: time.sleep(seconds))  # the same loop beside a thread that only sleeps
    busy = loop_rate(lambda: generate(generator, PROMPTS[0], 1))
    print(f"Python loop: {idle:.0f}/s beside a sleeping thread, {busy:.0f}/s beside generate()")
    assert busy > 0.25 * idle


def test_ctrl_c_stops_a_generation_within_a_token_and_the_generator_goes_on(gpt2):
    generator = eagerlm.Generator(gpt2, max_length=1024)
    prompt = "The meaning of life is"
    before = generator.generate(prompt, max_new_tokens=8)
    per_token = before.timings.decode_ms_per_token / 1e3
    sent = []

    def interrupt():
        time.sleep(0.5)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        generator.generate(prompt, max_new_tokens=1000, ignore_eos=True)  # ~1000 tokens: many seconds
    raised = time.monotonic()
    timer.join()
    delay = raised - sent[0]
    print(f"KeyboardInterrupt {delay * 1e3:.1f} ms after SIGINT ({per_token * 1e3:.1f} ms per token); "
          f"{raised - start:.2f} s into the call")
    assert delay < 3 * per_token + 0.25, "the interrupt was not seen at the next token"
    after = generator.generate(prompt, max_new_tokens=8)
    assert (after.ids, after.text) == (before.ids, before.text)  # usable, and unchanged


def test_ctrl_c_while_streaming_stops_the_worker(gpt2):
    generator = eagerlm.Generator(gpt2, max_length=1024)

    def interrupt():
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        with generator.stream("Hello", max_new_tokens=1000, ignore_eos=True) as stream:
            for _ in stream:
                pass
    timer.join()
    assert stream.results.finish_reason == "callback"
    assert len(stream.results.ids) < 1000
    assert len(generator.generate("Hello", max_new_tokens=3).ids) == 3

