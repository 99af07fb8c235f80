"""Shared set-up of the Python conformance suite (eagerlm against JAX and Hugging Face).

Where things are (environment variables, all optional):
  EAGERLM_BIN          the eagerlm binary           (default: $EAGERLM_BUILD/bin/eagerlm)
  EAGERLM_DUMP_LOGITS  the eagerlm-dump-logits tool (default: $EAGERLM_BUILD/bin/eagerlm-dump-logits)
  EAGERLM_BUILD        the CMake build directory    (default: build/ at the repository root)
  EAGERLM_SHARED_DIR   the shared test data         (default: ../shared beside the repository)

EAGERLM_PYTHON_STRICT=1 (set by tools/test_python.sh, so in CI) turns every skip into a failure:
a missing package, binary or data file must not let the suite pass without running.

JAX runs float32 matrix products at full precision ("highest"), so a GPU JAX does not switch to
TF32 and the tolerances hold on any backend.
"""

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))  # the jax_gpt2 package
STRICT = os.environ.get("EAGERLM_PYTHON_STRICT") == "1"
BUILD = pathlib.Path(os.environ.get("EAGERLM_BUILD", REPO / "build"))
SHARED = pathlib.Path(os.environ.get("EAGERLM_SHARED_DIR", REPO.parent / "shared"))

try:
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")
except ImportError:
    pass  # the tests that need JAX skip (or fail under STRICT) on their own import


def missing(what):
    """Skips the calling test or module, or fails it under EAGERLM_PYTHON_STRICT=1."""
    if STRICT:
        pytest.fail(f"{what} (EAGERLM_PYTHON_STRICT=1 runs everything)", pytrace=False)
    pytest.skip(what, allow_module_level=True)


def find_binary(env, default):
    path = pathlib.Path(os.environ.get(env) or default)
    if not os.access(path, os.X_OK):
        missing(f"{path} is not an executable: build it (cmake --build {BUILD}) or set {env} / EAGERLM_BUILD")
    return str(path)


def eagerlm_binary():
    return find_binary("EAGERLM_BIN", BUILD / "bin" / "eagerlm")


def dump_logits_binary():
    return find_binary("EAGERLM_DUMP_LOGITS", BUILD / "bin" / "eagerlm-dump-logits")


def run_checked(args, **kwargs):
    """Runs a command; on failure raises with its standard error."""
    result = subprocess.run([str(a) for a in args], capture_output=True, **kwargs)
    if result.returncode != 0:
        stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode(errors="replace")
        raise AssertionError(f"{' '.join(map(str, args[:3]))} ... exited {result.returncode}: {stderr[-2000:]}")
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under EAGERLM_PYTHON_STRICT=1, which runs everything: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if STRICT and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped under EAGERLM_PYTHON_STRICT=1, which runs everything: {report.longrepr}"
