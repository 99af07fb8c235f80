#!/usr/bin/env bash
# Checks eagerlm as a library, the way its users take it in. Installs BUILD_DIR (already built)
# into a temporary prefix with `cmake --install`, writes a tiny random model with the installed
# `eagerlm init`, and then:
#   1. find_package: configures, builds and runs tools/examples/library (the C++ and C examples
#      against libeagerlm.so, the C++ one against libeagerlm.a);
#   2. pkg-config: builds the same programs with plain compiler commands (shared, and static with
#      `pkg-config --static`) and runs them;
#   3. ctypes: runs tools/examples/ctypes_generate.py against the installed libeagerlm.so;
#   4. add_subdirectory: builds and runs the examples with eagerlm's source tree as a
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
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libeagerlm.so -print -quit)")
[[ -d "$libdir" ]] || fail "no libeagerlm.so installed"
for f in include/eagerlm/eagerlm.hpp include/eagerlm/eagerlm.h include/eagerlm/version.h bin/eagerlm; do
  [[ -e "$prefix/$f" ]] || fail "$f not installed"
done
for f in libeagerlm.a libeagerlm.so.0 pkgconfig/eagerlm.pc cmake/eagerlm/eagerlmConfig.cmake \
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
# Static: the archive itself in place of -leagerlm, then what Libs.private says it needs.
read -r -a static_libs <<<"$(pkg-config --static --libs eagerlm)"
static_args=()
for arg in "${static_libs[@]}"; do
  case $arg in
    -leagerlm) static_args+=("$libdir/libeagerlm.a") ;;
    -L*) static_args+=("$arg" "-Wl,-rpath,${arg#-L}") ;;
    *) static_args+=("$arg") ;;
  esac
done
c++ -std=c++17 -O2 "${cflags[@]}" "$examples/example.cpp" "${static_args[@]}" -o "$tmp/pc_cpp_static"
for exe in pc_c pc_cpp pc_cpp_static; do
  "$tmp/$exe" "$tmp/model" "$prompt" >"$tmp/$exe.txt"
  same_output "pkg-config $exe" "$tmp/$exe.txt"
done

echo "== Python ctypes"
python3 "$root/tools/examples/ctypes_generate.py" "$tmp/model" "$prompt" --lib "$libdir/libeagerlm.so" >"$tmp/ctypes.txt"
same_output "ctypes_generate.py" "$tmp/ctypes.txt"
fails_cleanly "ctypes_generate.py" python3 "$root/tools/examples/ctypes_generate.py" /nonexistent/model \
  --lib "$libdir/libeagerlm.so"

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
