#include "test/support/temp_dir.h"

#include <stdlib.h>

#include <stdexcept>
#include <system_error>

namespace eagerlm::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "eagerlm-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

}  // namespace eagerlm::test
