#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with apt), not on the GPU machine: downloads what
# tools/gpu_check.sh needs there and cannot fetch (the lent GPU machine reaches no registry).
#
#   bash tools/gpu/prepare.sh            # .gpu-deps/debs: the Debian packages of the build
#   bash tools/gpu/prepare.sh --wheels   # also .gpu-deps/wheels, for tools/gpu/compare_jax.sh
#
# .gpu-deps/ is ignored by git; the device tool's `run` call names .gpu-deps/debs (and
# .gpu-deps/wheels) in `carry`. gpu_check.sh unpacks the packages with dpkg -x into a private
# prefix, never into /. Nothing is installed here either: apt-get download only.
set -euo pipefail
cd "$(dirname "$0")/../.."

# What the build needs that the GPU image lacks: the -dev packages (headers, CMake configs,
# pkg-config files) and the shared libraries they point at. libopenblas-dev and libopenblas0 are
# empty metapackages (alternatives set up by maintainer scripts, which dpkg -x does not run), so
# the pthread flavour is taken directly. pkgconf: the image may have no pkg-config.
packages=(libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0
          nlohmann-json3-dev libcli11-dev catch2 libutf8proc-dev libutf8proc2 pkgconf-bin libpkgconf3)
# Dependencies every glibc Linux with a C++ compiler has (nvcc needs one): not carried.
assumed=(libc6 libgcc-s1 gcc-12-base libstdc++6)

wheels=0
[[ "${1:-}" == --wheels ]] && wheels=1

dir=.gpu-deps/debs
rm -rf "$dir"
mkdir -p "$dir"
# As root apt would hand the download to its sandbox user, who cannot write into the checkout.
(cd "$dir" && apt-get -q -o APT::Sandbox::User="$(id -un)" download "${packages[@]}") || {
  echo "prepare: apt-get download failed (run apt-get update first?)" >&2
  exit 1
}

# Every dependency of every downloaded package must be carried or assumed present.
missing=0
for deb in "$dir"/*.deb; do
  deps=$({ dpkg-deb -f "$deb" Depends; dpkg-deb -f "$deb" Pre-Depends; } | tr ',' '\n' | sed 's/([^)]*)//g; s/|.*//; s/:any//' |
           awk 'NF {print $1}')
  for d in $deps; do
    if [[ " ${packages[*]} ${assumed[*]} " != *" $d "* ]]; then
      echo "prepare: $(basename "$deb") depends on $d, which is neither carried nor assumed" >&2
      missing=1
    fi
  done
done
((missing == 0)) || exit 1

printf '%s\n' "${packages[@]}" >"$dir/PACKAGES"
(cd "$dir" && sha256sum -- *.deb >SHA256SUMS)
# The newest glibc symbol version the carried libraries and programs need: the GPU machine's
# glibc must be at least that.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for deb in "$dir"/*.deb; do dpkg -x "$deb" "$tmp"; done
glibc=$(find "$tmp" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec objdump -T {} + 2>/dev/null |
          grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
echo "${glibc#GLIBC_}" >"$dir/GLIBC_MIN"

if ((wheels)); then
  # compare_jax's Hugging Face Flax system: Flax models left transformers in 5.0 (the image has
  # 5.x), and 4.57.6 pins tokenizers <= 0.23.0 and huggingface_hub < 1.0 (the image has newer).
  # Everything else it imports is in the image (device README, KINDS.md). CPython 3.12 wheels.
  wdir=.gpu-deps/wheels
  rm -rf "$wdir"
  mkdir -p "$wdir"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$wdir" transformers==4.57.6 tokenizers==0.22.2 huggingface_hub==0.36.2
fi

echo "prepare: $(ls "$dir"/*.deb | wc -l) packages, $(du -sh .gpu-deps | cut -f1) in .gpu-deps, need glibc >= $(cat "$dir/GLIBC_MIN")"
du -sh .gpu-deps/*
