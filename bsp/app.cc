#include "lockstep/bsp/app.h"

#include <charconv>

namespace lockstep::bsp {

std::string ParamString(const Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

absl::StatusOr<double> ParamDouble(const Params& params, const std::string& name) {
  const std::string text = ParamString(params, name);
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": expected a number, got '", text, "'"));
  }
  return v;
}

absl::StatusOr<int64_t> ParamInt(const Params& params, const std::string& name) {
  const std::string text = ParamString(params, name);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": expected an integer, got '", text, "'"));
  }
  return v;
}

}  // namespace lockstep::bsp
