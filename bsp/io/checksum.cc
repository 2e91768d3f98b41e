#include <boost/crc.hpp>

#include "lockstep/bsp/job.h"

namespace lockstep::bsp {

uint32_t Crc32c(std::string_view bytes, uint32_t crc) {
  using Castagnoli = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;
  // Boost takes the initial remainder unreflected and before the final XOR: undo both to go on
  // from `crc`.
  const uint32_t remainder = crc ^ 0xFFFFFFFFu;
  uint32_t unreflected = 0;
  for (int i = 0; i < 32; ++i) {
    if ((remainder >> i) & 1u) unreflected |= 1u << (31 - i);
  }
  Castagnoli c(unreflected);
  c.process_bytes(bytes.data(), bytes.size());
  return c.checksum();
}

}  // namespace lockstep::bsp
