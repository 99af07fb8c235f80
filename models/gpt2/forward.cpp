#include "models/gpt2/forward.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/core/error.h"
#include "engine/ops/ops.h"
#include "kernels/cuda/attention_split.h"

namespace eagerlm::gpt2 {

namespace {

[[noreturn]] void bad_step(const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); }

// Rows of batch metadata in batch_meta_: one int32 per slot each.
enum MetaRow { kSlot = 0, kRowStart = 1, kNewTokens = 2, kPastLen = 3, kMetaRows = 4 };

}  // namespace

ForwardPass::ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits)
    : model_(std::move(model)), limits_(limits), ctx_(model_->device()) {
  const Config& c = model_->config();
  ctx_.set_gemm_math(limits_.gemm_math);  // throws kUnsupported for TF32/BF16 on the CPU
  if (limits_.max_len <= 0) limits_.max_len = c.n_positions;
  if (limits_.max_len > c.n_positions)
    bad_step("max_len " + std::to_string(limits_.max_len) + " exceeds the model's n_positions (" +
             std::to_string(c.n_positions) + ")");
  if (limits_.max_slots < 1 || limits_.max_step_rows < 1)
    bad_step("max_batch and max_step_rows must be at least 1");
  limits_.max_step_rows = std::min(limits_.max_step_rows, limits_.max_slots * limits_.max_len);

  const int64_t R = limits_.max_step_rows, S = limits_.max_slots, d = c.n_embd;
  const int64_t logit_rows = limits_.all_logits ? R : S;
  const int64_t input_ints = kMetaRows * S + 2 * R;
  const Shape shapes_f32[] = {{R, d}, {R, d}, {R, 3 * d}, {R, d}, {R, c.mlp_width()}, {S, d},
                              {logit_rows, c.vocab_size}};
  size_t bytes = Arena::footprint({input_ints}, DType::kI32);
  for (const auto& s : shapes_f32) bytes += Arena::footprint(s);

  cache_ = KvCache(c, S, limits_.max_len, model_->device());
  arena_ = Arena(bytes, model_->device());
  step_inputs_ = arena_.alloc({input_ints}, DType::kI32);
  batch_meta_ = step_inputs_.slice(0, 0, kMetaRows * S);
  ids_ = step_inputs_.slice(0, kMetaRows * S, R);
  positions_ = step_inputs_.slice(0, kMetaRows * S + R, R);
  x_ = arena_.alloc(shapes_f32[0]);
  h_ = arena_.alloc(shapes_f32[1]);
  qkv_ = arena_.alloc(shapes_f32[2]);
  attn_ = arena_.alloc(shapes_f32[3]);
  mlp_ = arena_.alloc(shapes_f32[4]);
  last_ = arena_.alloc(shapes_f32[5]);
  logits_ = arena_.alloc(shapes_f32[6]);

  if (ctx_.device() == Device::kCuda) {
    // Everything a step needs on the device exists from here on: a step (and so a captured
    // graph) never allocates, and nothing it uses ever moves.
    cuda::CudaContext& gpu = *ctx_.cuda();
    cuda::reserve_attention_scratch(gpu, R, c.n_head, c.d_head(), limits_.max_len);
    staging_ = cuda::StagingBuffer(step_inputs_.nbytes());
    std::memset(staging_.writable(), 0, staging_.capacity());
    if (limits_.cuda_graphs) decode_graphs_.resize(size_t(S) + 1);
  }
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

int32_t ForwardPass::stage_inputs(const std::vector<SequenceStep>& seqs) {
  const int64_t S = limits_.max_slots, R = limits_.max_step_rows;
  const bool on_cuda = ctx_.device() == Device::kCuda;
  // Same layout as step_inputs_: [batch_meta (kMetaRows × S) | ids (R) | positions (R)].
  int32_t* const meta = static_cast<int32_t*>(on_cuda ? staging_.writable() : step_inputs_.raw());
  int32_t* const ids = meta + kMetaRows * S;
  int32_t* const positions = ids + R;
  int32_t rows = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SequenceStep& q = seqs[s];
    meta[kSlot * S + int64_t(s)] = q.slot;
    meta[kRowStart * S + int64_t(s)] = rows;
    meta[kNewTokens * S + int64_t(s)] = q.n_tokens;
    meta[kPastLen * S + int64_t(s)] = q.past_len;
    for (int32_t i = 0; i < q.n_tokens; ++i) {
      ids[rows + i] = q.tokens[i];
      positions[rows + i] = q.past_len + i;
    }
    rows += q.n_tokens;
  }
  if (on_cuda) {
    // One copy, up to the last position used; on the stream, so ordered before the step's work.
    const size_t used = size_t(kMetaRows * S + R + rows) * sizeof(int32_t);
    staging_.upload(*ctx_.cuda(), step_inputs_.raw(), used);
  }
  return rows;
}

ForwardPass::DecodeGraph* ForwardPass::decode_graph(const std::vector<SequenceStep>& seqs) {
  if (decode_graphs_.empty()) return nullptr;  // CPU, or graphs turned off
  for (const SequenceStep& q : seqs)
    if (q.n_tokens != 1) return nullptr;
  return &decode_graphs_[seqs.size()];
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
  const int64_t S = limits_.max_slots;
  const int32_t rows = stage_inputs(seqs);
  // The metadata sits at fixed addresses; only the counts change from step to step (and not at
  // all between decode steps of one batch size).
  const int32_t* m = batch_meta_.data<int32_t>();
  StepBatch batch;
  batch.n_seq = int32_t(seqs.size());
  batch.n_rows = rows;
  batch.slot = m + kSlot * S;
  batch.row_start = m + kRowStart * S;
  batch.n_new = m + kNewTokens * S;
  batch.past_len = m + kPastLen * S;

  DecodeGraph* decode = decode_graph(seqs);
  if (!decode || decode->steps++ == 0) return run_model(seqs, rows, batch, which);

  // Decode steps have one row per sequence, so the logits are the first n_seq rows of logits_
  // whatever `which` asks for, at the same address on every replay.
  cuda::CudaContext& gpu = *ctx_.cuda();
  if (decode->graph.empty() || decode->graph.stale(gpu)) {
    decode->graph = cuda::CudaGraph();  // release the old one before capturing anew
    decode->graph = cuda::CudaGraph::capture(gpu, [&] { run_model(seqs, rows, batch, which); });
  }
  decode->graph.launch(gpu);
  ++graph_replays_;
  return logits_.slice(0, 0, int64_t(seqs.size()));
}

Tensor ForwardPass::run_model(const std::vector<SequenceStep>& seqs, int32_t rows,
                              const StepBatch& batch, LogitsFor which) {
  const Config& c = model_->config();
  const Weights& w = model_->weights();
  const int64_t n_seq = int64_t(seqs.size());

  Tensor x = x_.slice(0, 0, rows);
  ops::embedding(ctx_, ids_.slice(0, 0, rows), positions_.slice(0, 0, rows), w.wte, w.wpe, x);
  for (int64_t l = 0; l < c.n_layer; ++l) run_block(w.blocks[size_t(l)], l, rows, batch);

  // The final norm and the output head run only on the rows whose logits are wanted.
  Tensor selected = x;
  if (which == LogitsFor::kLastToken && rows != n_seq) {
    const size_t row_bytes = size_t(c.n_embd) * sizeof(float);
    int64_t row_end = 0;
    for (int64_t s = 0; s < n_seq; ++s) {
      row_end += seqs[size_t(s)].n_tokens;
      device_copy(last_.select(0, s).raw(), last_.device(), x.select(0, row_end - 1).raw(),
                  x.device(), row_bytes);
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
