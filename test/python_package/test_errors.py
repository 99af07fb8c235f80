"""Bad input raises a clear Python exception, never a crash: eagerlm.Error subclasses with the
engine's code and message (naming the tensor, file, field or option and what was expected), or
TypeError for a value of the wrong type."""

import json

import numpy as np
import pytest
from conftest import ODD_CONFIG

import eagerlm


def test_error_classes_carry_the_engine_codes():
    assert issubclass(eagerlm.InvalidArgumentError, eagerlm.Error) and issubclass(eagerlm.InvalidArgumentError,
                                                                                  ValueError)
    assert issubclass(eagerlm.IoError, OSError) and issubclass(eagerlm.OutOfMemoryError, MemoryError)
    for cls, code in [(eagerlm.InvalidArgumentError, "INVALID_ARGUMENT"), (eagerlm.InvalidFileError, "INVALID_FILE"),
                      (eagerlm.IoError, "IO"), (eagerlm.UnsupportedError, "UNSUPPORTED"),
                      (eagerlm.OutOfMemoryError, "OUT_OF_MEMORY"), (eagerlm.InternalError, "INTERNAL"),
                      (eagerlm.BusyError, "BUSY")]:
        assert cls.code is eagerlm.ErrorCode[code]


def test_a_path_that_does_not_exist(tmp_path):
    with pytest.raises(eagerlm.IoError, match="nonexistent") as raised:
        eagerlm.Model.load(tmp_path / "nonexistent")
    assert raised.value.code is eagerlm.ErrorCode.IO and isinstance(raised.value, OSError)
    with pytest.raises(eagerlm.IoError, match="no-such-preset"):
        eagerlm.Model.initialize("no-such-preset")


def test_a_malformed_model_directory(tmp_path):
    (tmp_path / "config.json").write_text('{"n_layer": 2, "n_embd": 64, "n_head": 5, "n_positions": 8, "vocab_size": 9}')
    (tmp_path / "model.safetensors").write_bytes(b"short")
    with pytest.raises(eagerlm.InvalidFileError, match="n_head"):
        eagerlm.Model.load(tmp_path)


@pytest.fixture(scope="module")
def params():
    return eagerlm.init_params(ODD_CONFIG, seed=1)


@pytest.mark.parametrize("edit,needles", [
    (lambda p: p.pop("h.2.mlp.c_proj.bias"), ["missing tensor 'h.2.mlp.c_proj.bias'"]),
    (lambda p: p.update({"wpe.weight": p["wpe.weight"].astype(np.float64)}), ["'wpe.weight'", "'F64'",
                                                                              "expected F32, F16 or BF16"]),
    (lambda p: p.update({"h.0.ln_1.weight": np.ones(45, dtype=np.int32)}), ["'h.0.ln_1.weight'", "'I32'"]),
    (lambda p: p.update({"h.1.attn.c_attn.weight": p["h.1.attn.c_attn.weight"].T}),
     ["'h.1.attn.c_attn.weight'", "[135, 45]", "expected [45, 135]"]),
    (lambda p: p.update({"wte.weight": p["wte.weight"][None]}), ["'wte.weight'", "[1, 1001, 45]"]),
    (lambda p: p.update({"score.weight": np.zeros(3, np.float32)}), ["unexpected tensor 'score.weight'"]),
    (lambda p: p.update({"h.3.ln_1.weight": np.zeros(45, np.float32)}), ["'h.3.ln_1.weight'", "beyond config n_layer=3"]),
    (lambda p: p.update({"transformer.ln_f.bias": p.pop("ln_f.bias")}), ["mix"]),
    (lambda p: p.update({"lm_head.weight": np.zeros((1001, 45), np.float32)}), ["lm_head.weight differs"]),
])
def test_from_params_names_what_is_wrong(params, edit, needles):
    bad = dict(params)
    edit(bad)
    with pytest.raises(eagerlm.InvalidArgumentError) as raised:
        eagerlm.Model.from_params(bad, ODD_CONFIG)
    for needle in needles:
        assert needle in str(raised.value)


def test_from_params_refuses_what_is_not_an_array_or_a_mapping(params):
    with pytest.raises(TypeError, match="'wte.weight'"):
        eagerlm.Model.from_params({**params, "wte.weight": object()}, ODD_CONFIG)
    with pytest.raises(TypeError, match="mapping"):
        eagerlm.Model.from_params(list(params.values()), ODD_CONFIG)
    with pytest.raises(TypeError, match="names"):
        eagerlm.Model.from_params({**params, 3: params["wte.weight"]}, ODD_CONFIG)


def test_bad_configs_name_the_field(params):
    with pytest.raises(eagerlm.InvalidArgumentError, match="n_head"):
        eagerlm.Model.from_params(params, {**ODD_CONFIG, "n_head": 4})
    with pytest.raises(eagerlm.InvalidArgumentError, match="n_layer"):
        eagerlm.init_params({**ODD_CONFIG, "n_layer": 0})
    with pytest.raises(eagerlm.InvalidArgumentError, match="vocab_size"):
        eagerlm.param_shapes({"n_layer": 1, "n_embd": 8, "n_head": 2, "n_positions": 8})
    with pytest.raises(TypeError, match="config"):
        eagerlm.param_shapes({"n_layer": float("nan")})
    with pytest.raises(eagerlm.InvalidArgumentError, match="dtype"):
        eagerlm.init_params(ODD_CONFIG, dtype="int8")
    with pytest.raises(eagerlm.InvalidArgumentError, match="seed"):
        eagerlm.init_params(ODD_CONFIG, seed=-1)


