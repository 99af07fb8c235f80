// Validation and device dispatch for target_logprobs: log-probabilities of given next tokens from
// final hidden states and the tied output head, without materialising the logits.
#include <initializer_list>

#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"

namespace eagerlm::ops {

using detail::expect_f32_on;
using detail::row_stride;

void target_logprobs(const ExecContext& ctx, const Tensor& h, const Tensor& w, const Tensor& targets, Tensor& out) {
  const char* op = "target_logprobs";
  for (const Tensor* t : std::initializer_list<const Tensor*>{&h, &w, &out}) expect_f32_on(ctx, *t, op, "operand");
  const int64_t ldh = row_stride(h, op, "h");
  EAGERLM_OP_EXPECT(w.rank() == 2 && w.is_contiguous(), op, "w must be contiguous [vocab, d]: " + w.describe());
  const int64_t rows = h.size(0), d = h.size(1), vocab = w.size(0);
  EAGERLM_OP_EXPECT(w.size(1) == d, op, "shapes h " + h.shape().to_string() + " w " + w.shape().to_string());
  EAGERLM_OP_EXPECT(vocab >= 1, op, "the vocabulary is empty");
  EAGERLM_OP_EXPECT(
      targets.defined() && targets.dtype() == DType::kI32 && targets.device() == ctx.device(), op,
      "targets must be I32 on the op's device: " + (targets.defined() ? targets.describe() : std::string("undefined")));
  EAGERLM_OP_EXPECT(targets.rank() == 1 && targets.numel() == rows && targets.is_contiguous(), op,
                    "targets must be [rows] = [" + std::to_string(rows) + "]: " + targets.describe());
  EAGERLM_OP_EXPECT(out.rank() == 1 && out.numel() == rows && out.is_contiguous(), op,
                    "out must be [rows] = [" + std::to_string(rows) + "]: " + out.describe());
  ctx.queue().target_logprobs(h.f32(), ldh, w.f32(), targets.data<int32_t>(), out.f32(), rows, d, vocab);
}

}  // namespace eagerlm::ops
