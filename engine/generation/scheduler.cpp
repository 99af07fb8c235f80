#include "engine/generation/scheduler.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>

#include "engine/core/error.h"
#include "engine/generation/beam_search.h"
#include "engine/generation/stop_strings.h"

namespace eagerlm {

namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

// ---- State.

struct Scheduler::Impl {
  struct RequestState;

  // One sequence of a request: a sample, or a beam. It owns a cache slot while it runs.
  struct Sequence {
    RequestState* request = nullptr;
    int32_t sample = 0;
    int32_t slot = -1;
    std::vector<int32_t> tokens;  // prompt, then generated
    int64_t fed = 0;              // tokens whose keys and values are in the slot
    Sampler sampler;
    StreamDecoder decoder;
    StopStringMatcher stops;
    GenerationResult result;
    bool waiting = false;  // a later sample: joins when the first sample's prompt is in the cache
    bool done = false;
    Clock::time_point first_token, last_token;

    Sequence(RequestState* r, int32_t s, const Tokenizer& tok)
        : request(r),
          sample(s),
          tokens(r->request.prompt),
          sampler(r->request.options.sampling, r->request.stream_base + uint64_t(s)),
          decoder(tok),
          stops(r->request.options.stop) {}
    bool prefilling() const { return fed < int64_t(request->request.prompt.size()); }
  };

  struct RequestState {
    RequestId id = 0;
    Request request;
    Clock::time_point submitted, admitted, prompt_done;
    bool admitted_yet = false, prompt_fed = false;
    int64_t cached_prompt_tokens = 0;
    std::vector<std::unique_ptr<Sequence>> sequences;
    std::unique_ptr<BeamSearch> beams;  // beam search requests only
    size_t live = 0;                    // sequences not done
    std::exception_ptr error;
    bool device = false;  // sampled on the model's device (decided once, from the options alone)
  };

  // What a slot's cache holds: positions [0, cached.size()) are the keys and values of these
  // tokens, valid while no one else writes the slot.
  struct Slot {
    std::vector<int32_t> cached;
    Sequence* owner = nullptr;
    uint64_t last_used = 0;
  };

  Impl(StepModel& m, const Tokenizer& t, const SchedulerOptions& o) : model(m), tokenizer(t), options(o) {
    if (options.prefill_chunk < 0)
      throw OptionError("prefill_chunk", ">= 1, or 0 for the model's", std::to_string(options.prefill_chunk));
    if (options.prefill_chunk == 0) {
      options.prefill_chunk = model.prefill_chunk();
      if (options.prefill_chunk < 1)  // a model's bug: clamping it would hide it
        throw Error(ErrorCode::kInternal, "the model's own prefill_chunk must be >= 1, got " +
                                              std::to_string(options.prefill_chunk) + " (a bug in the model)");
    }
    slots.resize(size_t(model.max_slots()));
  }

  StepModel& model;
  Tokenizer tokenizer;
  SchedulerOptions options;
  std::vector<Slot> slots;
  std::deque<RequestState*> queue;                          // waiting, in submission order
  std::map<RequestId, std::unique_ptr<RequestState>> requests;  // queued and running
  std::vector<RequestState*> running;                       // in admission order
  RequestId next_id = 1;
  uint64_t clock = 0;  // slot use order, for evicting the least recently used cache
  size_t decode_cursor = 0;  // where the next decode step starts when not all fit in one
  bool in_step = false;
  std::vector<RequestId> deferred_cancels;  // cancel() from a callback, applied after the step
  SchedulerStats stats;
  std::vector<float> scratch, raw;
  std::vector<int32_t> suppress;

  // ---- Submission.
  RequestId submit(Request r);

  // ---- Admission.
  void admit();
  int32_t free_slot_count() const;
  int32_t take_slot(const std::vector<int32_t>& prompt, int64_t& reuse, int32_t& source);
  void start_sequence(Sequence& s, int32_t slot);

