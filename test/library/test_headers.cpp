// The public headers stay self-contained: they include only standard headers and each other
// (no CUDA, OpenBLAS or nlohmann/json, nothing of the engine), and their only conditionals are
// include guards, __cplusplus and the compiler check in export.h (no build options). Also checks
// that docs/library.md shows the example programs exactly as CI builds them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool only(const std::string& s, const char* chars) {
  return !s.empty() && s.find_first_not_of(chars) == std::string::npos;
}

// <string>, <cstdint>, <string_view>, <stddef.h>, <stdint.h>: the C and C++ standard libraries.
bool standard_header(const std::string& h) {
  if (h == "<stddef.h>" || h == "<stdint.h>") return true;
  return h.size() > 2 && h.front() == '<' && h.back() == '>' &&
         only(h.substr(1, h.size() - 2), "abcdefghijklmnopqrstuvwxyz_");
}

// Include guards (EAGERLM_..._H), __cplusplus, and export.h's compiler check.
bool allowed_condition(const std::string& c) {
  if (c == "__cplusplus" || c == "defined(__GNUC__) || defined(__clang__)") return true;
  return c.rfind("EAGERLM", 0) == 0 && c.size() > 8 && c.substr(c.size() - 2) == "_H" &&
         only(c, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
}

}  // namespace

TEST_CASE("public headers include only the standard library and each other", "[library][headers]") {
  const fs::path dir = fs::path(EAGERLM_SOURCE_DIR) / "include" / "eagerlm";
  const std::set<std::string> own = {"\"export.h\"",       "\"common.hpp\"",       "\"error.hpp\"",
                                     "\"model.hpp\"",      "\"generator.hpp\"",    "\"engine.hpp\"",
                                     "\"parameters.hpp\"", "\"jax_primitives.hpp\"", "\"attention.hpp\"",
                                     "\"eagerlm/version.h\""};
  size_t headers = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!(name.ends_with(".h") || name.ends_with(".hpp"))) continue;
    ++headers;
    std::istringstream lines(read(entry.path()));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      INFO(name << ":" << n << ": " << line);
      const std::string t = trim(line);
      for (const char* foreign : {"cudaStream", "cublas", "cblas", "openblas", "nlohmann"})
        CHECK(line.find(foreign) == std::string::npos);
      if (t.empty() || t[0] != '#') continue;
      std::istringstream words(trim(t.substr(1)));
      std::string directive;
      words >> directive;
      std::string rest;
      std::getline(words, rest);
      rest = trim(rest);
      if (directive == "include") CHECK((own.count(rest) == 1 || standard_header(rest)));
      if (directive == "if" || directive == "ifdef" || directive == "ifndef" || directive == "elif")
        CHECK(allowed_condition(rest));
    }
  }
  // export.h common error model parameters generator engine jax_primitives attention eagerlm.hpp
  // eagerlm.h
  CHECK(headers == 11);
}

TEST_CASE("docs/library.md shows the example programs verbatim", "[library][headers]") {
  const std::string doc = read(fs::path(EAGERLM_SOURCE_DIR) / "docs" / "library.md");
  for (const char* example : {"example.cpp", "example.c"}) {
    const std::string code = read(fs::path(EAGERLM_SOURCE_DIR) / "tools" / "examples" / "library" / example);
    INFO(example);
    CHECK(doc.find(code) != std::string::npos);
    size_t lines = 0;
    for (char c : code) lines += c == '\n';
    CHECK(lines <= 20);
  }
}
