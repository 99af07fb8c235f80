"""Model: info, tokenizing against `eagerlm tokenize` / `detokenize`, and logits against
bin/eagerlm-dump-logits bit for bit (one sequence, and a ragged batch)."""

import json
import os

import numpy as np
import pytest
from conftest import ODD_CONFIG, TEXT_CONFIG, binary, run

import eagerlm

TEXT = "Hello, my name is Ada. I like ünïcödé and 日本語 and <|endoftext|> markers.\n"


def test_info_describes_the_model(text_model, text_model_dir):
    info = text_model.info
    assert (info.n_layer, info.n_embd, info.n_head, info.context_length, info.vocab_size, info.eos_token_id) == \
           (2, 48, 3, 128, 50257, 50256)
    assert info.parameter_count == sum(a.size for a in eagerlm.init_params(TEXT_CONFIG).values())
    assert info.device == "cpu" and info.source == str(text_model_dir)
    assert eagerlm.Model.initialize(ODD_CONFIG, seed=4).info.source == "config initialized from seed 4"
    assert eagerlm.Model.initialize("gpt2").info.source == "gpt2 initialized from seed 0"


def test_tokenize_and_detokenize_match_the_cli(text_model, cli):
    ids = text_model.tokenize(TEXT)
    assert ids == json.loads(run([cli, "tokenize", "--json"], input=TEXT).stdout)
    assert text_model.tokenize(TEXT, parse_special=True) == \
           json.loads(run([cli, "tokenize", "--json", "--parse-special"], input=TEXT).stdout)
    assert 50256 not in ids and 50256 in text_model.tokenize(TEXT, parse_special=True)
    assert text_model.detokenize(ids) == TEXT
    assert text_model.detokenize(np.array(ids)) == TEXT
    assert text_model.detokenize_bytes(ids).decode() == run([cli, "detokenize"], input=" ".join(map(str, ids))).stdout
    # A character cut between tokens: raw bytes as they are, text with U+FFFD.
    cut = text_model.tokenize("日")[:1]
    assert text_model.detokenize_bytes(cut) == "日".encode()[:len(text_model.detokenize_bytes(cut))]
    assert text_model.detokenize(cut).endswith("\ufffd")


def dump_logits(model_dir, prompts, tmp_path, flags=()):
    out = tmp_path / "logits.npy"
    run([binary("eagerlm-dump-logits"), model_dir, out, *flags, *[",".join(map(str, p)) for p in prompts]])
    rows = np.load(out)
    return np.split(rows, np.cumsum([len(p) for p in prompts])[:-1])


def test_logits_are_the_dump_tools_bit_for_bit(odd_model, odd_model_dir, text_model, text_model_dir, tmp_path):
    rng = np.random.default_rng(5)
    prompts = [rng.integers(0, 1001, size=n).tolist() for n in (1, 7, 33, 80)]
    expected = dump_logits(odd_model_dir, prompts, tmp_path)
    batch = odd_model.logits(prompts)
    assert isinstance(batch, list) and len(batch) == len(prompts)
    for got, want in zip(batch, expected):
        assert got.dtype == np.float32 and got.flags.c_contiguous
        assert np.array_equal(got, want)
    # One sequence alone against the tool given that sequence alone (a batch of other sizes may
    # sum in another order: the tool and the package run the same batches).
    for prompt in prompts[1:3]:
        alone = dump_logits(odd_model_dir, [prompt], tmp_path)[0]
        assert odd_model.logits(prompt).shape == (len(prompt), 1001)
        assert np.array_equal(odd_model.logits(prompt), alone)
        assert np.array_equal(odd_model.logits(np.array(prompt, dtype=np.int32)), alone)
    ids = text_model.tokenize(TEXT)
    assert np.array_equal(text_model.logits(ids), dump_logits(text_model_dir, [ids], tmp_path)[0])


