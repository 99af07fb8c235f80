#!/usr/bin/env bash
# Creates the project's Python environment (.venv at the repository root, or $EAGERLM_VENV) and
# installs tools/requirements.txt into it from PyPI. Idempotent: when the environment already
# holds exactly that requirements file (a stamp records its hash), it does nothing.
#
#   bash tools/setup_python.sh            # then: .venv/bin/python ...
#
# Environment: EAGERLM_PYTHON (interpreter to create the venv with; default python3, which
# must be 3.11 or newer), EAGERLM_VENV (where). On a GPU machine, install the CUDA plugin on top
# afterwards (.venv/bin/pip install "jax[cuda12]==0.10.2"); the tools and tests are the same.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${EAGERLM_VENV:-$root/.venv}"
python="${EAGERLM_PYTHON:-python3}"
requirements="$root/tools/requirements.txt"
stamp="$venv/.eagerlm-requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup_python: $venv is up to date with tools/requirements.txt"
  exit 0
fi

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup_python: $python is missing or older than Python 3.11 (set EAGERLM_PYTHON)" >&2
  exit 1
fi
# Debian splits venv/ensurepip into python3-venv; install it when we may.
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  else
    echo "setup_python: $python has no venv module (install python3-venv)" >&2
    exit 1
  fi
fi

start=$SECONDS
[[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
rm -f "$stamp"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade-strategy only-if-needed \
  -r "$requirements"
echo "$want" >"$stamp"
echo "setup_python: installed tools/requirements.txt into $venv in $((SECONDS - start)) s"
