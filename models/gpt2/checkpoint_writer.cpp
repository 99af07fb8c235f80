// save_checkpoint: config.json + model.safetensors, the layout Hugging Face's GPT2LMHeadModel
// and eagerlm's own loader read.
#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "engine/io/safetensors_writer.h"
#include "models/gpt2/checkpoint.h"

namespace eagerlm::gpt2 {

void save_checkpoint(const std::string& dir, const Config& config, const ParameterTensors& parameters,
                     const std::function<void(uint64_t, uint64_t)>& progress) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_error(ErrorCode::kIo, dir + ": cannot create directory: " + ec.message());

  std::vector<io::TensorToWrite> tensors;
  for (size_t i = 0; i < parameters.specs.size(); ++i) {
    const Tensor& t = parameters.tensors[i];
    if (t.device() != Device::kCpu || !t.is_contiguous())
      throw_error(ErrorCode::kInternal, "save_checkpoint needs contiguous CPU tensors: " + parameters.specs[i].name);
    tensors.push_back({parameters.specs[i].name, t.dtype(), t.shape().to_vector(), t.raw()});
  }
  io::write_safetensors(dir + "/model.safetensors", tensors, {}, progress);

  const std::string config_path = dir + "/config.json";
  std::ofstream out(config_path, std::ios::binary | std::ios::trunc);
  out << config.to_json();
  if (!out.flush()) throw_error(ErrorCode::kIo, config_path + ": cannot write");
}

}  // namespace eagerlm::gpt2
