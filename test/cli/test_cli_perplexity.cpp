// `eagerlm perplexity` as a user meets it: its JSON against the double-precision reference run
// window by window as Hugging Face's guide lays the windows out, the plain output, the same
// result on any thread count, and every bad input a usage error naming its flag.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test/cli/cli_test_support.h"
#include "test/models/reference_gpt2.h"
#include "test/support/temp_dir.h"

using nlohmann::json;
using namespace eagerlm::test;

namespace {

// About 150 GPT-2 tokens of plain English.
const char* kText =
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, it "
    "was the season of Darkness, it was the spring of hope, it was the winter of despair, we had everything "
    "before us, we had nothing before us, we were all going direct to Heaven, we were all going direct the "
    "other way - in short, the period was so far like the present period, that some of its noisiest "
    "authorities insisted on its being received, for good or for evil, in the superlative degree of "
    "comparison only.\n";

std::string text_file(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

}  // namespace

TEST_CASE("perplexity --json matches the reference over the guide's windows", "[cli][perplexity]") {
  TempDir dir;
  const std::string file = text_file(dir, "text.txt", kText);
  const int64_t ctx = 64, stride = 24;  // the model's whole context; windows overlap by 40
  const Run r =
      run_cli("perplexity -m " + tiny_model_dir() + " -f " + file + " --ctx 64 --stride 24 --json --logprobs");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const json out = json::parse(r.out);
  const std::vector<int32_t> ids = out["ids"];
  const int64_t n = int64_t(ids.size());
  REQUIRE(n > 2 * ctx);
  CHECK(out["text_tokens"] == n);
  CHECK(out["tokens"] == n - 1);  // overlapping windows: every token but the first, once
  CHECK(out["ctx"] == ctx);
  CHECK(out["stride"] == stride);
  REQUIRE(out["logprobs"].size() == size_t(n));
  CHECK(out["logprobs"][0].is_null());

  // The reference, window by window: windows start every `stride` tokens, span up to `ctx`, and
  // score their tokens past the previous window's end, each from the window's own context. The
  // bound is test/models/test_scoring.cpp's: twice the logits' 2e-4 of their scale, plus the
  // fused log-sum-exp's rounding.
  const auto cfg = tiny_config(2, 32, 4, 64, 50257);
  const auto params = random_parameters(cfg, 17);  // tiny_model_dir()'s weights
  eagerlm::reference::Gpt2Reference ref(cfg, params);
  double nll = 0;
  int64_t scored = 0, windows = 0, fed = 0, previous_end = 0;
  for (int64_t begin = 0; previous_end < n; begin += stride, ++windows) {
    const int64_t end = std::min(begin + ctx, n);
    const auto logits = ref.logits(std::vector<int32_t>(ids.begin() + begin, ids.begin() + end - 1));
    for (int64_t i = std::max(previous_end, begin + 1); i < end; ++i) {
      const auto& z = logits[size_t(i - 1 - begin)];
      const double max = *std::max_element(z.begin(), z.end()), min = *std::min_element(z.begin(), z.end());
      double sum = 0, scale = 1;
      for (double v : z) sum += std::exp(v - max), scale = std::max(scale, std::abs(v));
      const double want = z[size_t(ids[size_t(i)])] - max - std::log(sum);
      const double bound = 2 * 2e-4 * scale + (double(z.size()) + 2 * (max - min) + 16) * 0x1p-24;
      const double got = out["logprobs"][size_t(i)];
      INFO("token " << i << " in window [" << begin << ", " << end << "): got " << got << ", reference " << want);
      CHECK(std::abs(got - want) <= bound);
      nll -= got;
      ++scored;
    }
    previous_end = end;
    fed += end - begin - 1;
  }
  CHECK(scored == n - 1);
  CHECK(out["windows"] == windows);
  const double got_nll = out["nll"];
  CHECK(got_nll == Approx(nll).epsilon(1e-12));
  CHECK(double(out["mean_nll"]) == Approx(nll / double(n - 1)).epsilon(1e-12));
  CHECK(double(out["perplexity"]) == Approx(std::exp(nll / double(n - 1))).epsilon(1e-12));
  CHECK(double(out["timings"]["tokens_per_second"]) > 0);
  CHECK(out["timings"]["fed_tokens"] == fed);
}

TEST_CASE("perplexity prints one line, and the same result on any thread count", "[cli][perplexity]") {
  TempDir dir;
  const std::string file = text_file(dir, "text.txt", kText);
  const std::string base = "perplexity -m " + tiny_model_dir() + " -f " + file + " --stride 40 ";
  const Run plain = run_cli(base);
  REQUIRE(plain.code == 0);
  CHECK_THAT(plain.out, Catch::StartsWith("perplexity "));
  CHECK(count_lines(plain.out) == 1);
  CHECK_THAT(plain.err, Catch::Contains("tokens/s"));
  const Run one = run_cli(base + "--json -t 1"), two = run_cli(base + "--json -t 2");
  REQUIRE((one.code == 0 && two.code == 0));
  CHECK(json::parse(one.out)["nll"] == json::parse(two.out)["nll"]);
  // Without --stride the windows do not overlap: each later window's first token has no context.
  const json disjoint = json::parse(run_cli("perplexity -m " + tiny_model_dir() + " -f " + file + " --json").out);
  const int64_t n = disjoint["text_tokens"], windows = disjoint["windows"];
  CHECK(disjoint["ctx"] == 64);
  CHECK(disjoint["stride"] == 64);
  CHECK(windows == (n + 63) / 64);
  CHECK(disjoint["tokens"] == n - windows);
}

TEST_CASE("perplexity: bad input is a usage error naming the flag", "[cli][perplexity][errors]") {
  TempDir dir;
  const std::string good = text_file(dir, "good.txt", kText);
  const std::string m = "perplexity -m " + tiny_model_dir() + " ";
  expect_usage_error(m + "-f " + good + " --ctx 1", "--ctx");
  expect_usage_error(m + "-f " + good + " --ctx 0", "--ctx");
  expect_usage_error(m + "-f " + good + " --ctx 65", "--ctx");  // past the model's 64 positions
  expect_usage_error(m + "-f " + good + " --stride 0", "--stride");
  expect_usage_error(m + "-f " + good + " --ctx 32 --stride 33", "--stride");
  expect_usage_error(m + "-f " + good + " --stride 65", "--stride");  // more than the default --ctx
  expect_usage_error(m + "-f " + good + " --ctx abc", "--ctx");
  expect_usage_error(m, "--file");  // no text
  expect_usage_error(m + "-f " + dir.str(), "-f/--file");
  expect_usage_error(m + "-f " + (dir / "missing.txt"), "-f/--file");
  const Run empty = run_cli(m + "-f " + text_file(dir, "empty.txt", ""));
  CHECK(empty.code == 2);
  CHECK_THAT(empty.err, Catch::Contains("-f/--file") && Catch::Contains("empty"));
  const Run one_token = run_cli(m + "-f " + text_file(dir, "one.txt", "Hello"));
  CHECK(one_token.code == 2);
  CHECK_THAT(one_token.err, Catch::Contains("-f/--file") && Catch::Contains("at least 2"));
  const std::string bad_utf8 = text_file(dir, "bad.txt", "caf\xe9 au lait");
  const Run invalid = run_cli(m + "-f " + bad_utf8);
  CHECK(invalid.code == 2);
  CHECK_THAT(invalid.err,
             Catch::Contains("-f/--file") && Catch::Contains("UTF-8") && Catch::Contains("--invalid-utf8"));
  CHECK(count_lines(invalid.err) == 1);
  CHECK(run_cli(m + "-f " + bad_utf8 + " --invalid-utf8 replace --json").code == 0);
}
