// Writing safetensors files the way the reference implementation does, so files round-trip
// through other tools unchanged: `__metadata__` first with {"format": "pt"}, tensors ordered by
// element alignment (largest first; equal sizes in the reference's order F32 > I32, BF16 > F16)
// then name, contiguous data_offsets from 0, and the JSON header padded with spaces so that the
// data section starts on an 8-byte boundary. With no extra metadata the bytes are identical to
// the reference writer's for the same tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/core/dtype.h"

namespace eagerlm::io {

struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;  // [] for a scalar
  const void* data;            // host memory, dtype_size(dtype) * numel bytes; may be null if 0
};

// Writes `tensors` to `path` through an AtomicFile (atomic_file.h), so a reader never sees a
// partial file and a failed write leaves whatever was there before. `metadata` entries are added to {"format": "pt"} (a "format" key given
// here replaces "pt"). `progress(bytes_written, total_bytes)` is called after the header and
// after each chunk of data, ending with (total, total). Throws kInvalidArgument for an empty,
// duplicate, non-UTF-8 or reserved ("__metadata__") name, a negative dimension, or a size that
// overflows; kIo if the file cannot be written (the temporary file is removed).
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {},
                       const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace eagerlm::io
