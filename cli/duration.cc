#include "lockstep/cli/duration.h"

#include <cctype>
#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"

namespace lockstep::cli {

absl::StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text,
                                                        std::string_view flag) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(flag), ": cannot read duration '", std::string(text),
                     "' (write e.g. 500ms, 90s, 5m, 1h, 1m30s, or a number of seconds)"));
  };
  if (text.empty()) return bad();
  double total_ms = 0;
  size_t i = 0;
  bool bare = true;
  while (i < text.size()) {
    // Plain decimals only: from_chars alone would also take "-1", "inf", "nan" and "1e3".
    if (!std::isdigit(static_cast<unsigned char>(text[i])) && text[i] != '.') return bad();
    double value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value,
                                     std::chars_format::fixed);
    if (ec != std::errc()) return bad();
    i = static_cast<size_t>(ptr - text.data());
    size_t unit_end = i;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end]))) {
      ++unit_end;
    }
    const std::string_view unit = text.substr(i, unit_end - i);
    i = unit_end;
    double scale;
    if (unit.empty()) {
      if (!bare || i != text.size()) return bad();  // "1m30" is ambiguous
      scale = 1000;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60 * 1000;
    } else if (unit == "h") {
      scale = 3600 * 1000;
    } else {
      return bad();
    }
    bare = false;
    total_ms += value * scale;
  }
  // Converting a double outside int64_t's range is undefined; refuse what cannot be held.
  if (!(total_ms + 0.5 < 0x1p63)) return bad();
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms + 0.5));
}

}  // namespace lockstep::cli
