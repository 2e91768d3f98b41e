// The app catalogue: validation rules by name, and finding apps by name or alias.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lockstep/catalogue/app.h"

namespace lockstep::catalogue {
namespace {

using ::testing::HasSubstr;

TEST(CatalogueTest, RuleNamesRoundTrip) {
  for (ValidationRule rule :
       {ValidationRule::kExact, ValidationRule::kEquivalence, ValidationRule::kEpsilon}) {
    auto parsed = ParseRule(RuleName(rule));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, rule);
  }
  EXPECT_EQ(RuleName(ValidationRule::kEquivalence), "equivalence");
}

TEST(CatalogueTest, AnUnknownRuleNamesTheRulesThereAre) {
  auto parsed = ParseRule("roughly");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()),
              AllOf(HasSubstr("'roughly'"), HasSubstr("exact, equivalence or epsilon")));
}

TEST(CatalogueTest, AnAppThatNamesNoRuleIsComparedExactly) {
  EXPECT_EQ(AppInfo().validation, ValidationRule::kExact);
}

TEST(CatalogueTest, FindsAppsByNameOrAlias) {
  AppRegistry registry;
  AppInfo a;
  a.name = "alpha";
  a.aliases = {"a", "first"};
  AppInfo b;
  b.name = "beta";
  registry.Add(a);
  registry.Add(b);
  ASSERT_NE(registry.Find("alpha"), nullptr);
  EXPECT_EQ(registry.Find("alpha")->name, "alpha");
  ASSERT_NE(registry.Find("first"), nullptr);
  EXPECT_EQ(registry.Find("first")->name, "alpha");
  ASSERT_NE(registry.Find("beta"), nullptr);
  EXPECT_EQ(registry.Find("beta")->name, "beta");
  EXPECT_EQ(registry.Find("gamma"), nullptr);
  EXPECT_EQ(registry.Find(""), nullptr);
  EXPECT_EQ(registry.apps().size(), 2u);
}

}  // namespace
}  // namespace lockstep::catalogue
