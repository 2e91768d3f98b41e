// SanitizeForLog (text.h): untrusted text made into one short, valid UTF-8 log line.
#include "lockstep/bsp/text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace lockstep::bsp {
namespace {

using ::testing::EndsWith;
using ::testing::StartsWith;

TEST(SanitizeForLogTest, PrintableTextAndUtf8AreKept) {
  EXPECT_EQ(SanitizeForLog("edge 1 2 weight 0.5", 100), "edge 1 2 weight 0.5");
  EXPECT_EQ(SanitizeForLog("Zürich → 東京 🙂", 100), "Zürich → 東京 🙂");
  EXPECT_EQ(SanitizeForLog("", 100), "");
  EXPECT_EQ(SanitizeForLog("a\\b", 100), "a\\\\b");
}

TEST(SanitizeForLogTest, ControlBytesAreEscaped) {
  EXPECT_EQ(SanitizeForLog("line\nforged [error] x", 100), "line\\x0aforged [error] x");
  EXPECT_EQ(SanitizeForLog(std::string("a\0b\r\t\x1b[31m\x7f", 11), 100),
            "a\\x00b\\x0d\\x09\\x1b[31m\\x7f");
}

TEST(SanitizeForLogTest, BytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(SanitizeForLog("\xff\xfe", 100), "\\xff\\xfe");
  EXPECT_EQ(SanitizeForLog("a\xc3", 100), "a\\xc3");                           // truncated sequence
  EXPECT_EQ(SanitizeForLog("\xc0\xaf", 100), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(SanitizeForLog("\xed\xa0\x80", 100), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(SanitizeForLog("\xf4\x90\x80\x80", 100), "\\xf4\\x90\\x80\\x80");  // > U+10FFFF
  EXPECT_EQ(SanitizeForLog("\xe2\x82x", 100), "\\xe2\\x82x");
}

TEST(SanitizeForLogTest, CodePointsThatDisguiseALineAreEscaped) {
  EXPECT_EQ(SanitizeForLog("a\xc2\x85"
                           "b",
                           100),
            "a\\xc2\\x85b");  // NEL
  EXPECT_EQ(SanitizeForLog("a\xe2\x80\xa8"
                           "b",
                           100),
            "a\\xe2\\x80\\xa8b");  // U+2028
  EXPECT_EQ(SanitizeForLog("a\xe2\x80\xae"
                           "b",
                           100),
            "a\\xe2\\x80\\xaeb");  // RLO
}

TEST(SanitizeForLogTest, LongTextIsCutAndItsLengthGiven) {
  const std::string token(1 << 20, 'x');
  const std::string s = SanitizeForLog(token, 40);
  EXPECT_EQ(s, std::string(40, 'x') + "... (1048576 bytes)");
  // Never inside a UTF-8 sequence or an escape.
  EXPECT_EQ(SanitizeForLog("ab\xc3\xa9"
                           "cd",
                           3),
            "ab... (6 bytes)");
  EXPECT_EQ(SanitizeForLog("ab\xff"
                           "cd",
                           5),
            "ab... (5 bytes)");
  EXPECT_EQ(SanitizeForLog("abc", 3), "abc");
  // Escaping counts against the cap: binary garbage stays short too.
  const std::string garbage(1 << 20, '\x01');
  const std::string g = SanitizeForLog(garbage, 40);
  EXPECT_LE(g.size(), 40u + 26u);
  EXPECT_THAT(g, StartsWith("\\x01\\x01"));
  EXPECT_THAT(g, EndsWith("... (1048576 bytes)"));
}

}  // namespace
}  // namespace lockstep::bsp
