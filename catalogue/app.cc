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
