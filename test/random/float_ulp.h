// Distance in units in the last place between two floats, for the random tests' tolerances.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace eagerlm::test {

// Floats mapped to integers so that adjacent floats differ by 1 (and -0 == +0).
inline int64_t float_order(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? -int64_t(i & 0x7fffffff) : int64_t(i);
}
inline int64_t ulp_distance(float a, float b) { return std::llabs(float_order(a) - float_order(b)); }

inline float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace eagerlm::test
