"""The JAX GPT-2's compiled initializer, `jax.jit(init)` (tools/jax_gpt2/init.py), against
`eagerlm init` for the same seed: every parameter, the full GPT-2 124M and an odd config.

The contract is eagerlm's: normal values within 2 ulp of JAX's (ones and zeros exact). Within
2 ulp also shows the keys and random bits are the same: a normal depends on the top 23 of its
element's 32 bits, and flipping any of them moves it by more than 2 ulp (the uniform moves by at
least 2^-22 and sqrt(2)·erfinv has a slope of at least sqrt(pi/2)).

The values are not all bit-identical, and should not be: eagerlm reproduces
`jax.random.normal(k, shape) * stddev` as JAX runs it op by op (two float32 multiplies,
normal = erfinv(u)·sqrt(2), then ·stddev; bit-identical, test_init_against_jax.py), while under
jax.jit XLA folds the two constants into one multiply by fl(sqrt(2)·stddev). Each way is within
1.5 ulp of the exact product, so they differ by at most 2 ulp. The count of bit-identical values
is printed (a half to three quarters of them).

`jax.eval_shape(init)` gives the same names, shapes and dtypes as `eagerlm init --dry-run`.
"""

import json

import numpy as np
import pytest
from conftest import eagerlm_binary, run_checked
from safetensors.numpy import load_file

jax = pytest.importorskip("jax")

from jax_gpt2 import PRESETS, config_from_dict  # noqa: E402
from jax_gpt2.init import init_fn, seed_key  # noqa: E402

EAGERLM = eagerlm_binary()

ODD = {"n_layer": 3, "n_embd": 60, "n_head": 5, "n_inner": 111, "n_positions": 77, "vocab_size": 5003,
       "eos_token_id": 5002, "initializer_range": 0.05}
CASES = [("gpt2", PRESETS["gpt2"], 2**40 + 99), ("odd", config_from_dict(ODD), 4242)]


def ulp_distance(a, b):
    ai = a.astype(np.float32).view(np.int32).astype(np.int64)
    bi = b.astype(np.float32).view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return np.abs(ai - bi)


def eagerlm_source(tmp_path, name, config):
    if name in PRESETS:
        return ["--preset", name]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(ODD))
    return ["--config", path]


@pytest.mark.parametrize("name,config,seed", CASES, ids=[c[0] for c in CASES])
def test_jit_init_equals_eagerlm_init(tmp_path, name, config, seed):
    out = tmp_path / "model"
    run_checked([EAGERLM, "init", *eagerlm_source(tmp_path, name, config), "--seed", seed, "--out", out, "--json"])
    written = load_file(str(out / "model.safetensors"))
    params = jax.jit(init_fn(config))(seed_key(seed))
    assert sorted(params) == sorted(written)
    total = exact = worst = 0
    for key, value in params.items():
        ours, theirs = np.asarray(value), written[key]
        assert ours.shape == theirs.shape and theirs.dtype == np.float32, key
        d = ulp_distance(ours, theirs)
        total += d.size
        exact += int(np.count_nonzero(d == 0))
        worst = max(worst, int(d.max()))
        if key.endswith(".bias") or "ln_" in key:  # ones and zeros: exact
            assert d.max() == 0, key
    print(f"\n{name}, seed {seed}: {total} values, jax.jit(init) (JAX {jax.__version__}) against eagerlm init: "
          f"max {worst} ulp, {exact} bit-identical")
    assert worst <= 2


@pytest.mark.parametrize("name,config,seed", CASES, ids=[c[0] for c in CASES])
def test_eval_shape_equals_dry_run(tmp_path, name, config, seed):
    dry = json.loads(run_checked([EAGERLM, "init", *eagerlm_source(tmp_path, name, config), "--dry-run", "--json"],
                                 text=True).stdout)
    shapes = jax.eval_shape(init_fn(config), seed_key(seed))
    assert sorted(p["name"] for p in dry["parameters"]) == sorted(shapes)
    for p in dry["parameters"]:
        assert list(shapes[p["name"]].shape) == p["shape"] and shapes[p["name"]].dtype == np.float32