  // ---- A step.
  bool step();
  struct Row {
    Sequence* sequence;
    int32_t n_tokens;
    bool wanted;  // its last token's logits choose the next token
  };
  void sample_rows(const std::vector<Row>& rows, const SampledToken* sampled, const float* logits);
  void take_token(Sequence& s, const float* logits_row);
  void accept_token(Sequence& s, int32_t token, float logprob, std::vector<TokenLogprob> top);
  void step_beams(RequestState& r, const std::vector<std::pair<Sequence*, const float*>>& rows);
  void join_waiting(RequestState& r);

  // ---- Endings.
  void finish(Sequence& s, FinishReason why);
  void release_slot(Sequence& s);
  void complete_if_done(RequestState& r);
  void end_request(RequestState& r, FinishReason why, std::exception_ptr error);
  bool cancel(RequestId id);
  void apply_deferred_cancels();
  void report(RequestState& r);
  bool call_on_token(Sequence& s, const StreamEvent& e);
};

// ---- Submission.

void Scheduler::check(const Request& r, const StepModel& model) {
  const GenerationOptions& o = r.options;
  o.validate();
  const int64_t max_len = model.max_len(), vocab = model.vocab_size();
  if (r.prompt.empty()) throw_error(ErrorCode::kInvalidArgument, "the prompt is empty (give at least one token)");
  if (int64_t(r.prompt.size()) > max_len)
    throw_error(ErrorCode::kInvalidArgument, "the prompt has " + std::to_string(r.prompt.size()) +
                                                 " tokens; the maximum length is " + std::to_string(max_len));
  for (int32_t t : r.prompt)
    if (t < 0 || t >= vocab)
      throw_error(ErrorCode::kInvalidArgument, "prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                                                   std::to_string(vocab) + ")");
  const int64_t needed = o.slots_needed();
  if (needed > model.max_slots())
    throw OptionError(o.beams.num_beams > 1 ? "num_beams" : "n",
                      "at most the " + std::to_string(model.max_slots()) + " sequences the cache holds (max_batch)",
                      std::to_string(needed));
  if (o.beams.num_beams > model.max_step_rows())
    throw OptionError("num_beams", "at most the " + std::to_string(model.max_step_rows()) + " rows a step carries",
                      std::to_string(o.beams.num_beams));
  for (const auto& [id, bias] : o.sampling.logit_bias)
    if (id >= vocab)
      throw OptionError("logit_bias", "keyed by ids below the vocabulary size " + std::to_string(vocab),
                        std::to_string(id));
}

RequestId Scheduler::Impl::submit(Request r) {
  Scheduler::check(r, model);
  if (queue.size() >= options.max_queue)
    throw_error(ErrorCode::kBusy, "the request queue is full (" + std::to_string(queue.size()) +
                                      " requests waiting; max_queue " + std::to_string(options.max_queue) + ")");
  resolve_seed(r.options.sampling);
  auto state = std::make_unique<RequestState>();
  state->id = next_id++;
  state->submitted = Clock::now();
  state->request = std::move(r);
  const GenerationOptions& o = state->request.options;
  // Device sampling is chosen by the request's own options, never by what it is batched with,
  // so that its ids do not depend on the batch. Host-only processors keep it on the host.
  state->device = model.samples_on_device() && o.beams.num_beams == 1 && !o.sampling.host_processors() &&
                  o.sampling.repetition_penalty == 1.0f && o.min_new_tokens == 0 && o.top_logprobs == 0;
  RequestState* raw_state = state.get();
  requests.emplace(state->id, std::move(state));
  queue.push_back(raw_state);
  return raw_state->id;
}

// ---- Admission.

int32_t Scheduler::Impl::free_slot_count() const {
  int32_t n = 0;
  for (const Slot& s : slots) n += s.owner == nullptr;
  return n;
}

namespace {
int64_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return int64_t(i);
}
}  // namespace

