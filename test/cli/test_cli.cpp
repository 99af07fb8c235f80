// The `eagerlm` command line as a user meets it: exit codes (2 for usage errors naming the
// flag, 1 for other failures, one line on stderr), clean --json output, reproducibility across
// thread counts, and bad files rejected. Runs the built binary on a tiny checkpoint.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "models/gpt2/checkpoint.h"
#include "test/models/test_models_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Run {
  int code;
  std::string out, err;
};

// Runs `eagerlm ARGS` with `input` on stdin (and `env`, `env`(1) arguments, before it); captures
// stdout and stderr.
Run run_cli(const std::string& args, const std::string& input = "", const std::string& env = "") {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("eagerlm-cli-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir);
  std::ofstream(dir / "in", std::ios::binary) << input;
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(EAGERLM_BINARY_DIR) +
                          "/tools/eagerlm " + args + " <" + (dir / "in").string() +
                          " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
  fs::remove_all(dir);
  return r;
}

// A tiny random GPT-2 with the real vocabulary size, so every GPT-2 token id is valid.
const std::string& tiny_model_dir() {
  static const std::string dir = [] {
    const fs::path d = fs::temp_directory_path() / ("eagerlm-cli-model-" + std::to_string(getpid()));
    auto c = eagerlm::test::tiny_config(2, 32, 4, 64, 50257);
    eagerlm::gpt2::save_checkpoint(d.string(), c, eagerlm::test::random_parameters(c, 17));
    return d.string();
  }();
  return dir;
}

int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

void expect_usage_error(const std::string& args, const std::string& flag) {
  INFO("eagerlm " << args);
  const Run r = run_cli(args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(flag));
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("usage errors exit 2 naming the flag", "[cli]") {
  const std::string gen = "generate -m " + tiny_model_dir() + " -p hi ";
  expect_usage_error(gen + "--top-p 2", "--top-p");
  expect_usage_error(gen + "--top-p 0", "--top-p");
  expect_usage_error(gen + "--temp nan", "--temperature");
  expect_usage_error(gen + "--temp -1", "--temperature");
  expect_usage_error(gen + "--min-p 1.5", "--min-p");
  expect_usage_error(gen + "--top-k -3", "--top-k");
  expect_usage_error(gen + "--repeat-penalty 0", "--repetition-penalty");
  expect_usage_error(gen + "-n -5", "-n");
  expect_usage_error(gen + "-n abc", "-n");
  expect_usage_error(gen + "-t 0", "--threads");
  expect_usage_error(gen + "--seed -2", "--seed");
  expect_usage_error(gen + "--max-len 100000", "--max-len");
  expect_usage_error(gen + "--device tpu", "--device");
  expect_usage_error(gen + "--gemm-math tf32", "--gemm-math");  // tensor cores need --device cuda
  expect_usage_error(gen + "--gemm-math fp16", "--gemm-math");
  expect_usage_error("bench --quick --gemm-math bf16", "--gemm-math");
  expect_usage_error(gen + "--no-such-flag", "--no-such-flag");
  expect_usage_error("frobnicate", "frobnicate");
}

TEST_CASE("generate --json prints one JSON object and is reproducible across threads", "[cli]") {
  const std::string base = "generate -m " + tiny_model_dir() + " -p 'Hello there' -n 12 --json ";
  const Run greedy1 = run_cli(base + "--temp 0 -t 1");
  REQUIRE(greedy1.code == 0);
  const json j = json::parse(greedy1.out);  // throws (fails the test) on any extra output
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["ids"].size() == 12);
  CHECK(j["results"][0]["finish_reason"] == "length");
  CHECK(j["timings"].contains("decode_ms_per_token"));
  const Run greedy2 = run_cli(base + "--temp 0 -t 2");
  CHECK(json::parse(greedy2.out)["results"][0]["ids"] == j["results"][0]["ids"]);
  const Run s1 = run_cli(base + "--temp 1.0 --top-k 0 --top-p 1 --min-p 0 --seed 5 -t 1");
  const Run s2 = run_cli(base + "--temp 1.0 --top-k 0 --top-p 1 --min-p 0 --seed 5 -t 2");
  const Run s3 = run_cli(base + "--temp 1.0 --top-k 0 --top-p 1 --min-p 0 --seed 6 -t 2");
  CHECK(json::parse(s1.out)["results"][0]["ids"] == json::parse(s2.out)["results"][0]["ids"]);
  CHECK(json::parse(s1.out)["results"][0]["ids"] != json::parse(s3.out)["results"][0]["ids"]);
}

TEST_CASE("a batch from --prompt-file keeps prompt order and each prompt's greedy ids", "[cli]") {
  const fs::path prompts = fs::temp_directory_path() / ("eagerlm-prompts-" + std::to_string(getpid()));
  std::ofstream(prompts) << "The cat\nA much longer prompt about something else entirely\nx\n";
  const std::string base = "generate -m " + tiny_model_dir() + " -n 8 --temp 0 --json ";
  const Run batch = run_cli(base + "--prompt-file " + prompts.string());
  fs::remove(prompts);
  REQUIRE(batch.code == 0);
  const json b = json::parse(batch.out);
  REQUIRE(b["results"].size() == 3);
  const char* texts[] = {"'The cat'", "'A much longer prompt about something else entirely'", "x"};
  for (int i = 0; i < 3; ++i) {
    const json single = json::parse(run_cli(base + "-p " + texts[i]).out);
    CHECK(b["results"][i]["ids"] == single["results"][0]["ids"]);
  }
}

TEST_CASE("streamed text goes to stdout, timings to stderr", "[cli]") {
  const Run r = run_cli("generate -m " + tiny_model_dir() + " -p 'Once upon' -n 5 --temp 0 --seed 1");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("Once upon", 0) == 0);
  CHECK_THAT(r.err, Catch::Contains("ms/token"));
}

