// Floating-point work of GPT-2's forward pass, counted as multiply-adds ×2, for the benchmarks'
// floors (work ÷ the measured peak is the shortest time the arithmetic alone can take). Layer
// norms, GELU and softmax are left out: a few operations per element against d per element in a
// product.
#pragma once

#include "models/gpt2/config.h"

namespace eagerlm::cli {

// Every linear layer of every block, on one token.
inline double linear_flops_per_token(const gpt2::Config& c) {
  const double d = double(c.n_embd), m = double(c.mlp_width());
  return 2 * (d * 3 * d + d * d + 2 * d * m) * double(c.n_layer);
}

// A prefill of T tokens: every linear layer on every token, causal attention (QKᵀ and PV over
// T(T+1)/2 pairs) and the output head on the last token only.
inline double prefill_flops(const gpt2::Config& c, double T) {
  const double d = double(c.n_embd);
  const double attention = 2 * 2 * (T * (T + 1) / 2) * d * double(c.n_layer);
  return linear_flops_per_token(c) * T + attention + 2 * d * double(c.vocab_size);
}

// One decode token at `position` (attending over position + 1 keys), with its output head.
inline double decode_flops(const gpt2::Config& c, double position) {
  const double d = double(c.n_embd);
  return linear_flops_per_token(c) + 2 * 2 * (position + 1) * d * double(c.n_layer) + 2 * d * double(c.vocab_size);
}

}  // namespace eagerlm::cli
