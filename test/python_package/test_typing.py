"""The package's annotations and type stubs (the extension's _core.pyi, py.typed) serve a type
checker: a program using the API checks clean under mypy --strict, and a wrong use is caught."""

import subprocess
import sys
import textwrap

import pytest

GOOD = '''
import numpy as np
import eagerlm

def run(path: str) -> list[int]:
    model: eagerlm.Model = eagerlm.Model.load(path)
    info: eagerlm.ModelInfo = model.info
    ids: list[int] = model.tokenize("Hello") + [info.eos_token_id]
    logits: np.ndarray = model.logits(ids)
    generator = eagerlm.Generator(model, max_batch=2)
    result = generator.generate("Hello", max_new_tokens=4, temperature=0.5, seed=1, stop=["."])
    assert isinstance(result, eagerlm.Result)
    for event in generator.stream(["a", "b"], max_new_tokens=2):
        text: str = event.text
    with eagerlm.Engine(model, max_batch=2, max_queue=4) as engine:
        request: eagerlm.Request = engine.submit(ids, max_new_tokens=2, temperature=0.5, seed=2)
        for token in request:
            text = token.text
        results: list[eagerlm.Result] = request.wait()
        stats: eagerlm.EngineStats = engine.stats()
    params: dict[str, np.ndarray] = eagerlm.init_params({"n_layer": 1}, seed=0)
    shapes: dict[str, eagerlm.ParamShape] = eagerlm.param_shapes("gpt2")
    eagerlm.Model.from_params(params, "gpt2")
    try:
        eagerlm.Model.load("/nonexistent")
    except eagerlm.IoError as e:
        code: eagerlm.ErrorCode = e.code
    return result.ids + results[0].ids + [int(logits.argmax())] + [len(text), len(shapes), stats.steps]
'''

BAD = '''
import eagerlm
model = eagerlm.Model.load(3)
eagerlm.Generator(model).generate("x", max_new_tokens="many")
eagerlm.Engine(model).submit("x", temperature="hot")
'''


def mypy(tmp_path, source):
    pytest.importorskip("mypy")
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           str(path)], capture_output=True, text=True)


def test_a_program_using_the_api_type_checks(tmp_path):
    result = mypy(tmp_path, GOOD)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_wrong_use_is_caught(tmp_path):
    result = mypy(tmp_path, BAD)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'Argument 1 to "load" of "Model"' in result.stdout
    assert '"max_new_tokens"' in result.stdout
    assert '"temperature"' in result.stdout  # Engine.submit's options are typed too
