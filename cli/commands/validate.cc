// `lockstep validate --expected FILE --actual PATH (--rule R | --app A)`: a result against an
// expected output, by the Graphalytics rules.
#include "lockstep/validate/validate.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "command.h"
#include "exit_codes.h"

namespace lockstep::cli {
namespace {

// The rule: --rule by name, or the rule of the --app the catalogue gives.
absl::StatusOr<catalogue::ValidationRule> RuleToValidate(const catalogue::AppRegistry& apps,
                                                         const std::string& rule,
                                                         const std::string& app) {
  if (!rule.empty()) {
    auto parsed = catalogue::ParseRule(rule);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--rule: ", Message(parsed.status())));
    }
    return *parsed;
  }
  const catalogue::AppInfo* info = apps.Find(app);
  if (info == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--app: no app named '", app, "'"));
  }
  return info->validation;
}

class ValidateCommand final : public Command {
 public:
  ValidateCommand(CLI::App& cli, const CommandContext& context)
      : Command(cli.add_subcommand("validate",
                                   "check a result against an expected output (Graphalytics)")),
        apps_(context.apps) {
    CLI::App* validate = app();
    validate->add_option("--expected", check_.expected, "the expected 'id value' file")
        ->required()
        ->check(CLI::ExistingFile);
    validate->add_option("--actual", check_.actual, "a result file or result directory")
        ->required()
        ->check(CLI::ExistingPath);
    auto* rule = validate->add_option("--rule", rule_, "exact, equivalence or epsilon");
    auto* by_app = validate->add_option("--app", app_name_, "use this app's Graphalytics rule");
    rule->excludes(by_app);
    validate->add_option("--epsilon", check_.epsilon, "relative tolerance of the epsilon rule")
        ->capture_default_str();
  }

  int Run() override {
    if (rule_.empty() && app_name_.empty()) {
      return UsageError(absl::InvalidArgumentError("validate: give --rule or --app"));
    }
    auto rule = RuleToValidate(apps_, rule_, app_name_);
    if (!rule.ok()) return UsageError(rule.status());
    check_.rule = *rule;
    auto report = validate::Validate(check_);
    if (!report.ok()) return Fail(report.status());
    std::cout << report->text;
    return report->mismatches == 0 ? kExitOk : kExitFailed;
  }

 private:
  const catalogue::AppRegistry& apps_;
  validate::ValidateOptions check_;
  std::string rule_;
  std::string app_name_;
};

}  // namespace

std::unique_ptr<Command> MakeValidateCommand(CLI::App& cli, const CommandContext& context) {
  return std::make_unique<ValidateCommand>(cli, context);
}

}  // namespace lockstep::cli
