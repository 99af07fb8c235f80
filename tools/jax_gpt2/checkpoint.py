"""Loads a Hugging Face GPT-2 directory (config.json + model.safetensors, or a sharded
model.safetensors.index.json) into the JAX GPT-2's parameter dict: what `eagerlm init --out`
writes, or a downloaded `openai-community/gpt2`.

Names are accepted with or without the `transformer.` prefix; `lm_head.weight` is tied to
`wte.weight` and dropped; the `attn.bias` / `attn.masked_bias` buffers of old checkpoints are
ignored. F16 and BF16 tensors are widened to float32.
"""

import json
import pathlib

import jax.numpy as jnp
from safetensors.flax import load_file

from .config import config_from_file, parameter_specs


def _shard_files(directory):
    single = directory / "model.safetensors"
    if single.is_file():
        return [single]
    index = directory / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text())["weight_map"]
        return [directory / name for name in sorted(set(weight_map.values()))]
    raise FileNotFoundError(f"{directory}: no model.safetensors or model.safetensors.index.json")


def load(directory):
    """(Config, params) of the model in `directory`; params maps names to float32 jax arrays."""
    directory = pathlib.Path(directory)
    config = config_from_file(directory / "config.json")
    tensors = {}
    for path in _shard_files(directory):
        for name, value in load_file(str(path)).items():
            name = name.removeprefix("transformer.")
            if name == "lm_head.weight" or name.endswith((".attn.bias", ".attn.masked_bias")):
                continue
            tensors[name] = value
    params = {}
    for spec in parameter_specs(config):
        if spec.name not in tensors:
            raise KeyError(f"{directory}: no tensor {spec.name}")
        value = tensors.pop(spec.name)
        if tuple(value.shape) != spec.shape:
            raise ValueError(f"{directory}: {spec.name} has shape {tuple(value.shape)}, expected {spec.shape}")
        params[spec.name] = jnp.asarray(value, jnp.float32)
    if tensors:
        raise ValueError(f"{directory}: unexpected tensors {sorted(tensors)[:5]}")
    return config, params