@pytest.mark.parametrize("weights, kv_type", [("bf16", "f16"), ("f16", None), ("f32", "bf16")])
def test_weight_and_cache_types_as_the_dump_tool_holds_them(text_model, text_model_dir, tmp_path, weights, kv_type):
    model = eagerlm.Model.load(text_model_dir, weights=weights, kv_type=kv_type)
    assert (model.info.weights, model.info.kv_type) == (weights, kv_type or "f32")
    assert (text_model.info.weights, text_model.info.kv_type) == ("f32", "f32")
    ids = text_model.tokenize(TEXT)
    flags = ["--weights", weights] + (["--kv-type", kv_type] if kv_type else [])
    want = dump_logits(text_model_dir, [ids], tmp_path, flags)[0]
    assert np.array_equal(model.logits(ids), want)
    assert not np.array_equal(want, text_model.logits(ids))  # the types took effect
    fresh = eagerlm.Model.initialize(TEXT_CONFIG, seed=21, weights=weights, kv_type=kv_type)
    assert np.array_equal(fresh.logits(ids), want)  # the checkpoint was written from seed 21


def _has_bf16_gemm():
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    return "avx512_bf16" in flags


def test_gemm_math_bf16_for_bf16_weights(text_model_dir):
    ids = list(range(1000, 1040))  # 40 rows: past the few-row kernels, where the bf16 GEMM runs
    fp32_math = eagerlm.Model.load(text_model_dir, weights="bf16")
    assert fp32_math.info.gemm_math == "fp32"
    if not _has_bf16_gemm():
        with pytest.raises(eagerlm.UnsupportedError, match="AVX512_BF16"):
            eagerlm.Model.load(text_model_dir, weights="bf16", gemm_math="bf16")
    else:
        model = eagerlm.Model.load(text_model_dir, weights="bf16", gemm_math="bf16")
        assert (model.info.weights, model.info.gemm_math) == ("bf16", "bf16")
        got, want = model.logits(ids), fp32_math.logits(ids)
        assert not np.array_equal(got, want)  # activations rounded to bf16 took effect
        assert np.max(np.abs(got - want)) <= 32 * 2.0**-8 * max(1.0, np.max(np.abs(want)))
    with pytest.raises(eagerlm.UnsupportedError, match="for bf16 weights.*f32"):
        eagerlm.Model.initialize(ODD_CONFIG, gemm_math="bf16")
    with pytest.raises(eagerlm.InvalidArgumentError, match="gemm_math.*fp16"):
        eagerlm.Model.initialize(ODD_CONFIG, gemm_math="fp16")
    with pytest.raises(TypeError, match="gemm_math"):
        eagerlm.Model.initialize(ODD_CONFIG, gemm_math=16)


def test_unknown_weight_types_are_refused_by_name(text_model_dir):
    with pytest.raises(eagerlm.InvalidArgumentError, match="weights.*int4"):
        eagerlm.Model.load(text_model_dir, weights="int4")
    with pytest.raises(eagerlm.InvalidArgumentError, match="kv_type.*int8"):
        eagerlm.Model.initialize(ODD_CONFIG, kv_type="int8")
    with pytest.raises(TypeError, match="weights"):
        eagerlm.Model.load(text_model_dir, weights=16)
    # int8 blocks are 32 inputs: this model's 48-wide matrices cannot be held so, and it says why.
    with pytest.raises(eagerlm.InvalidArgumentError, match="wte.weight.*multiple of 32"):
        eagerlm.Model.load(text_model_dir, weights="int8")


def test_initialize_gives_the_weights_eagerlm_init_writes(odd_model, odd_model_dir):
    prompt = [9, 8, 7, 6]
    assert np.array_equal(eagerlm.Model.initialize(ODD_CONFIG, seed=22).logits(prompt), odd_model.logits(prompt))
    assert np.array_equal(eagerlm.Model.initialize(odd_model_dir / "config.json", seed=22).logits(prompt),
                          odd_model.logits(prompt))
    assert not np.array_equal(eagerlm.Model.initialize(ODD_CONFIG, seed=23).logits(prompt), odd_model.logits(prompt))


def test_logits_arrays_own_the_engines_result(odd_model):
    a = odd_model.logits([1, 2, 3])
    b = odd_model.logits([1, 2, 3])
    assert not np.shares_memory(a, b)
    a[:] = 0  # each array is the caller's own
    assert np.array_equal(b, odd_model.logits([1, 2, 3]))


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_threads_setting(odd_model, threads):
    eagerlm.set_cpu_threads(threads)
    try:
        assert eagerlm.cpu_threads() == threads
        assert odd_model.logits([1, 2]).shape == (2, 1001)
    finally:
        eagerlm.set_cpu_threads(0)
    assert eagerlm.cpu_threads() == 0
