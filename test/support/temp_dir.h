// A fresh directory under the system temp dir (mkdtemp), removed with everything in it when the
// object goes out of scope. Every test that writes files writes them into one.
#pragma once

#include <filesystem>
#include <string>

namespace eagerlm::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace eagerlm::test
