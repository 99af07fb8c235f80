#!/usr/bin/env python3
"""Known-answer vectors for eagerlm's JAX-compatible initializer, computed by JAX itself.

eagerlm reproduces, in C++ and CUDA:
  * jax.random.key(seed) / fold_in for the default threefry2x32 implementation,
  * the random bits of the partitionable threefry mode (JAX's default since 0.5.0),
  * jax.random.normal(key, shape, jnp.float32) and `* stddev`,
and keys each parameter as fold_in(key(seed), fnv1a32(name)).

This script prints those quantities as computed by the installed JAX (CPU), as JSON (default)
or as C++ initializers (--cpp) for test/random/jax_vectors.h. Float values are given as their
IEEE bit patterns so nothing is lost in printing. Output is deterministic: run it twice, diff.

Indices at or beyond 2^32 cannot be reached by materializing an array here, so for those the
script registers a PRNG implementation whose random_bits is JAX's own partitionable counter
formation (prng.iota_2x32_shape) of a larger shape, sliced, fed to JAX's threefry2x32
primitive; jax.random.normal then turns those bits into normals with its own code.

Usage:  python make_init_vectors.py [--cpp]     (needs jax, jaxlib, numpy: tools/requirements.txt)
"""

import argparse
import json
import math
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax._src.random import prng
from jax._src.random import threefry2x32 as threefry_impl


def fnv1a32(text):
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def key_words(key):
    return [int(v) for v in np.asarray(jax.random.key_data(key))]


def f32_bits(values):
    return [int(v) for v in np.asarray(values, dtype=np.float32).view(np.uint32).ravel()]


def window_normals(rows, row, start, count, seed):
    """Normals at flat indices row*2^32 + start + [0, count) of a (rows, 2^32) array."""
    row_length = 2**32

    def bits(key, bit_width, shape):
        assert bit_width == 32 and shape == (count,)
        hi, lo = prng.iota_2x32_shape((rows, row_length))
        hi = hi[row, start:start + count]
        lo = lo[row, start:start + count]
        b1, b2 = threefry_impl.threefry2x32_p.bind(key[0], key[1], hi, lo)
        return b1 ^ b2

    impl = prng.PRNGImpl(key_shape=(2,), seed=threefry_impl.threefry_seed,
                         split=threefry_impl.threefry_split, random_bits=bits,
                         fold_in=threefry_impl.threefry_fold_in,
                         name=f"eagerlm_window_{rows}_{row}_{start}_{count}",
                         tag=f"ew{rows}{row}{start}{count}")
    key = jax.random.key(seed, impl=impl)
    index0 = row * row_length + start
    return ([index0 + i for i in range(count)],
            f32_bits(jax.random.normal(key, (count,), jnp.float32)),
            [int(v) for v in np.asarray(jax.jit(lambda k: bits(k, 32, (count,)))(
                jax.random.key_data(jax.random.key(seed))))])


def compute():
    out = {
        "jax_version": jax.__version__,
        "jax_threefry_partitionable": bool(jax.config.jax_threefry_partitionable),
        "jax_default_prng_impl": str(jax.config.jax_default_prng_impl),
    }

    # Random123's known-answer vectors for threefry2x32_20, through JAX's threefry primitive.
    kat = []
    for key, counter in [((0, 0), (0, 0)),
                         ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF)),
                         ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3))]:
        result = threefry_impl.threefry_2x32(np.array(key, np.uint32), np.array(counter, np.uint32))
        kat.append({"key": list(key), "counter": list(counter), "out": [int(v) for v in result]})
    out["threefry_kat"] = kat

    out["keys"] = [{"seed": s, "key": key_words(jax.random.key(s))}
                   for s in [0, 1, 42, 1234567, 2**31 - 1, 2**32 - 1]]

    fold = []
    for seed, data in [(0, 0), (42, 1), (42, 0xDEADBEEF), (1, fnv1a32("wte.weight")),
                       (7, fnv1a32("h.11.mlp.c_proj.weight"))]:
        fold.append({"seed": seed, "data": data,
                     "key": key_words(jax.random.fold_in(jax.random.key(seed), np.uint32(data)))})
    out["fold_in"] = fold

    out["bits"] = [{"seed": s, "shape": [8],
                    "bits": [int(v) for v in np.asarray(jax.random.bits(jax.random.key(s), (8,), jnp.uint32))]}
                   for s in [0, 42]]

    normals = []
    for seed, shape, indices in [(0, (5,), None), (42, (7, 3), None),
                                 (7, (300, 257), [0, 1, 2, 255, 256, 257, 65535, 65536, 65537, 77099])]:
        values = np.asarray(jax.random.normal(jax.random.key(seed), shape, jnp.float32)).ravel()
        if indices is None:
            indices = list(range(values.size))
        normals.append({"seed": seed, "shape": list(shape), "indices": indices,
                        "bits": f32_bits(values[indices])})
    out["normals"] = normals

    large = []
    for rows, row, start, count, seed in [(2, 1, 0, 4, 42), (3, 2, 2**32 - 2, 2, 5)]:
        indices, values, bits = window_normals(rows, row, start, count, seed)
        large.append({"seed": seed, "indices": indices, "bits": values, "random_bits": bits})
    out["normals_large_index"] = large

    params = []
    for seed, name, shape, stddev, indices in [
            (1234, "h.0.attn.c_proj.weight", (768, 768), 0.02 / math.sqrt(2 * 12), [0, 1, 12345, 589823]),
            (0, "wte.weight", (50257, 768), 0.02, [0, 1, 38597375]),
            (3, "h.5.mlp.c_fc.weight", (64, 256), 0.02, [0, 100, 16383])]:
        key = jax.random.fold_in(jax.random.key(seed), np.uint32(fnv1a32(name)))
        values = np.asarray(jax.random.normal(key, shape, jnp.float32) * stddev).ravel()
        params.append({"seed": seed, "name": name, "name_hash": fnv1a32(name), "shape": list(shape),
                       "stddev": stddev, "indices": indices, "bits": f32_bits(values[indices])})
    out["parameters"] = params

    # Seeds of 2^32 and above keep their high word only with 64-bit integers enabled (otherwise
    # JAX truncates the seed to 32 bits first); eagerlm follows the 64-bit behaviour.
    jax.config.update("jax_enable_x64", True)
    out["keys_x64"] = [{"seed": int(s), "key": key_words(jax.random.key(np.uint64(s)))}
                       for s in [2**32 + 5, 2**63 - 1, 2**64 - 1]]
    jax.config.update("jax_enable_x64", False)
    return out


