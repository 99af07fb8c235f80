"""`eagerlm init` against JAX: every parameter of a written model must equal

    jax.random.normal(jax.random.fold_in(jax.random.key(seed), fnv1a32(name)), shape, float32) * stddev

within 2 ulp (ones and zeros exactly), with Hugging Face's stddevs. Also the CLI's JSON, dtypes,
checksum and refusals. Skips when JAX is not installed or no eagerlm binary is found (set
EAGERLM_BIN or EAGERLM_BUILD; see conftest.py), or fails under EAGERLM_PYTHON_STRICT=1.

    EAGERLM_BIN=build/bin/eagerlm .venv/bin/python -m pytest -s test/python/test_init_against_jax.py
"""

import json
import math
import pathlib
import struct
import subprocess

import pytest
from conftest import eagerlm_binary

np = pytest.importorskip("numpy")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

EAGERLM = eagerlm_binary()

# A config whose wte alone has 3.2 million values: "millions of values" against JAX in seconds.
CONFIG = {"n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 128, "vocab_size": 50257,
          "n_inner": None, "layer_norm_epsilon": 1e-5, "initializer_range": 0.02,
          "activation_function": "gelu_new", "eos_token_id": 50256,
          "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}


def fnv1a32(text):
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def hf_init(name, config):
    """(kind, stddev) as GPT2PreTrainedModel._init_weights gives them."""
    sigma = config["initializer_range"]
    if name.startswith("ln_") or ".ln_" in name:
        return ("ones", 0.0) if name.endswith(".weight") else ("zeros", 0.0)
    if name.endswith(".bias"):
        return ("zeros", 0.0)
    if name.endswith("c_proj.weight"):
        return ("normal", sigma / math.sqrt(2 * config["n_layer"]))
    return ("normal", sigma)


def read_safetensors(path):
    data = pathlib.Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    body = memoryview(data)[8 + header_len:]
    dtypes = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"],
                         np.frombuffer(body[begin:end], dtype=dtypes[info["dtype"]]).reshape(info["shape"]))
    return header.get("__metadata__", {}), tensors


