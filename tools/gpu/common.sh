# shellcheck shell=bash
# Sourced by tools/gpu_check.sh and tools/gpu/compare_jax.sh: the private prefix made of the
# packages tools/gpu/prepare.sh downloaded, and a CUDA build configured against it alone.
# Functions return non-zero on failure and print what they did.

gpu_debs=${EAGERLM_GPU_DEBS:-$PWD/.gpu-deps/debs}
gpu_prefix=${EAGERLM_GPU_PREFIX:-/tmp/eagerlm-gpu-prefix}
gpu_build=${EAGERLM_GPU_BUILD:-$PWD/build-gpu}
gpu_lib=$gpu_prefix/usr/lib/x86_64-linux-gnu
# The carried shared libraries: libopenblas.so.0 is linked by path (RUNPATH), but what it needs
# (libgfortran.so.5) is looked up without our RUNPATH, so the loader is told here.
export LD_LIBRARY_PATH=$gpu_lib:$gpu_lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# pkg-config sees the prefix's .pc files and nothing else.
export PKG_CONFIG_LIBDIR=$gpu_lib/pkgconfig:$gpu_lib/openblas-pthread/pkgconfig:$gpu_prefix/usr/share/pkgconfig
unset PKG_CONFIG_PATH
export PATH=/usr/local/cuda/bin:$PATH

# Unpacks every carried .deb into $gpu_prefix (dpkg -x, or Python where there is no dpkg) and
# points the .pc files, which say /usr, at the prefix.
gpu_unpack() {
  [[ -f "$gpu_debs/SHA256SUMS" ]] || { echo "no $gpu_debs/SHA256SUMS: run tools/gpu/prepare.sh first"; return 1; }
  (cd "$gpu_debs" && sha256sum --quiet -c SHA256SUMS) || return 1
  rm -rf "$gpu_prefix" && mkdir -p "$gpu_prefix" || return 1
  local deb
  for deb in "$gpu_debs"/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$gpu_prefix" || return 1
    else
      python3 "$PWD/tools/gpu/unpack_deb.py" "$deb" "$gpu_prefix" || return 1
    fi
  done
  find "$gpu_prefix" -name '*.pc' -exec \
    sed -i -E "s#^(prefix|exec_prefix|libdir|includedir)=/usr#\1=$gpu_prefix/usr#" {} + || return 1
  echo "unpacked $(ls "$gpu_debs"/*.deb | wc -l) packages into $gpu_prefix ($(du -sh "$gpu_prefix" | cut -f1));" \
    "they need glibc >= $(cat "$gpu_debs/GLIBC_MIN"), this machine has $(getconf GNU_LIBC_VERSION)"
  "$gpu_prefix/usr/bin/pkgconf" --modversion openblas libutf8proc || return 1
}

# Configures $gpu_build: CUDA on, sm_90 only (the H200; one architecture compiles fastest), the
# dependencies from the prefix (CMake configs through CMAKE_PREFIX_PATH, pkg-config through the
# prefix's pkgconf and PKG_CONFIG_LIBDIR). CMAKE_POLICY_VERSION_MINIMUM lets a CMake 4 read the
# packages' configs; older CMakes ignore it.
gpu_configure() {
  cmake -S . -B "$gpu_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEAGERLM_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${EAGERLM_GPU_ARCH:-90}" -DCMAKE_PREFIX_PATH="$gpu_prefix/usr" \
    -DPKG_CONFIG_EXECUTABLE="$gpu_prefix/usr/bin/pkgconf" -DCMAKE_POLICY_VERSION_MINIMUM=3.5
}

# Builds the named targets (default: everything the GPU check runs).
gpu_build_targets() {
  local targets=("$@")
  # The loopback test module (one small file) lets the dry run rehearse GPU steps on the CPU.
  ((${#targets[@]})) || targets=(eagerlm_cli eagerlm-dump-logits eagerlm_cuda_module test_cuda_ops test_cuda_model
                                 test_library_cuda eagerlm_test_loopback_module)
  cmake --build "$gpu_build" -j"$(nproc)" --target "${targets[@]}"
}
