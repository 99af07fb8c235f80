"""The package as installed: from the virtual environment (not this checkout), with its type
stubs and docstrings, the engine's version, and every name the docs promise."""

import inspect
import pathlib
import sys

from conftest import REPO, run

import eagerlm

GENERATE_OPTIONS = ["max_new_tokens", "temperature", "top_k", "top_p", "min_p", "repetition_penalty",
                    "presence_penalty", "frequency_penalty", "logit_bias", "no_repeat_ngram_size", "min_new_tokens",
                    "seed", "stop", "stop_token_ids", "logprobs", "top_logprobs", "n", "num_beams", "length_penalty",
                    "early_stopping", "num_return_sequences"]


def test_the_installed_package_is_imported():
    package = pathlib.Path(eagerlm.__file__).resolve().parent
    assert package.is_relative_to(pathlib.Path(sys.prefix).resolve()), package
    assert not package.is_relative_to(REPO)
    for name in ("_core.pyi", "py.typed"):
        assert (package / name).is_file(), name
    assert pathlib.Path(eagerlm._core.__file__).parent == package


def test_the_version_is_the_engines(cli):
    assert run([cli, "--version"]).stdout.split()[1] == eagerlm.__version__ == eagerlm.version()


def test_generate_and_stream_take_hugging_faces_option_names():
    for method in (eagerlm.Generator.generate, eagerlm.Generator.stream):
        parameters = inspect.signature(method).parameters
        for name in GENERATE_OPTIONS:
            assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    doc = inspect.getdoc(eagerlm.Generator.generate)
    for name in GENERATE_OPTIONS:
        assert f"\n{name} " in doc, f"generate's docstring does not describe {name}"


def test_everything_documented_is_there():
    for name in eagerlm.__all__:
        assert hasattr(eagerlm, name), name
        obj = getattr(eagerlm, name)
        if callable(obj) and not isinstance(obj, type(eagerlm.ErrorCode.IO)):
            assert inspect.getdoc(obj), f"{name} has no docstring"
    for method in ("load", "initialize", "from_params", "tokenize", "detokenize", "logits"):
        assert inspect.getdoc(getattr(eagerlm.Model, method)), method
