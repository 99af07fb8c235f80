// eagerlm-dump-logits: the logits eagerlm computes at every position of some prompts, written
// as one float32 .npy array, for the conformance tests in test/python/ (which compare them with
// Hugging Face's Flax GPT-2). Test tooling, not part of the CLI.
//
//   eagerlm-dump-logits MODEL_DIR OUT.npy [--decode-from K] IDS [IDS ...]
//
// Each IDS is one prompt as comma-separated token ids. OUT.npy is [sum of prompt lengths, vocab]:
// the rows of prompt 0, then those of prompt 1, ... Row t of a prompt holds the logits of the
// next token after its first t + 1 tokens. All prompts run as one batch (one cache slot each).
// Without --decode-from they go through one packed prefill step; with --decode-from K the first
// K tokens of every prompt are prefilled together and the rest fed one token per sequence per
// step, the decoding path, so both paths are checked against the same reference.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "engine/core/device.h"
#include "engine/core/error.h"
#include "models/gpt2/forward.h"
#include "models/gpt2/model.h"

using namespace eagerlm;

namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string token = text.substr(pos, comma - pos);
    char* end = nullptr;
    const long value = std::strtol(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || value < 0 || value > INT32_MAX)
      throw_error(ErrorCode::kInvalidArgument, "prompt '" + text + "': '" + token + "' is not a token id");
    ids.push_back(int32_t(value));
    pos = comma + 1;
  }
  return ids;
}

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
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--decode-from" && i + 1 < args.size()) {
      decode_from = std::atoll(args[i + 1].c_str());
      if (decode_from < 1) throw_error(ErrorCode::kInvalidArgument, "--decode-from: expected an integer >= 1");
      args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
      break;
    }
  if (args.size() < 3) {
    std::fprintf(stderr, "usage: eagerlm-dump-logits MODEL_DIR OUT.npy [--decode-from K] IDS [IDS ...]\n");
    return 2;
  }
  std::vector<std::vector<int32_t>> prompts;
  int64_t total_rows = 0, longest = 0;
  for (size_t i = 2; i < args.size(); ++i) {
    prompts.push_back(parse_ids(args[i]));
    total_rows += int64_t(prompts.back().size());
    longest = std::max(longest, int64_t(prompts.back().size()));
  }

  const auto model = gpt2::Model::load(args[0], Device::kCpu);
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

  const int64_t first_chunk = decode_from > 0 ? decode_from : longest;
  std::vector<int64_t> done(prompts.size(), 0);  // tokens of each prompt already run
  for (bool first = true;; first = false) {
    std::vector<SequenceStep> step;
    std::vector<size_t> which;
    for (size_t s = 0; s < prompts.size(); ++s) {
      const int64_t left = int64_t(prompts[s].size()) - done[s];
      if (left == 0) continue;
      const int64_t n = first ? std::min(left, first_chunk) : 1;
      step.push_back({int32_t(s), int32_t(done[s]), prompts[s].data() + done[s], int32_t(n)});
      which.push_back(s);
    }
    if (step.empty()) break;
    const Tensor logits = forward.step(step, gpt2::LogitsFor::kAllTokens).to(Device::kCpu);
    const float* rows = logits.data<float>();
    for (size_t k = 0; k < step.size(); ++k) {
      const size_t s = which[k];
      std::memcpy(out.data() + size_t((first_row[s] + done[s]) * vocab), rows,
                  sizeof(float) * size_t(step[k].n_tokens * vocab));
      rows += step[k].n_tokens * vocab;
      done[s] += step[k].n_tokens;
    }
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
