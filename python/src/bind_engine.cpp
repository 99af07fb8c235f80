// eagerlm::Engine, its settings, stats, streamed tokens and request handles. Nothing here holds
// the GIL while it waits: the constructor, drain, the destructor (it joins the worker), wait and
// next all run with it released. The worker never calls into Python (tokens are pulled with
// next(), not pushed to a callback), so it needs no GIL. On the main thread, wait and next wake
// every kSignalPoll to let Ctrl-C in (PyErr_CheckSignals), as Generator's calls do per token.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "python/src/bindings.h"

namespace eagerlm::python {

namespace {

using Request = Engine::Request;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kSignalPoll{20};

void check_signals() {
  nb::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

// Seconds (None: no limit) as the engine's milliseconds; a negative or NaN limit is the caller's error.
milliseconds timeout_of(const std::optional<double>& seconds, const char* name) {
  if (!seconds) return milliseconds::max();
  if (!(*seconds >= 0.0))
    throw Error(ErrorCode::kInvalidArgument, std::string(name) + " must be >= 0 seconds or None, got " +
                                                 std::to_string(*seconds));
  const double ms = std::ceil(*seconds * 1000.0);
  // Beyond ~30 years is no limit (and keeps now() + timeout in the clock's range).
  return ms >= 1e12 ? milliseconds::max() : milliseconds(int64_t(ms));
}

std::vector<Result> wait(Request& request, bool signals) {
  nb::gil_scoped_release release;
  if (signals) {
    // Request has no timed wait (next(0) would take a token): poll done(), cheaply, without the GIL.
    auto checked = Clock::now();
    while (!request.done()) {
      std::this_thread::sleep_for(milliseconds(1));
      if (Clock::now() - checked >= kSignalPoll) {
        check_signals();
        checked = Clock::now();
      }
    }
  }
  return request.wait();
}

// The next token within `timeout` (None: until there is one or the request is done), or None.
std::optional<StreamedToken> next(Request& request, const std::optional<double>& timeout_s, bool signals) {
  const milliseconds timeout = timeout_of(timeout_s, "timeout");
  nb::gil_scoped_release release;
  if (!signals) return request.next(timeout);
  const auto deadline = timeout == milliseconds::max() ? Clock::time_point::max() : Clock::now() + timeout;
  for (;;) {
    const auto now = Clock::now();
    const milliseconds slice =
        now >= deadline ? milliseconds(0)
                        : std::min(kSignalPoll, std::chrono::ceil<milliseconds>(deadline - now));
    if (std::optional<StreamedToken> t = request.next(slice)) return t;
    // Done: its last tokens came before done was set, and next(0) takes any left.
    if (request.done()) return request.next(milliseconds(0));
    if (Clock::now() >= deadline) return std::nullopt;
    check_signals();
  }
}

}  // namespace

void bind_engine(nb::module_& m) {
  nb::class_<StepCounts>(m, "StepCounts", "Steps of one kind (eagerlm::StepCounts).")
      .def_ro("steps", &StepCounts::steps)
      .def_ro("rows", &StepCounts::rows)
      .def_ro("seconds", &StepCounts::seconds);
  nb::class_<EngineStats>(m, "EngineStats", "What an Engine is doing (eagerlm::EngineStats).")
      .def_ro("queued", &EngineStats::queued)
      .def_ro("running", &EngineStats::running)
      .def_ro("busy_slots", &EngineStats::busy_slots)
      .def_ro("max_batch", &EngineStats::max_batch)
      .def_ro("steps", &EngineStats::steps)
      .def_ro("prefill_tokens", &EngineStats::prefill_tokens)
      .def_ro("cached_tokens", &EngineStats::cached_tokens)
      .def_ro("generated_tokens", &EngineStats::generated_tokens)
      .def_ro("decode_steps", &EngineStats::decode_steps)
      .def_ro("mixed_steps", &EngineStats::mixed_steps)
      .def_ro("prompt_steps", &EngineStats::prompt_steps);

  nb::class_<StreamedToken>(m, "StreamedToken", "A request's token, pulled with Request.next (eagerlm::StreamedToken).")
      .def_ro("sample", &StreamedToken::sample)
      .def_ro("token", &StreamedToken::token)
      .def_prop_ro("text", [](const StreamedToken& t) { return utf8_text(t.text); })
      .def_ro("logprob", &StreamedToken::logprob)
      .def_prop_ro("top", [](const StreamedToken& t) { return top_list(t.top); });

  nb::class_<Request>(m, "Request", "A submitted request (eagerlm::Engine::Request); thread-safe.")
      .def_prop_ro("id", &Request::id)
      .def("cancel", &Request::cancel, "Ends it now: its results so far, finish reason 'cancelled'.")
      .def_prop_ro("done", &Request::done)
      .def("wait", &wait, nb::arg("check_signals"),
           "Blocks until it is done (GIL released); its results, or raises the error that ended it.")
      .def("next", &next, nb::arg("timeout").none(), nb::arg("check_signals"),
           "The next token within timeout seconds (None: no limit), or None when it timed out or the "
           "request is done and every token was taken. GIL released while waiting.");

  nb::class_<Engine>(m, "Engine", "eagerlm::Engine: continuous batching on a worker thread over max_batch cache slots.")
      .def(
          "__init__",
          [](Engine* self, const Model& model, size_t max_batch, size_t max_length, size_t prefill_chunk,
             std::optional<size_t> max_queue, bool prompt_cache) {
            EngineSettings s;
            s.max_batch = max_batch;
            s.max_length = max_length;
            s.prefill_chunk = prefill_chunk;
            if (max_queue) s.max_queue = *max_queue;
            s.prompt_cache = prompt_cache;
            nb::gil_scoped_release release;
            new (self) Engine(model, s);
          },
          nb::arg("model"), nb::arg("max_batch"), nb::arg("max_length"), nb::arg("prefill_chunk"),
          nb::arg("max_queue").none(), nb::arg("prompt_cache"))
      .def(
          "submit",
          [](Engine& e, const std::string& prompt, const GenerateOptions& options) {
            nb::gil_scoped_release release;  // encoding the prompt
            return e.submit(prompt, options);
          },
          nb::arg("prompt"), nb::arg("options"), "Queues a text prompt; returns at once.")
      .def(
          "submit_tokens",
          [](Engine& e, std::vector<int32_t> prompt, const GenerateOptions& options) {
            nb::gil_scoped_release release;
            return e.submit_tokens(std::move(prompt), options);
          },
          nb::arg("prompt"), nb::arg("options"), "Queues a token-id prompt; returns at once.")
      .def("stats", &Engine::stats, "Queued and running requests, busy slots, counts since it started.")
      .def(
          "drain",
          [](Engine& e, const std::optional<double>& timeout_s) {
            const milliseconds timeout = timeout_of(timeout_s, "drain timeout");
            nb::gil_scoped_release release;
            e.drain(timeout);
          },
          nb::arg("timeout").none(),
          "Takes no new requests, waits up to timeout seconds (None: no limit) for the running ones, "
          "then cancels what is left.");
}

}  // namespace eagerlm::python
