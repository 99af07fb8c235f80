// save_checkpoint: config.json + model.safetensors, the layout Hugging Face's GPT2LMHeadModel
// and eagerlm's own loader read.
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/weight_convert.h"
#include "engine/io/atomic_file.h"
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
  std::vector<io::TensorToWrite> tensors;
  auto add = [&](const std::string& name, const Tensor& t) {
    if (!t.is_contiguous()) throw_error(ErrorCode::kInternal, "save_checkpoint needs contiguous tensors: " + name);
    if (t.device() != Device::kCpu) host.push_back(t.to(Device::kCpu));
    const Tensor& source = t.device() == Device::kCpu ? t : host.back();
    tensors.push_back({name, t.dtype(), t.shape().to_vector(), source.raw()});
  };
  host.reserve(3 * parameters.tensors.size());  // pointers into it must stay valid
  // A checkpoint holds every matrix in its config's layout, whatever layout a model holds it in.
  const ParameterTensors stored = in_config_layout(config, parameters);
  for (size_t i = 0; i < stored.specs.size(); ++i) {
    add(stored.specs[i].name, stored.tensors[i]);
    if (stored.scales_of(i).defined()) add(scale_tensor_name(stored.specs[i].name), stored.scales_of(i));
  }
  // The weights first, the config last: until the config is renamed into place, a directory that
  // held a model still holds its old config, and one that did not holds nothing that loads.
  io::remove_stale_temporaries(dir);
  io::write_safetensors(dir + "/model.safetensors", tensors, metadata, progress);
  // torch_dtype: the first float tensor's (an int8 wte says nothing of the float32 rest).
  DType dtype = DType::kF32;
  for (const Tensor& t : parameters.tensors)
    if (t.dtype() != DType::kI8) {
      dtype = t.dtype();
      break;
    }
  io::write_file_atomically(dir + "/config.json", config.to_json(dtype));
}

}  // namespace eagerlm::gpt2