@pytest.mark.parametrize("options,error,needle", [
    ({"temperature": -1.0}, eagerlm.InvalidArgumentError, "temperature"),
    ({"temperature": float("nan")}, eagerlm.InvalidArgumentError, "temperature"),
    ({"top_p": 1.5}, eagerlm.InvalidArgumentError, "top_p"),
    ({"min_p": -0.5}, eagerlm.InvalidArgumentError, "min_p"),
    ({"repetition_penalty": 0.0}, eagerlm.InvalidArgumentError, "repetition_penalty"),
    ({"max_new_tokens": -1}, eagerlm.InvalidArgumentError, "max_new_tokens"),
    ({"max_new_tokens": 2**40}, eagerlm.InvalidArgumentError, "max_new_tokens"),
    ({"min_new_tokens": 9, "max_new_tokens": 4}, eagerlm.InvalidArgumentError, "min_new_tokens"),
    ({"top_k": -3}, eagerlm.InvalidArgumentError, "top_k"),
    ({"n": 0}, eagerlm.InvalidArgumentError, "n "),
    ({"top_logprobs": 21}, eagerlm.InvalidArgumentError, "top_logprobs"),
    ({"num_beams": 0}, eagerlm.InvalidArgumentError, "num_beams"),
    ({"seed": -1}, eagerlm.InvalidArgumentError, "seed"),
    ({"stop_token_ids": [-5]}, eagerlm.InvalidArgumentError, "stop_token_ids"),
    ({"logit_bias": {5: 1000.0}}, eagerlm.InvalidArgumentError, "logit_bias"),
    ({"max_new_tokens": "8"}, TypeError, "max_new_tokens"),
    ({"temperature": "hot"}, TypeError, "temperature"),
    ({"logprobs": 1}, TypeError, "logprobs"),
    ({"stop": [1]}, TypeError, "stop"),
    ({"logit_bias": {5: "x"}}, TypeError, "logit_bias"),
])
def test_bad_option_values_name_the_option(text_model, options, error, needle):
    generator = eagerlm.Generator(text_model)
    with pytest.raises(error, match=needle):
        generator.generate("Hello", **options)
    assert generator.generate("Hello", max_new_tokens=2).ids  # still usable


def test_bad_arguments_elsewhere(text_model, odd_model):
    with pytest.raises(eagerlm.InvalidArgumentError, match="device"):
        eagerlm.Model.initialize(ODD_CONFIG, device="tpu")
    if not eagerlm.cuda_available():
        with pytest.raises(eagerlm.UnsupportedError, match="CUDA"):
            eagerlm.Model.initialize(ODD_CONFIG, device="cuda")
    with pytest.raises(eagerlm.InvalidArgumentError, match="max_length"):
        eagerlm.Generator(text_model, max_length=10_000)
    with pytest.raises(eagerlm.InvalidArgumentError, match="max_batch"):
        eagerlm.Generator(text_model, max_batch=0)
    with pytest.raises(eagerlm.InvalidArgumentError, match="prompt"):
        eagerlm.Generator(text_model, max_length=8).generate("word " * 20)
    with pytest.raises(eagerlm.InvalidArgumentError, match="1001"):
        odd_model.logits([5, 1001])
    with pytest.raises(eagerlm.InvalidArgumentError, match="empty"):
        odd_model.logits([])
    with pytest.raises(eagerlm.InvalidArgumentError):
        text_model.detokenize([2**31 - 1])
    with pytest.raises(eagerlm.InvalidArgumentError, match="vocab_size"):
        odd_model.tokenize("text needs GPT-2's vocabulary")
    with pytest.raises(TypeError):
        text_model.tokenize(b"bytes")
    with pytest.raises(TypeError):
        eagerlm.Generator(text_model).generate(3.5)
    with pytest.raises(TypeError):
        eagerlm.Model()
    with pytest.raises(eagerlm.InvalidArgumentError, match="set_cpu_threads"):
        eagerlm.set_cpu_threads(-1)


def test_text_that_is_not_unicode(text_model):
    """A lone surrogate cannot be UTF-8: refused by Python's own encoder, clearly."""
    with pytest.raises((UnicodeError, TypeError)):
        text_model.tokenize("\ud800")


def test_config_text_with_bad_json(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(eagerlm.InvalidFileError, match="config.json"):
        eagerlm.param_shapes(tmp_path / "config.json")
    with pytest.raises(eagerlm.InvalidFileError, match="config.json"):
        eagerlm.param_shapes(tmp_path)
    assert json.loads(json.dumps(ODD_CONFIG))  # (the mapping form goes through JSON too)
