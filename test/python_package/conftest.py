"""Shared set-up of the Python package's tests (test/python_package/): the installed `eagerlm`
package against the CLI (`eagerlm generate --json`, `eagerlm init`, `eagerlm tokenize`), the C++
API (bin/eagerlm-api-generate) and bin/eagerlm-dump-logits, on small models written by
`eagerlm init --out`.

tools/test_python.sh runs them in a fresh virtual environment into which the package was
installed exactly as README.md says (`pip install .`). Environment (all optional):
  EAGERLM_BUILD          the CMake build directory with bin/eagerlm etc. (default: build/)
  EAGERLM_PYTHON_STRICT  1 turns every skip into a failure (set by tools/test_python.sh, so in CI)

Every process runs with two OpenMP threads (set before eagerlm loads OpenMP), so that every
route rounds its sums alike and results can be compared bit for bit.
"""

import json
import os
import pathlib
import signal
import subprocess

os.environ["OMP_NUM_THREADS"] = "2"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import eagerlm  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
STRICT = os.environ.get("EAGERLM_PYTHON_STRICT") == "1"
BUILD = pathlib.Path(os.environ.get("EAGERLM_BUILD", REPO / "build"))

# Written by `eagerlm init --config` (initializer_range large enough that distributions are far
# from flat, so that sampling options change what is drawn).
TEXT_CONFIG = {"n_layer": 2, "n_embd": 48, "n_head": 3, "n_positions": 128, "vocab_size": 50257,
               "initializer_range": 0.2}
# Odd sizes everywhere (no power of two, an explicit MLP width, a small vocabulary): token ids only.
ODD_CONFIG = {"n_layer": 3, "n_embd": 45, "n_head": 5, "n_inner": 77, "n_positions": 80, "vocab_size": 1001,
              "eos_token_id": 1000, "layer_norm_epsilon": 1e-6, "initializer_range": 0.3}


def missing(what):
    if STRICT:
        pytest.fail(f"{what} (EAGERLM_PYTHON_STRICT=1 runs everything)", pytrace=False)
    pytest.skip(what)


def binary(name):
    path = BUILD / "bin" / name
    if not os.access(path, os.X_OK):
        missing(f"{path} is not an executable: build it (cmake --build {BUILD}) or set EAGERLM_BUILD")
    return str(path)


def run(args, **kwargs):
    """Runs a command, raising with its standard error when it fails."""
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args[:3]))} ... exited {result.returncode}: {result.stderr[-2000:]}")
    return result


@pytest.fixture(autouse=True)
def python_sigint_handler():
    """Python's own SIGINT handler (KeyboardInterrupt), whatever this process inherited: a
    process started in the background by a non-interactive shell (`cmd &`, nohup) begins with
    SIGINT ignored, and Python then installs no handler, so the Ctrl-C tests could not work."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def cli():
    return binary("eagerlm")


def write_model(cli, directory, config, seed):
    directory.mkdir(parents=True, exist_ok=True)
    config_path = directory.parent / f"{directory.name}.json"
    config_path.write_text(json.dumps(config))
    run([cli, "init", "--config", config_path, "--seed", seed, "--out", directory, "--json"])
    return directory


@pytest.fixture(scope="session")
def text_model_dir(cli, tmp_path_factory):
    return write_model(cli, tmp_path_factory.mktemp("models") / "text", TEXT_CONFIG, 21)


@pytest.fixture(scope="session")
def odd_model_dir(cli, tmp_path_factory):
    return write_model(cli, tmp_path_factory.mktemp("models") / "odd", ODD_CONFIG, 22)


@pytest.fixture(scope="session")
def text_model(text_model_dir):
    return eagerlm.Model.load(text_model_dir)


@pytest.fixture(scope="session")
def odd_model(odd_model_dir):
    return eagerlm.Model.load(odd_model_dir)


def read_safetensors(path):
    """{name: array} of a safetensors file: an 8-byte little-endian header length, a JSON header,
    then the data (read here without the safetensors package, which the fresh venv lacks)."""
    data = pathlib.Path(path).read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    types = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16}
    out = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        out[name] = (entry["dtype"], np.frombuffer(body[begin:end], dtype=types[entry["dtype"]]).reshape(entry["shape"]))
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under EAGERLM_PYTHON_STRICT=1, which runs everything: {report.longrepr}"
