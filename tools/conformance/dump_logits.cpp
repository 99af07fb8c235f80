// eagerlm-dump-logits: the logits eagerlm computes at every position of some prompts, written
// as one float32 .npy array, for the conformance tests in test/python/ (which compare them with
// Hugging Face's Flax GPT-2). Test tooling, not part of the CLI.
//
//   eagerlm-dump-logits MODEL_DIR OUT.npy [--decode-from K] [--device cpu|cuda]
//                       [--weights f32|bf16|f16|int8] [--kv-type f32|bf16|f16] IDS [IDS ...]
//
// Each IDS is one prompt as comma-separated token ids. OUT.npy is [sum of prompt lengths, vocab]:
// the rows of prompt 0, then those of prompt 1, ... Row t of a prompt holds the logits of the
// next token after its first t + 1 tokens. All prompts run as one batch (one cache slot each).
// Without --decode-from they go through one packed prefill step; with --decode-from K the first
// K tokens of every prompt are prefilled together and the rest fed one token per sequence per
// step, the decoding path, so both paths are checked against the same reference. --device cuda
// runs the model on the GPU (tools/gpu_check.sh compares its logits with the CPU's). --weights
// converts the weight matrices at load (default: as stored), --kv-type sets the cache's type.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/dtype.h"
#include "engine/core/weight_tensor.h"
#include "engine/core/error.h"
#include "engine/generation/step_packer.h"
#include "engine/tokenizer/token_ids.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model.h"

using namespace eagerlm;

namespace {

// NumPy's .npy format, version 1.0: magic, header length, a Python dict literal padded with
// spaces to a multiple of 64 bytes and ended by a newline, then the raw little-endian data.
void write_npy(const std::string& path, const std::vector<float>& data, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  const size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw_error(ErrorCode::kIo, path + ": cannot open for writing");
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t length = uint16_t(header.size());
  const unsigned char length_le[2] = {uint8_t(length & 0xff), uint8_t(length >> 8)};
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(length_le, 1, 2, f) == 2 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(data.data(), sizeof(float), data.size(), f) == data.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw_error(ErrorCode::kIo, path + ": write failed");
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int64_t decode_from = 0;  // 0: every prompt in one prefill step
  Device device = Device::kCpu;
  gpt2::ModelOptions options;
  for (size_t i = 0; i + 1 < args.size();) {
    if (args[i] == "--decode-from") {
      decode_from = std::atoll(args[i + 1].c_str());
      if (decode_from < 1) throw_error(ErrorCode::kInvalidArgument, "--decode-from: expected an integer >= 1");
    } else if (args[i] == "--device") {
      const auto d = device_from_name(args[i + 1]);
      if (!d) throw_error(ErrorCode::kInvalidArgument, "--device: expected cpu or cuda");
      device = *d;
    } else if (args[i] == "--weights") {
      options.weights = weight_type_from_name(args[i + 1]);
      if (!options.weights) throw_error(ErrorCode::kInvalidArgument, "--weights: expected f32, bf16, f16 or int8");
    } else if (args[i] == "--kv-type") {
      const auto t = dtype_from_cli_name(args[i + 1]);
      if (!t) throw_error(ErrorCode::kInvalidArgument, "--kv-type: expected f32, bf16 or f16");
      options.kv_type = *t;
    } else {
      ++i;
      continue;
    }
    args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
  }
  if (args.size() < 3) {
    std::fprintf(stderr, "usage: eagerlm-dump-logits MODEL_DIR OUT.npy [--decode-from K] [--device cpu|cuda] [--weights T] [--kv-type T] "
                 "IDS...\n");
    return 2;
  }
  std::vector<std::vector<int32_t>> prompts;
  int64_t total_rows = 0, longest = 0;
  for (size_t i = 2; i < args.size(); ++i) {
    prompts.push_back(parse_token_ids(args[i], 0, "prompt " + std::to_string(i - 2)));
    if (prompts.back().empty())
      throw_error(ErrorCode::kInvalidArgument, "prompt " + std::to_string(i - 2) + " is empty");
    total_rows += int64_t(prompts.back().size());
    longest = std::max(longest, int64_t(prompts.back().size()));
  }

  const auto model = gpt2::Model::load(args[0], device, options);
  const int64_t vocab = model->config().vocab_size;
  gpt2::ForwardLimits limits;
  limits.max_slots = int64_t(prompts.size());
  limits.max_len = longest;
  limits.max_step_rows = total_rows;
  limits.all_logits = true;
  gpt2::ForwardPass forward(model, limits);

  // Offsets of each prompt's rows in the output.
  std::vector<int64_t> first_row(prompts.size(), 0);
  for (size_t s = 1; s < prompts.size(); ++s) first_row[s] = first_row[s - 1] + int64_t(prompts[s - 1].size());
  std::vector<float> out(size_t(total_rows * vocab));

  // One packed prefill step of every prompt's first chunk, then (with --decode-from) one token
  // per sequence per step.
  std::vector<int64_t> done(prompts.size(), 0);  // tokens of each prompt already run
  auto copy_rows = [&](const std::vector<SequenceStep>& step, const std::vector<size_t>& which) {
    const Tensor logits = forward.step(step, gpt2::LogitsFor::kAllTokens).to(Device::kCpu);
    const float* rows = logits.data<float>();
    for (size_t k = 0; k < step.size(); ++k) {
      const size_t s = which[k];
      std::memcpy(out.data() + size_t((first_row[s] + done[s]) * vocab), rows,
                  sizeof(float) * size_t(step[k].n_tokens * vocab));
      rows += step[k].n_tokens * vocab;
      done[s] += step[k].n_tokens;
    }
  };
  const int64_t first_chunk = decode_from > 0 ? decode_from : longest;
  StepPacker packer(total_rows);
  for (size_t s = 0; s < prompts.size(); ++s)
    packer.add(int32_t(s), prompts[s].data(), int32_t(std::min<int64_t>(int64_t(prompts[s].size()), first_chunk)));
  copy_rows(packer.next(), packer.sequences());
  for (;;) {
    std::vector<SequenceStep> step;
    std::vector<size_t> which;
    for (size_t s = 0; s < prompts.size(); ++s) {
      if (done[s] == int64_t(prompts[s].size())) continue;
      step.push_back({int32_t(s), int32_t(done[s]), prompts[s].data() + done[s], 1});
      which.push_back(s);
    }
    if (step.empty()) break;
    copy_rows(step, which);
  }
  write_npy(args[1], out, total_rows, vocab);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eagerlm-dump-logits: %s\n", e.what());
    return 1;
  }
}
