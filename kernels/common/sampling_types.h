// The records of device-side sampling (kernels/cuda/sample.cu, engine/ops sample_rows): plain
// structs laid out the same on the host and the device, so a row table is built on the host and
// copied up as bytes.
#pragma once

#include <cstdint>

namespace eagerlm {

// One row of a sample_rows call (an array of them in device memory, one per logits row).
struct SampleRow {
  uint64_t stream = 0;      // the sequence's random stream (Philox subsequence)
  uint64_t draw = 0;        // its draw number: tokens it sampled before this one
  int32_t slot = 0;         // its presence row (out of [0, n_slots): no penalty, nothing recorded)
  int32_t restart = 0;      // 1: the sequence starts with this step; its presence row is cleared
  int32_t token_begin = 0;  // tokens fed this step: tokens[token_begin, token_begin + n_tokens)
  int32_t n_tokens = 0;
  int32_t wanted = 1;  // 0: record the fed tokens only (a prompt chunk that is not its last)
  int32_t reserved = 0;
};

// The options of the whole call (validated by the kernel: kInvalidArgument names the bad one).
struct SampleParams {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0 (or >= vocab): off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  bool logprobs = false;  // also return log p(id) under the raw logits' softmax
};

struct SampleResult {
  int32_t id = -1;       // -1 for rows not wanted
  float logprob = 0.0f;  // when SampleParams::logprobs
};

}  // namespace eagerlm
