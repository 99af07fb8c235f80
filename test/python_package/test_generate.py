"""Generator.generate against the CLI (`eagerlm generate --json`) and the C++ API
(bin/eagerlm-api-generate): the same model, prompts, options and seed give the same ids, text,
finish reasons, logprobs and top logprobs, greedy and sampled, for text and token-id prompts,
one prompt or several, one sample or n. Values are chosen exactly representable as float32, so
that the CLI's decimal flags and Python's floats are the same numbers."""

import pytest
from generation_routes import via_api, via_cli

import eagerlm

PROMPT = "The meaning of life is"
CASES = {
    "greedy": {"max_new_tokens": 24},
    "greedy-penalties": {"max_new_tokens": 20, "repetition_penalty": 1.25, "presence_penalty": 0.5,
                         "frequency_penalty": 0.25, "no_repeat_ngram_size": 2, "logprobs": True},
    "sampled": {"max_new_tokens": 24, "temperature": 0.75, "top_k": 40, "top_p": 0.875, "seed": 5, "logprobs": True},
    "sampled-min-p-top-logprobs": {"max_new_tokens": 16, "temperature": 1.25, "min_p": 0.0625, "seed": 123456789,
                                   "logprobs": True, "top_logprobs": 3},
    "bias-and-stop": {"max_new_tokens": 32, "temperature": 0.5, "seed": 9, "logit_bias": {13: 8.0, 11: -100.0},
                      "stop": ["."], "min_new_tokens": 2},
    "stop-token-ids": {"max_new_tokens": 32, "temperature": 1.0, "seed": 3, "logit_bias": {262: 8.0},
                       "stop_token_ids": [262], "ignore_eos": True},
}


def same_results(python, other):
    """Python Results against the CLI's or the C++ API's JSON results, field by field."""
    assert len(python) == len(other)
    for p, o in zip(python, other):
        assert p.ids == o["ids"]
        assert p.text == o["text"]
        assert p.finish_reason == o["finish_reason"]
        if p.logprobs is not None:
            assert p.logprobs == o["logprobs"]  # float32 through JSON and through Python: exact
        if p.top_logprobs is not None:
            assert [[(a.id, a.logprob) for a in at] for at in p.top_logprobs] == \
                   [[(a["id"], a["logprob"]) for a in at] for at in o["top_logprobs"]]


@pytest.mark.parametrize("case", CASES)
def test_one_text_prompt_matches_the_cli_and_the_cpp_api(case, text_model, text_model_dir, tmp_path):
    options = CASES[case]
    result = eagerlm.Generator(text_model).generate(PROMPT, **options)
    assert isinstance(result, eagerlm.Result)
    assert result.ids, "nothing generated"
    same_results([result], via_cli(text_model_dir, PROMPT, options, tmp_path))
    same_results([result], via_api(text_model_dir, PROMPT, options)["results"])
    if "seed" in options:
        assert result.seed == options["seed"]
    if case == "bias-and-stop":
        assert result.finish_reason == "stop" and "." not in result.text
    if case == "stop-token-ids":
        assert result.ids[-1] == 262


def test_token_id_prompts_match_the_cli(odd_model, odd_model_dir, tmp_path):
    ids = [5, 900, 17, 17, 333, 1000, 2]
    options = {"max_new_tokens": 30, "temperature": 0.875, "seed": 77, "logprobs": True, "ignore_eos": True}
    generator = eagerlm.Generator(odd_model)
    result = generator.generate(ids, **options)
    same_results([result], via_cli(odd_model_dir, ids, options, tmp_path))
    same_results([result], via_api(odd_model_dir, ids, options)["results"])
    import numpy as np
    assert generator.generate(np.array(ids, dtype=np.int64), **options) == result


def test_several_prompts_with_several_samples_match_the_cli(text_model, text_model_dir, tmp_path):
    prompts = ["Once upon a time", "", "The meaning of life is"]
    options = {"max_new_tokens": 12, "temperature": 1.0, "top_k": 20, "seed": 31, "n": 2, "logprobs": True}
    results = eagerlm.Generator(text_model, max_batch=6).generate(prompts, **options)
    assert [(r.index, r.sample) for r in results] == [(i, s) for i in range(3) for s in range(2)]
    assert len({tuple(r.ids) for r in results}) > 1, "samples should differ"
    same_results(results, via_cli(text_model_dir, prompts, options, tmp_path))
    same_results(results, via_api(text_model_dir, prompts, options, max_batch=6)["results"])
    # One prompt with n > 1 gives a list too.
    assert len(eagerlm.Generator(text_model, max_batch=2).generate(PROMPT, **options)) == 2


def test_the_same_seed_gives_the_same_ids_and_an_unset_seed_is_reported(text_model):
    generator = eagerlm.Generator(text_model)
    a = generator.generate(PROMPT, max_new_tokens=16, temperature=1.0)
    again = generator.generate(PROMPT, max_new_tokens=16, temperature=1.0, seed=a.seed)
    assert again.ids == a.ids
    other = generator.generate(PROMPT, max_new_tokens=16, temperature=1.0, seed=a.seed + 1)
    assert other.ids != a.ids


def test_beam_search_agrees_with_the_cpp_api(text_model, text_model_dir):
    """Beam search gives what the C++ API gives: the same beams, or the same refusal."""
    options = {"max_new_tokens": 8, "num_beams": 3, "num_return_sequences": 2, "length_penalty": 0.5,
               "early_stopping": True}
    api = via_api(text_model_dir, PROMPT, options, max_batch=3)
    generator = eagerlm.Generator(text_model, max_batch=3)
    if "error" in api:
        with pytest.raises(eagerlm.Error) as raised:
            generator.generate(PROMPT, **options)
        assert str(raised.value) == api["error"]["message"]
        assert eagerlm._core.error_code_name(raised.value.code) == api["error"]["code"]
    else:
        results = generator.generate(PROMPT, **options)
        same_results(results, api["results"])
        assert [r.score for r in results] == [r["score"] for r in api["results"]]
    # Options beam search refuses are named whether or not it is built.
    with pytest.raises(eagerlm.InvalidArgumentError, match="num_return_sequences"):
        generator.generate(PROMPT, num_beams=2, num_return_sequences=3)


def test_results_carry_timings_and_fields(text_model):
    result = eagerlm.Generator(text_model).generate(PROMPT, max_new_tokens=10, ignore_eos=True)
    assert result.finish_reason == "length" and len(result.ids) == 10
    assert result.index == 0 and result.sample == 0 and result.logprobs is None and result.top_logprobs is None
    t = result.timings
    assert t.generated_tokens == 10 and t.prompt_tokens == len(text_model.tokenize(PROMPT))
    assert 0 < t.prefill_ms <= t.first_token_ms <= t.total_ms and t.decode_ms_per_token > 0
    assert text_model.detokenize(result.ids) == result.text
    assert eagerlm.Generator(text_model).generate([]) == []


def test_greedy_ids_follow_the_logits(odd_model):
    """Greedy decoding is the argmax of Model.logits, one full forward pass per token."""
    ids = [1, 2, 3]
    result = eagerlm.Generator(odd_model).generate(ids, max_new_tokens=6, ignore_eos=True)
    sequence = list(ids)
    for _ in range(6):
        sequence.append(int(odd_model.logits(sequence)[-1].argmax()))
    assert result.ids == sequence[3:]
