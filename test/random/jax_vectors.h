// Known-answer vectors computed by JAX (an implementation independent of eagerlm's), for
// test/random. Do not edit: regenerate with
//   python tools/jax_reference/make_init_vectors.py --cpp > test/random/jax_vectors.h
// Float values are IEEE-754 bit patterns.
#pragma once

#include <cstdint>

namespace eagerlm::test_vectors {

struct ThreefryKat {
  uint32_t key[2], counter[2], out[2];
};
struct SeedKey {
  uint64_t seed;
  uint32_t key[2];
};
struct FoldIn {
  uint64_t seed;
  uint32_t data;
  uint32_t key[2];
};
struct SeedBits {
  uint64_t seed;
  uint32_t bits[8];
};  // jax.random.bits(key(seed), (8,), uint32)
struct IndexedValue {
  uint64_t seed;
  uint64_t index;
  uint32_t bits;
};
struct ParameterValue {
  uint64_t seed;
  const char* name;
  uint32_t name_hash;
  double stddev;
  uint64_t index;
  uint32_t bits;
};

// Generated with JAX 0.10.2 (jax_threefry_partitionable=True, default PRNG threefry2x32).
constexpr ThreefryKat kThreefryKat[] = {
    {{0x00000000u, 0x00000000u}, {0x00000000u, 0x00000000u}, {0x6b200159u, 0x99ba4efeu}},
    {{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}, {0x1cb996fcu, 0xbb002be7u}},
    {{0x13198a2eu, 0x03707344u}, {0x243f6a88u, 0x85a308d3u}, {0xc4923a9cu, 0x483df7a0u}},
};
constexpr SeedKey kSeedKeys[] = {
    {0ull, {0x00000000u, 0x00000000u}},
    {1ull, {0x00000000u, 0x00000001u}},
    {42ull, {0x00000000u, 0x0000002au}},
    {1234567ull, {0x00000000u, 0x0012d687u}},
    {2147483647ull, {0x00000000u, 0x7fffffffu}},
    {4294967295ull, {0x00000000u, 0xffffffffu}},
    {4294967301ull, {0x00000001u, 0x00000005u}},
    {9223372036854775807ull, {0x7fffffffu, 0xffffffffu}},
    {18446744073709551615ull, {0xffffffffu, 0xffffffffu}},
};
constexpr FoldIn kFoldIns[] = {
    {0ull, 0x00000000u, {0x6b200159u, 0x99ba4efeu}},  {42ull, 0x00000001u, {0x03d7b32du, 0xadd083f4u}},
    {42ull, 0xdeadbeefu, {0x620b66abu, 0xd15de6fcu}}, {1ull, 0x9d783169u, {0x3c13f313u, 0xc0196d15u}},
    {7ull, 0x891aef97u, {0xf2b52275u, 0xb960b69fu}},
};
constexpr SeedBits kSeedBits[] = {
    {0ull, {0xf29a4fa7u, 0xfa843692u, 0x55110e28u, 0x77faa835u, 0x91e43bb7u, 0x2a5e6943u, 0x4f68ea7du, 0xb081ccfeu}},
    {42ull, {0x7d1c13a2u, 0xae0730d9u, 0x9dc3f9f9u, 0x8f9ec1d7u, 0x735d7315u, 0x95fb4ed8u, 0x1326b799u, 0xc66f24b0u}},
};
constexpr IndexedValue kNormals[] = {
    // {seed, flat index, float32 bits}
    {0ull, 0ull, 0x3fcfb2bdu},           {0ull, 1ull, 0x40019df0u},           {0ull, 2ull, 0xbede0017u},
    {0ull, 3ull, 0xbda10222u},           {0ull, 4ull, 0x3e34512cu},           {42ull, 0ull, 0xbce7df15u},
    {42ull, 1ull, 0x3eef2be8u},          {42ull, 2ull, 0x3e976661u},          {42ull, 3ull, 0x3e1d3b24u},
    {42ull, 4ull, 0xbdfe04ebu},          {42ull, 5ull, 0x3e5e211au},          {42ull, 6ull, 0xbfb86eb9u},
    {42ull, 7ull, 0x3f418009u},          {42ull, 8ull, 0x3f057b1au},          {42ull, 9ull, 0x3f6900edu},
    {42ull, 10ull, 0xbec4dcbdu},         {42ull, 11ull, 0x3f91e5bbu},         {42ull, 12ull, 0x3fb90f86u},
    {42ull, 13ull, 0x3f8a5b26u},         {42ull, 14ull, 0xbd6693b6u},         {42ull, 15ull, 0x3f68db2fu},
    {42ull, 16ull, 0x3f0eae3du},         {42ull, 17ull, 0x3e605087u},         {42ull, 18ull, 0xbfb968bcu},
    {42ull, 19ull, 0x3f43a1cbu},         {42ull, 20ull, 0xbe775817u},         {7ull, 0ull, 0x3ee7084bu},
    {7ull, 1ull, 0x3ffa0aaeu},           {7ull, 2ull, 0xbf042845u},           {7ull, 255ull, 0xbedef0f5u},
    {7ull, 256ull, 0x3f1883aau},         {7ull, 257ull, 0xbbdf8f26u},         {7ull, 65535ull, 0x3f95841fu},
    {7ull, 65536ull, 0x3e80fb30u},       {7ull, 65537ull, 0xbd751cceu},       {7ull, 77099ull, 0x3f4c808bu},
    {42ull, 4294967296ull, 0x3f7ad8f9u}, {42ull, 4294967297ull, 0xbec8880cu}, {42ull, 4294967298ull, 0x3f77ee06u},
    {42ull, 4294967299ull, 0x3f753e50u}, {5ull, 12884901886ull, 0x3f556bdcu}, {5ull, 12884901887ull, 0xbf314c0eu},
};
constexpr IndexedValue kLargeIndexBits[] = {
    // {seed, flat index, random bits}
    {42ull, 4294967296ull, 0xd61fff96u}, {42ull, 4294967297ull, 0x58ffd562u}, {42ull, 4294967298ull, 0xd5669759u},
    {42ull, 4294967299ull, 0xd4ba1182u}, {5ull, 12884901886ull, 0xcc3a8f98u}, {5ull, 12884901887ull, 0x3e89d7cbu},
};
constexpr ParameterValue kParameterValues[] = {
    // {seed, name, name hash, stddev, index, bits}
    {1234ull, "h.0.attn.c_proj.weight", 0x9154e731u, 0.004082482904638631, 0ull, 0x3ad494bfu},
    {1234ull, "h.0.attn.c_proj.weight", 0x9154e731u, 0.004082482904638631, 1ull, 0x3b8f727du},
    {1234ull, "h.0.attn.c_proj.weight", 0x9154e731u, 0.004082482904638631, 12345ull, 0x3a6a148bu},
    {1234ull, "h.0.attn.c_proj.weight", 0x9154e731u, 0.004082482904638631, 589823ull, 0x3af0f0f4u},
    {0ull, "wte.weight", 0x9d783169u, 0.02, 0ull, 0xbd14be59u},
    {0ull, "wte.weight", 0x9d783169u, 0.02, 1ull, 0x3c787780u},
    {0ull, "wte.weight", 0x9d783169u, 0.02, 38597375ull, 0xbbce10bbu},
    {3ull, "h.5.mlp.c_fc.weight", 0x5c2c28e0u, 0.02, 0ull, 0x3c341e40u},
    {3ull, "h.5.mlp.c_fc.weight", 0x5c2c28e0u, 0.02, 100ull, 0xbd0323e7u},
    {3ull, "h.5.mlp.c_fc.weight", 0x5c2c28e0u, 0.02, 16383ull, 0xbcbe23b4u},
};

}  // namespace eagerlm::test_vectors
