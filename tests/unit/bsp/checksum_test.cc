// CRC-32C of the parts a distributed job writes (bsp/job.h), which the master checks before it
// publishes.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "lockstep/bsp/job.h"

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

}  // namespace
}  // namespace lockstep::bsp
