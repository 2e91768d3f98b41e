// Durations on the command line: 500ms, 90s, 5m, 1h, 1m30s, bare seconds.
#include "lockstep/cli/duration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace lockstep::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct Good {
  std::string text;
  std::chrono::milliseconds expected;
};

class ParseDurationGoodTest : public ::testing::TestWithParam<Good> {};

TEST_P(ParseDurationGoodTest, Parses) {
  auto d = ParseDuration(GetParam().text, "--every");
  ASSERT_TRUE(d.ok()) << GetParam().text << ": " << d.status();
  EXPECT_EQ(d->count(), GetParam().expected.count()) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(Durations, ParseDurationGoodTest,
                         ::testing::Values(Good{"500ms", 500ms}, Good{"90s", 90s}, Good{"5m", 5min},
                                           Good{"1h", 1h}, Good{"1m30s", 90s}, Good{"1.5s", 1500ms},
                                           Good{"30", 30s}, Good{"0", 0ms}, Good{"0s", 0ms},
                                           Good{"2.5", 2500ms}, Good{"1h30m", 90min},
                                           Good{"0.5ms", 1ms}, Good{"10s250ms", 10250ms}));

class ParseDurationBadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParseDurationBadTest, IsAnErrorNamingTheFlagAndTheText) {
  const std::string& text = GetParam();
  auto d = ParseDuration(text, "--acquire-timeout");
  ASSERT_FALSE(d.ok()) << "'" << text << "' parsed as " << d->count() << " ms";
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              AllOf(HasSubstr("--acquire-timeout"), HasSubstr("'" + text + "'")));
}

INSTANTIATE_TEST_SUITE_P(Durations, ParseDurationBadTest,
                         ::testing::Values("", "abc", "5x", "1m30", "-1s", "-0s", "ms", "s", "5 s",
                                           " 5s", "5s ", "1.s.", "5S", "30ms5", "inf", "infs",
                                           "nan", "nanms", "1e3s", "1e3", "99999999999999999999h"));

}  // namespace
}  // namespace lockstep::cli
