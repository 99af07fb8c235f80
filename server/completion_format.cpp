#include "server/completion_format.h"

#include <cstdio>

#include "eagerlm/version.h"

namespace eagerlm::server {

namespace {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// Characters a piece of text adds: bytes that begin a character (not continuation bytes).
size_t char_starts(std::string_view s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sse_event(const nlohmann::json& value) { return "data: " + json_text(value) + "\n\n"; }

const char* openai_finish_reason(FinishReason reason) {
  return reason == FinishReason::kLength ? "length" : "stop";
}

nlohmann::json completion_object(const std::string& id, int64_t created, const std::string& model) {
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"system_fingerprint", "eagerlm-" EAGERLM_VERSION_STRING},
          {"choices", nlohmann::json::array()}};
}

nlohmann::json choice_object(size_t index, const std::string& text, nlohmann::json logprobs, nlohmann::json finish_reason) {
  return {{"text", text}, {"index", index}, {"logprobs", std::move(logprobs)}, {"finish_reason", std::move(finish_reason)}};
}

nlohmann::json usage_object(size_t prompt_tokens, size_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

std::string token_display(std::string_view bytes) {
  if (valid_utf8(bytes)) return std::string(bytes);
  std::string out = "bytes:";
  for (const char c : bytes) {
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
    out += hex;
  }
  return out;
}

void LegacyLogprobs::add(int32_t id, std::optional<float> logprob, const std::vector<TokenLogprob>* top) {
  const std::string bytes = model_->detokenize({id});
  tokens_.push_back(token_display(bytes));
  offsets_.push_back(chars_);
  chars_ += char_starts(bytes);
  token_logprobs_.push_back(logprob ? nlohmann::json(*logprob) : nlohmann::json(nullptr));
  if (!logprob || !top) {
    top_logprobs_.push_back(nullptr);
    return;
  }
  nlohmann::json alternatives = nlohmann::json::object();
  for (const TokenLogprob& t : *top) alternatives[token_display(model_->detokenize({t.id}))] = t.logprob;
  top_logprobs_.push_back(std::move(alternatives));
}

nlohmann::json LegacyLogprobs::range(size_t from) const {
  nlohmann::json out = {{"tokens", nlohmann::json::array()},
                        {"token_logprobs", nlohmann::json::array()},
                        {"top_logprobs", nlohmann::json::array()},
                        {"text_offset", nlohmann::json::array()}};
  for (size_t i = from; i < tokens_.size(); ++i) {
    out["tokens"].push_back(tokens_[i]);
    out["token_logprobs"].push_back(token_logprobs_[i]);
    out["top_logprobs"].push_back(top_logprobs_[i]);
    out["text_offset"].push_back(offsets_[i]);
  }
  return out;
}

nlohmann::json LegacyLogprobs::all() const { return range(0); }

nlohmann::json LegacyLogprobs::take() {
  nlohmann::json out = range(taken_);
  taken_ = tokens_.size();
  return out;
}

}  // namespace eagerlm::server