// A free slot for a sequence starting with `prompt`: the one whose cache shares the longest
// prefix with it, else the least recently used. `reuse` gets how many prompt tokens need no
// prefill (at most all but the last: its logits are needed), and `source` the slot they must be
// copied from when it is another slot (-1: none, or the chosen slot itself).
int32_t Scheduler::Impl::take_slot(const std::vector<int32_t>& prompt, int64_t& reuse, int32_t& source) {
  const int64_t limit = std::max<int64_t>(0, int64_t(prompt.size()) - 1);
  int32_t best = -1;
  int64_t best_prefix = -1;  // below any prefix length, so the first free slot is taken
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].owner) continue;
    const int64_t p = options.prompt_cache ? std::min(limit, common_prefix(slots[i].cached, prompt)) : 0;
    if (p > best_prefix || (p == best_prefix && slots[i].last_used < slots[size_t(best)].last_used)) {
      best = int32_t(i);
      best_prefix = p;
    }
  }
  EAGERLM_ASSERT(best >= 0);
  reuse = best_prefix;
  source = -1;
  if (options.prompt_cache) {
    // A longer prefix held by another slot (running or free) is copied over.
    for (size_t i = 0; i < slots.size(); ++i) {
      if (int32_t(i) == best) continue;
      const Slot& s = slots[i];
      const int64_t valid = s.owner ? std::min<int64_t>(int64_t(s.cached.size()), s.owner->fed) : int64_t(s.cached.size());
      const int64_t p = std::min({limit, valid, common_prefix(s.cached, prompt)});
      if (p > reuse) {
        reuse = p;
        source = int32_t(i);
      }
    }
  }
  return best;
}

void Scheduler::Impl::start_sequence(Sequence& s, int32_t slot) {
  s.slot = slot;
  Slot& target = slots[size_t(slot)];
  target.owner = &s;
  target.last_used = ++clock;
}

void Scheduler::Impl::admit() {
  while (!queue.empty()) {
    RequestState& r = *queue.front();
    const GenerationOptions& o = r.request.options;
    const int32_t needed = o.slots_needed();
    if (free_slot_count() < needed) return;  // first come, first served: later ones wait too
    queue.pop_front();
    r.admitted = Clock::now();
    r.admitted_yet = true;
    for (int32_t i = 0; i < needed; ++i) r.sequences.push_back(std::make_unique<Sequence>(&r, i, tokenizer));
    r.live = size_t(needed);
    if (o.beams.num_beams > 1) {
      const int64_t prompt_len = int64_t(r.request.prompt.size());
      r.beams = std::make_unique<BeamSearch>(o, prompt_len, std::min<int64_t>(o.max_new_tokens, model.max_len() - prompt_len),
                                             model.vocab_size());
    }

    // The first sequence prefills the prompt (minus what the cache already holds); the others
    // wait for it and then copy its keys and values.
    Sequence& first = *r.sequences[0];
    int64_t reuse = 0;
    int32_t source = -1;
    const int32_t slot = take_slot(r.request.prompt, reuse, source);
    if (source >= 0) model.copy_prefix(source, slot, int32_t(reuse));
    start_sequence(first, slot);
    Slot& s = slots[size_t(slot)];
    s.cached.assign(r.request.prompt.begin(), r.request.prompt.begin() + reuse);
    first.fed = reuse;
    r.cached_prompt_tokens = reuse;
    stats.cached_tokens += reuse;
    for (int32_t i = 1; i < needed; ++i) {
      Sequence& other = *r.sequences[size_t(i)];
      int64_t unused_reuse = 0;
      int32_t unused_source = -1;
      const int32_t other_slot = take_slot({}, unused_reuse, unused_source);
      start_sequence(other, other_slot);
      slots[size_t(other_slot)].cached.clear();
      other.waiting = true;
    }
    if (o.max_new_tokens == 0) {
      for (auto& q : r.sequences) finish(*q, FinishReason::kLength);
      continue;
    }
    running.push_back(&r);
  }
}

// The other samples of a request copy the first one's prompt (all but its last token, whose
// logits each sample computes for itself in its first decode row) once it is in the cache.
void Scheduler::Impl::join_waiting(RequestState& r) {
  Sequence& first = *r.sequences[0];
  const int64_t prefix = int64_t(r.request.prompt.size()) - 1;
  for (size_t i = 1; i < r.sequences.size(); ++i) {
    Sequence& s = *r.sequences[i];
    if (!s.waiting || s.done) continue;
    model.copy_prefix(first.slot, s.slot, int32_t(prefix));
    slots[size_t(s.slot)].cached.assign(r.request.prompt.begin(), r.request.prompt.begin() + prefix);
    s.fed = prefix;
    s.waiting = false;
  }
}

