"""tools/jax_gpt2's decode loop with eagerlm's attention op (greedy_attention_op: one jitted
one-token step, each sequence at its own position) against the pure-JAX preallocated loop, which
test/python/test_hf_conformance.py checks against Hugging Face: the same greedy ids on a model
of odd sizes, and exactly one XLA compilation where the pure-JAX loop needs two."""

import sys

import numpy as np

from conftest import REPO, missing, read_safetensors

try:
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    missing("jax is not installed (tools/requirements-python-tests.txt)")

sys.path.insert(0, str(REPO / "tools"))
from jax_gpt2 import generate  # noqa: E402
from jax_gpt2.config import config_from_file, parameter_specs  # noqa: E402


def load(directory):
    config = config_from_file(directory / "config.json")
    tensors = {name.removeprefix("transformer."): value  # eagerlm init writes float32
               for name, (_, value) in read_safetensors(directory / "model.safetensors").items()}
    return config, {spec.name: jnp.asarray(tensors[spec.name], jnp.float32) for spec in parameter_specs(config)}


def test_attention_op_loop_gives_the_preallocated_ids_with_one_compilation(odd_model_dir):
    config, params = load(odd_model_dir)
    rng = np.random.default_rng(5)
    prompts = rng.integers(0, config.vocab_size, size=(3, 6)).astype(np.int32)
    plain, op = {}, {}
    expected = generate.greedy_preallocated(params, config, prompts, 12, stats=plain)
    got = generate.greedy_attention_op(params, config, prompts, 12, stats=op)
    assert got.tolist() == expected.tolist()
    assert len(set(expected.ravel().tolist())) > 3  # not one repeated token: something to compare
    assert op["compilations"] == 1
    assert plain["compilations"] == 2  # prompt and decode: the count sees each compile
