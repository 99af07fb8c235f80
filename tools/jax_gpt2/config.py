"""GPT-2 hyper-parameters and the named parameter list, as eagerlm and Hugging Face define them.

`Config` is frozen (hashable), so it can be a static argument of `jax.jit`. `parameter_specs`
gives every parameter's Hugging Face name (without the `transformer.` prefix), shape and
initializer, in eagerlm's canonical order (models/gpt2/parameters.cpp); linear (Conv1D)
weights are [in, out].
"""

import dataclasses
import json
import math


@dataclasses.dataclass(frozen=True)
class Config:
    n_layer: int = 12
    n_embd: int = 768
    n_head: int = 12
    n_positions: int = 1024
    vocab_size: int = 50257
    n_inner: int | None = None  # MLP width; None means 4 * n_embd
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    eos_token_id: int = 50256

    @property
    def d_head(self):
        return self.n_embd // self.n_head

    @property
    def mlp_width(self):
        return self.n_inner or 4 * self.n_embd

    def to_hf_dict(self):
        """A Hugging Face config.json for GPT2LMHeadModel."""
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "activation_function": "gelu_new",
                "n_layer": self.n_layer, "n_embd": self.n_embd, "n_head": self.n_head,
                "n_positions": self.n_positions, "n_ctx": self.n_positions, "vocab_size": self.vocab_size,
                "n_inner": self.n_inner, "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range, "bos_token_id": self.eos_token_id,
                "eos_token_id": self.eos_token_id}


PRESETS = {
    "gpt2": Config(),
    "gpt2-medium": Config(n_layer=24, n_embd=1024, n_head=16),
    "gpt2-large": Config(n_layer=36, n_embd=1280, n_head=20),
    "gpt2-xl": Config(n_layer=48, n_embd=1600, n_head=25),
}

# Hugging Face's aliases for the GPT-2 field names (GPT2Config.attribute_map).
_ALIASES = {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
            "max_position_embeddings": "n_positions"}


def config_from_dict(d):
    d = {_ALIASES.get(k, k): v for k, v in d.items()}
    if "n_positions" not in d and "n_ctx" in d:
        d["n_positions"] = d["n_ctx"]
    activation = d.get("activation_function", "gelu_new")
    if activation != "gelu_new":
        raise ValueError(f"activation_function {activation!r}: only gelu_new is supported")
    fields = {f.name for f in dataclasses.fields(Config)}
    config = Config(**{k: v for k, v in d.items() if k in fields and (v is not None or k == "n_inner")})
    if config.n_embd % config.n_head:
        raise ValueError(f"n_embd {config.n_embd} is not a multiple of n_head {config.n_head}")
    return config


def config_from_file(path):
    with open(path) as f:
        return config_from_dict(json.load(f))


@dataclasses.dataclass(frozen=True)
class ParameterSpec:
    name: str
    shape: tuple
    init: str  # "normal", "ones" or "zeros"
    stddev: float = 0.0


def parameter_specs(config):
    """Every parameter with Hugging Face's initializer (GPT2PreTrainedModel._init_weights):
    N(0, initializer_range) for embeddings and linear weights, N(0, initializer_range /
    sqrt(2 n_layer)) for the residual projections (attn.c_proj, mlp.c_proj), ones and zeros for
    layer norms, zeros for biases."""
    d, m = config.n_embd, config.mlp_width
    sigma = config.initializer_range
    sigma_residual = sigma / math.sqrt(2.0 * config.n_layer)
    specs = [ParameterSpec("wte.weight", (config.vocab_size, d), "normal", sigma),
             ParameterSpec("wpe.weight", (config.n_positions, d), "normal", sigma)]
    for i in range(config.n_layer):
        p = f"h.{i}."
        specs += [ParameterSpec(p + "ln_1.weight", (d,), "ones"),
                  ParameterSpec(p + "ln_1.bias", (d,), "zeros"),
                  ParameterSpec(p + "attn.c_attn.weight", (d, 3 * d), "normal", sigma),
                  ParameterSpec(p + "attn.c_attn.bias", (3 * d,), "zeros"),
                  ParameterSpec(p + "attn.c_proj.weight", (d, d), "normal", sigma_residual),
                  ParameterSpec(p + "attn.c_proj.bias", (d,), "zeros"),
                  ParameterSpec(p + "ln_2.weight", (d,), "ones"),
                  ParameterSpec(p + "ln_2.bias", (d,), "zeros"),
                  ParameterSpec(p + "mlp.c_fc.weight", (d, m), "normal", sigma),
                  ParameterSpec(p + "mlp.c_fc.bias", (m,), "zeros"),
                  ParameterSpec(p + "mlp.c_proj.weight", (m, d), "normal", sigma_residual),
                  ParameterSpec(p + "mlp.c_proj.bias", (d,), "zeros")]
    specs += [ParameterSpec("ln_f.weight", (d,), "ones"), ParameterSpec("ln_f.bias", (d,), "zeros")]
    return specs