// ---- A step.

bool Scheduler::Impl::step() {
  apply_deferred_cancels();
  admit();
  if (running.empty()) return false;
  in_step = true;
  ++stats.steps;

  // Decode rows first (one token each), then prompt chunks within the budget.
  const int64_t max_rows = model.max_step_rows();
  std::vector<Row> rows;
  // A beam request's beams decode in the same step: its search takes all their rows at once.
  std::vector<std::vector<Sequence*>> ready;
  size_t ready_rows = 0;
  for (RequestState* r : running) {
    if (r->beams) ready.emplace_back();
    for (auto& s : r->sequences)
      if (!s->done && !s->waiting && !s->prefilling()) {
        if (!r->beams) ready.emplace_back();
        ready.back().push_back(s.get());
        ++ready_rows;
      }
    if (r->beams && ready.back().empty()) ready.pop_back();
  }
  // More decoding sequences than a step carries take turns.
  const size_t first = ready_rows > size_t(max_rows) ? decode_cursor % ready.size() : 0;
  size_t count = 0, groups = 0;
  for (; groups < ready.size(); ++groups) {
    const std::vector<Sequence*>& group = ready[(first + groups) % ready.size()];
    if (count + group.size() > size_t(max_rows)) break;
    for (Sequence* s : group) rows.push_back({s, 1, true});
    count += group.size();
  }
  decode_cursor += groups;
  const int64_t used = int64_t(count);
  const bool decoding = used > 0;
  int64_t budget = std::min(max_rows - used, decoding ? options.prefill_chunk : max_rows);
  for (RequestState* r : running)
    for (auto& s : r->sequences) {
      if (budget <= 0) break;
      if (s->done || s->waiting || !s->prefilling()) continue;
      const int64_t left = int64_t(s->tokens.size()) - s->fed;
      const int32_t n = int32_t(std::min(left, budget));
      rows.push_back({s.get(), n, n == left});
      budget -= n;
    }
  // Rows past the cache's length cannot occur: a sequence finishes at max_len.
  std::vector<SequenceStep> steps;
  std::vector<SampleRequest> sample_requests;
  bool any_device = false, any_host = false;
  for (const Row& row : rows) {
    Sequence& s = *row.sequence;
    steps.push_back({s.slot, int32_t(s.fed), s.tokens.data() + s.fed, row.n_tokens});
    SampleRequest q;
    q.wanted = row.wanted;
    q.stream = s.request->request.stream_base + uint64_t(s.sample);
    q.draw = uint64_t(s.result.ids.size());
    if (s.request->device) q.options = &s.request->request.options.sampling;
    q.logprobs = s.request->request.options.logprobs;
    sample_requests.push_back(q);
    // A device request's tokens all go through step_and_sample, so that its history there is whole.
    any_device = any_device || s.request->device;
    any_host = any_host || (row.wanted && !s.request->device);
  }

  // The step's kind, counted whether or not the model succeeds (stats.steps counts it either way).
  int64_t prompt_rows = 0;  // the rows after the `used` decode rows are prompt chunks
  for (size_t k = size_t(used); k < rows.size(); ++k) prompt_rows += rows[k].n_tokens;
  StepKindStats& kind = prompt_rows == 0 ? stats.decode_only : used == 0 ? stats.prompt_only : stats.mixed;
  ++kind.steps;
  kind.rows += used + prompt_rows;

  const SampledToken* sampled = nullptr;
  const float* logits = nullptr;
  const auto model_start = Clock::now();
  try {
    if (any_device) {
      sampled = model.step_and_sample(steps, sample_requests);
      if (any_host) logits = model.host_logits();
    } else {
      logits = model.step(steps);
    }
  } catch (...) {
    kind.model_ms += ms_between(model_start, Clock::now());
    // The model failed: every request in this step ends with the error, and what their slots
    // hold is no longer known.
    const std::exception_ptr error = std::current_exception();
    std::vector<RequestState*> failed;
    for (const Row& row : rows) {
      slots[size_t(row.sequence->slot)].cached.clear();
      if (std::find(failed.begin(), failed.end(), row.sequence->request) == failed.end())
        failed.push_back(row.sequence->request);
    }
    for (RequestState* r : failed) end_request(*r, FinishReason::kCancelled, error);
    in_step = false;
    apply_deferred_cancels();
    return true;
  }

  kind.model_ms += ms_between(model_start, Clock::now());
  // The fed tokens are in the cache now.
  for (const Row& row : rows) {
    Sequence& s = *row.sequence;
    Slot& slot = slots[size_t(s.slot)];
    slot.cached.resize(size_t(s.fed));
    slot.cached.insert(slot.cached.end(), s.tokens.begin() + s.fed, s.tokens.begin() + s.fed + row.n_tokens);
    s.fed += row.n_tokens;
    if (s.sample == 0 && !s.request->prompt_fed && !s.prefilling()) {
      s.request->prompt_fed = true;
      s.request->prompt_done = Clock::now();
    }
    if (row.n_tokens > 1 || s.result.ids.empty()) stats.prefill_tokens += row.n_tokens;
  }
  sample_rows(rows, sampled, logits);
  in_step = false;
  apply_deferred_cancels();
  return true;
}

