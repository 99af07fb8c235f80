"""eagerlm: GPT-2-style transformers, initialized and generating with no compilation.

The Python face of eagerlm's C++ engine (docs/python.md):

    import eagerlm
    model = eagerlm.Model.initialize("gpt2", seed=0)        # or Model.load("path/to/gpt2")
    generator = eagerlm.Generator(model)
    print(generator.generate("Hello, my name is", max_new_tokens=16).text)
    with eagerlm.Engine(model, max_batch=8) as engine:      # continuous batching, any thread
        request = engine.submit("Hello", max_new_tokens=16, temperature=0.8, seed=1)
        print(request.wait()[0].text)
    for event in generator.stream("Once upon a time", max_new_tokens=16, temperature=0.8, seed=1):
        print(event.text, end="", flush=True)

    params = eagerlm.init_params("gpt2", seed=0)             # {name: numpy array}, as `eagerlm init`
    model = eagerlm.Model.from_params(params, "gpt2")        # zero-copy for float32 host arrays

Errors are eagerlm.Error subclasses carrying the engine's code and message.
"""

from . import _core  # noqa: E402
from ._errors import (BusyError, Error, ErrorCode, InternalError, InvalidArgumentError,  # noqa: E402
                      InvalidFileError, IoError, OutOfMemoryError, UnsupportedError)
from ._engine import Engine, EngineStats, Request, StepCounts  # noqa: E402
from ._generator import Generator  # noqa: E402
from ._model import Model, ModelInfo  # noqa: E402
from ._params import ParamShape, init_params, param_shapes  # noqa: E402
from ._results import Result, Timings, TokenEvent, TokenLogprob  # noqa: E402
from ._stream import Stream  # noqa: E402

__version__: str = _core.version()


def version() -> str:
    """The engine's version, MAJOR.MINOR.PATCH (the same as __version__)."""
    return _core.version()


def cuda_available() -> bool:
    """Whether this build has the CUDA backend (libeagerlm-cuda.so beside the extension) and a GPU."""
    return _core.cuda_available()


def set_cpu_threads(n: int) -> None:
    """CPU threads each later call uses, from any thread; 0 restores the default (OMP_NUM_THREADS,
    else every core available). With several generators running at once, give each cores / generators."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidArgumentError(f"set_cpu_threads: expected an integer >= 0, got {n!r}")
    _core.set_cpu_threads(n)


def cpu_threads() -> int:
    """The set_cpu_threads setting (0: the default)."""
    return _core.cpu_threads()


__all__ = ["BusyError", "Engine", "EngineStats", "Error", "ErrorCode", "Generator", "InternalError",
           "InvalidArgumentError", "InvalidFileError", "IoError", "Model", "ModelInfo", "OutOfMemoryError",
           "ParamShape", "Request", "Result", "StepCounts", "Stream", "Timings", "TokenEvent", "TokenLogprob",
           "UnsupportedError", "cpu_threads", "cuda_available", "init_params", "param_shapes", "set_cpu_threads",
           "version", "__version__"]
