"""Generator.stream: the events of one result concatenate to its text and carry its ids and
logprobs; the results after the loop are generate()'s; closing early (close(), with, break)
stops the generation after the token in progress and leaves the generator usable."""

import time

import pytest

import eagerlm

PROMPT = "Once upon a time"


def test_events_add_up_to_the_results_of_generate(text_model):
    generator = eagerlm.Generator(text_model, max_batch=4)
    options = {"max_new_tokens": 14, "temperature": 0.75, "seed": 8, "n": 2, "logprobs": True, "top_logprobs": 2,
               "stop": [" the"]}
    prompts = [PROMPT, "The meaning of life is"]
    expected = generator.generate(prompts, **options)
    stream = generator.stream(prompts, **options)
    with pytest.raises(RuntimeError, match="still running"):
        stream.results  # noqa: B018
    events = list(stream)
    assert stream.results == expected
    for r in expected:
        mine = [e for e in events if (e.index, e.sample) == (r.index, r.sample)]
        assert "".join(e.text for e in mine) == r.text
        tokens = [e for e in mine if e.token >= 0]
        assert [e.token for e in tokens] == r.ids[:len(tokens)]
        assert [e.logprob for e in tokens] == r.logprobs[:len(tokens)]
        assert [e.top_logprobs for e in tokens] == r.top_logprobs[:len(tokens)]
        assert all(e.token == -1 for e in mine[len(tokens):])


def test_one_prompt_streams_and_ends_with_its_result(text_model):
    generator = eagerlm.Generator(text_model)
    stream = generator.stream(PROMPT, max_new_tokens=9, ignore_eos=True)
    texts = [event.text for event in stream]
    assert isinstance(stream.results, eagerlm.Result)
    assert "".join(texts) == stream.results.text == generator.generate(PROMPT, max_new_tokens=9, ignore_eos=True).text
    assert next(stream, None) is None  # an ended stream stays ended


def test_closing_early_stops_the_generation(text_model):
    generator = eagerlm.Generator(text_model)
    with generator.stream(PROMPT, max_new_tokens=100, ignore_eos=True) as stream:
        for i, _ in enumerate(stream):
            if i == 2:
                break
    result = stream.results
    assert result.finish_reason == "callback"
    assert 3 <= len(result.ids) < 100
    # The generator is free again, and gives what it gives uninterrupted.
    whole = generator.generate(PROMPT, max_new_tokens=100, ignore_eos=True)
    assert whole.ids[:len(result.ids)] == result.ids


def test_a_dropped_stream_lets_go_of_the_generator(text_model):
    generator = eagerlm.Generator(text_model)
    for _ in generator.stream(PROMPT, max_new_tokens=500, ignore_eos=True):
        break  # the iterator is dropped here, unfinished
    start = time.monotonic()
    assert len(generator.generate(PROMPT, max_new_tokens=3).ids) == 3
    assert time.monotonic() - start < 5


def test_errors_of_the_generation_come_out_of_the_iteration(text_model):
    generator = eagerlm.Generator(text_model)
    stream = generator.stream(PROMPT, temperature=-1.0)
    with pytest.raises(eagerlm.InvalidArgumentError, match="temperature"):
        next(stream)
    with pytest.raises(eagerlm.InvalidArgumentError, match="temperature"):
        stream.results  # noqa: B018
    assert generator.generate(PROMPT, max_new_tokens=2).ids


def test_a_generator_runs_one_call_at_a_time(text_model):
    generator = eagerlm.Generator(text_model)
    with generator.stream(PROMPT, max_new_tokens=200, ignore_eos=True) as stream:
        next(stream)  # the worker is inside the engine's call now
        with pytest.raises(eagerlm.InvalidArgumentError, match="already running"):
            generator.generate(PROMPT, max_new_tokens=2)
    assert generator.generate(PROMPT, max_new_tokens=2).ids