void Scheduler::Impl::sample_rows(const std::vector<Row>& rows, const SampledToken* sampled, const float* logits) {
  const int64_t vocab = model.vocab_size();
  // Beam requests see all their beams' rows at once.
  std::map<RequestState*, std::vector<std::pair<Sequence*, const float*>>> beam_rows;
  for (size_t k = 0; k < rows.size(); ++k) {
    const Row& row = rows[k];
    Sequence& s = *row.sequence;
    if (!row.wanted || s.done) continue;
    RequestState& r = *s.request;
    if (r.beams) {
      beam_rows[&r].push_back({&s, logits + int64_t(k) * vocab});
      continue;
    }
    // The other samples copy the prompt now, while this one's slot surely holds it.
    if (s.sample == 0 && s.result.ids.empty() && r.sequences.size() > 1) join_waiting(r);
    if (r.device) {
      accept_token(s, sampled[k].id, sampled[k].logprob, {});
    } else {
      take_token(s, logits + int64_t(k) * vocab);
    }
  }
  for (auto& [r, beam] : beam_rows) step_beams(*r, beam);
}

// Samples the next token of `s` on the host from its logits row (left as it is).
void Scheduler::Impl::take_token(Sequence& s, const float* logits_row) {
  const GenerationOptions& o = s.request->request.options;
  const int64_t vocab = model.vocab_size();
  const int64_t sample_vocab = o.sampling.vocab_limit > 0 ? std::min(vocab, o.sampling.vocab_limit) : vocab;
  scratch.assign(logits_row, logits_row + sample_vocab);
  suppress.clear();
  if (int64_t(s.result.ids.size()) < o.min_new_tokens) {
    if (!o.ignore_eos) suppress.push_back(o.eos_id);
    suppress.insert(suppress.end(), o.stop_token_ids.begin(), o.stop_token_ids.end());
  }
  process_logits(o.sampling, scratch.data(), sample_vocab,
                 TokenHistory{s.tokens, s.request->request.prompt.size()}, suppress);
  const int32_t token = s.sampler.pick(scratch.data(), sample_vocab);
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
  if (o.logprobs) logprob = log_softmax_at(logits_row, sample_vocab, token);
  if (o.top_logprobs > 0) top = top_log_softmax(logits_row, sample_vocab, o.top_logprobs);
  accept_token(s, token, logprob, std::move(top));
}

bool Scheduler::Impl::call_on_token(Sequence& s, const StreamEvent& e) {
  const StreamCallback& cb = s.request->request.on_token;
  if (!cb) return true;
  try {
    return cb(e);
  } catch (...) {
    // A throwing callback ends its request with that exception (after this step).
    if (!s.request->error) s.request->error = std::current_exception();
    deferred_cancels.push_back(s.request->id);
    return false;
  }
}

