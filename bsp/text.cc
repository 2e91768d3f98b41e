#include "lockstep/bsp/text.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace lockstep::bsp {
namespace {

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF) that starts at text[i], or 0 if none does. Sets `code_point`.
size_t Utf8Sequence(std::string_view text, size_t i, uint32_t& code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  size_t len;
  uint32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, min = 0x80, code_point = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, min = 0x800, code_point = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, min = 0x10000, code_point = b0 & 0x07u;
  } else {
    return 0;
  }
  if (text.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (b & 0x3Fu);
  }
  if (code_point < min || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return len;
}

// Code points that are valid UTF-8 but would let the text break or disguise a log line.
bool IsDeceptive(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void AppendEscaped(std::string_view bytes, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
}

}  // namespace

std::string SanitizeForLog(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<uint8_t>(text[i]);
    std::string piece;
    size_t consumed = 1;
    if (b >= 0x20 && b < 0x7F) {
      piece = b == '\\' ? std::string("\\\\") : std::string(1, text[i]);
    } else if (b < 0x80) {
      AppendEscaped(text.substr(i, 1), piece);
    } else {
      uint32_t cp = 0;
      const size_t len = Utf8Sequence(text, i, cp);
      if (len == 0) {
        AppendEscaped(text.substr(i, 1), piece);
      } else {
        consumed = len;
        if (IsDeceptive(cp)) {
          AppendEscaped(text.substr(i, len), piece);
        } else {
          piece = std::string(text.substr(i, len));
        }
      }
    }
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += consumed;
  }
  if (i < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

}  // namespace lockstep::bsp
