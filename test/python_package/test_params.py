"""init_params and param_shapes against `eagerlm init` (the checkpoint --out writes, bit for bit;
the --dry-run list), and Model.from_params: the same model as loading that checkpoint, from
NumPy, JAX (DLPack), buffer-protocol and __array__ arrays, zero-copy for contiguous float32."""

import gc
import json
import time
import weakref

import numpy as np
import pytest
from conftest import ODD_CONFIG, TEXT_CONFIG, read_safetensors, run

import eagerlm


@pytest.mark.parametrize("dtype,cli_dtype", [("float32", "f32"), ("float16", "f16"), ("bfloat16", "bf16")])
def test_init_params_are_the_checkpoint_eagerlm_init_writes(cli, tmp_path, dtype, cli_dtype):
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(ODD_CONFIG))
    run([cli, "init", "--config", config_path, "--seed", 987654321, "--dtype", cli_dtype, "--out", tmp_path / "m"])
    written = read_safetensors(tmp_path / "m" / "model.safetensors")
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    params = eagerlm.init_params(ODD_CONFIG, seed=987654321, dtype=dtype)
    assert list(params) == list(eagerlm.param_shapes(ODD_CONFIG))
    assert set(params) == set(written)
    for name, array in params.items():
        stored_dtype, stored = written[name]
        assert array.dtype.name == dtype and stored_dtype == {"f32": "F32", "f16": "F16", "bf16": "BF16"}[cli_dtype]
        assert array.shape == stored.shape, name
        assert array.tobytes() == stored.tobytes(), name
    # The same from the config file and from the config's directory.
    again = eagerlm.init_params(config_path, seed=987654321, dtype=dtype)
    assert all(np.array_equal(again[k].view(np.uint8), v.view(np.uint8)) for k, v in params.items())


def test_param_shapes_are_the_dry_run(cli, tmp_path):
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(ODD_CONFIG))
    for dtype, cli_dtype in (("float32", "f32"), ("bfloat16", "bf16")):
        listed = json.loads(run([cli, "init", "--config", config_path, "--dtype", cli_dtype, "--dry-run",
                                 "--json"]).stdout)["parameters"]
        shapes = eagerlm.param_shapes(ODD_CONFIG, dtype=dtype)
        assert [(p["name"], tuple(p["shape"]), p["bytes"]) for p in listed] == \
               [(name, s.shape, s.nbytes) for name, s in shapes.items()]
        assert {s.dtype for s in shapes.values()} == {dtype}
    gpt2 = eagerlm.param_shapes("gpt2")
    assert sum(int(np.prod(s.shape)) for s in gpt2.values()) == 124_439_808
    assert gpt2["h.11.mlp.c_fc.weight"].shape == (768, 3072)


def test_init_params_arrays_share_one_block_and_outlive_nothing(cli):
    params = eagerlm.init_params(TEXT_CONFIG, seed=1)
    wte = params["wte.weight"]
    assert wte.flags.writeable and wte.flags.c_contiguous and wte.dtype == np.float32
    assert wte.ctypes.data % 64 == 0
    del params
    gc.collect()
    assert np.isfinite(wte).all()  # still valid: each array holds the block


def test_from_params_generates_what_the_directory_generates(odd_model, odd_model_dir):
    params = eagerlm.init_params(ODD_CONFIG, seed=22)  # what odd_model_dir holds
    model = eagerlm.Model.from_params(params, ODD_CONFIG)
    assert model.info.source == "parameters given to from_parameters"
    assert model.info.parameter_count == odd_model.info.parameter_count
    prompt = [3, 1, 4, 1, 5, 9, 2, 6]
    for options in ({"max_new_tokens": 20, "ignore_eos": True},
                    {"max_new_tokens": 20, "temperature": 0.875, "seed": 4, "ignore_eos": True}):
        expected = eagerlm.Generator(odd_model).generate(prompt, **options)
        assert eagerlm.Generator(model).generate(prompt, **options).ids == expected.ids
    assert np.array_equal(model.logits(prompt), odd_model.logits(prompt))
    # A config.json path works as the config, and prefixed names as the names.
    prefixed = {"transformer." + k: v for k, v in params.items()}
    prefixed["lm_head.weight"] = params["wte.weight"]
    same = eagerlm.Model.from_params(prefixed, odd_model_dir / "config.json")
    assert np.array_equal(same.logits(prompt), odd_model.logits(prompt))


