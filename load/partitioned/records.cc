#include "partitioned/records.h"

#include <charconv>

namespace lockstep::load::partitioned {

absl::Status Malformed() {
  return absl::InternalError("partitioned load: a peer sent a malformed record");
}

std::string NameOf(const text::TextKey& k) {
  if (!k.is_int) return std::string(k.text);
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, k.value);
  return std::string(buf, end);
}

}  // namespace lockstep::load::partitioned
