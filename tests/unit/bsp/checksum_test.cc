// CRC-32C of the results a distributed job's workers write (runner::OutputSummary), which the
// master checks before it publishes.
#include "lockstep/bsp/checksum.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace lockstep::bsp {
namespace {

TEST(Crc32cTest, KnownValueAndChunking) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(Crc32c(""), 0u);
  const std::string text(100000, 'x');
  uint32_t crc = 0;
  for (size_t i = 0; i < text.size(); i += 777) {
    crc = Crc32c(std::string_view(text).substr(i, 777), crc);
  }
  EXPECT_EQ(crc, Crc32c(text));
}

// Where the CPU has SSE 4.2, Crc32c is the instruction's: it must agree with the table's at every
// length (the 8-byte steps and the tail) and from any starting CRC.
TEST(Crc32cTest, TheInstructionAndTheTableAgree) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes.push_back(static_cast<char>(i * 37));
  EXPECT_EQ(Crc32cPortable("123456789"), 0xE3069283u);
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 1000}) {
    const std::string_view head(bytes.data(), n);
    EXPECT_EQ(Crc32c(head), Crc32cPortable(head)) << n;
    EXPECT_EQ(Crc32c(head, 0x12345678u), Crc32cPortable(head, 0x12345678u)) << n;
  }
}

}  // namespace
}  // namespace lockstep::bsp
