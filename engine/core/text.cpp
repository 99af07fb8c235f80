#include "engine/core/text.h"

#include <cstdio>

#include "engine/core/utf8.h"

namespace eagerlm {

std::string escape_for_message(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) {
      out += "...";
      break;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + i;
    const unsigned char b = *p;
    if (b >= 0x80) {
      const utf8::Decoded d = utf8::decode(p, text.size() - i);
      if (d.status == utf8::Status::kValid) {
        out.append(text.substr(i, d.length));
        i += d.length;
        continue;
      }
    }
    switch (b) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (b < 0x20 || b == 0x7f || b >= 0x80) {
          char hex[5];
          std::snprintf(hex, sizeof hex, "\\x%02x", b);
          out += hex;
        } else {
          out += char(b);
        }
    }
    ++i;
  }
  return out;
}

}  // namespace eagerlm
