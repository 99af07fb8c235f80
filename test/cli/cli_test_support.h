// What the CLI tests share: running the built `eagerlm` with stdin, environment and captured
// output, and a tiny random GPT-2 checkpoint with GPT-2's vocabulary size.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/gpt2/checkpoint.h"
#include "test/models/test_models_util.h"
#include "test/support/temp_dir.h"

namespace eagerlm::test {

struct Run {
  int code;
  std::string out, err;
};

// Runs `eagerlm ARGS` with `input` on stdin (and `env`, `env`(1) arguments, before it); captures
// stdout and stderr.
inline Run run_cli(const std::string& args, const std::string& input = "", const std::string& env = "") {
  static int counter = 0;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("eagerlm-cli-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "in", std::ios::binary) << input;
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(EAGERLM_BINARY_DIR) + "/bin/eagerlm " +
                          args + " <" + (dir / "in").string() + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  Run r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
  std::filesystem::remove_all(dir);
  return r;
}

// A tiny random GPT-2 with the real vocabulary size, so every GPT-2 token id is valid. Written
// once per test process into a TempDir, which goes when the process exits (6.5 MB a run would
// otherwise pile up in /tmp).
inline const std::string& tiny_model_dir() {
  static const TempDir scratch;
  static const std::string dir = [] {
    const std::string d = scratch / "tiny-gpt2";
    auto c = eagerlm::test::tiny_config(2, 32, 4, 64, 50257);
    eagerlm::gpt2::save_checkpoint(d, c, eagerlm::test::random_parameters(c, 17));
    return d;
  }();
  return dir;
}

inline int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

inline void expect_usage_error(const std::string& args, const std::string& flag) {
  INFO("eagerlm " << args);
  const Run r = run_cli(args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(flag));
  CHECK(r.out.empty());
}

}  // namespace eagerlm::test
