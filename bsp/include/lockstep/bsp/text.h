#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lockstep::bsp {

// How much of an input token an error message quotes (e.g. a bad weight on an edge-list line).
inline constexpr size_t kQuotedTokenBytes = 40;

// Makes untrusted text (an input token, a peer's failure reason) safe to put in one log line or
// one protobuf string field: the result is valid UTF-8, holds no line break or other control
// character, and is short.
//
// - Printable ASCII and well-formed UTF-8 are kept as they are; a backslash becomes "\\".
// - Control bytes (0x00-0x1F, 0x7F), bytes that are not part of well-formed UTF-8, and the code
//   points that can make a log line lie about its content (C1 controls U+0080-U+009F, the line
//   and paragraph separators U+2028/U+2029, the bidirectional overrides U+202A-U+202E and
//   U+2066-U+2069) become "\xNN", one per byte.
// - The escaped text is cut at `max_bytes` bytes (never inside an escape or a UTF-8 sequence);
//   if anything was cut, "... (N bytes)" follows, N being the length of the whole input.
//
// So the result has at most max_bytes + 26 bytes.
std::string SanitizeForLog(std::string_view text, size_t max_bytes);

}  // namespace lockstep::bsp
