"""A GPT-2 in plain JAX whose parameters are initialized exactly like `eagerlm init`'s, and which
loads Hugging Face safetensors directories; plus Hugging Face's Flax GPT-2 as a reference
(hf_reference, imported on demand: it needs transformers). Used by test/python/ and
tools/compare_jax.py.

    from jax_gpt2 import checkpoint, generate, init, model   # with tools/ on sys.path
"""

from .config import PRESETS, Config, config_from_dict, config_from_file, parameter_specs  # noqa: F401
