// API keys: a request carries "Authorization: Bearer KEY" (what OpenAI's clients send). The key
// is compared in time that depends only on the expected key's length, so response times do not
// reveal how much of a guess was right.
#pragma once

#include <string>
#include <string_view>

namespace eagerlm::server {

// True when a equals b; the time taken depends on b's length alone (b: the secret).
bool constant_time_equal(std::string_view a, std::string_view b);

class ApiKey {
 public:
  explicit ApiKey(std::string key) : key_(std::move(key)) {}
  bool required() const { return !key_.empty(); }
  // Whether an Authorization header value grants access (always, when no key is set).
  bool accepts(std::string_view authorization) const;

 private:
  std::string key_;
};

}  // namespace eagerlm::server
