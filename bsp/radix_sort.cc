#include "lockstep/bsp/radix_sort.h"

#include <array>
#include <bit>
#include <utility>

namespace lockstep::bsp {

void SortByHighWord(std::vector<uint64_t>& v, uint32_t max_key, std::vector<uint64_t>& scratch) {
  constexpr uint32_t kDigit = 11;
  constexpr uint32_t kBuckets = uint32_t{1} << kDigit;
  const uint32_t key_bits = static_cast<uint32_t>(std::bit_width(max_key));
  if (v.size() < 2 || key_bits == 0) return;
  scratch.resize(v.size());
  for (uint32_t shift = 32; shift < 32 + key_bits; shift += kDigit) {
    std::array<uint64_t, kBuckets> at{};
    for (uint64_t x : v) ++at[(x >> shift) & (kBuckets - 1)];
    uint64_t sum = 0;
    for (uint64_t& a : at) sum += std::exchange(a, sum);
    for (uint64_t x : v) scratch[at[(x >> shift) & (kBuckets - 1)]++] = x;
    v.swap(scratch);
  }
}

}  // namespace lockstep::bsp
