#include "models/gpt2/forward.h"

#include <algorithm>
#include <string>

#include "engine/core/error.h"
#include "engine/ops/ops.h"

namespace eagerlm::gpt2 {

namespace {

[[noreturn]] void bad_step(const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); }

// Rows of batch metadata in batch_meta_: one int32 per slot each.
enum MetaRow { kSlot = 0, kRowStart = 1, kNewTokens = 2, kPastLen = 3, kMetaRows = 4 };

}  // namespace

ForwardPass::ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits)
    : model_(std::move(model)), limits_(limits), ctx_(model_->device()) {
  const Config& c = model_->config();
  if (limits_.max_len <= 0) limits_.max_len = c.n_positions;
  if (limits_.max_len > c.n_positions)
    bad_step("max_len " + std::to_string(limits_.max_len) + " exceeds the model's n_positions (" +
             std::to_string(c.n_positions) + ")");
  if (limits_.max_slots < 1 || limits_.max_step_rows < 1)
    bad_step("max_batch and max_step_rows must be at least 1");
  limits_.max_step_rows = std::min(limits_.max_step_rows, limits_.max_slots * limits_.max_len);

  const int64_t R = limits_.max_step_rows, S = limits_.max_slots, d = c.n_embd;
  const int64_t logit_rows = limits_.all_logits ? R : S;
  const Shape shapes_f32[] = {{R, d}, {R, d}, {R, 3 * d}, {R, d}, {R, c.mlp_width()}, {S, d},
                              {logit_rows, c.vocab_size}};
  size_t bytes = Arena::footprint({R}, DType::kI32) * 2 + Arena::footprint({kMetaRows, S}, DType::kI32);
  for (const auto& s : shapes_f32) bytes += Arena::footprint(s);

  cache_ = KvCache(c, S, limits_.max_len, model_->device());
  arena_ = Arena(bytes, model_->device());
  ids_ = arena_.alloc({R}, DType::kI32);
  positions_ = arena_.alloc({R}, DType::kI32);
  batch_meta_ = arena_.alloc({kMetaRows, S}, DType::kI32);
  x_ = arena_.alloc(shapes_f32[0]);
  h_ = arena_.alloc(shapes_f32[1]);
  qkv_ = arena_.alloc(shapes_f32[2]);
  attn_ = arena_.alloc(shapes_f32[3]);
  mlp_ = arena_.alloc(shapes_f32[4]);
  last_ = arena_.alloc(shapes_f32[5]);
  logits_ = arena_.alloc(shapes_f32[6]);
}

void ForwardPass::check_step(const std::vector<SequenceStep>& seqs) const {
  const Config& c = model_->config();
  if (seqs.empty()) bad_step("a step needs at least one sequence");
  if (int64_t(seqs.size()) > limits_.max_slots)
    bad_step(std::to_string(seqs.size()) + " sequences exceed max_batch " + std::to_string(limits_.max_slots));
  std::vector<bool> used(size_t(limits_.max_slots), false);
  int64_t rows = 0;
  for (const auto& s : seqs) {
    if (s.slot < 0 || s.slot >= limits_.max_slots || used[size_t(s.slot)])
      bad_step("cache slot " + std::to_string(s.slot) + " is out of range or used twice");
    used[size_t(s.slot)] = true;
    if (s.n_tokens < 1 || !s.tokens) bad_step("a sequence in a step needs at least one token");
    if (s.past_len < 0 || int64_t(s.past_len) + s.n_tokens > limits_.max_len)
      bad_step("sequence of " + std::to_string(int64_t(s.past_len) + s.n_tokens) +
               " tokens exceeds the maximum length " + std::to_string(limits_.max_len));
    for (int32_t i = 0; i < s.n_tokens; ++i)
      if (s.tokens[i] < 0 || s.tokens[i] >= c.vocab_size)
        bad_step("token id " + std::to_string(s.tokens[i]) + " is outside the vocabulary [0, " +
                 std::to_string(c.vocab_size) + ")");
    rows += s.n_tokens;
  }
  if (rows > limits_.max_step_rows)
    bad_step(std::to_string(rows) + " tokens in one step exceed max_step_rows " +
             std::to_string(limits_.max_step_rows));
}

Tensor ForwardPass::upload_i32(const std::vector<int32_t>& host, Tensor& device_buf) {
  Tensor view = device_buf.rank() == 1 ? device_buf.slice(0, 0, int64_t(host.size()))
                                       : device_buf.reshape({device_buf.numel()}).slice(0, 0, int64_t(host.size()));
  device_copy(view.raw(), view.device(), host.data(), Device::kCpu, host.size() * sizeof(int32_t));
  return view;
}

