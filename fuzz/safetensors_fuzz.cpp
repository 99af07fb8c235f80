// libFuzzer target: a safetensors file (header and tensor table, then data) as the reader maps
// it. A file that opens must describe tensors whose bytes all lie inside the file: every one is
// read end to end (ASan reports a read outside the mapping).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/io/safetensors_reader.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      eagerlm::fuzz::write_scratch("model.safetensors", std::string_view(reinterpret_cast<const char*>(data), size));
  eagerlm::fuzz::expect_clean([&] {
    const eagerlm::io::SafetensorsFile file = eagerlm::io::SafetensorsFile::open(path);
    unsigned sum = 0;
    for (const auto& t : file.tensors()) {
      const auto* bytes = static_cast<const unsigned char*>(t.data);
      if (t.end < t.begin) std::abort();
      for (uint64_t i = 0; i < t.end - t.begin; ++i) sum += bytes[i];
    }
    if (sum == 0x7fffffffu) std::abort();  // keeps the reads
  });
  return 0;
}
