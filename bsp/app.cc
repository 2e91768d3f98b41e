#include "lockstep/bsp/app.h"

#include <charconv>

namespace lockstep::bsp {

absl::Status ParamError(std::string_view name, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(name), ": ", std::string(problem)));
}

std::string ParamString(const Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

absl::StatusOr<double> ParamDouble(const Params& params, const std::string& name) {
  const std::string text = ParamString(params, name);
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return ParamError(name, absl::StrCat("expected a number, got '", text, "'"));
  }
  return v;
}

absl::StatusOr<int64_t> ParamInt(const Params& params, const std::string& name) {
  const std::string text = ParamString(params, name);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return ParamError(name, absl::StrCat("expected an integer, got '", text, "'"));
  }
  return v;
}

}  // namespace lockstep::bsp