void ForwardPass::run_block(const BlockWeights& w, int64_t layer, int64_t rows, const StepBatch& batch) {
  const float eps = float(model_->config().layer_norm_epsilon);
  Tensor x = x_.slice(0, 0, rows), h = h_.slice(0, 0, rows), qkv = qkv_.slice(0, 0, rows);
  Tensor attn = attn_.slice(0, 0, rows), mlp = mlp_.slice(0, 0, rows);
  ops::KvLayerView kv = cache_.layer(layer);

  ops::layer_norm(ctx_, x, w.ln_1_weight, w.ln_1_bias, h, eps);
  ops::linear(ctx_, h, w.attn_weight, w.attn_bias, qkv);
  ops::kv_append(ctx_, qkv, batch, kv);
  ops::attention(ctx_, qkv, batch, kv, attn);
  ops::linear(ctx_, attn, w.attn_proj_weight, w.attn_proj_bias, h);
  ops::add(ctx_, x, h, x);

  ops::layer_norm(ctx_, x, w.ln_2_weight, w.ln_2_bias, h, eps);
  ops::linear(ctx_, h, w.fc_weight, w.fc_bias, mlp);
  ops::gelu(ctx_, mlp, mlp);
  ops::linear(ctx_, mlp, w.mlp_proj_weight, w.mlp_proj_bias, h);
  ops::add(ctx_, x, h, x);
}

Tensor ForwardPass::step(const std::vector<SequenceStep>& seqs, LogitsFor which) {
  check_step(seqs);
  if (which == LogitsFor::kAllTokens && !limits_.all_logits)
    throw_error(ErrorCode::kInternal, "ForwardPass planned without all_logits");
  const Config& c = model_->config();
  const Weights& w = model_->weights();
  const int64_t S = limits_.max_slots, n_seq = int64_t(seqs.size());

  std::vector<int32_t> ids, positions, meta(size_t(kMetaRows * S), 0);
  int32_t rows = 0;
  for (int64_t s = 0; s < n_seq; ++s) {
    const SequenceStep& q = seqs[size_t(s)];
    meta[size_t(kSlot * S + s)] = q.slot;
    meta[size_t(kRowStart * S + s)] = rows;
    meta[size_t(kNewTokens * S + s)] = q.n_tokens;
    meta[size_t(kPastLen * S + s)] = q.past_len;
    for (int32_t i = 0; i < q.n_tokens; ++i) {
      ids.push_back(q.tokens[i]);
      positions.push_back(q.past_len + i);
    }
    rows += q.n_tokens;
  }
  const Tensor ids_dev = upload_i32(ids, ids_);
  const Tensor pos_dev = upload_i32(positions, positions_);
  const Tensor meta_dev = upload_i32(meta, batch_meta_);
  const int32_t* m = meta_dev.data<int32_t>();
  StepBatch batch;
  batch.n_seq = int32_t(n_seq);
  batch.n_rows = rows;
  batch.slot = m + kSlot * S;
  batch.row_start = m + kRowStart * S;
  batch.n_new = m + kNewTokens * S;
  batch.past_len = m + kPastLen * S;

  Tensor x = x_.slice(0, 0, rows);
  ops::embedding(ctx_, ids_dev, pos_dev, w.wte, w.wpe, x);
  for (int64_t l = 0; l < c.n_layer; ++l) run_block(w.blocks[size_t(l)], l, rows, batch);

  // The final norm and the output head run only on the rows whose logits are wanted.
  Tensor selected = x;
  if (which == LogitsFor::kLastToken && rows != n_seq) {
    const size_t row_bytes = size_t(c.n_embd) * sizeof(float);
    for (int64_t s = 0; s < n_seq; ++s) {
      const int64_t src_row = meta[size_t(kRowStart * S + s)] + seqs[size_t(s)].n_tokens - 1;
      device_copy(last_.select(0, s).raw(), last_.device(), x.select(0, src_row).raw(), x.device(), row_bytes);
    }
    selected = last_.slice(0, 0, n_seq);
  }
  const int64_t out_rows = selected.size(0);
  Tensor normed = h_.slice(0, 0, out_rows);
  ops::layer_norm(ctx_, selected, w.ln_f_weight, w.ln_f_bias, normed, float(c.layer_norm_epsilon));
  Tensor logits = logits_.slice(0, 0, out_rows);
  ops::linear_transposed(ctx_, normed, w.wte, logits);
  return logits;
}

}  // namespace eagerlm::gpt2
