#!/usr/bin/env bash
# Checks eagerlm as a library, the way its users take it in. Installs BUILD_DIR (already built)
# into a temporary prefix with `cmake --install`, writes a tiny random model with the installed
# `eagerlm init`, and then:
#   0. the install writes nothing into the build tree: as an unprivileged user who cannot write
#      it where that can be arranged (root with setpriv, and a checkout that user can read), and
#      by modification times in every case;
#   1. find_package: configures, builds and runs tools/examples/library (the C++ and C examples
#      against libeagerlm.so, the C++ one against libeagerlm.a, and cpu_only, which checks in
#      /proc/self/maps that a CPU-only process maps no CUDA library), and
#      tools/examples/library_c, a C-only project linking both libraries;
#   2. pkg-config: builds the same programs with plain compiler commands (eagerlm.pc shared,
#      eagerlm-static.pc static) and runs them;
#   3. add_subdirectory: builds and runs the examples with eagerlm's source tree as a
#      subdirectory (CPU only; this compiles the engine again, about a minute of CPU time:
#      EAGERLM_CHECK_SUBDIRECTORY=configure stops after configuring).
# Every program must print exactly what `eagerlm generate` prints for the same greedy request, and
# a bad model path must come back as an error message and exit status 1.
#
# Usage: bash tools/check_install.sh BUILD_DIR
set -euo pipefail

