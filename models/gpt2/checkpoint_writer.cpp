// save_checkpoint: config.json + model.safetensors, the layout Hugging Face's GPT2LMHeadModel
// and eagerlm's own loader read.
#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "engine/io/safetensors_writer.h"
#include "models/gpt2/checkpoint.h"

namespace eagerlm::gpt2 {

void save_checkpoint(const std::string& dir, const Config& config, const ParameterTensors& parameters,
                     const std::function<void(uint64_t, uint64_t)>& progress,
                     const std::map<std::string, std::string>& metadata) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_error(ErrorCode::kIo, dir + ": cannot create directory: " + ec.message());

  std::vector<Tensor> host;  // safetensors are written from host memory
  host.reserve(parameters.tensors.size());
  std::vector<io::TensorToWrite> tensors;
  for (size_t i = 0; i < parameters.specs.size(); ++i) {
    const Tensor& t = parameters.tensors[i];
    if (!t.is_contiguous())
      throw_error(ErrorCode::kInternal, "save_checkpoint needs contiguous tensors: " + parameters.specs[i].name);
    if (t.device() != Device::kCpu) host.push_back(t.to(Device::kCpu));
    const Tensor& source = t.device() == Device::kCpu ? t : host.back();
    tensors.push_back({parameters.specs[i].name, t.dtype(), t.shape().to_vector(), source.raw()});
  }
  io::write_safetensors(dir + "/model.safetensors", tensors, metadata, progress);

  const DType dtype = parameters.tensors.empty() ? DType::kF32 : parameters.tensors[0].dtype();
  const std::string config_path = dir + "/config.json";
  std::ofstream out(config_path, std::ios::binary | std::ios::trunc);
  out << config.to_json(dtype);
  if (!out.flush()) throw_error(ErrorCode::kIo, config_path + ": cannot write");
}

}  // namespace eagerlm::gpt2