def run(*args, check=True):
    result = subprocess.run([EAGERLM, "init", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"eagerlm init {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def ulp_distance(a, b):
    ai = a.astype(np.float32).view(np.int32).astype(np.int64)
    bi = b.astype(np.float32).view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return np.abs(ai - bi)


def jax_values(seed, name, shape, stddev):
    key = jax.random.fold_in(jax.random.key(seed), np.uint32(fnv1a32(name)))
    return jax.random.normal(key, tuple(shape), jnp.float32) * stddev


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("init")
    config_path = root / "config.json"
    config_path.write_text(json.dumps(CONFIG))
    out = root / "model"
    result = run("--config", str(config_path), "--seed", "1234", "--out", str(out), "--json")
    return config_path, out, json.loads(result.stdout)


def test_values_match_jax(written):
    _, out, report = written
    metadata, tensors = read_safetensors(out / "model.safetensors")
    assert metadata.get("eagerlm_init_seed") == "1234"
    assert sorted(p["name"] for p in report["parameters"]) == sorted(tensors)
    total, exact, worst = 0, 0, 0
    for name, (dtype, values) in tensors.items():
        assert dtype == "F32"
        kind, stddev = hf_init(name, CONFIG)
        if kind == "ones":
            assert np.all(values == 1.0), name
        elif kind == "zeros":
            assert np.all(values == 0.0), name
        else:
            expected = np.asarray(jax_values(1234, name, values.shape, stddev))
            d = ulp_distance(values, expected)
            total += d.size
            exact += int(np.count_nonzero(d == 0))
            worst = max(worst, int(d.max()))
    print(f"\n{total} normal values against JAX {jax.__version__}: max {worst} ulp, {exact} bit-identical")
    assert total > 3_000_000
    assert worst <= 2


def test_config_round_trips(written):
    _, out, _ = written
    written_config = json.loads((out / "config.json").read_text())
    for key in ("n_layer", "n_embd", "n_head", "n_positions", "vocab_size", "initializer_range"):
        assert written_config[key] == CONFIG[key]


def test_checksum_is_blocked_xxh64(written):
    xxhash = pytest.importorskip("xxhash")
    _, out, report = written
    _, tensors = read_safetensors(out / "model.safetensors")
    block = 4 << 20
    hashes = []
    for p in report["parameters"]:  # spec order
        data = tensors[p["name"]][1].tobytes()
        hashes += [struct.pack("<Q", xxhash.xxh64(data[i:i + block]).intdigest()) for i in range(0, len(data), block)]
    assert report["checksum"] == f"{xxhash.xxh64(b''.join(hashes)).intdigest():016x}"


def test_json_report_and_dry_run(written):
    config_path, _, report = written
    dry = json.loads(run("--config", str(config_path), "--dry-run", "--json").stdout)
    assert dry["parameters"] == report["parameters"]
    assert dry["total_bytes"] == report["total_bytes"] == sum(p["bytes"] for p in dry["parameters"])
    assert dry["total_parameters"] * 4 == dry["total_bytes"]
    assert "seconds" not in dry and "checksum" not in dry
    assert report["seconds"] > 0


@pytest.mark.parametrize("dtype,name", [("bf16", "BF16"), ("f16", "F16")])
def test_half_dtypes_are_rounded_jax_values(tmp_path, dtype, name):
    config = dict(CONFIG, vocab_size=1000)
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(config))
    run("--config", str(config_path), "--seed", "7", "--dtype", dtype, "--out", str(tmp_path / "m"))
    _, tensors = read_safetensors(tmp_path / "m" / "model.safetensors")
    stored, values = tensors["h.1.mlp.c_fc.weight"]
    assert stored == name
    expected = jax_values(7, "h.1.mlp.c_fc.weight", values.shape, 0.02)
    if dtype == "bf16":
        expected_bits = np.asarray(expected.astype(jnp.bfloat16)).view(np.uint16)
        assert np.array_equal(values, expected_bits)
    else:
        assert np.array_equal(values.view(np.uint16), np.asarray(expected.astype(jnp.float16)).view(np.uint16))


def test_refusals(tmp_path):
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(CONFIG))
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("x")
    result = run("--config", str(config_path), "--out", str(occupied), check=False)
    assert result.returncode == 2 and "--out" in result.stderr and result.stdout == ""
    run("--config", str(config_path), "--out", str(occupied), "--force")
    assert (occupied / "keep.txt").exists() and (occupied / "model.safetensors").exists()

    assert run("--preset", "gpt2", "--config", str(config_path), check=False).returncode == 2
    for seed in ("-1", "18446744073709551616", "7x"):
        assert run("--preset", "gpt2", "--seed", seed, "--dry-run", check=False).returncode == 2
    assert run(check=False).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(CONFIG, n_head=5)))
    result = run("--config", str(bad), "--dry-run", check=False)
    assert result.returncode == 1 and "bad.json" in result.stderr and "n_head" in result.stderr


def test_seeds_beyond_32_bits(tmp_path):
    # eagerlm's key(seed) is [seed >> 32, seed & 0xffffffff], jax.random.key(seed) with
    # jax_enable_x64 (the C++ tests check that mapping against JAX); here the whole chain.
    seed = 2**40 + 12345
    config_path = tmp_path / "config.json"
    config_path.write_text(json.dumps(dict(CONFIG, vocab_size=100)))
    run("--config", str(config_path), "--seed", str(seed), "--out", str(tmp_path / "m"))
    _, tensors = read_safetensors(tmp_path / "m" / "model.safetensors")
    name = "h.0.attn.c_proj.weight"
    values = tensors[name][1]
    base = jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))
    key = jax.random.fold_in(base, np.uint32(fnv1a32(name)))
    expected = np.asarray(jax.random.normal(key, values.shape, jnp.float32) * (0.02 / math.sqrt(2 * CONFIG["n_layer"])))
    assert ulp_distance(values, expected).max() <= 2
