// The Graphalytics output validator: each rule on small outputs, and result directories.
#include "lockstep/validate/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "util/temp_dir.h"

namespace lockstep::validate {
namespace {

using catalogue::ValidationRule;
using ::testing::HasSubstr;

class ValidateTest : public ::testing::Test {
 protected:
  // Validates `actual` against `expected` (both file contents) by `rule`.
  ValidateReport Check(const std::string& expected, const std::string& actual,
                       ValidationRule rule) {
    ValidateOptions options;
    options.expected = dir_.Write("expected", expected);
    options.actual = dir_.Write("actual", actual);
    options.rule = rule;
    auto report = Validate(options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : ValidateReport{};
  }

  test::TempDir dir_{"validate_test"};
};

TEST_F(ValidateTest, ExactComparesNumbersAsNumbers) {
  const ValidateReport same = Check("a 1\nb 2\n", "b 2.0\na 1\n", ValidationRule::kExact);
  EXPECT_EQ(same.vertices, 2u);
  EXPECT_EQ(same.mismatches, 0u);
  EXPECT_THAT(same.text, HasSubstr("validate (exact): 2 vertices, 0 mismatches: PASS"));
  const ValidateReport off = Check("a 1\nb 2\n", "a 1\nb 2.0000001\n", ValidationRule::kExact);
  EXPECT_EQ(off.mismatches, 1u);
  EXPECT_THAT(off.text, HasSubstr("vertex b: expected 2, got 2.0000001"));
}

TEST_F(ValidateTest, EquivalenceAcceptsRenamedLabelsOnly) {
  EXPECT_EQ(Check("a 1\nb 1\nc 3\n", "a x\nb x\nc y\n", ValidationRule::kEquivalence).mismatches,
            0u);
  // c joined a's component.
  EXPECT_GT(Check("a 1\nb 1\nc 3\n", "a x\nb x\nc x\n", ValidationRule::kEquivalence).mismatches,
            0u);
  // b left a's component.
  EXPECT_GT(Check("a 1\nb 1\nc 3\n", "a x\nb z\nc y\n", ValidationRule::kEquivalence).mismatches,
            0u);
}

TEST_F(ValidateTest, EpsilonIsRelativeAndInfinityMatchesOnlyInfinity) {
  EXPECT_EQ(Check("a 100\nb Infinity\n", "a 100.005\nb inf\n", ValidationRule::kEpsilon).mismatches,
            0u);
  EXPECT_EQ(Check("a 100\n", "a 100.02\n", ValidationRule::kEpsilon).mismatches, 1u);
  EXPECT_EQ(Check("a Infinity\n", "a 1e308\n", ValidationRule::kEpsilon).mismatches, 1u);
}

TEST_F(ValidateTest, MissingAndUnexpectedVerticesAreMismatches) {
  const ValidateReport r = Check("a 1\nb 2\n", "a 1\nc 2\n", ValidationRule::kExact);
  EXPECT_EQ(r.mismatches, 2u);
  EXPECT_THAT(r.text, AllOf(HasSubstr("vertex b: missing"), HasSubstr("vertex c: not expected"),
                            HasSubstr("FAIL")));
}

TEST_F(ValidateTest, ReadsEveryPartOfAResultDirectory) {
  std::filesystem::create_directory(dir_ / "result");
  dir_.Write("result/part-00000", "a 1\n");
  dir_.Write("result/part-00001", "b 2\n");
  dir_.Write("result/_SUCCESS", "{}\n");
  ValidateOptions options;
  options.expected = dir_.Write("expected", "a 1\nb 2\n");
  options.actual = (dir_ / "result").string();
  auto report = Validate(options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->mismatches, 0u) << report->text;
}

TEST_F(ValidateTest, AMalformedLineIsAnErrorWithFileAndLine) {
  ValidateOptions options;
  options.expected = dir_.Write("expected", "a 1\nlonely\n");
  options.actual = dir_.Write("actual", "a 1\n");
  auto report = Validate(options);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("expected:2:"));
}

}  // namespace
}  // namespace lockstep::validate
