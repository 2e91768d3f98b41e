#pragma once

#include <cstdint>
#include <string_view>

namespace lockstep::bsp {

// CRC-32C of `bytes`, continuing from `crc` (0 to start): with the SSE 4.2 instruction where the
// CPU has it, else Crc32cPortable. (Results, checkpoints and the partitioned form are checked by
// it.)
uint32_t Crc32c(std::string_view bytes, uint32_t crc = 0);
// The same by Boost's table, on any CPU.
uint32_t Crc32cPortable(std::string_view bytes, uint32_t crc = 0);

}  // namespace lockstep::bsp
