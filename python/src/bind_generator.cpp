// eagerlm::Generator with its options and results as plain data. Calls run with the GIL released
// and take it back for a moment per token, only when there is something to do with it: hand the
// token to a Python callback (the package's Generator.stream), and, on the main thread, let Ctrl-C
// in (PyErr_CheckSignals). An exception from either, KeyboardInterrupt included, ends the call
// after the token it came with (GenerationLoop's rule for callback exceptions) and is raised from
// the call; the generator stays usable.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace eagerlm::python {

nb::list top_list(const std::vector<TokenLogprob>& top) {
  nb::list out;
  for (const TokenLogprob& t : top) out.append(nb::make_tuple(t.id, t.logprob));
  return out;
}

namespace {

// The per-token callback for one call, or none when no token needs the GIL.
OnToken token_callback(const nb::object& callback, bool check_signals) {
  if (callback.is_none() && !check_signals) return {};
  return [&callback, check_signals](const TokenEvent& e) {
    nb::gil_scoped_acquire gil;
    if (check_signals && PyErr_CheckSignals() != 0) throw nb::python_error();
    if (callback.is_none()) return true;
    const nb::object top = e.top ? nb::object(top_list(*e.top)) : nb::none();
    const nb::object go_on = callback(e.index, e.sample, e.token, utf8_text(e.text), e.logprob, top);
    const int truth = PyObject_IsTrue(go_on.ptr());
    if (truth < 0) throw nb::python_error();
    return truth == 1;
  };
}

template <typename Prompts>
using Call = std::vector<Result> (Generator::*)(const Prompts&, const GenerateOptions&, const OnToken&);

template <typename Prompts, Call<Prompts> call>
std::vector<Result> generate(Generator& generator, const Prompts& prompts, const GenerateOptions& options,
                             const nb::object& callback, bool check_signals) {
  const OnToken on_token = token_callback(callback, check_signals);
  nb::gil_scoped_release release;
  return (generator.*call)(prompts, options, on_token);
}

void bind_options(nb::module_& m) {
  using O = GenerateOptions;
  nb::class_<O>(m, "GenerateOptions", "eagerlm::GenerateOptions; the package fills it from keyword arguments.")
      .def(nb::init<>())
      .def_rw("max_new_tokens", &O::max_new_tokens)
      .def_rw("min_new_tokens", &O::min_new_tokens)
      .def_rw("temperature", &O::temperature)
      .def_rw("top_k", &O::top_k)
      .def_rw("top_p", &O::top_p)
      .def_rw("min_p", &O::min_p)
      .def_rw("repetition_penalty", &O::repetition_penalty)
      .def_rw("presence_penalty", &O::presence_penalty)
      .def_rw("frequency_penalty", &O::frequency_penalty)
      .def_rw("logit_bias", &O::logit_bias)
      .def_rw("no_repeat_ngram_size", &O::no_repeat_ngram_size)
      .def_rw("seed", &O::seed)
      .def_rw("stop", &O::stop)
      .def_rw("stop_token_ids", &O::stop_token_ids)
      .def_rw("ignore_eos", &O::ignore_eos)
      .def_rw("logprobs", &O::logprobs)
      .def_rw("top_logprobs", &O::top_logprobs)
      .def_rw("n", &O::n)
      .def_rw("num_beams", &O::num_beams)
      .def_rw("length_penalty", &O::length_penalty)
      .def_rw("early_stopping", &O::early_stopping)
      .def_rw("num_return_sequences", &O::num_return_sequences);
}

void bind_results(nb::module_& m) {
  nb::class_<Timings>(m, "Timings", "Where one result's time went (eagerlm::Timings), in milliseconds.")
      .def_ro("queued_ms", &Timings::queued_ms)
      .def_ro("prefill_ms", &Timings::prefill_ms)
      .def_ro("first_token_ms", &Timings::first_token_ms)
      .def_ro("decode_ms_per_token", &Timings::decode_ms_per_token)
      .def_ro("total_ms", &Timings::total_ms)
      .def_ro("prompt_tokens", &Timings::prompt_tokens)
      .def_ro("cached_prompt_tokens", &Timings::cached_prompt_tokens)
      .def_ro("generated_tokens", &Timings::generated_tokens);

  nb::class_<Result>(m, "Result", "One generated result (eagerlm::Result).")
      .def_prop_ro("text", [](const Result& r) { return utf8_text(r.text); })
      .def_ro("ids", &Result::ids)
      .def_prop_ro("finish_reason", [](const Result& r) { return std::string(finish_reason_name(r.finish_reason)); })
      .def_ro("logprobs", &Result::logprobs)
      .def_prop_ro("top_logprobs",
                   [](const Result& r) {
                     nb::list out;
                     for (const auto& top : r.top_logprobs) out.append(top_list(top));
                     return out;
                   })
      .def_ro("score", &Result::score)
      .def_ro("seed", &Result::seed)
      .def_ro("index", &Result::index)
      .def_ro("sample", &Result::sample)
      .def_ro("timings", &Result::timings);
}

}  // namespace

void bind_generator(nb::module_& m) {
  bind_options(m);
  bind_results(m);
  nb::class_<Generator>(m, "Generator", "eagerlm::Generator: the KV cache for max_batch sequences, allocated once.")
      .def(
          "__init__",
          [](Generator* self, const Model& model, size_t max_batch, size_t max_length) {
            nb::gil_scoped_release release;
            new (self) Generator(model, max_batch, max_length);
          },
          nb::arg("model"), nb::arg("max_batch") = 1, nb::arg("max_length") = 0)
      .def("generate_batch", &generate<std::vector<std::string>, &Generator::generate_batch>, nb::arg("prompts"),
           nb::arg("options"), nb::arg("callback").none(), nb::arg("check_signals"),
           "Text prompts -> results; callback(index, sample, token, text, logprob, top) -> bool per token.")
      .def("generate_tokens", &generate<std::vector<std::vector<int32_t>>, &Generator::generate_tokens>,
           nb::arg("prompts"), nb::arg("options"), nb::arg("callback").none(), nb::arg("check_signals"),
           "Token-id prompts -> results; as generate_batch.")
      .def_prop_ro("max_batch", &Generator::max_batch)
      .def_prop_ro("max_length", &Generator::max_length);
}

}  // namespace eagerlm::python
