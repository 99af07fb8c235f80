// resolve_model_directory on single-file directories and every way a -m path can be wrong
// (bad-inputs rows 20 and 29): missing, not a directory, a FIFO, no model files, config without
// weights, weights without config, pickle-only checkpoints, unreadable directories.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "engine/io/checkpoint.h"
#include "engine/io/model_directory.h"
#include "engine/io/safetensors_writer.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

const std::string kConfig = "{\"model_type\":\"gpt2\"}";

void write_weights(const std::string& path) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  write_safetensors(path, {{"wte", DType::kF32, {2, 3}, w.data()}, {"wpe", DType::kF32, {6}, w.data()}});
}

}  // namespace

TEST_CASE("a single-file model directory resolves and opens", "[io][model_directory]") {
  TempDir dir;
  write_file(dir / "config.json", kConfig);
  write_weights(dir / "model.safetensors");
  for (const std::string& given : {dir.str(), dir.str() + "/"}) {
    const ModelDirectory md = resolve_model_directory(given);
    CHECK(md.dir == given);
    CHECK(md.config_path == dir / "config.json");
    CHECK(md.shard_paths == std::vector<std::string>{dir / "model.safetensors"});
    CHECK(md.index_weight_map.empty());
    CHECK(!md.sharded());
    const Checkpoint ck = Checkpoint::open(md);
    CHECK(ck.all().size() == 2);
    REQUIRE(ck.find("wte") != nullptr);
    CHECK(ck.find("wte")->shape == std::vector<int64_t>{2, 3});
    CHECK(ck.find("nope") == nullptr);
    CHECK(ck.file_of("wpe") == dir / "model.safetensors");
    CHECK(ck.file_of("nope").empty());
    const Checkpoint copy = ck;  // copies stay valid on their own
    CHECK(copy.find("wpe")->shape == std::vector<int64_t>{6});
  }
}

TEST_CASE("model.safetensors is preferred over an index, as transformers does", "[io][model_directory]") {
  TempDir dir;
  write_file(dir / "config.json", kConfig);
  write_weights(dir / "model.safetensors");
  write_file(dir / "model.safetensors.index.json", "not even JSON");
  const ModelDirectory md = resolve_model_directory(dir.path());
  CHECK(!md.sharded());
  CHECK(md.shard_paths.size() == 1);
}

TEST_CASE("bad model paths are refused with clear errors, never hanging", "[io][model_directory]") {
  TempDir dir;
  SECTION("missing path") {
    const std::string m = error_message([&] { resolve_model_directory(dir / "absent"); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains(dir / "absent") && Catch::Contains("No such file"));
  }
  SECTION("a regular file") {
    write_weights(dir / "model.safetensors");
    const std::string m = error_message([&] { resolve_model_directory(dir / "model.safetensors"); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains("is a regular file, expected a directory"));
  }
  SECTION("a FIFO") {
    make_fifo(dir / "fifo");
    const std::string report = run_in_child([&] { resolve_model_directory(dir / "fifo"); }, 5.0);
    CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("is a FIFO, expected a directory"));
  }
  SECTION("a device") {
    const std::string m = error_message([&] { resolve_model_directory("/dev/null"); }, ErrorCode::kIo);
    CHECK_THAT(m, Catch::Contains("is a device"));
  }
  SECTION("an empty directory") {
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains("no model files: looked for config.json, model.safetensors and "
                                  "model.safetensors.index.json"));
  }
  SECTION("config.json without weights") {
    write_file(dir / "config.json", kConfig);
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains("no model weights: looked for model.safetensors and "
                                  "model.safetensors.index.json"));
  }
  SECTION("weights under another name") {
    write_file(dir / "config.json", kConfig);
    write_weights(dir / "gpt2.safetensors");
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains("found gpt2.safetensors") && Catch::Contains("must be named model.safetensors"));
  }
  SECTION("weights without config.json") {
    write_weights(dir / "model.safetensors");
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains("missing config.json"));
  }
  SECTION("config.json is a directory") {
    make_dirs(dir / "config.json");
    write_weights(dir / "model.safetensors");
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains("config.json is a directory, expected a regular file"));
  }
  SECTION("model.safetensors is a FIFO") {
    write_file(dir / "config.json", kConfig);
    make_fifo(dir / "model.safetensors");
    const std::string report = run_in_child([&] { resolve_model_directory(dir.path()); }, 5.0);
    CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("model.safetensors is a FIFO"));
  }
  SECTION("unreadable directory (only checkable when not root)") {
    write_file(dir / "config.json", kConfig);
    write_weights(dir / "model.safetensors");
    make_dirs(dir / "locked");
    ::chmod((dir / "locked").c_str(), 0);
    if (::geteuid() == 0) {
      WARN("running as root: permission bits are not enforced, unreadable-directory check skipped");
    } else {
      const std::string m = error_message([&] { resolve_model_directory(dir / "locked"); }, ErrorCode::kIo);
      CHECK_THAT(m, Catch::Contains("cannot read model directory"));
    }
    ::chmod((dir / "locked").c_str(), 0755);
  }
}

TEST_CASE("pickle-only checkpoints are refused with a conversion hint", "[io][model_directory]") {
  for (const char* name :
       {"pytorch_model.bin", "model.pt", "model.ckpt", "weights.pth", "pytorch_model-00001-of-00002.bin"}) {
    INFO(name);
    TempDir dir;
    write_file(dir / "config.json", kConfig);
    // Bytes that would be dangerous to unpickle; they must never be read.
    write_file(dir / name, "\x80\x04\x95 cos\nsystem\n(S'echo pwned'\ntR.");
    const std::string m = error_message([&] { resolve_model_directory(dir.path()); }, ErrorCode::kInvalidFile);
    CHECK_THAT(m, Catch::Contains(name) && Catch::Contains("pickle") && Catch::Contains("safetensors"));
    CHECK_THAT(m, Catch::Contains("Convert"));
  }
}

}  // namespace eagerlm::io
