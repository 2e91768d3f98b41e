// The built-in apps' catalogue entries: each app's Graphalytics validation rule (`lockstep
// validate --app X` takes it from here) and parameters the command line turns into flags.
#include "lockstep/cli/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace lockstep::cli {
namespace {

using catalogue::ValidationRule;

TEST(RegistryTest, EveryBuiltinAppHasItsGraphalyticsRule) {
  const catalogue::AppRegistry apps = BuiltinApps();
  const std::map<std::string, ValidationRule> expected = {
      {"bfs", ValidationRule::kExact},        {"cdlp", ValidationRule::kExact},
      {"coloring", ValidationRule::kExact},   {"wcc", ValidationRule::kEquivalence},
      {"pagerank", ValidationRule::kEpsilon}, {"pr", ValidationRule::kEpsilon},
      {"lcc", ValidationRule::kEpsilon},      {"sssp", ValidationRule::kEpsilon},
  };
  for (const auto& [name, rule] : expected) {
    const catalogue::AppInfo* app = apps.Find(name);
    ASSERT_NE(app, nullptr) << name;
    EXPECT_EQ(app->validation, rule) << name << ": " << catalogue::RuleName(app->validation);
  }
  EXPECT_EQ(apps.apps().size(), 7u) << "an app was added: give it a rule above";
}

TEST(RegistryTest, NamesAndParametersAreUniqueAndPlain) {
  const catalogue::AppRegistry apps = BuiltinApps();
  std::set<std::string> names;
  for (const catalogue::AppInfo& app : apps.apps()) {
    EXPECT_TRUE(names.insert(app.name).second) << app.name;
    for (const auto& alias : app.aliases) EXPECT_TRUE(names.insert(alias).second) << alias;
    EXPECT_TRUE(app.make_runner) << app.name;
    std::set<std::string> params;
    for (const catalogue::AppParam& p : app.params) {
      EXPECT_TRUE(params.insert(p.name).second) << app.name << ": " << p.name;
      // A parameter is a name; the command line adds the "--".
      EXPECT_FALSE(p.name.starts_with("-")) << app.name << ": " << p.name;
      EXPECT_FALSE(p.help.empty()) << app.name << ": " << p.name;
    }
  }
}

}  // namespace
}  // namespace lockstep::cli
