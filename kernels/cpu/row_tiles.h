// Register tiles of a compile-time number of rows, for the kernels that stream W once for up to 8
// rows of x (linear_paired, linear_int8_panels): `with_rows` turns a run-time row count into the
// template argument of a tile, so that each tile's accumulators are plain registers.
// Included by a kernel source INSIDE its ISA region (after isa_begin.h), as weight_vectors.h is;
// <type_traits> must be included before the region.
#pragma once

namespace eagerlm::cpu::EAGERLM_CPU_ISA {

// Calls f(std::integral_constant<int, R>()) for R = rows, 1 <= rows <= kMaxRows <= 8.
template <int kMaxRows, typename F>
void with_rows(int rows, F&& f) {
  static_assert(kMaxRows >= 1 && kMaxRows <= 8);
  auto tile = [&](auto r) {
    if constexpr (r() <= kMaxRows) f(r);
  };
  switch (rows) {
    case 1: return tile(std::integral_constant<int, 1>());
    case 2: return tile(std::integral_constant<int, 2>());
    case 3: return tile(std::integral_constant<int, 3>());
    case 4: return tile(std::integral_constant<int, 4>());
    case 5: return tile(std::integral_constant<int, 5>());
    case 6: return tile(std::integral_constant<int, 6>());
    case 7: return tile(std::integral_constant<int, 7>());
    case 8: return tile(std::integral_constant<int, 8>());
  }
}

}  // namespace eagerlm::cpu::EAGERLM_CPU_ISA
