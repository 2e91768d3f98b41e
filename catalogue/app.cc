#include "lockstep/catalogue/app.h"

#include "absl/strings/str_cat.h"

namespace lockstep::catalogue {

std::string_view RuleName(ValidationRule rule) {
  switch (rule) {
    case ValidationRule::kExact:
      return "exact";
    case ValidationRule::kEquivalence:
      return "equivalence";
    case ValidationRule::kEpsilon:
      return "epsilon";
  }
  return "exact";
}

absl::StatusOr<ValidationRule> ParseRule(std::string_view name) {
  for (ValidationRule rule :
       {ValidationRule::kExact, ValidationRule::kEquivalence, ValidationRule::kEpsilon}) {
    if (RuleName(rule) == name) return rule;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rule '", std::string(name), "' (exact, equivalence or epsilon)"));
}

std::map<std::string, std::string> ParamsFromGraphalytics(
    const AppInfo& app, const std::map<std::string, std::string>& properties, bsp::Params& params) {
  std::map<std::string, std::string> origin;
  for (const GraphalyticsParam& g : app.graphalytics) {
    auto it = properties.find(g.property);
    if (it == properties.end()) continue;
    params[g.param] = it->second;
    origin[g.param] = g.property;
    for (const auto& [name, value] : g.also) {
      params[name] = value;
      origin[name] = g.property;
    }
  }
  return origin;
}

const AppInfo* AppRegistry::Find(std::string_view name) const {
  for (const AppInfo& a : apps_) {
    if (a.name == name) return &a;
    for (const auto& alias : a.aliases) {
      if (alias == name) return &a;
    }
  }
  return nullptr;
}

}  // namespace lockstep::catalogue