def hexes(values):
    return ", ".join(f"0x{v:08x}u" for v in values)


CPP_PREAMBLE = """\
// Known-answer vectors computed by JAX (an implementation independent of eagerlm's), for
// test/random. Do not edit: regenerate with
//   python tools/jax_reference/make_init_vectors.py --cpp > test/random/jax_vectors.h
// Float values are IEEE-754 bit patterns.
#pragma once

#include <cstdint>

namespace eagerlm::test_vectors {

struct ThreefryKat { uint32_t key[2], counter[2], out[2]; };
struct SeedKey { uint64_t seed; uint32_t key[2]; };
struct FoldIn { uint64_t seed; uint32_t data; uint32_t key[2]; };
struct SeedBits { uint64_t seed; uint32_t bits[8]; };  // jax.random.bits(key(seed), (8,), uint32)
struct IndexedValue { uint64_t seed; uint64_t index; uint32_t bits; };
struct ParameterValue {
  uint64_t seed; const char* name; uint32_t name_hash; double stddev; uint64_t index; uint32_t bits;
};
"""


def print_cpp(v):
    print(CPP_PREAMBLE)
    print(f"// Generated with JAX {v['jax_version']} "
          f"(jax_threefry_partitionable={v['jax_threefry_partitionable']}, "
          f"default PRNG {v['jax_default_prng_impl']}).")
    print("constexpr ThreefryKat kThreefryKat[] = {")
    for k in v["threefry_kat"]:
        print(f"    {{{{{hexes(k['key'])}}}, {{{hexes(k['counter'])}}}, {{{hexes(k['out'])}}}}},")
    print("};")
    print("constexpr SeedKey kSeedKeys[] = {")
    for k in v["keys"] + v["keys_x64"]:
        print(f"    {{{k['seed']}ull, {{{hexes(k['key'])}}}}},")
    print("};")
    print("constexpr FoldIn kFoldIns[] = {")
    for k in v["fold_in"]:
        print(f"    {{{k['seed']}ull, 0x{k['data']:08x}u, {{{hexes(k['key'])}}}}},")
    print("};")
    print("constexpr SeedBits kSeedBits[] = {")
    for k in v["bits"]:
        print(f"    {{{k['seed']}ull, {{{hexes(k['bits'])}}}}},")
    print("};")
    print("constexpr IndexedValue kNormals[] = {  // {seed, flat index, float32 bits}")
    for n in v["normals"] + v["normals_large_index"]:
        for i, b in zip(n["indices"], n["bits"]):
            print(f"    {{{n['seed']}ull, {i}ull, 0x{b:08x}u}},")
    print("};")
    print("constexpr IndexedValue kLargeIndexBits[] = {  // {seed, flat index, random bits}")
    for n in v["normals_large_index"]:
        for i, b in zip(n["indices"], n["random_bits"]):
            print(f"    {{{n['seed']}ull, {i}ull, 0x{b:08x}u}},")
    print("};")
    print("constexpr ParameterValue kParameterValues[] = {  // {seed, name, name hash, stddev, index, bits}")
    for p in v["parameters"]:
        for i, b in zip(p["indices"], p["bits"]):
            print(f"    {{{p['seed']}ull, \"{p['name']}\", 0x{p['name_hash']:08x}u, {p['stddev']!r}, {i}ull, 0x{b:08x}u}},")
    print("};")
    print()
    print("}  // namespace eagerlm::test_vectors")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp", action="store_true", help="print C++ initializers instead of JSON")
    args = parser.parse_args()
    jax.config.update("jax_platforms", "cpu")
    vectors = compute()
    if args.cpp:
        print_cpp(vectors)
    else:
        json.dump(vectors, sys.stdout, indent=1, sort_keys=True)
        print()


if __name__ == "__main__":
    main()