// Appends the next token of `s` and applies every stopping rule.
void Scheduler::Impl::accept_token(Sequence& s, int32_t token, float logprob, std::vector<TokenLogprob> top) {
  RequestState& r = *s.request;
  const GenerationOptions& o = r.request.options;
  const auto now = Clock::now();
  if (s.result.ids.empty()) s.first_token = now;
  s.last_token = now;
  s.tokens.push_back(token);
  s.result.ids.push_back(token);
  if (o.logprobs) {
    s.result.logprobs.push_back(logprob);
    s.result.score += logprob;
  }
  if (o.top_logprobs > 0) s.result.top_logprobs.push_back(std::move(top));
  ++stats.decode_tokens;
  const bool ends = (token == o.eos_id && !o.ignore_eos) ||
                    std::find(o.stop_token_ids.begin(), o.stop_token_ids.end(), token) != o.stop_token_ids.end();
  if (ends) return finish(s, token == o.eos_id && !o.ignore_eos ? FinishReason::kEos : FinishReason::kStop);
  const std::string visible = s.stops.push(s.decoder.push(token));
  StreamEvent e;
  e.request = r.id;
  e.sample = s.sample;
  e.token = token;
  e.text = visible;
  e.logprob = logprob;
  e.top = o.top_logprobs > 0 ? &s.result.top_logprobs.back() : nullptr;
  const bool keep_going = call_on_token(s, e);
  if (s.stops.stopped()) return finish(s, FinishReason::kStop);
  if (!keep_going) return finish(s, FinishReason::kCallback);
  if (int64_t(s.result.ids.size()) >= o.max_new_tokens || int64_t(s.tokens.size()) >= model.max_len())
    return finish(s, FinishReason::kLength);
}

// One step of a beam search request: every running beam's logits row at once. The search picks
// the next running beams; each takes over its parent's cache: the first child of a parent keeps
// the parent's slot, a further child gets the slot of a beam no one continues, with the parent's
// keys and values copied in (copies only ever read slots that keep their content).
void Scheduler::Impl::step_beams(RequestState& r, const std::vector<std::pair<Sequence*, const float*>>& rows) {
  const GenerationOptions& o = r.request.options;
  const int64_t vocab = model.vocab_size();
  const int64_t sample_vocab = o.sampling.vocab_limit > 0 ? std::min(vocab, o.sampling.vocab_limit) : vocab;
  std::vector<const std::vector<int32_t>*> histories;
  raw.resize(rows.size() * size_t(sample_vocab));
  for (size_t b = 0; b < rows.size(); ++b) {
    std::copy(rows[b].second, rows[b].second + sample_vocab, raw.begin() + long(b * size_t(sample_vocab)));
    histories.push_back(&rows[b].first->tokens);
  }
  const std::vector<BeamChoice> choices = r.beams->step(raw.data(), int64_t(rows.size()), sample_vocab, histories);
  stats.decode_tokens += int64_t(rows.size());
  if (choices.empty() || r.beams->done()) {
    for (auto& s : r.sequences) {
      s->done = true;
      release_slot(*s);
    }
    r.live = 0;
    return report(r);
  }
  // New beam i continues parent row choices[i].parent.
  struct Next {
    std::vector<int32_t> tokens;
    int64_t fed;
    int32_t slot;
  };
  std::vector<Next> next(choices.size());
  std::vector<bool> claimed(rows.size(), false);
  std::vector<int32_t> spare;  // slots of beams no one continues, then of beams not in this step
  for (size_t b = 0; b < rows.size(); ++b) {
    bool continued = false;
    for (const BeamChoice& c : choices) continued = continued || size_t(c.parent) == b;
    if (!continued) spare.push_back(rows[b].first->slot);
  }
  for (auto& s : r.sequences) {
    bool stepped = false;
    for (const auto& row : rows) stepped = stepped || row.first == s.get();
    if (!stepped) spare.push_back(s->slot);
  }
  std::vector<std::pair<int32_t, int32_t>> copies;  // (from, to)
  for (size_t i = 0; i < choices.size(); ++i) {
    const size_t p = size_t(choices[i].parent);
    EAGERLM_ASSERT(p < rows.size());
    const Sequence& parent = *rows[p].first;
    next[i].tokens = parent.tokens;
    next[i].tokens.push_back(choices[i].token);
    next[i].fed = parent.fed;
    if (!claimed[p]) {
      claimed[p] = true;
      next[i].slot = parent.slot;
    } else {
      EAGERLM_ASSERT(!spare.empty());
      next[i].slot = spare.back();
      spare.pop_back();
      copies.push_back({parent.slot, next[i].slot});
    }
  }
  for (const auto& [from, to] : copies) {
    int64_t fed = 0;
    for (const Next& n : next)
      if (n.slot == to) fed = n.fed;
    model.copy_prefix(from, to, int32_t(fed));
    slots[size_t(to)].cached = slots[size_t(from)].cached;
  }
  EAGERLM_ASSERT(next.size() == r.sequences.size());
  const auto now = Clock::now();
  for (size_t i = 0; i < next.size(); ++i) {
    Sequence& s = *r.sequences[i];
    s.tokens = std::move(next[i].tokens);
    s.fed = next[i].fed;
    s.slot = next[i].slot;
    s.waiting = false;
    slots[size_t(s.slot)].owner = &s;
    if (s.result.ids.empty()) s.first_token = now;
    s.last_token = now;
    s.result.ids.assign(s.tokens.begin() + long(r.request.prompt.size()), s.tokens.end());
  }
}

