#include "models/gpt2/forward.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/ops/ops.h"

namespace eagerlm::gpt2 {

namespace {

[[noreturn]] void bad_step(const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); }

std::string gib(size_t bytes) {
  if (bytes == SIZE_MAX) return "more than 2^64 bytes";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(size_t(1) << 30));
  return buf;
}

// Rows of batch metadata in batch_meta_: one int32 per slot each.
enum MetaRow { kSlot = 0, kRowStart = 1, kNewTokens = 2, kPastLen = 3, kMetaRows = 4 };

}  // namespace

ForwardPass::ForwardPass(std::shared_ptr<const Model> model, const ForwardLimits& limits)
    : model_(std::move(model)), limits_(limits), ctx_(model_->device()) {
  const Config& c = model_->config();
  ctx_.set_gemm_math(model_->gemm_math(), model_->weight_type());
  if (limits_.max_len <= 0) limits_.max_len = c.n_positions;
  if (limits_.max_len > c.n_positions)
    bad_step("max_len " + std::to_string(limits_.max_len) + " exceeds the model's n_positions (" +
             std::to_string(c.n_positions) + ")");
  if (limits_.max_slots < 1 || limits_.max_step_rows < 1) bad_step("max_batch and max_step_rows must be at least 1");
  limits_.max_step_rows = std::min(limits_.max_step_rows, limits_.max_slots * limits_.max_len);

  const int64_t R = limits_.max_step_rows, S = limits_.max_slots, d = c.n_embd;
  const int64_t logit_rows = limits_.all_logits ? R : S;
  const int64_t input_ints = kMetaRows * S + (limits_.target_logprobs ? 3 : 2) * R;
  const Shape shapes_f32[] = {
      {R, d}, {R, d}, {R, 3 * d}, {R, d}, {R, c.mlp_width()}, {S, d}, {logit_rows, c.vocab_size}};
  size_t bytes = Arena::footprint({input_ints}, DType::kI32);
  for (const auto& s : shapes_f32) bytes += Arena::footprint(s);
  if (limits_.target_logprobs) bytes += Arena::footprint({R});

  // The cache and the activations, against what the device has, before allocating either.
  if (!limits_.kv_type) limits_.kv_type = model_->kv_type();
  const DType kv_type = *limits_.kv_type;
  if (kv_type != DType::kF32 && kv_type != DType::kBF16 && kv_type != DType::kF16)
    bad_step(std::string("KV cache type ") + dtype_name(kv_type) + ": expected F32, BF16 or F16");
  const size_t cache_bytes = KvCache::bytes_needed(c, S, limits_.max_len, kv_type);
  const size_t available = device_available_bytes(model_->device());
  if (cache_bytes == SIZE_MAX || (available > 0 && cache_bytes / 2 + bytes / 2 > available / 2))
    throw_error(ErrorCode::kOutOfMemory, "the KV cache for max_batch " + std::to_string(S) + " x max_len " +
                                             std::to_string(limits_.max_len) + " positions (" + gib(cache_bytes) +
                                             ") and the activations (" + gib(bytes) + ") need more than the " +
                                             gib(available) + " of " + device_name(model_->device()) +
                                             " memory available");
  cache_ = KvCache(c, S, limits_.max_len, model_->device(), kv_type);
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
  if (limits_.target_logprobs) {
    targets_ = step_inputs_.slice(0, kMetaRows * S + 2 * R, R);
    logprobs_ = arena_.alloc({R});
  }

  // Everything a step needs on the device exists from here on: a step (and so a recorded graph)
  // never allocates, and nothing it uses ever moves.
  ctx_.queue().reserve_step(R, c.n_head, c.d_head(), limits_.max_len);
  if (limits_.target_logprobs) ctx_.queue().reserve_target_logprobs(R);
  staging_ = ctx_.create_staging(step_inputs_.nbytes());
  std::memset(staging_->writable(), 0, staging_->capacity());
  if (limits_.graphs && ctx_.supports_graphs()) decode_graphs_.resize(size_t(S) + 1);
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

void ForwardPass::copy_prefix(int32_t src, int32_t dst, int32_t n_positions) {
  if (src < 0 || src >= limits_.max_slots || dst < 0 || dst >= limits_.max_slots || src == dst)
    bad_step("copy_prefix: slots " + std::to_string(src) + " -> " + std::to_string(dst) +
             " must be two different slots below max_batch " + std::to_string(limits_.max_slots));
  if (n_positions < 0 || n_positions > limits_.max_len)
    bad_step("copy_prefix: " + std::to_string(n_positions) + " positions exceed the maximum length " +
             std::to_string(limits_.max_len));
  cache_.copy_prefix(ctx_, src, dst, n_positions);
}

int32_t ForwardPass::stage_inputs(const std::vector<SequenceStep>& seqs, const int32_t* targets, int64_t n_targets) {
  const int64_t S = limits_.max_slots, R = limits_.max_step_rows;
  // Same layout as step_inputs_: [batch_meta (kMetaRows × S) | ids (R) | positions (R)].
  int32_t* const meta = static_cast<int32_t*>(staging_->writable());
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
  // One copy, up to the last position (or target) used; queued, so ordered before the step's work.
  size_t used = size_t(kMetaRows * S + R + rows) * sizeof(int32_t);
  if (targets) {
    std::copy(targets, targets + n_targets, positions + R);
    used = size_t(kMetaRows * S + 2 * R + n_targets) * sizeof(int32_t);
  }
  staging_->upload(step_inputs_.raw(), used);
  return rows;
}

StepBatch ForwardPass::staged_batch(int32_t n_seq, int32_t rows) const {
  const int64_t S = limits_.max_slots;
  // The metadata sits at fixed addresses; only the counts change from step to step (and not at
  // all between decode steps of one batch size).
  const int32_t* m = batch_meta_.data<int32_t>();
  StepBatch batch;
  batch.n_seq = n_seq;
  batch.n_rows = rows;
  batch.slot = m + kSlot * S;
  batch.row_start = m + kRowStart * S;
  batch.n_new = m + kNewTokens * S;
  batch.past_len = m + kPastLen * S;
  return batch;
}

ForwardPass::DecodeGraph* ForwardPass::decode_graph(const std::vector<SequenceStep>& seqs) {
  if (decode_graphs_.empty()) return nullptr;  // graphs off, or not supported by the backend
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
  const int32_t rows = stage_inputs(seqs);
  const StepBatch batch = staged_batch(int32_t(seqs.size()), rows);

  DecodeGraph* decode = decode_graph(seqs);
  if (!decode || decode->steps++ == 0) return run_model(seqs, rows, batch, which);

  // Decode steps have one row per sequence, so the logits are the first n_seq rows of logits_
  // whatever `which` asks for, at the same address on every replay.
  if (!decode->graph || decode->graph->stale()) {
    decode->graph.reset();  // release the old one before recording anew
    decode->graph = ctx_.record([&] { run_model(seqs, rows, batch, which); });
  }
  decode->graph->launch();
  ++graph_replays_;
  return logits_.slice(0, 0, int64_t(seqs.size()));
}

Tensor ForwardPass::run_model(const std::vector<SequenceStep>& seqs, int32_t rows, const StepBatch& batch,
                              LogitsFor which) {
  const Config& c = model_->config();
  const ModelWeights& w = model_->weights();
  const int64_t n_seq = int64_t(seqs.size());

  run_layers(rows, batch);
  Tensor x = x_.slice(0, 0, rows);

  // The final norm and the output head run only on the rows whose logits are wanted.
  Tensor selected = x;
  if (which == LogitsFor::kLastToken && rows != n_seq) {
    const size_t row_bytes = size_t(c.n_embd) * sizeof(float);
    int64_t row_end = 0;
    for (int64_t s = 0; s < n_seq; ++s) {
      row_end += seqs[size_t(s)].n_tokens;
      device_copy(last_.select(0, s).raw(), last_.device(), x.select(0, row_end - 1).raw(), x.device(), row_bytes);
    }
    selected = last_.slice(0, 0, n_seq);
  }
  const int64_t out_rows = selected.size(0);
  Tensor normed = h_.slice(0, 0, out_rows);
  ops::layer_norm(ctx_, selected, w.ln_f_weight, w.ln_f_bias, normed, float(c.layer_norm_epsilon));
  Tensor logits = logits_.slice(0, 0, out_rows);
  ops::linear(ctx_, normed, w.head, Tensor{}, logits);  // output-major (wte itself) or panels
  return logits;
}

void ForwardPass::run_layers(int32_t rows, const StepBatch& batch) {
  const Config& c = model_->config();
  const ModelWeights& w = model_->weights();
  Tensor x = x_.slice(0, 0, rows);
  ops::embedding(ctx_, ids_.slice(0, 0, rows), positions_.slice(0, 0, rows), w.wte, w.wpe, x);
  for (int64_t l = 0; l < c.n_layer; ++l) run_block(w.blocks[size_t(l)], l, rows, batch);
}

Tensor ForwardPass::step_logprobs(const std::vector<SequenceStep>& seqs, const std::vector<int32_t>& targets) {
  check_step(seqs);
  if (!limits_.target_logprobs) throw_error(ErrorCode::kInternal, "ForwardPass planned without target_logprobs");
  // The fused scoring head reads wte as float32 (kernels/cpu/target_logprobs.cpp).
  if (model_->weights().wte.type != WeightType::kF32)
    throw_error(ErrorCode::kUnsupported, std::string("scoring (score, perplexity) needs f32 weights so far; this model "
                                                     "holds ") +
                                             weight_type_name(model_->weights().wte.type) +
                                             " weights: load it with --weights f32 (LoadOptions.weights = \"f32\")");
  const Config& c = model_->config();
  int64_t rows = 0;
  for (const SequenceStep& q : seqs) rows += q.n_tokens;
  if (int64_t(targets.size()) != rows)
    bad_step("step_logprobs: " + std::to_string(targets.size()) + " targets for a step of " + std::to_string(rows) +
             " tokens (one per token, -1 where not scored)");
  // The scored rows, as runs of consecutive rows [begin, end), and their targets in order.
  std::vector<std::pair<int32_t, int32_t>> runs;
  std::vector<int32_t> scored;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t t = targets[size_t(r)];
    if (t == -1) continue;
    if (t < 0 || t >= c.vocab_size)
      bad_step("target id " + std::to_string(t) + " is outside the vocabulary [0, " + std::to_string(c.vocab_size) +
               ")");
    if (!runs.empty() && runs.back().second == r) {
      ++runs.back().second;
    } else {
      runs.push_back({int32_t(r), int32_t(r + 1)});
    }
    scored.push_back(t);
  }
  const int64_t n_scored = int64_t(scored.size());
  stage_inputs(seqs, scored.data(), n_scored);
  run_layers(int32_t(rows), staged_batch(int32_t(seqs.size()), int32_t(rows)));
  if (n_scored == 0) return logprobs_.slice(0, 0, 0);

  // Gather the scored rows' hidden states into attn_ (free once the blocks have run) unless they
  // are all of them.
  const ModelWeights& w = model_->weights();
  Tensor selected = x_.slice(0, 0, rows);
  if (n_scored != rows) {
    const size_t row_bytes = size_t(c.n_embd) * sizeof(float);
    int64_t at = 0;
    for (const auto& [begin, end] : runs) {
      device_copy(attn_.select(0, at).raw(), attn_.device(), x_.select(0, begin).raw(), x_.device(),
                  size_t(end - begin) * row_bytes);
      at += end - begin;
    }
    selected = attn_.slice(0, 0, n_scored);
  }
  Tensor normed = h_.slice(0, 0, n_scored);
  ops::layer_norm(ctx_, selected, w.ln_f_weight, w.ln_f_bias, normed, float(c.layer_norm_epsilon));
  Tensor out = logprobs_.slice(0, 0, n_scored);
  ops::target_logprobs(ctx_, normed, w.wte.data, targets_.slice(0, 0, n_scored), out);
  return out;
}

}  // namespace eagerlm::gpt2