def test_from_params_uses_float32_arrays_in_place(odd_model):
    params = eagerlm.init_params(ODD_CONFIG, seed=22)
    model = eagerlm.Model.from_params(params, ODD_CONFIG)
    prompt = [7, 8, 9]
    before = model.logits(prompt)
    params["ln_f.bias"][0] += 1.0  # the model sees the caller's memory itself
    assert not np.array_equal(model.logits(prompt), before)
    params["ln_f.bias"][0] -= 1.0
    assert np.array_equal(model.logits(prompt), before)


def test_from_params_keeps_the_arrays_alive_while_needed():
    params = {k: v.copy() for k, v in eagerlm.init_params(ODD_CONFIG, seed=5).items()}
    watch = weakref.ref(params["wte.weight"])
    model = eagerlm.Model.from_params(params, ODD_CONFIG)
    generator = eagerlm.Generator(model)
    del params, model
    gc.collect()
    assert watch() is not None
    assert len(generator.generate([1, 2], max_new_tokens=4, ignore_eos=True).ids) == 4
    del generator
    gc.collect()
    assert watch() is None


def test_from_params_takes_half_precision_as_the_checkpoint_loader_does(cli, tmp_path):
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(ODD_CONFIG))
    run([cli, "init", "--config", config_path, "--seed", 6, "--dtype", "f16", "--out", tmp_path / "m"])
    loaded = eagerlm.Model.load(tmp_path / "m")
    model = eagerlm.Model.from_params(eagerlm.init_params(ODD_CONFIG, seed=6, dtype="float16"), ODD_CONFIG)
    assert np.array_equal(model.logits([4, 5, 6]), loaded.logits([4, 5, 6]))


class ArrayLike:
    """Only __array__: neither a buffer nor DLPack."""

    def __init__(self, array):
        self.array = array

    def __array__(self, dtype=None, copy=None):
        return self.array


def test_from_params_takes_any_array_kind(odd_model):
    params = eagerlm.init_params(ODD_CONFIG, seed=22)
    mixed = dict(params)
    mixed["ln_f.weight"] = memoryview(params["ln_f.weight"])  # the buffer protocol
    mixed["ln_f.bias"] = ArrayLike(params["ln_f.bias"])
    mixed["h.0.ln_1.bias"] = params["h.0.ln_1.bias"].tolist()  # nested sequences
    mixed["wpe.weight"] = np.asfortranarray(params["wpe.weight"])  # not C-contiguous: copied
    mixed["h.1.ln_2.weight"] = params["h.1.ln_2.weight"].astype(">f4")  # big-endian: converted
    model = eagerlm.Model.from_params(mixed, ODD_CONFIG)
    assert np.array_equal(model.logits([1, 2, 3]), odd_model.logits([1, 2, 3]))


def test_from_params_takes_jax_arrays_through_dlpack(odd_model):
    jnp = pytest.importorskip("jax.numpy")
    params = {k: jnp.asarray(v) for k, v in eagerlm.init_params(ODD_CONFIG, seed=22).items()}
    model = eagerlm.Model.from_params(params, ODD_CONFIG)
    assert np.array_equal(model.logits([10, 20, 30]), odd_model.logits([10, 20, 30]))
    # DLPack shares the memory of CPU arrays: NumPy sees JAX's own buffer.
    wte = params["wte.weight"]
    assert np.from_dlpack(wte).ctypes.data == wte.unsafe_buffer_pointer()
    bf16 = {k: v.astype(jnp.bfloat16) for k, v in params.items()}
    assert eagerlm.Model.from_params(bf16, ODD_CONFIG).logits([1]).shape == (1, 1001)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_from_params_of_gpt2_is_quick_and_copies_nothing():
    params = eagerlm.init_params("gpt2", seed=0)
    eagerlm.Model.from_params(eagerlm.init_params(TEXT_CONFIG, seed=0), TEXT_CONFIG)  # one-time set-up (the tokenizer)
    gc.collect()
    before = rss_bytes()
    start = time.perf_counter()
    model = eagerlm.Model.from_params(params, "gpt2")
    seconds = time.perf_counter() - start
    grown = rss_bytes() - before
    print(f"from_params(GPT-2 124M float32): {seconds * 1e3:.2f} ms, resident memory +{grown / 2**20:.1f} MiB")
    assert grown < 50 * 2**20, "a copy of the 500 MB of weights was made"
    assert seconds < 0.5  # docs/benchmarks.md has the measured time; this only catches a copy or a scan
    assert model.logits([464]).shape == (1, 50257)