if [[ $# -ne 1 || ! -f "$1/CMakeCache.txt" ]]; then
  echo "usage: $0 BUILD_DIR (a configured and built eagerlm build directory)" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
examples="$root/tools/examples/library"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
jobs=$(nproc 2>/dev/null || echo 2)
prompt="The meaning of life is"
# The same thread count everywhere, so that every route rounds its sums alike.
export OMP_NUM_THREADS=2

fail() { echo "check_install: FAILED: $*" >&2; exit 1; }
# same_output NAME FILE: FILE must equal the reference output.
same_output() {
  cmp -s "$tmp/expected.txt" "$2" || { diff "$tmp/expected.txt" "$2" >&2 || true; fail "$1 printed something else than eagerlm generate"; }
  echo "check_install: $1: ok"
}
# fails_cleanly NAME CMD...: CMD must exit 1 with an error naming the bad path on stderr.
fails_cleanly() {
  local name=$1; shift
  local rc=0
  "$@" >/dev/null 2>"$tmp/stderr.txt" || rc=$?
  [[ $rc -eq 1 ]] || fail "$name on a bad model path exited with $rc, expected 1"
  grep -q "/nonexistent/model" "$tmp/stderr.txt" || fail "$name: the error does not name the path: $(cat "$tmp/stderr.txt")"
}

echo "== install into $prefix"
marker="$tmp/before-install"
touch "$marker"
sleep 1  # modification times have a granularity
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null &&
   "${as_nobody[@]}" test -r "$build/cmake_install.cmake" -a -r "$root/include/eagerlm/eagerlm.h" 2>/dev/null; then
  # As "nobody", to whom the build tree is read-only; CMake itself records install_manifest.txt
  # in the build tree (it cannot be told otherwise), so that one file is made writable.
  touch "$build/install_manifest.txt"
  chown 65534 "$build/install_manifest.txt"
  mkdir -p "$prefix" && chown 65534 "$prefix" && chmod 755 "$tmp"
  "${as_nobody[@]}" cmake --install "$build" --prefix "$prefix" >/dev/null ||
    fail "cmake --install from a build tree the installing user cannot write"
  chown 0 "$build/install_manifest.txt"
else
  cmake --install "$build" --prefix "$prefix" >/dev/null
fi
written=$(find "$build" -newer "$marker" -type f ! -name install_manifest.txt | head -5)
[[ -z "$written" ]] || fail "cmake --install wrote into the build tree: $written"
libdir=$(dirname "$(find "$prefix" -name libeagerlm.so -print -quit)")
[[ -d "$libdir" ]] || fail "no libeagerlm.so installed"
for f in include/eagerlm/eagerlm.hpp include/eagerlm/eagerlm.h include/eagerlm/version.h bin/eagerlm; do
  [[ -e "$prefix/$f" ]] || fail "$f not installed"
done
for f in libeagerlm.a libeagerlm.so.0 pkgconfig/eagerlm.pc pkgconfig/eagerlm-static.pc cmake/eagerlm/eagerlmConfig.cmake \
         cmake/eagerlm/eagerlmConfigVersion.cmake cmake/eagerlm/eagerlmTargets.cmake; do
  [[ -e "$libdir/$f" ]] || fail "$libdir/$f not installed"
done
# The installed tree must not point back into the source or build tree.
if grep -rqs -e "$build" -e "$root/include" "$prefix/include" "$libdir/cmake" "$libdir/pkgconfig"; then
  fail "installed files refer to the build or source tree"
fi

echo "== a tiny model and the reference output"
"$prefix/bin/eagerlm" init --config "$examples/tiny_config.json" --seed 1 --out "$tmp/model" >/dev/null 2>&1
"$prefix/bin/eagerlm" generate -m "$tmp/model" -p "$prompt" -n 16 --temperature 0 -t 2 >"$tmp/expected.txt" 2>/dev/null
[[ $(wc -c <"$tmp/expected.txt") -gt $((${#prompt} + 1)) ]] || fail "eagerlm generate printed no text"

echo "== find_package(eagerlm)"
cmake -S "$examples" -B "$tmp/find_package" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/find_package" -j"$jobs" >/dev/null
for exe in example_cpp example_c example_cpp_static; do
  "$tmp/find_package/$exe" "$tmp/model" "$prompt" >"$tmp/$exe.txt"
  same_output "find_package $exe" "$tmp/$exe.txt"
done
if ldd "$tmp/find_package/example_cpp_static" | grep -q libeagerlm; then fail "example_cpp_static loads libeagerlm.so"; fi
fails_cleanly "example_c" "$tmp/find_package/example_c" /nonexistent/model
"$tmp/find_package/cpu_only" "$tmp/model" || fail "a CPU-only process mapped a CUDA library (or failed)"
echo "check_install: cpu_only maps no CUDA library: ok"

echo "== a C-only CMake project"
cmake -S "$root/tools/examples/library_c" -B "$tmp/c_only" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/c_only" -j"$jobs" >/dev/null
for exe in example_c example_c_static; do
  "$tmp/c_only/$exe" "$tmp/model" "$prompt" >"$tmp/c_only_$exe.txt"
  same_output "C-only project $exe" "$tmp/c_only_$exe.txt"
done
if ldd "$tmp/c_only/example_c_static" | grep -q libeagerlm; then fail "example_c_static loads libeagerlm.so"; fi

echo "== pkg-config eagerlm"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[[ $(pkg-config --modversion eagerlm) == $(sed -n 's/^#define EAGERLM_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/eagerlm/version.h") ]] ||
  fail "eagerlm.pc and version.h disagree on the version"
read -r -a cflags <<<"$(pkg-config --cflags eagerlm)"
read -r -a libs <<<"$(pkg-config --libs eagerlm)"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 "${cflags[@]}" "$examples/example.c" "${libs[@]}" \
  -Wl,-rpath,"$libdir" -o "$tmp/pc_c"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -O2 "${cflags[@]}" "$examples/example.cpp" "${libs[@]}" \
  -Wl,-rpath,"$libdir" -o "$tmp/pc_cpp"
read -r -a static_libs <<<"$(pkg-config --libs eagerlm-static)"
c++ -std=c++17 -O2 "${cflags[@]}" "$examples/example.cpp" "${static_libs[@]}" -o "$tmp/pc_cpp_static"
cc -std=c11 -O2 "${cflags[@]}" "$examples/example.c" "${static_libs[@]}" -o "$tmp/pc_c_static"
for exe in pc_cpp_static pc_c_static; do
  if ldd "$tmp/$exe" | grep -q libeagerlm; then fail "$exe (pkg-config eagerlm-static) loads libeagerlm.so"; fi
done
for exe in pc_c pc_cpp pc_cpp_static pc_c_static; do
  "$tmp/$exe" "$tmp/model" "$prompt" >"$tmp/$exe.txt"
  same_output "pkg-config $exe" "$tmp/$exe.txt"
done

echo "== add_subdirectory(eagerlm)"
cmake -S "$examples" -B "$tmp/subdirectory" -DEAGERLM_SOURCE_DIR="$root" -DCMAKE_BUILD_TYPE=Release >/dev/null
if [[ "${EAGERLM_CHECK_SUBDIRECTORY:-build}" == build ]]; then
  cmake --build "$tmp/subdirectory" -j"$jobs" --target example_cpp example_c >/dev/null
  for exe in example_cpp example_c; do
    "$tmp/subdirectory/$exe" "$tmp/model" "$prompt" >"$tmp/sub_$exe.txt"
    same_output "add_subdirectory $exe" "$tmp/sub_$exe.txt"
  done
else
  echo "check_install: add_subdirectory: configures (not built: EAGERLM_CHECK_SUBDIRECTORY=configure)"
fi
echo "check_install: all passed"