// ---- Endings.

void Scheduler::Impl::release_slot(Sequence& s) {
  if (s.slot < 0) return;
  Slot& slot = slots[size_t(s.slot)];
  if (slot.owner == &s) {
    slot.owner = nullptr;
    slot.last_used = ++clock;
    // A sample that never ran (cancelled while waiting) holds nothing worth keeping.
    if (int64_t(slot.cached.size()) > s.fed) slot.cached.resize(size_t(s.fed));
  }
  s.slot = -1;
}

void Scheduler::Impl::finish(Sequence& s, FinishReason why) {
  if (s.done) return;
  s.done = true;
  s.result.finish_reason = why;
  std::string tail = s.stops.stopped() ? std::string() : s.stops.push(s.decoder.finish());
  if (!s.stops.stopped()) tail += s.stops.finish();
  if (!tail.empty() && why != FinishReason::kCancelled) {
    StreamEvent e;
    e.request = s.request->id;
    e.sample = s.sample;
    e.token = -1;
    e.text = tail;
    call_on_token(s, e);
  }
  s.result.text = s.stops.text();
  release_slot(s);
  RequestState& r = *s.request;
  if (r.live > 0) --r.live;
  complete_if_done(r);
}

void Scheduler::Impl::complete_if_done(RequestState& r) {
  if (r.live > 0) return;
  report(r);
}

