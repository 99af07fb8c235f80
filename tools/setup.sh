#!/usr/bin/env bash
# Installs what building and testing eagerlm needs, from Debian's packages. Idempotent: does
# nothing when everything is present. CUDA is optional and not installed here: with nvcc at
# /usr/local/cuda (or on PATH) the CUDA backend is built too.
set -euo pipefail

packages=(build-essential cmake pkg-config libopenblas-dev nlohmann-json3-dev catch2 libcli11-dev
          libutf8proc-dev)
# The Python package (`pip install .`): Python's headers and venv, and Ninja, so that
# scikit-build-core uses the system's build tools instead of downloading its own.
packages+=(python3-dev python3-venv ninja-build)
# `eagerlm serve`: its HTTP library (cpp-httplib); its tests put two replicas behind nginx and
# talk to them with curl as well as Python.
packages+=(libcpp-httplib-dev nginx curl)
if [[ "${EAGERLM_SETUP_FUZZ:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup: build dependencies present"
