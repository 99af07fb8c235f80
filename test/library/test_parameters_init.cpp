// initialize_parameters (libeagerlm.so) against the checkpoint `eagerlm init --out` writes: the
// same path cmd_init takes (gpt2::initialize, then gpt2::save_checkpoint), read back from the
// file, byte for byte, for every storage type.
#include <catch2/catch.hpp>

#include <eagerlm/eagerlm.hpp>

#include <cstring>
#include <string>

#include "engine/core/dtype.h"
#include "engine/io/safetensors_reader.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/config.h"
#include "models/gpt2/initializer.h"
#include "test/library/library_test_support.h"

TEST_CASE("initialize_parameters gives the bytes eagerlm init writes", "[library][parameters]") {
  const std::string json = R"({"n_layer": 3, "n_embd": 36, "n_head": 3, "n_inner": 50, "n_positions": 24,
                               "vocab_size": 777, "initializer_range": 0.05})";
  const eagerlm::ModelConfig config = eagerlm::ModelConfig::from_json(json);
  const eagerlm::gpt2::Config engine_config = eagerlm::gpt2::config_from_json(json, "config");
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    INFO(dtype);
    eagerlm::test::TempDir dir;
    eagerlm::gpt2::InitOptions options;
    options.seed = 123456789012345ull;
    options.dtype = *eagerlm::dtype_from_name(dtype);
    eagerlm::gpt2::save_checkpoint(dir.str(), engine_config, eagerlm::gpt2::initialize(engine_config, options));
    const auto file = eagerlm::io::SafetensorsFile::open(dir / "model.safetensors");

    const eagerlm::Parameters p = eagerlm::initialize_parameters(config, options.seed, dtype);
    REQUIRE(p.tensors.size() == file.tensors().size());
    for (const eagerlm::TensorView& v : p.tensors) {
      INFO(v.name);
      const eagerlm::io::TensorEntry* e = file.find(v.name);
      REQUIRE(e != nullptr);
      CHECK(e->dtype_name == v.dtype);
      CHECK(e->shape == v.shape);
      REQUIRE(e->byte_size() == v.bytes);
      CHECK(std::memcmp(e->data, v.data, v.bytes) == 0);
    }
  }
}
