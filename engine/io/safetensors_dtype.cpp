// Table of the standard safetensors dtypes with a whole number of bytes per element.
#include "engine/io/safetensors_dtype.h"

#include <utility>

namespace eagerlm::io {
namespace {

constexpr std::pair<std::string_view, size_t> kDtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"I16", 2}, {"U16", 2}, {"F16", 2}, {"BF16", 2},
    {"I32", 4},  {"U32", 4}, {"F32", 4}, {"F64", 8}, {"I64", 8}, {"U64", 8},
};

}  // namespace

std::optional<size_t> safetensors_dtype_size(std::string_view name) {
  for (const auto& [dtype, size] : kDtypes)
    if (dtype == name) return size;
  return std::nullopt;
}

const char* supported_safetensors_dtypes() { return "BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64"; }

}  // namespace eagerlm::io
