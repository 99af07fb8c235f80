// Validation and dispatch of sampling on the device.
#include "engine/core/error.h"
#include "engine/ops/op_checks.h"
#include "engine/ops/ops.h"

namespace eagerlm::ops {

void sample_rows(const ExecContext& ctx, const Tensor& logits, const SampleRow* rows, const int32_t* tokens,
                 uint8_t* presence, int64_t n_slots, const SampleParams& params, SampleResult* out) {
  const char* op = "sample_rows";
  if (!ctx.samples_on_device())
    throw_error(ErrorCode::kUnsupported,
                std::string("op sample_rows: the ") + device_name(ctx.device()) + " backend samples on the host");
  detail::expect_f32_on(ctx, logits, op, "logits");
  const int64_t ld = detail::row_stride(logits, op, "logits");
  EAGERLM_OP_EXPECT(rows && tokens && presence && out && n_slots > 0, op, "buffers must be given");
  ctx.queue().sample_rows(logits.f32(), ld, logits.size(0), logits.size(1), rows, tokens, presence, n_slots, params,
                          out);
}

}  // namespace eagerlm::ops