TEST_CASE("a prompt longer than the context is an error unless --truncate", "[cli]") {
  std::string long_prompt;
  for (int i = 0; i < 100; ++i) long_prompt += " word";
  const std::string base = "generate -m " + tiny_model_dir() + " -n 2 --temp 0 -p '" + long_prompt + "' ";
  const Run r = run_cli(base);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("100 tokens") && Catch::Contains("64"));
  CHECK(run_cli(base + "--truncate --json").code == 0);
}

TEST_CASE("bad model paths and files fail with one line and exit 1", "[cli][errors]") {
  const Run missing = run_cli("info -m /nonexistent/model");
  CHECK(missing.code == 1);
  CHECK(count_lines(missing.err) == 1);
  CHECK_THAT(missing.err, Catch::Contains("/nonexistent/model"));

  const fs::path bad = fs::temp_directory_path() / ("eagerlm-bad-" + std::to_string(getpid()));
  fs::create_directories(bad);
  fs::copy_file(tiny_model_dir() + "/config.json", bad / "config.json");
  std::ofstream(bad / "model.safetensors", std::ios::binary) << std::string("\xff\xff\xff\xff\xff\xff\xff\x00garbage", 15);
  const Run corrupt = run_cli("generate -m " + bad.string() + " -p hi");
  CHECK(corrupt.code == 1);
  CHECK(count_lines(corrupt.err) == 1);
  CHECK_THAT(corrupt.err, Catch::Contains("model.safetensors"));

  const fs::path fifo = bad / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const Run f = run_cli("info -m " + fifo.string());  // must not hang
  CHECK(f.code == 1);
  fs::remove_all(bad);
}

TEST_CASE("info describes a checkpoint; tokenize and detokenize round trip", "[cli]") {
  const Run info = run_cli("info --json -m " + tiny_model_dir());
  REQUIRE(info.code == 0);
  const json j = json::parse(info.out);
  CHECK(j["config"]["n_layer"] == 2);
  CHECK(j["parameters"] == eagerlm::gpt2::parameter_count(eagerlm::test::tiny_config(2, 32, 4, 64, 50257)));

  const std::string text = "Hello, world! Ünïcödé 😀\n";
  const Run ids = run_cli("tokenize", text);
  REQUIRE(ids.code == 0);
  const Run back = run_cli("detokenize", ids.out);
  REQUIRE(back.code == 0);
  CHECK(back.out == text);
  CHECK(run_cli("detokenize", "1 2 99999").code != 0);
}

TEST_CASE("idle OpenMP threads wait passively unless OMP_WAIT_POLICY says otherwise", "[cli]") {
  // libgomp prints its settings at start-up under OMP_DISPLAY_ENV=VERBOSE; passive waiting is a
  // spin count of 0 (libgomp's own default spins 300000 times).
  const Run unset = run_cli("--version", "", "-u OMP_WAIT_POLICY OMP_DISPLAY_ENV=VERBOSE");
  CHECK(unset.code == 0);
  const auto last_spin_count = [](const std::string& err) {  // the settings the final image ran with
    const auto at = err.rfind("GOMP_SPINCOUNT = '");
    return at == std::string::npos ? std::string("?") : err.substr(at + 18, err.find('\'', at + 18) - at - 18);
  };
  CHECK(last_spin_count(unset.err) == "0");
  const Run active = run_cli("--version", "", "OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=VERBOSE");
  CHECK(active.code == 0);
  CHECK(active.err.find("OMP_WAIT_POLICY = 'ACTIVE'") != std::string::npos);
  CHECK(last_spin_count(active.err) != "0");
}
