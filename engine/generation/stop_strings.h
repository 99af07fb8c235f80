// Stop strings over streamed text. Generated text arrives piece by piece; a stop string may
// straddle pieces, so the tail that could still begin a stop string is held back from the
// stream until it is either completed (and cut) or ruled out.
#pragma once

#include <string>
#include <vector>

namespace eagerlm {

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);

  // Appends a piece of text (whole UTF-8 characters). Returns the text now safe to emit.
  // After a stop string is found, stopped() is true and the text before it has been emitted.
  std::string push(const std::string& piece);
  // Releases whatever was held back (at the end of generation).
  std::string finish();

  bool stopped() const { return stopped_; }
  const std::string& text() const { return text_; }  // all emitted text, stop string excluded

 private:
  size_t safe_prefix_length() const;  // of held_: bytes that cannot start a stop string
  std::vector<std::string> stops_;
  std::string held_;
  std::string text_;
  bool stopped_ = false;
};

}  // namespace eagerlm
