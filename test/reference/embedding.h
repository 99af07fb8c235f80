// Double-precision reference for embedding: y[t, :] = wte[ids[t], :] + wpe[positions[t], :].
#pragma once

#include <cstdint>
#include <vector>

namespace eagerlm::reference {

inline std::vector<double> embedding(const int32_t* ids, const int32_t* positions, int64_t n_tokens, const float* wte,
                                     const float* wpe, int64_t d_model) {
  std::vector<double> y(static_cast<size_t>(n_tokens * d_model));
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t c = 0; c < d_model; ++c) {
      y[t * d_model + c] =
          double(wte[int64_t(ids[t]) * d_model + c]) + double(wpe[int64_t(positions[t]) * d_model + c]);
    }
  }
  return y;
}

}  // namespace eagerlm::reference
