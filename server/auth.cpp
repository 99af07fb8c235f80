#include "server/auth.h"

#include <cctype>

namespace eagerlm::server {

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Every byte of b is visited whatever a is; volatile keeps the compiler from stopping early.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

bool ApiKey::accepts(std::string_view authorization) const {
  if (key_.empty()) return true;
  constexpr std::string_view scheme = "bearer ";
  if (authorization.size() < scheme.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return false;
  std::string_view token = authorization.substr(scheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  return constant_time_equal(token, key_);
}

}  // namespace eagerlm::server
