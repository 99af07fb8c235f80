// libFuzzer target: model.safetensors.index.json, resolved against a directory that holds two
// small valid shards (and a file outside it, for paths that try to escape). An index that
// resolves must name only shard files inside the directory, and the checkpoint over it must
// find every listed tensor in its shard.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/io/checkpoint.h"
#include "engine/io/model_directory.h"
#include "engine/io/safetensors_writer.h"
#include "fuzz/fuzz_support.h"

namespace {

const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string d = eagerlm::fuzz::scratch_dir() + "/model";
    std::filesystem::create_directories(d);
    const float values[4] = {1, 2, 3, 4};
    eagerlm::io::write_safetensors(d + "/model-00001-of-00002.safetensors",
                                   {{"a", eagerlm::DType::kF32, {2}, values}, {"b", eagerlm::DType::kF32, {2}, values}});
    eagerlm::io::write_safetensors(d + "/model-00002-of-00002.safetensors", {{"c", eagerlm::DType::kF32, {4}, values}});
    eagerlm::fuzz::write_scratch("outside.safetensors", "not a model");
    eagerlm::fuzz::write_scratch("model/config.json", "{}");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = model_dir();
  eagerlm::fuzz::write_scratch("model/model.safetensors.index.json",
                               std::string_view(reinterpret_cast<const char*>(data), size));
  eagerlm::fuzz::expect_clean([&] {
    const eagerlm::io::ModelDirectory md = eagerlm::io::resolve_model_directory(dir);
    for (const std::string& shard : md.shard_paths)
      if (shard.rfind(dir + "/", 0) != 0) std::abort();  // every shard inside the directory
    const eagerlm::io::Checkpoint ckpt = eagerlm::io::Checkpoint::open(md);
    for (const auto& [name, shard] : md.index_weight_map)
      if (!ckpt.find(name)) std::abort();
  });
  return 0;
}