// Fills in timings and hands the results to on_done; forgets the request.
void Scheduler::Impl::report(RequestState& r) {
  RequestOutcome out;
  out.request = r.id;
  out.error = r.error;
  const auto now = Clock::now();
  const GenerationOptions& o = r.request.options;
  if (r.beams) {
    out.results = r.beams->results();
    for (GenerationResult& g : out.results) {  // text as streaming would have made it
      StreamDecoder decoder(tokenizer);
      for (int32_t id : g.ids)
        if (id != o.eos_id) g.text += decoder.push(id);
      g.text += decoder.finish();
    }
  } else {
    for (auto& s : r.sequences) out.results.push_back(std::move(s->result));
  }
  for (size_t i = 0; i < out.results.size(); ++i) {
    GenerationResult& g = out.results[i];
    g.sample = int32_t(i);
    g.seed = o.sampling.seed.value_or(0);
    RequestTimings& t = g.timings;
    t.prompt_tokens = int64_t(r.request.prompt.size());
    t.cached_prompt_tokens = r.cached_prompt_tokens;
    t.generated_tokens = int64_t(g.ids.size());
    const auto admitted = r.admitted_yet ? r.admitted : now;
    t.queued_ms = ms_between(r.submitted, admitted);
    t.prefill_ms = r.prompt_fed ? ms_between(admitted, r.prompt_done) : 0;
    const Sequence* s = i < r.sequences.size() && !r.beams ? r.sequences[i].get() : nullptr;
    if (s && !g.ids.empty()) {
      t.first_token_ms = ms_between(r.submitted, s->first_token);
      if (g.ids.size() > 1) t.decode_ms_per_token = ms_between(s->first_token, s->last_token) / double(g.ids.size() - 1);
    }
    t.total_ms = ms_between(r.submitted, now);
  }
  const DoneCallback done = std::move(r.request.on_done);
  running.erase(std::remove(running.begin(), running.end(), &r), running.end());
  queue.erase(std::remove(queue.begin(), queue.end(), &r), queue.end());
  auto owned = std::move(requests.at(r.id));
  requests.erase(r.id);
  if (done) done(std::move(out));
}

// Ends every live sequence of `r` now (queued requests get empty results).
void Scheduler::Impl::end_request(RequestState& r, FinishReason why, std::exception_ptr error) {
  if (error && !r.error) r.error = error;
  if (!r.admitted_yet) {
    const int32_t count = r.request.options.result_count();
    for (int32_t i = 0; i < count; ++i) r.sequences.push_back(std::make_unique<Sequence>(&r, i, tokenizer));
    for (auto& s : r.sequences) {
      s->done = true;
      s->result.finish_reason = why;
    }
    r.live = 0;
    report(r);
    return;
  }
  if (r.beams) {
    for (auto& s : r.sequences) {
      if (s->done) continue;
      s->done = true;
      release_slot(*s);
    }
    r.live = 0;
    report(r);
    return;
  }
  r.live += 1;  // held so that the request is reported once, after the loop
  for (auto& s : r.sequences) finish(*s, why);
  r.live -= 1;
  complete_if_done(r);
}

bool Scheduler::Impl::cancel(RequestId id) {
  if (!requests.count(id)) return false;
  if (in_step) {
    deferred_cancels.push_back(id);
    return true;
  }
  end_request(*requests.at(id), FinishReason::kCancelled, nullptr);
  return true;
}

void Scheduler::Impl::apply_deferred_cancels() {
  while (!deferred_cancels.empty()) {
    const RequestId id = deferred_cancels.back();
    deferred_cancels.pop_back();
    auto it = requests.find(id);
    if (it == requests.end()) continue;
    RequestState& r = *it->second;
    end_request(r, r.error ? FinishReason::kCallback : FinishReason::kCancelled, nullptr);
  }
}

// ---- The public face.

Scheduler::Scheduler(StepModel& model, const Tokenizer& tokenizer, const SchedulerOptions& options)
    : impl_(std::make_unique<Impl>(model, tokenizer, options)) {}
Scheduler::~Scheduler() = default;

RequestId Scheduler::submit(Request request) {
  if (impl_->in_step) throw_error(ErrorCode::kInvalidArgument, "Scheduler::submit from inside a callback");
  return impl_->submit(std::move(request));
}
bool Scheduler::cancel(RequestId id) { return impl_->cancel(id); }
bool Scheduler::step() {
  if (impl_->in_step) throw_error(ErrorCode::kInvalidArgument, "Scheduler::step from inside a callback");
  return impl_->step();
}
void Scheduler::run_until_idle() {
  while (step()) {
  }
}
bool Scheduler::idle() const { return impl_->running.empty() && impl_->queue.empty(); }

SchedulerStats Scheduler::stats() const {
  SchedulerStats s = impl_->stats;
  s.queued = int64_t(impl_->queue.size());
  s.running = int64_t(impl_->running.size());
  s.busy_slots = int64_t(impl_->slots.size()) - impl_->free_slot_count();
  return s;
}
const SchedulerOptions& Scheduler::options() const { return impl_->options; }

}  // namespace eagerlm
