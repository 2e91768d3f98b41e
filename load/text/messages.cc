#include "text/messages.h"

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"

namespace lockstep::load::text {

using bsp::kQuotedTokenBytes;
using bsp::SanitizeForLog;

std::string ListedTwiceMessage(std::string_view token, uint64_t first_line) {
  return absl::StrCat("vertex ", SanitizeForLog(token, kQuotedTokenBytes),
                      " is listed twice (first on line ", first_line, ")");
}

std::string UnlistedVertexMessage(std::string_view token, const std::string& vertex_file) {
  return absl::StrCat("vertex ", SanitizeForLog(token, kQuotedTokenBytes), " is not listed in ",
                      vertex_file);
}

std::string MissingWeightMessage(std::string_view error_file, std::string_view weight_file,
                                 uint64_t weight_line) {
  // Debian's absl::string_view is not std::string_view: the files go through std::string.
  const std::string where = error_file == weight_file ? "line " : std::string(weight_file) + ":";
  return absl::StrCat("missing weight (", where, weight_line, " has one, so every edge needs one)");
}

std::string BadWeightMessage(double weight, std::string_view token) {
  return absl::StrCat(weight < 0 ? "negative" : "infinite", " weight ",
                      SanitizeForLog(token, kQuotedTokenBytes),
                      " (the app needs finite weights >= 0)");
}

}  // namespace lockstep::load::text
