// The KV cache is backed by memory when it is made: no page of it is left for a generation step
// to fault in on its first write (kv_cache.cpp says what that cost).
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "models/gpt2/kv_cache.h"
#include "test/models/test_models_util.h"

using namespace eagerlm;

namespace {

// Pages of [p, p + bytes) not resident in memory (mincore), 0 when all are.
size_t missing_pages(const void* p, size_t bytes) {
  const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  std::vector<unsigned char> resident((end - begin + page - 1) / page);
  REQUIRE(mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) == 0);
  size_t missing = 0;
  for (unsigned char r : resident) missing += (r & 1) ? 0 : 1;
  return missing;
}

}  // namespace

TEST_CASE("a new KV cache has every page resident and zero", "[kv_cache]") {
  // 2 layers x 4 slots x 1024 positions x 384 floats x 2: 25 MiB, past the sizes allocators
  // serve from pages they have already touched.
  const gpt2::Config c = test::tiny_config(2, 384, 6, 1024);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    gpt2::KvCache cache(c, 4, 1024, Device::kCpu, dtype);
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const ops::KvLayerView view = cache.layer(l);
      INFO("layer " << l << ", dtype " << dtype_name(dtype));
      CHECK(missing_pages(view.keys.raw(), view.keys.nbytes()) == 0);
      CHECK(missing_pages(view.values.raw(), view.values.nbytes()) == 0);
      const auto* bytes = static_cast<const unsigned char*>(view.values.raw());
      CHECK(bytes[0] == 0);
      CHECK(bytes[view.values.nbytes() - 1] == 0);
    }
  }
}
